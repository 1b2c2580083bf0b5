"""CreateMatch with a request_id is idempotent (issue 22; referee.proto, CreateMatchRequest
.request_id): the same admin sending the same request with the same request_id gets the first
call's reply byte for byte (same match id, same seat tokens), after a restart and from another
referee on the store too; the same request_id with another request is ALREADY_EXISTS /
REQUEST_ID_REUSED and creates nothing; a bad request_id is INVALID_ARGUMENT / MALFORMED. Run on
both stores (``store_url``: SQLite, PostgreSQL)."""
from __future__ import annotations

import asyncio
import shutil

import grpc
import pytest

from referee.server.store.opening import open_store
from referee.server.store.sqlite import MatchRow
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import md, reason_of


def request(rid: str = "run-1/match-7", seed: int = 11, seats: int = 3,
            **kw) -> pb.CreateMatchRequest:
    return pb.CreateMatchRequest(game="batavia", seats=seats, seed=seed, request_id=rid,
                                 options={"setup": "face_up"}, **kw)


async def call(target: str, req: pb.CreateMatchRequest) -> bytes:
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        return (await stub.CreateMatch(req, metadata=md(ADMIN))).SerializeToString()


async def refusal(target: str, req: pb.CreateMatchRequest) -> tuple[grpc.StatusCode, str | None]:
    try:
        await call(target, req)
    except grpc.aio.AioRpcError as err:
        return err.code(), reason_of(err)
    raise AssertionError("CreateMatch was not refused")


def running(srv) -> list[str]:
    return [r.id for r in srv.service.store.load_matches("running")]


def test_a_retry_gets_the_first_reply_even_after_a_restart(store_url, make_server, tmp_path):
    srv = make_server(tmp_path / "data", store_url=store_url)
    first = asyncio.run(call(srv.target, request()))
    assert asyncio.run(call(srv.target, request())) == first
    reply = pb.CreateMatchResponse.FromString(first)
    assert running(srv) == [reply.match_id] and len(reply.seats) == 3
    # the seat tokens work: the match is live under them
    tokens = {s.token for s in reply.seats}
    assert len(tokens) == 3 and all(t for t in tokens)
    srv.stop()
    srv.start()
    assert asyncio.run(call(srv.target, request())) == first
    assert running(srv) == [reply.match_id]
    # the same request without a request_id (or with another) is a new match
    other = pb.CreateMatchResponse.FromString(asyncio.run(call(srv.target, request(rid=""))))
    third = pb.CreateMatchResponse.FromString(asyncio.run(call(srv.target, request(rid="x"))))
    assert len({reply.match_id, other.match_id, third.match_id}) == 3
    assert sorted(running(srv)) == sorted([reply.match_id, other.match_id, third.match_id])


def test_the_same_request_id_for_another_request_is_refused(store_url, make_server, tmp_path):
    srv = make_server(tmp_path / "data", store_url=store_url)
    asyncio.run(call(srv.target, request()))
    before = running(srv)
    for changed in (request(seed=12), request(seats=4), request(unlisted=True)):
        assert asyncio.run(refusal(srv.target, changed)) == (
            grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED")
    assert running(srv) == before


@pytest.mark.parametrize("rid", ["x" * 129, "café", "tab\there", "new\nline", "\x00"])
def test_a_bad_request_id_is_malformed(rid, make_server, tmp_path):
    srv = make_server(tmp_path / "data")
    assert asyncio.run(refusal(srv.target, request(rid=rid))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
    assert running(srv) == []
    asyncio.run(call(srv.target, request(rid="~" * 128)))  # the longest, printable


def test_a_retry_reaching_another_referee_on_the_store(store_url, make_server, tmp_path):
    """Two referees on one store (one SQLite file, or one PostgreSQL database with the bot seat
    key copied, as on two hosts): a retry reaching the other one gets the same reply, and two
    calls racing on both create one match."""
    data_a = tmp_path / "a"
    a = make_server(data_a, store_url=store_url, lease_owner="a")
    data_b = data_a
    if store_url:
        data_b = tmp_path / "b"
        data_b.mkdir()
        shutil.copy(data_a / "bot-seats.key", data_b / "bot-seats.key")
        shutil.copy(data_a / "record-signing.key", data_b / "record-signing.key")
    b = make_server(data_b, store_url=store_url, lease_owner="b")
    first = asyncio.run(call(a.target, request()))
    assert asyncio.run(call(b.target, request())) == first

    async def race() -> list[bytes]:
        return list(await asyncio.gather(*(call(t, request(rid="race"))
                                           for t in (a.target, b.target) * 3)))

    replies = asyncio.run(race())
    assert len(set(replies)) == 1
    assert len(running(a)) == 2


def test_the_request_row_commits_with_its_match(store_url, tmp_path):
    """The store writes a request_id with its match in one transaction: a second match for the
    same request fails whole (no match row, no seat tokens, no lease), the first stays."""
    store = open_store(store_url, tmp_path)
    store.enable_leases("me", 5000, lambda _m: None)
    store.start()

    def row(mid: str) -> MatchRow:
        return MatchRow(id=mid, game="batavia", options={}, seats=2, seed=1,
                        components_name="s", components_sha256="0" * 64, time_policy={},
                        token_hashes=[mid + "0", mid + "1"], names=["x", "y"],
                        status="running", created_ms=1, finished_ms=None, forfeited=None,
                        result=None)

    async def run() -> None:
        await store.insert_match(row("m1"), ("adm", "r", "f1"))
        with pytest.raises(RuntimeError, match="store commit failed"):
            await store.insert_match(row("m2"), ("adm", "r", "f2"))
        await store.insert_match(row("m3"), ("other-admin", "r", "f2"))

    asyncio.run(run())
    assert store.created_by("adm", "r") == ("f1", "m1", 2)
    assert store.created_by("other-admin", "r") == ("f2", "m3", 2)
    assert store.created_by("adm", "q") is None
    assert store.match_status("m2") is None and store.match_of_token("m20") is None
    assert store.lease_holder("m2") is None and "m2" not in store.epochs
    store.close()
