"""The SDK installs on its own with grpcio and protobuf only (docs/ARCHITECTURE.md, *SDK and
bots*): a wheel of the project, built from a copy of the tree as git has it (without the
generated ``referee/v1``: the build makes it), installed without extras into a fresh virtual
environment, gives a working ``referee_client`` (its reference bots and ``referee-bot``) and none
of the packages the server, the web viewer, the tournament runner or the tests need.

Offline, like every test (tests install nothing: ``tests/test_offline.py``): the wheel is built
with this venv's setuptools and grpcio-tools (``--no-build-isolation``, which `make setup`
installs with ``.[dev]``), and the fresh venv is given grpcio and protobuf by copying the files
this venv's installs of them list (their RECORD), so ``pip install --no-index`` finds the SDK's
dependencies already present. Its wheel's metadata is checked too: a dependency it declares
beyond grpcio and protobuf fails here rather than on a user's machine.
"""
from __future__ import annotations

import email
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # about half a minute: a wheel built, a venv made

ROOT = Path(__file__).resolve().parents[2]
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "runs", "__pycache__", "node_modules",
                                     "*.egg-info", "build", "dist", "*.sqlite3*")
#: what the SDK may depend on (pyproject.toml's base dependencies), and theirs
PRESENT = ("grpcio", "protobuf", "typing-extensions")


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


def _copy_distribution(name: str, site: Path) -> None:
    """This venv's install of ``name`` into the site-packages ``site``: the files its RECORD
    lists under site-packages (its scripts, if any, are not needed)."""
    dist = importlib.metadata.distribution(name)
    here = Path(str(dist.locate_file(""))).resolve()
    for file in dist.files or ():
        src = Path(str(dist.locate_file(file))).resolve()
        if not src.is_file() or here not in src.parents or "__pycache__" in src.parts:
            continue
        dst = site / src.relative_to(here)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)


def test_the_sdk_installs_alone_with_grpcio_and_protobuf(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for part in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / part, src / part)
    for folder in ("proto", "referee", "clients"):
        shutil.copytree(ROOT / folder, src / folder, ignore=_copy_ignore)
    assert not (src / "referee" / "v1").exists()

    # the tree unseen (PYTHONPATH), and pip given no index, no links and no configuration that
    # could name one: it installs the files it is given and what the venv has, nothing else
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith("PIP_")}
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1"}

    def run(*args: str | Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600, check=False)

    wheels = tmp_path / "wheels"
    built = run(sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check",
                "--no-index", "--no-deps", "--no-build-isolation", "-w", wheels, src)
    assert built.returncode == 0, f"pip wheel failed:\n{built.stdout[-3000:]}{built.stderr[-3000:]}"
    (wheel,) = wheels.glob("boardgame_referee-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        requires = email.message_from_bytes(zf.read(meta)).get_all("Requires-Dist") or []
    base = {_name(r) for r in requires if "extra ==" not in r}
    assert base == {"grpcio", "protobuf"}, f"the SDK's wheel requires {sorted(base)}"

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)  # pip from ensurepip: no network
    python = env_dir / "bin" / "python"
    site = Path(sysconfig.get_path("purelib", vars={"base": str(env_dir),
                                                    "platbase": str(env_dir)}))
    assert site.is_dir(), site
    for name in PRESENT:
        _copy_distribution(name, site)

    def installed() -> set[str]:
        listed = run(python, "-m", "pip", "list", "--format=json")
        return {_name(p["name"]) for p in json.loads(listed.stdout)}

    before = installed()  # pip (and setuptools, on Python 3.11) and the copies
    done = run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index",
               "--no-build-isolation", wheel)
    assert done.returncode == 0, f"pip install failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"

    after = installed()
    assert after - before == {"boardgame-referee"}, f"pulled in {sorted(after - before)}"
    unwanted = _other_layers_dependencies() - before
    assert {"structlog", "rich", "starlette", "openskill"} <= unwanted  # the check has teeth
    assert not after & unwanted, f"the SDK alone pulled in {sorted(after & unwanted)}"

    check = run(python, "-c", (
        "import referee_client, referee_client.cli\n"
        "from referee_client.bots import BOTS\n"
        "bots = [make(1) for make in BOTS.values()]\n"  # each game's bot module imported
        "print(referee_client.__file__)\n"))
    assert check.returncode == 0, check.stderr
    assert str(env_dir) in check.stdout, f"imported from outside the venv: {check.stdout}"

    bot = run(env_dir / "bin" / "referee-bot", "random", "--help")
    assert bot.returncode == 0 and "--match" in bot.stdout, bot.stderr
