"""The Makefile explains itself (issue 37, item 6): `make help` names every target a user can
type, so a new user finds `make docs-serve` or `make packages` without reading the Makefile."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def targets() -> set[str]:
    """Every target of the Makefile a user types: the plain names before a colon."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][a-z-]*):(?!=)", text, re.M))


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_help_lists_every_target():
    found = targets()
    assert {"run", "test", "lint", "help", "setup"} <= found
    out = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    listed = set(re.findall(r"^make ([a-z-]+)", out, re.M))
    assert found - listed == set(), f"targets missing from make help: {sorted(found - listed)}"
    assert listed - found == set(), f"make help names no such target: {sorted(listed - found)}"
