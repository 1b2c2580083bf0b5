"""The SDK installs on its own with grpcio and protobuf only (docs/ARCHITECTURE.md, *SDK and
bots*): ``pip install .`` into a fresh virtual environment, without extras, gives a working
``referee_client`` (its reference bots and ``referee-bot``) and none of the packages the server,
the web viewer, the tournament runner or the tests need.

It installs from PyPI (grpcio and protobuf; setuptools and grpcio-tools to build) out of a copy
of the tree as git has it, without the generated ``referee/v1`` (the build makes it), and runs
the SDK from outside the tree.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # about a minute: a venv, and grpcio and protobuf from PyPI

ROOT = Path(__file__).resolve().parents[2]
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "runs", "__pycache__", "node_modules",
                                     "*.egg-info", "build", "dist", "*.sqlite3*")


def _copy_ignore(folder: str, names: list[str]) -> set[str]:
    """What a fresh clone lacks: the generated protocol code, and what runs leave behind."""
    generated = {"v1"} if Path(folder) == ROOT / "referee" else set()
    return set(COPY_IGNORE(folder, names)) | generated


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement (``"rich>=13"`` -> ``"rich"``)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name, requirement
    return re.sub(r"[-_.]+", "-", name.group()).lower()


def _other_layers_dependencies() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for reqs in project["optional-dependencies"].values() for r in reqs}
    return extras - base - {_name(project["name"])}


def test_the_sdk_installs_alone_with_grpcio_and_protobuf(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for part in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / part, src / part)
    for folder in ("proto", "referee", "clients"):
        shutil.copytree(ROOT / folder, src / folder, ignore=_copy_ignore)
    assert not (src / "referee" / "v1").exists()
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600,
                              check=False)

    done = run(str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
               str(src))
    assert done.returncode == 0, f"pip install failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"

    listed = run(str(python), "-m", "pip", "list", "--format=json")
    installed = {_name(p["name"]) for p in json.loads(listed.stdout)}
    assert {"grpcio", "protobuf"} <= installed
    unwanted = _other_layers_dependencies()
    assert {"structlog", "rich", "starlette", "openskill"} <= unwanted  # the check has teeth
    assert not installed & unwanted, f"the SDK alone pulled in {sorted(installed & unwanted)}"

    check = run(str(python), "-c", (
        "import referee_client, referee_client.cli\n"
        "from referee_client.bots import BOTS\n"
        "bots = [make(1) for make in BOTS.values()]\n"  # each game's bot module imported
        "print(referee_client.__file__)\n"))
    assert check.returncode == 0, check.stderr
    assert str(env_dir) in check.stdout, f"imported from outside the venv: {check.stdout}"

    bot = run(str(env_dir / "bin" / "referee-bot"), "random", "--help")
    assert bot.returncode == 0 and "--match" in bot.stdout, bot.stderr
