"""Fixtures for the tournament runner tests: a `referee serve` subprocess on 127.0.0.1:0 shared
by the tests of a session, tournament files written into tmp_path, helpers to run the CLI."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

RANDOM = ("referee-bot random --address {address} --match {match} "
          "--seed {seed} --log-level warning")
GREEDY = ("referee-bot greedy-batavia --address {address} --match {match} "
          "--seed {seed} --log-level warning")


def cli_command() -> list[str]:
    script = BIN / "referee-tournament"
    return [str(script)] if script.exists() else [sys.executable, "-m", "referee_tournament.cli"]


def run_cli(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([*cli_command(), *args], capture_output=True, text=True, check=False,
                          timeout=timeout, env=env, cwd=ROOT, **kw)


def write_toml(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture(scope="session")
def referee(tmp_path_factory):
    """A shared referee process (runner tests pass its address and admin token)."""
    from referee_tournament.procs import LocalReferee

    ref = LocalReferee(tmp_path_factory.mktemp("referee") / "data")
    ref.start()
    yield ref
    ref.stop()


@pytest.fixture
def quiet_console():
    from rich.console import Console

    return Console(quiet=True)
