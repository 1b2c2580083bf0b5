"""A bot in another language can search with the referee's own rules: clients/node/sim_example.js
(a flat Monte-Carlo choice by random rollouts) against a `referee sim serve` process, over the
Simulator service (proto/referee/v1/sim.proto), and a refusal reaches it with the referee's
reason. Node.js comes from tests/kits/toolchains.py (installed when root, else skipped)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from . import toolchains

EXAMPLE = toolchains.CLIENTS / "node" / "sim_example.js"


@pytest.fixture
def simulator(tmp_path):
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "sim", "serve", "--port", "0", "--port-file",
         str(port_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if port_file.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert port_file.exists(), proc.stderr.read() if proc.poll() is not None else "no port"
        yield f"127.0.0.1:{int(Path(port_file).read_text())}"
    finally:
        proc.terminate()
        assert proc.wait(30) == 0, "referee sim serve stops cleanly on SIGTERM"


def node(*args: str) -> subprocess.CompletedProcess:
    toolchains.node_bot()  # Node.js and clients/node/node_modules, or skip with the reason
    return subprocess.run(["node", str(EXAMPLE), *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ})


@pytest.mark.parametrize("game", ["batavia", "goa", "santa_maria"])
def test_a_node_client_searches_over_the_simulator(simulator, game):
    out = node("--address", simulator, "--game", game, "--rollouts", "1", "--seed", "3")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["moves"] == len(report["mean_rank"]) > 0
    assert 0 <= report["chosen"] < report["moves"]
    assert report["result"]["moves"] > 0 and report["result"]["winners"]
    assert report["released"] is True


def test_a_refusal_reaches_the_node_client_with_its_reason(simulator):
    out = node("--address", simulator, "--game", "chess")
    assert out.returncode == 1
    assert "INVALID_ARGUMENT MALFORMED unknown game 'chess'" in out.stderr
