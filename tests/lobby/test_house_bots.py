"""House bots (issue 33, item 3; referee.server.house): ``referee serve --house-bots`` runs the
SDK's reference bots as child processes connected through Sessions that accept challenges, so
a person always finds someone to play; they go with the referee."""
from __future__ import annotations

import asyncio
import os
import random
import time

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.helpers import md, play_seat


def test_a_person_challenges_a_house_bot_and_plays_it_out(make_server):
    srv = make_server(house_bots=("random",), house_capacity=2)

    async def body():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            deadline = time.monotonic() + 60
            while True:  # the bot's process starts and opens its Session
                bots = (await stub.ListSeeks(pb.ListSeeksRequest())).bots
                if bots or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            assert [(b.name, b.house, b.max_challenges) for b in bots] == [
                ("house-random", True, 2)]
            me = (await stub.EnterLobby(pb.EnterLobbyRequest(name="ada"))).lobby_token
            got = await stub.Challenge(pb.ChallengeRequest(
                bot="house-random", game="goa", seats=2, preset="bot"), metadata=md(me))
            assert got.seek.state == pb.SEEK_FILLED and len(got.seat_tokens) == 1
            log = await play_seat(stub, got.seek.match_id, got.seat_tokens[0].token,
                                  random.Random(3))
            assert log.game_over is not None
            return got.seek.match_id
    mid = asyncio.run(body())
    assert mid
    pids = [p.pid for p in srv.server.house.procs.values()]
    assert pids and all(_alive(p) for p in pids)
    srv.stop()
    assert not any(_alive(p) for p in pids)  # stopped with the referee


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped counts as gone
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def test_house_bots_die_with_a_killed_referee(tmp_path):
    """``referee serve --house-bots`` as a process, killed with SIGKILL: no house bot outlives
    it, retrying a referee that is gone for ever (they are in sessions of their own, so only
    their parent-death signal reaches them)."""
    import signal

    from referee_tournament.procs import LocalReferee

    from bench.cluster import descendants

    ref = LocalReferee(tmp_path / "data", extra_args=("--house-bots", "random")).start()
    try:
        deadline = time.monotonic() + 60
        bots: set[int] = set()
        while not bots and time.monotonic() < deadline:
            bots = descendants(ref.proc.pid)
            time.sleep(0.1)
        assert bots, "no house bot was started"
        os.kill(ref.proc.pid, signal.SIGKILL)
        ref.proc.wait()
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in bots) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in bots)
    finally:
        if ref.proc.poll() is None:
            ref.proc.kill()
            ref.proc.wait()


def test_house_bots_behind_tls_need_the_unix_socket(tmp_path):
    """They connect in plain text, so over the Unix socket only: with --tls-cert and no --unix
    the referee refuses to start, one line, exit 2, rather than have them retry for ever."""
    import shutil
    import subprocess
    import sys

    import pytest

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    from tests.client.test_client_tls import self_signed

    key, cert = self_signed(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "serve", "--admin-token", "t", "--port", "0",
         "--tls-cert", str(cert), "--tls-key", str(key), "--house-bots",
         "--data-dir", str(tmp_path / "data")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("referee serve: --house-bots with --tls-cert needs --unix "
                                   "PATH: the house bots connect to the referee over its Unix "
                                   "socket")
