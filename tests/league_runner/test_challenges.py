"""Issue 33 item 2, end to end: "play the champion" results kept apart from the bots' ratings
unless the organizer says otherwise (`rate_challenges`).

A league of two remote session bots plays its own matches; a person (an anonymous lobby
identity) challenges an entrant through the lobby and plays the match to its end. A runner
without ``rate_challenges`` takes the challenge in apart (the standings' ``challenges``
section), its ratings untouched; with it, the next challenge moves the entrant's rating and the
challengers' pool entry, exactly once: a restarted runner takes nothing in again. The standings
JSON (the web API) and the league page show the section."""
from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import urllib.request
from pathlib import Path

import grpc
import pytest
from referee_tournament.procs import LocalReferee

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc
from tests.server.helpers import md, play_seat

from ..tournament.conftest import cli_command
from .helpers import _wait, _web_port, remote_league, remote_league_toml, stop_all

LEAGUE = "champs"
POOL = "~challengers"


def _toml(path: Path, address: str, rate: bool, max_matches: int = 2) -> None:
    remote_league_toml(path, LEAGUE, address, f"max_matches = {max_matches}\n",
                       more=f"challenges = true\nrate_challenges = {str(rate).lower()}")


def _db(out: Path) -> tuple[dict[str, tuple], list[tuple], int]:
    """(ratings by key, challenge rows, history rows) of the league's database."""
    con = sqlite3.connect(f"file:{out / 'league.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        ratings = {k: (mu, sigma, n) for k, mu, sigma, n in con.execute(
            "SELECT key, mu, sigma, matches FROM ratings")}
        rows = con.execute("SELECT match_id, seating, rated FROM matches WHERE challenge=1"
                           " ORDER BY idx").fetchall()
        history = con.execute("SELECT COUNT(*) FROM history").fetchone()[0]
    finally:
        con.close()
    return ratings, rows, history


def _run_league(toml: Path, out: Path, env: dict[str, str], log: Path) -> None:
    """One runner to its end (its max_matches are played: it takes the challenges in, publishes
    and exits)."""
    with open(log, "a") as err:
        got = subprocess.run([*cli_command(), "league", "serve", str(toml), "--out", str(out)],
                             env=env, stdout=subprocess.DEVNULL, stderr=err, timeout=300,
                             check=False)
    assert got.returncode == 0, log.read_text()[-2000:]


def _challenge(address: str, bot: str, rated: bool) -> str:
    """A person challenges ``bot`` in the lobby and plays the match to its end."""
    async def go() -> str:
        async with grpc.aio.insecure_channel(address) as ch:
            stub = pb_grpc.RefereeStub(ch)
            me = (await stub.EnterLobby(pb.EnterLobbyRequest(name="ada"))).lobby_token
            got = await stub.Challenge(pb.ChallengeRequest(
                bot=bot, game="santa_maria", seats=2, preset="bot", rated=rated),
                metadata=md(me))
            assert got.seek.state == pb.SEEK_FILLED, got
            log = await play_seat(stub, got.seek.match_id, got.seat_tokens[0].token,
                                  random.Random(7))
            assert log.game_over is not None
            return got.seek.match_id
    return asyncio.run(go())


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


@pytest.mark.slow
def test_challenges_are_kept_apart_then_rated_once_when_the_organizer_says_so(tmp_path):
    ref = LocalReferee(tmp_path / "ref", extra_args=("--http-port", "0")).start()
    procs: list[subprocess.Popen] = []
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    env["REFEREE_ADMIN_TOKEN"] = ref.admin_token
    toml, out, log = tmp_path / "league.toml", tmp_path / "out", tmp_path / "league.log"
    try:
        base = f"http://127.0.0.1:{_web_port(ref.log_path)}"
        remote_league(ref.address, ref.admin_token, LEAGUE, ["north", "south"], env, procs)
        _toml(toml, ref.address, rate=False)
        _run_league(toml, out, env, log)  # the league's own two matches
        before, rows, _ = _db(out)
        assert rows == [] and set(before) == {"north", "south"}

        # without rate_challenges: taken in apart, the ratings untouched
        first = _challenge(ref.address, "north", rated=True)
        _run_league(toml, out, env, log)
        after, rows, _ = _db(out)
        assert [(m, r) for m, _, r in rows] == [(first, 0)]
        assert json.loads(rows[0][1]) in (["north", POOL], [POOL, "north"])
        assert after == before  # not the entrant's, not a pool's
        doc = json.loads(_get(f"{base}/api/leagues/{LEAGUE}/standings"))
        doc = doc.get("standings", doc)
        ch = doc["challenges"]
        assert ch["rated"] is False and ch["matches"] == 1 and ch["pool"] is None
        assert [e["bot"] for e in ch["by_entrant"]] == ["north"]
        assert ch["recent"][0]["match"] == first and ch["recent"][0]["rated"] is False

        # the organizer says otherwise: the next challenge is rated, once
        _toml(toml, ref.address, rate=True)
        second = _challenge(ref.address, "north", rated=True)
        _run_league(toml, out, env, log)
        rated, rows, history = _db(out)
        assert [(m, r) for m, _, r in rows] == [(first, 0), (second, 1)]
        assert rated["north"] != before["north"] and rated["north"][2] == before["north"][2] + 1
        assert rated["south"] == before["south"]
        assert rated[POOL][2] == 1  # the challengers' pool entry
        doc = json.loads(_get(f"{base}/api/leagues/{LEAGUE}/standings"))
        doc = doc.get("standings", doc)
        ch = doc["challenges"]
        assert ch["rated"] is True and ch["matches"] == 2 and ch["pool"]["matches"] == 1
        assert [e["bot"] for e in doc["entries"]] == sorted(
            ["north", "south"], key=lambda b: -next(e["rating"] for e in doc["entries"]
                                                   if e["bot"] == b))
        assert all(not e["bot"].startswith("~") for e in doc["entries"])
        assert all(not p["bot"].startswith("~") and not p["opponent"].startswith("~")
                   for p in doc["head_to_head"])
        page = _get(f"{base}/leagues/{LEAGUE}")
        assert 'id="challenges" data-rated="yes"' in page
        assert 'id="challengers-pool"' in page and second in page

        # a restarted runner takes nothing in again
        _run_league(toml, out, env, log)
        again, rows_again, history_again = _db(out)
        assert again == rated and rows_again == rows and history_again == history

        # a runner killed with SIGKILL once it took a challenge in: the one after it takes
        # nothing in twice (the league is paused, so that the killed one plays no match)
        third = _challenge(ref.address, "north", rated=True)
        got = subprocess.run([*cli_command(), "league", "pause", str(toml)], env=env,
                             capture_output=True, text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
        forever = tmp_path / "forever.toml"
        _toml(forever, ref.address, rate=True, max_matches=0)
        with open(log, "a") as err:
            runner = subprocess.Popen(
                [*cli_command(), "league", "serve", str(forever), "--out", str(out)], env=env,
                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        procs.append(runner)
        _wait("the challenge taken in", lambda: len(_db(out)[1]) == 3, proc=runner)
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(10)
        _run_league(toml, out, env, log)
        final, rows_final, _ = _db(out)
        assert [m for m, _, _ in rows_final] == [first, second, third]
        assert final[POOL][2] == 2 and final["north"][2] == rated["north"][2] + 1
    finally:
        stop_all(procs)
        ref.stop()
