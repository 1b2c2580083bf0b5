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
