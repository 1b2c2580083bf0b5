"""A bot in another language: the Node.js example bot (clients/node) entered in a tournament.
Runs when `node` is on PATH; installs its npm dependencies itself if node_modules is missing."""
from __future__ import annotations

import asyncio
import shutil
import subprocess

import pytest
from referee_tournament.config import parse
from referee_tournament.runner import Runner

from .conftest import RANDOM, ROOT

NODE_DIR = ROOT / "clients" / "node"


@pytest.fixture(scope="module")
def node_bot():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node.js bot test needs it")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: cannot install the Node.js bot's dependencies")
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=NODE_DIR,
                              capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            pytest.fail(f"npm install failed in {NODE_DIR}:\n{proc.stderr[-2000:]}")
    return node


def test_node_bot_plays_a_tournament(tmp_path, referee, quiet_console, node_bot):
    bot = NODE_DIR / "bot.js"
    cfg = parse({
        "name": "node", "output": str(tmp_path / "out"),
        "game": {"name": "batavia", "seats": 3},
        "entrants": [
            {"name": "node-random",
             "command": [node_bot, str(bot), "--address", "{address}", "--match", "{match}",
                         "--seed", "{seed}"]},
            {"name": "py-random-a", "command": RANDOM},
            {"name": "py-random-b", "command": RANDOM},
        ],
        "format": {"seating": "rotate", "rounds": 1},
        "time": {"move_ms": 5000},
        "run": {"concurrency": 3},
    }, base_dir=tmp_path)
    data = asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=quiet_console, progress=False).run())
    assert data["status"] == {"done": 3}
    node = next(e for e in data["leaderboard"] if e["name"] == "node-random")
    assert node["matches"] == 3
    assert node["crashes"] == node["hangs"] == node["rejected"] == 0
    assert node["timeouts"] == 0  # it answered every decision itself
    logs = sorted((tmp_path / "out" / "bots").glob("*node-random.log"))
    assert len(logs) == 3 and all('"game over"' in p.read_text() for p in logs)
