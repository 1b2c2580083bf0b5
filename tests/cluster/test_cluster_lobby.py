"""The lobby in a cluster (issue 33; front/forward.py's ROUTED): every lobby call is handed to
the home worker, beside the bot sessions it seats, so seeks opened through one worker are seen
and joined through the other, and the match is the home worker's."""
from __future__ import annotations

import asyncio

import grpc

from referee.server.base import shard
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ClusterHandle


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def test_seeks_are_one_set_whichever_worker_a_call_reaches(cluster: ClusterHandle):
    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            people = [(await stub.EnterLobby(pb.EnterLobbyRequest(name=f"p{i}"))).lobby_token
                      for i in range(4)]
            opened = [await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2,
                                                             preset="blitz"),
                                          metadata=_md(p)) for p in people[:2]]
            ids = {o.seek.seek_id for o in opened}
            for _ in range(4):  # round robin over the workers: the same list each time
                listed = await stub.ListSeeks(pb.ListSeeksRequest())
                assert {s.seek_id for s in listed.seeks} == ids
            joined = await stub.JoinSeek(pb.JoinSeekRequest(invitation=opened[0].invitation),
                                         metadata=_md(people[2]))
            assert joined.seek.state == pb.SEEK_FILLED
            assert shard.of_match(joined.seek.match_id) == shard.HOME
            first = await stub.GetSeek(pb.GetSeekRequest(seek_id=opened[0].seek.seek_id),
                                       metadata=_md(people[0]))
            assert len(first.seat_tokens) == 1
    asyncio.run(go())


def test_one_set_of_house_bots_for_the_whole_cluster(make_cluster):
    """--house-bots goes to the home worker alone: one house-random (one session of its
    capacity, not one per worker replacing each other's tokens), playing a challenge made
    through the proxy."""
    import random
    import time

    cluster = make_cluster("--house-bots", "random", "--house-capacity", "3")

    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            deadline = time.monotonic() + 60
            bots: list = []
            while not bots and time.monotonic() < deadline:
                bots = list((await stub.ListSeeks(pb.ListSeeksRequest())).bots)
                await asyncio.sleep(0.3)
            await asyncio.sleep(2)  # any second copy would have connected by now
            bots = list((await stub.ListSeeks(pb.ListSeeksRequest())).bots)
            assert [(b.name, b.max_challenges) for b in bots] == [("house-random", 3)]
            me = (await stub.EnterLobby(pb.EnterLobbyRequest(name="ada"))).lobby_token
            got = await stub.Challenge(pb.ChallengeRequest(
                bot="house-random", game="goa", seats=2, preset="bot"), metadata=_md(me))
            assert got.seek.state == pb.SEEK_FILLED
            from tests.server.helpers import play_seat
            log = await play_seat(stub, got.seek.match_id, got.seat_tokens[0].token,
                                  random.Random(1))
            assert log.game_over is not None
    asyncio.run(go())
    assert len(_house_processes(cluster.proc.pid)) == 1


def _house_processes(root: int) -> list[int]:
    from pathlib import Path

    from bench.cluster import descendants

    out = []
    for pid in descendants(root):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"referee_client.cli" in cmd and b"session" in cmd:
            out.append(pid)
    return out
