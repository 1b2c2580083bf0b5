"""The tests install nothing and reach no package index: `make setup` installs what they need
(``.[dev]``, Ray and the build tools among it), and a test that installs a package (the SDK's
wheel in tests/client/test_sdk_install.py) does so from local files with ``--no-index``.

Two guards keep it so. Every pip call written in a test module (a call whose string arguments
name pip and one of its fetching commands) must pass ``--no-index``; and tests/conftest.py sets
``PIP_NO_INDEX`` for the whole run, so a pip started any other way (a helper script, a tool a
test runs) fails at once instead of downloading.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: pip's commands that fetch from an index unless told not to
FETCHING = {"install", "download", "wheel"}


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)]


def pip_calls_reaching_an_index(source: str) -> list[int]:
    """The lines of the calls in ``source`` that run pip's install, download or wheel without
    ``--no-index``: a call whose string arguments (a command list, its parts) hold ``pip`` (or a
    path ending in ``/pip``) and such a command, or a shell string that says ``pip install``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        words: list[str] = []
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            for text in _strings(arg):
                words += text.split()
        is_pip = any(w == "pip" or w.endswith("/pip") or w.startswith("pip3") for w in words)
        if is_pip and FETCHING & set(words) and "--no-index" not in words:
            lines.append(node.lineno)
    return lines


def test_no_test_module_installs_from_an_index():
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        lines = pip_calls_reaching_an_index(path.read_text())
        if lines:
            found[str(path.relative_to(TESTS.parent))] = lines
    assert not found, f"pip reaching a package index from the tests (pass --no-index): {found}"


def test_the_scan_finds_what_it_guards():
    """The scan itself: the way test_ray.py installed Ray before issue 32, and the ways around
    it, are found; the offline install the SDK test does is not."""
    assert pip_calls_reaching_an_index(
        'subprocess.run([sys.executable, "-m", "pip", "install", "-q", "ray>=2.9"])') == [1]
    assert pip_calls_reaching_an_index('run(python, "-m", "pip", "wheel", "-w", out, src)') == [1]
    assert pip_calls_reaching_an_index('os.system("pip install ray")') == [1]
    assert pip_calls_reaching_an_index('run([venv / "bin/pip", "download", "grpcio"])') == [1]
    assert pip_calls_reaching_an_index(
        'run(python, "-m", "pip", "install", "--no-index", wheel)') == []
    assert pip_calls_reaching_an_index('run(python, "-m", "pip", "list")') == []


def test_pip_cannot_reach_an_index_during_the_run():
    assert os.environ.get("PIP_NO_INDEX") == "1", "tests/conftest.py sets PIP_NO_INDEX=1"
