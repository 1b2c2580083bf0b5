"""`make run` (python -m referee_tools.demo) plays a whole match among bot processes and exits 0."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT, server_available


@pytest.mark.skipif(not server_available(), reason="referee/server is not there yet")
def test_demo_runs_a_match_end_to_end(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "referee_tools.demo", "--data-dir", str(tmp_path / "demo"),
         "--delay-ms", "0", "--seed", "4"],
        capture_output=True, text=True, cwd=ROOT, timeout=180, check=False,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "Final scores" in out.stdout
    assert "referee replay verify" in out.stdout and "OK" in out.stdout
    assert list((tmp_path / "demo" / "records").glob("*.json"))


def test_demo_fails_loudly_when_the_referee_does_not_start(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "referee_tools.demo", "--data-dir", str(tmp_path / "demo"),
         "--start-timeout", "0.001"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert out.returncode == 1
    assert "demo failed" in out.stdout and "did not start" in out.stdout
