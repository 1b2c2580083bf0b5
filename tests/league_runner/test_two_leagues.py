"""Issue 19, item 1: "can be paused, resumed and stopped cleanly. Several leagues can share one
referee." Two leagues on one referee, each with its own remote session bots and runner; one is
paused (its matches stop while the other's go on), resumed, then stopped (its runner exits by
itself); the other's runner stops on SIGTERM and keeps its finished results."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import grpc
from referee_tournament.procs import LocalReferee

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from ..tournament.conftest import cli_command
from .helpers import remote_league, remote_league_toml, stop_all


def _rows(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT idx, status, seating FROM matches ORDER BY idx").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def _done(db: Path) -> int:
    return sum(r[1] == "done" for r in _rows(db))


def _wait(what: str, check, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_two_leagues_share_a_referee_and_pause_resume_stop(tmp_path):
    ref = LocalReferee(tmp_path / "ref").start()
    procs: list[subprocess.Popen] = []
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    env["REFEREE_ADMIN_TOKEN"] = ref.admin_token  # the runner's own environment only
    try:
        files, dbs, serves = {}, {}, {}
        for lg in ("north", "south"):
            files[lg] = tmp_path / f"{lg}.toml"
            remote_league_toml(files[lg], lg, ref.address)
            remote_league(ref.address, ref.admin_token, lg, [f"{lg}-0", f"{lg}-1"], env,
                          procs)
            dbs[lg] = tmp_path / lg / "league.sqlite"
            serves[lg] = subprocess.Popen(
                [*cli_command(), "league", "serve", str(files[lg]), "--out",
                 str(tmp_path / lg)], env=env, stdout=subprocess.DEVNULL,
                stderr=open(tmp_path / f"{lg}.log", "w"),  # noqa: SIM115
                start_new_session=True)
            procs.append(serves[lg])

        def cli(action: str, lg: str) -> str:
            got = subprocess.run([*cli_command(), "league", action, str(files[lg])],
                                 capture_output=True, text=True, env=env, timeout=60,
                                 check=False)
            assert got.returncode == 0, got.stderr
            return got.stdout

        _wait("both leagues play", lambda: _done(dbs["north"]) >= 2 and _done(dbs["south"]) >= 2)
        assert "LEAGUE_PAUSED" in cli("pause", "north")
        assert json.loads(cli("status", "north"))["state"] == "LEAGUE_PAUSED"
        _wait("north's running match to finish",
              lambda: not any(r[1] == "running" for r in _rows(dbs["north"])))
        paused_at = len(_rows(dbs["north"]))
        south = _done(dbs["south"])
        _wait("south to go on", lambda: _done(dbs["south"]) >= south + 3)
        assert len(_rows(dbs["north"])) == paused_at  # no new match while paused
        cli("resume", "north")
        _wait("north to play again", lambda: _done(dbs["north"]) > paused_at)
        cli("stop", "north")
        assert serves["north"].wait(120) == 0  # running matches finished, then it exited
        assert all(r[1] in ("done", "failed") for r in _rows(dbs["north"]))
        # each league seats only its own bots
        for lg in ("north", "south"):
            seated = {k for r in _rows(dbs[lg]) for k in json.loads(r[2])}
            assert seated <= {f"{lg}-0", f"{lg}-1"}, seated
        before = _done(dbs["south"])
        serves["south"].send_signal(signal.SIGTERM)
        assert serves["south"].wait(60) == 130  # interrupted, resumable
        assert _done(dbs["south"]) >= before  # its finished results are kept
        with grpc.insecure_channel(ref.address) as ch:
            got = pb_grpc.RefereeStub(ch).GetLeague(pb.GetLeagueRequest(name="south"),
                                                    timeout=30)
        assert got.state == pb.LEAGUE_RUNNING  # SIGTERM stops the runner, not the league
    finally:
        stop_all(procs)
        ref.stop()
