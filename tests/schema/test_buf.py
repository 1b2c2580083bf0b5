"""The protocol's two Buf checks, as `make lint` runs them (buf.yaml; docs/releases.md): `buf
lint` holds proto/ to the rules buf.yaml keeps, `buf breaking` holds it to the wire of the last
release (releases/<version>/proto). Each runs on a copy of the repo's protos, clean first, then
with the kind of change it exists to catch, which must fail it. Release bookkeeping too: the
package's version is past the last release kept."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ROOT / "releases"


def _buf() -> str | None:
    """The buf binary of the dev extra (the buf-bin wheel puts it beside the interpreter)."""
    beside = Path(sys.executable).parent / "buf"
    return str(beside) if beside.exists() else shutil.which("buf")


BUF = _buf()
needs_buf = pytest.mark.skipif(BUF is None, reason="no buf binary: `make setup` installs it "
                               "(the buf-bin wheel of the dev extra)")


def _releases() -> list[Version]:
    return sorted(Version(p.name) for p in RELEASES.iterdir() if (p / "proto").is_dir())


def _last() -> str:
    return str(_releases()[-1])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """buf.yaml, proto/ and the releases' protos, copied."""
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    shutil.copytree(RELEASES, tmp_path / "releases")
    return tmp_path


def _run(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert BUF is not None
    return subprocess.run([BUF, *args], cwd=tree, capture_output=True, text=True, timeout=120,
                          check=False)


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return _run(tree, "lint", "--error-format=json")  # a line per finding, naming its rule


def _rules(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {json.loads(line)["type"] for line in done.stdout.splitlines() if line.strip()}


def _breaking(tree: Path) -> subprocess.CompletedProcess[str]:
    return _run(tree, "breaking", "--against", f"releases/{_last()}/proto")


def _edit(tree: Path, name: str, old: str, new: str) -> None:
    path = tree / "proto" / "referee" / "v1" / name
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


@needs_buf
def test_the_protocol_passes_both_checks(tree):
    for done in (_lint(tree), _breaking(tree)):
        assert done.returncode == 0, done.stdout + done.stderr


@needs_buf
@pytest.mark.parametrize("change, rule", [
    # a new enum whose zero value is a choice: the mistake the 0.2.0 fix was about
    (("goa.proto", "enum Spice {", "enum Tint {\n  RED = 0;\n}\n\nenum Spice {"),
     "ENUM_ZERO_VALUE_SUFFIX"),
    (("referee.proto", "  string event = 15;\n}",
      "  string event = 15;\n  string LateField = 16;\n}"), "FIELD_LOWER_SNAKE_CASE"),
    (("sim.proto", "service Simulator {",
      "message sim_note { string text = 1; }\n\nservice Simulator {"), "MESSAGE_PASCAL_CASE"),
])
def test_a_style_violation_fails_buf_lint(tree, change, rule):
    _edit(tree, *change)
    done = _lint(tree)
    assert done.returncode != 0 and _rules(done) == {rule}, done.stdout + done.stderr


@needs_buf
@pytest.mark.parametrize("change, words", [
    # a field deleted without reserving its number
    (("referee.proto", "  string request_id = 14;\n", ""), "deleted"),
    # a field renumbered: an older client's bytes land in another field
    (("referee.proto", "  string request_id = 14;", "  string request_id = 16;"), "deleted"),
    # an enum value renumbered (the old number gone)
    (("referee.proto", "  REVEAL_POLICY_NONE = 1;", "  REVEAL_POLICY_NONE = 4;"), "deleted"),
    # a field's type changed
    (("referee.proto", "  uint32 seats = 3;", "  string seats = 3;"), "changed type"),
])
def test_a_wire_change_fails_buf_breaking(tree, change, words):
    _edit(tree, *change)
    done = _breaking(tree)
    assert done.returncode != 0 and words in done.stdout + done.stderr, done.stdout


def test_the_version_is_past_every_release_kept():
    """pyproject.toml's version is a later one than every release whose protos are kept (a
    release is cut by copying proto/ to releases/<version>/proto: docs/releases.md), `make
    lint` checks against the newest of them, and the changelog has a section for each."""
    version = Version(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])
    releases = _releases()
    assert releases and all(version > r for r in releases), (version, releases)
    # make lint's baseline is the newest release kept
    baseline = re.search(r"^BASELINE := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert baseline and baseline.group(1) == f"releases/{releases[-1]}/proto"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    headings = set(re.findall(r"^## \[([^\]]+)\]", changelog, re.MULTILINE))
    assert "Unreleased" in headings
    assert {str(r) for r in releases} <= headings
