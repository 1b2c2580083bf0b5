"""CreateMatchRequest.reveal_policy's zero value means "not set" (issue 32 item 4;
referee.proto, RevealPolicy): release 0.1.0 numbered REVEAL_POLICY_SAFE 0, so a request of an
older client that leaves it out must still be SAFE, exactly as a newer client's explicit SAFE;
NONE stays NONE; the SDK and the runners send the value explicitly; and a retry of an older
client's request (request_id) sent again with the explicit SAFE is the same request."""
from __future__ import annotations

import asyncio

import grpc
from referee_client import AdminClient
from referee_tournament.config import parse
from referee_tournament.formats import schedule
from referee_tournament.play import match_request
from referee_tournament.runner import Runner

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import md, reason_of


async def _create(target: str, **fields) -> pb.CreateMatchResponse:
    async with grpc.aio.insecure_channel(target) as ch:
        return await referee_pb2_grpc.RefereeStub(ch).CreateMatch(
            pb.CreateMatchRequest(game="batavia", seats=3, seed=5, **fields),
            metadata=md(ADMIN))


def _policies(srv) -> dict[str, str]:
    return {r.id: r.reveal_policy for r in srv.service.store.load_matches("running")}


def test_unset_is_safe_like_explicit_safe_and_none_is_none(server):
    unset = asyncio.run(_create(server.target)).match_id
    safe = asyncio.run(_create(server.target, reveal_policy=pb.REVEAL_POLICY_SAFE)).match_id
    none = asyncio.run(_create(server.target, reveal_policy=pb.REVEAL_POLICY_NONE)).match_id
    assert _policies(server) == {unset: "safe", safe: "safe", none: "none"}


def test_a_retry_with_the_explicit_default_is_the_same_request(server):
    """An older runner stored its request_id and made the match without reveal_policy; the
    upgraded runner resumes and sends it again with REVEAL_POLICY_SAFE: the first reply, not
    REQUEST_ID_REUSED. NONE is another request."""
    first = asyncio.run(_create(server.target, request_id="run-1/0"))
    again = asyncio.run(_create(server.target, request_id="run-1/0",
                                reveal_policy=pb.REVEAL_POLICY_SAFE))
    assert again == first
    try:
        asyncio.run(_create(server.target, request_id="run-1/0",
                            reveal_policy=pb.REVEAL_POLICY_NONE))
    except grpc.aio.AioRpcError as err:
        assert (err.code(), reason_of(err)) == (grpc.StatusCode.ALREADY_EXISTS,
                                                "REQUEST_ID_REUSED")
    else:
        raise AssertionError("the same request_id with NONE was not refused")
    assert list(_policies(server)) == [first.match_id]


def test_the_sdk_and_the_runner_send_the_value_explicitly(tmp_path):
    sent: list[pb.CreateMatchRequest] = []
    admin = AdminClient("127.0.0.1:1", ADMIN)

    def capture(method, request, metadata):
        sent.append(request)
        return pb.CreateMatchResponse(match_id="m")

    admin._call = capture  # type: ignore[method-assign]
    admin.create_match("batavia", 3)
    admin.create_match("batavia", 3, reveal_policy=pb.REVEAL_POLICY_NONE)
    admin.close()
    assert [r.reveal_policy for r in sent] == [pb.REVEAL_POLICY_SAFE, pb.REVEAL_POLICY_NONE]

    cfg = parse({"game": {"name": "batavia", "seats": 3},
                 "entrants": [{"name": n, "command": "bot {address} {match} {token}"}
                              for n in ("a", "b", "c")]}, base_dir=tmp_path)
    request = match_request(Runner(cfg, progress=False).job_for(schedule(cfg)[0], None))
    assert request.reveal_policy == pb.REVEAL_POLICY_SAFE
