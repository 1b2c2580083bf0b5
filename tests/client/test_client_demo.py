"""`make run` (python -m referee_tools.demo) plays a whole match among bot processes and exits 0."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, read_until, server_available

WIDE = {**os.environ, "COLUMNS": "400"}  # rich wraps at 80 columns without a terminal


@pytest.mark.skipif(not server_available(), reason="referee/server is not there yet")
def test_demo_runs_a_match_end_to_end(tmp_path):
    """Without a terminal (CI) the demo does not wait: it ends with the path of a static replay
    page that works with no referee (issue 20, item 5)."""
    out = subprocess.run(
        [sys.executable, "-m", "referee_tools.demo", "--data-dir", str(tmp_path / "demo"),
         "--delay-ms", "0", "--seed", "4"],
        capture_output=True, text=True, cwd=ROOT, timeout=180, check=False,
        stdin=subprocess.DEVNULL, env=WIDE,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "Final scores" in out.stdout
    assert "referee replay verify" in out.stdout and "OK" in out.stdout
    assert list((tmp_path / "demo" / "records").glob("*.json"))
    assert re.search(r"watch live: http://127\.0\.0\.1:\d+/matches/\w+", out.stdout)
    replay = re.search(r"^replay: (\S+\.html)", out.stdout, re.MULTILINE)
    assert replay, out.stdout[-3000:]
    page = Path(replay.group(1))
    page = page if page.is_absolute() else ROOT / page
    assert page.read_text().startswith("<!")


@pytest.mark.skipif(not server_available(), reason="referee/server is not there yet")
def test_demo_from_a_terminal_keeps_its_viewer_up_until_enter(tmp_path):
    """At a terminal (here a pseudo-terminal) the link the demo printed still works after the
    match, until the user presses Enter."""
    import pty
    import urllib.request

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee_tools.demo", "--data-dir", str(tmp_path / "demo"),
         "--delay-ms", "0", "--seed", "4"],
        cwd=ROOT, stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=WIDE)
    os.close(follower)
    try:
        text = read_until(proc, "press Enter", 240)
        link = re.search(r"the viewer stays up: (http://127\.0\.0\.1:\d+/matches/\w+)", text)
        assert link, text[-3000:]
        with urllib.request.urlopen(link.group(1), timeout=30) as page:  # the viewer is up
            assert page.status == 200
        assert proc.poll() is None
        os.write(leader, b"\n")
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)


def test_demo_fails_loudly_when_the_referee_does_not_start(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "referee_tools.demo", "--data-dir", str(tmp_path / "demo"),
         "--start-timeout", "0.001"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert out.returncode == 1
    assert "demo failed" in out.stdout and "did not start" in out.stdout
