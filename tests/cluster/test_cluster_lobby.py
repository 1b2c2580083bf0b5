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
