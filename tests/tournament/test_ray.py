"""--backend ray: every match a Ray task on a local Ray instance (ray.init(num_cpus=2)).

Ray is the optional extra ``boardgame-referee[ray]``, which `make setup` installs with ``.[dev]``.
The tests install nothing (tests/test_offline.py): without Ray the two tests that start it skip
and say so.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from referee_tournament.config import parse
from referee_tournament.ray_backend import START_ATTEMPTS, start_local_ray
from referee_tournament.runner import Runner

from .conftest import GREEDY, RANDOM


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="Ray is not installed: `make setup` installs it "
                              "(the dev extra brings boardgame-referee[ray])")
    start_local_ray(ray, 2)  # Ray's own start-up wait is 30 s: tried again on a loaded machine
    yield ray
    ray.shutdown()


def test_ray_backend_plays_each_match_as_a_task(tmp_path, referee, quiet_console, local_ray):
    cfg = parse({
        "name": "ray", "output": str(tmp_path / "out"),
        "game": {"name": "batavia", "seats": 3},
        "entrants": [{"name": "random", "command": RANDOM}, {"name": "greedy", "command": GREEDY}],
        "format": {"seating": "rotate", "rounds": 1},
        "time": {"move_ms": 5000},
        "run": {"backend": "ray", "concurrency": 2},
    }, base_dir=tmp_path)
    data = asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=quiet_console, progress=False).run())
    assert data["status"] == {"done": 6}
    for m in data["matches"]:
        rec = json.loads((tmp_path / "out" / m["record"]).read_text())
        assert rec["result"]["ranks"] == m["ranks"]
    assert {e["name"] for e in data["leaderboard"]} == {"random", "greedy"}


def test_ray_task_with_its_own_referee(tmp_path, quiet_console, local_ray):
    cfg = parse({
        "name": "ray-own", "output": str(tmp_path / "out"),
        "game": {"name": "batavia", "seats": 3},
        "entrants": [{"name": "r1", "command": RANDOM}, {"name": "r2", "command": RANDOM},
                     {"name": "r3", "command": RANDOM}],
        "format": {"seating": "rotate", "rounds": 1},
        "run": {"backend": "ray", "concurrency": 2, "task_referee": True},
    }, base_dir=tmp_path)
    data = asyncio.run(Runner(cfg, console=quiet_console, progress=False, max_matches=2).run())
    assert data["status"] == {"done": 2, "pending": 1}
    assert all(m["referee"] == "task-local" for m in data["matches"] if m["status"] == "done")


class _SlowRay:
    """Ray's module as far as ``start_local_ray`` uses it, its raylet missing Ray's start-up
    wait ``fails`` times."""

    def __init__(self, fails: int, message: str = "The current node timed out during startup."):
        self.fails, self.message, self.inits, self.shutdowns = fails, message, 0, 0

    def init(self, **kwargs):
        self.inits += 1
        if self.inits <= self.fails:
            raise Exception(self.message)  # what Ray raises

    def shutdown(self):
        self.shutdowns += 1


def test_a_local_ray_slow_to_start_is_started_again():
    ray = _SlowRay(fails=START_ATTEMPTS - 1)
    start_local_ray(ray, 2)
    assert (ray.inits, ray.shutdowns) == (START_ATTEMPTS, START_ATTEMPTS - 1)
    never = _SlowRay(fails=START_ATTEMPTS)
    with pytest.raises(Exception, match="timed out during startup"):
        start_local_ray(never, 2)
    # the GCS server slow to write its port file (a clean-checkout CI run): started again too
    gcs = _SlowRay(fails=1, message="Timed out waiting for file /tmp/ray/session_x/gcs_server_port")
    start_local_ray(gcs, 2)
    assert (gcs.inits, gcs.shutdowns) == (2, 1)
    other = _SlowRay(fails=1, message="some other failure")  # not retried
    with pytest.raises(Exception, match="some other failure"):
        start_local_ray(other, 2)
    assert other.inits == 1

