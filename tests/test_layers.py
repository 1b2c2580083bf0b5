"""The client SDK speaks only the wire protocol: from `referee` it may import nothing but the
modules protoc generates from proto/referee/v1 (`referee.v1.*_pb2`, `referee.v1.*_pb2_grpc`),
exactly what a bot author in any language gets from the .proto files (docs/ARCHITECTURE.md, Layout)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

CLIENTS = Path(__file__).resolve().parents[2] / "clients"
ALLOWED = re.compile(r"^referee\.v1\.\w+_pb2(_grpc)?$")


def referee_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from referee.v1 import referee_pb2` imports referee.v1.referee_pb2
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n == "referee" or n.startswith("referee.")]
    return found


def test_clients_import_only_generated_protocol_modules():
    files = sorted(CLIENTS.rglob("*.py"))
    assert files, f"no Python files under {CLIENTS}"
    bad = [
        f"{path.relative_to(CLIENTS.parent)}:{line}: import {name}"
        for path in files
        for line, name in referee_imports(path)
        if not ALLOWED.match(name)
    ]
    assert not bad, "clients/ may import only referee.v1.*_pb2(_grpc):\n" + "\n".join(bad)


def test_checker_catches_forbidden_imports(tmp_path):
    sample = tmp_path / "bad.py"
    sample.write_text(
        "import referee.core.rng\n"
        "from referee.games.batavia import GAME\n"
        "from referee import core\n"
        "from referee.v1 import referee_pb2, batavia_pb2_grpc\n"
        "import referee.v1.batavia_pb2\n"
    )
    names = [n for _, n in referee_imports(sample)]
    assert [n for n in names if not ALLOWED.match(n)] == [
        "referee.core.rng",
        "referee.games.batavia.GAME",
        "referee.core",
    ]
