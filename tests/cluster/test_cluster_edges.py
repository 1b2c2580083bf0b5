"""The edges of a ``referee serve --workers 2`` cluster (issue 22): CreateMatch's request_id
holds across workers (nginx spreads the admin's calls round robin, so a retry lands on the
other worker), and the rate limit of the calls nginx spreads holds for the cluster as a whole,
refused with the workers' status and reason."""
from __future__ import annotations

import asyncio
import sqlite3

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN, ClusterHandle


def md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def reason(err: grpc.aio.AioRpcError) -> str | None:
    return dict(err.trailing_metadata() or ()).get("referee-reason")


def test_a_create_match_retry_reaching_the_other_worker(cluster: ClusterHandle):
    req = pb.CreateMatchRequest(game="batavia", seats=3, seed=9, request_id="tour-1/7")

    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            replies = [(await stub.CreateMatch(req, metadata=md(ADMIN))).SerializeToString()
                       for _ in range(4)]  # round robin: both workers answer
            other = pb.CreateMatchRequest()
            other.CopyFrom(req)
            other.seed = 10
            refused = []
            for bad in (other, pb.CreateMatchRequest(game="batavia", seats=3,
                                                     request_id="é")):
                try:
                    await stub.CreateMatch(bad, metadata=md(ADMIN))
                except grpc.aio.AioRpcError as err:
                    refused.append((err.code(), reason(err)))
            # the match answers under the reply's tokens, through the proxy
            reply = pb.CreateMatchResponse.FromString(replies[0])
            view = await stub.GetView(pb.GetViewRequest(match_id=reply.match_id),
                                      metadata=md(reply.seats[0].token))
            return replies, refused, view

    replies, refused, view = asyncio.run(go())
    assert len(set(replies)) == 1
    assert refused == [(grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED"),
                       (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")]
    assert view.state_version >= 0
    con = sqlite3.connect(cluster.data / "referee.sqlite3")
    try:
        assert con.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 1
    finally:
        con.close()


def test_the_spread_calls_limit_holds_for_the_cluster(make_cluster):
    """Calls without a shard's token go to any worker, round robin: with a burst of 5 and a
    rate that refills nothing during the test, a client gets 5 answers from the cluster, not
    5 from each worker; the refusals carry RESOURCE_EXHAUSTED, the reason trailer and the
    ErrorInfo the workers send."""
    c = make_cluster("--rate", "0.01", "--burst", "5")

    async def go():
        async with grpc.aio.insecure_channel(c.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            out = []
            for _ in range(16):
                try:  # no token: the worker charges the client's address, then refuses
                    await stub.GetView(pb.GetViewRequest(match_id="nope"))
                    out.append(("OK", None, None))
                except grpc.aio.AioRpcError as err:
                    status = rpc_status.from_call(err)
                    info = error_details_pb2.ErrorInfo()
                    if status is not None and status.details:
                        status.details[0].Unpack(info)
                    out.append((err.code().name, reason(err), info.reason or None))
            return out

    out = asyncio.run(go())
    assert out[:5] == [("UNAUTHENTICATED", "UNAUTHENTICATED", "UNAUTHENTICATED")] * 5, out
    assert out[5:] == [("RESOURCE_EXHAUSTED",) * 3] * 11, out


def test_a_refusal_from_the_owner_keeps_its_status_and_reason(cluster: ClusterHandle):
    """A call naming another worker's match is passed to its owner; the owner's refusal comes
    back as the owner sent it (status, message, reason trailer), unary calls and streams alike.
    Each id is asked twice in a row, so round robin lands it on both workers."""

    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            out = []
            for mid in ("w1-00", "w1-00", "w2-00", "w2-00"):
                try:
                    await stub.GetView(pb.GetViewRequest(match_id=mid))
                except grpc.aio.AioRpcError as err:
                    out.append((err.code(), reason(err)))
                try:
                    async for _ in stub.Watch(pb.WatchRequest(match_id=mid)):
                        pass
                except grpc.aio.AioRpcError as err:
                    out.append((err.code(), reason(err)))
            return out

    out = asyncio.run(go())
    assert out == [(grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED"),
                   (grpc.StatusCode.NOT_FOUND, "NOT_FOUND")] * 4, out
