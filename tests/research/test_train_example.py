"""examples/research/train.py runs end to end on a tiny budget (it must run, not learn): it
trains, evaluates and writes its learning-curve plot (docs/research/environments.md)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_training_example_runs_and_plots(tmp_path):
    out = tmp_path / "curve.png"
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples/research/train.py"), "--episodes", "3",
         "--eval-every", "2", "--eval-games", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    summary = json.loads(next(line for line in run.stdout.splitlines() if line.startswith("{")))
    assert summary["episodes"] == 3 and summary["game"] == "batavia"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
