"""AbandonSeat (issue 12, "Fail fast"): the host tells the referee it gave up on a seat's bot.
Under on_expiry FORFEIT the seat forfeits at once; otherwise its decisions are played at once
by the time policy (recorded as timeouts) instead of waiting out a long clock. Admin only;
bad input is refused and changes nothing."""
from __future__ import annotations

import asyncio
import json
import random
import sqlite3

import grpc
import pytest

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, play_seat, reason_of
from .test_time_policy import record_of, wait_for

LONG = 600_000  # a clock nobody waits for in a test


def _new(srv, on_expiry):
    # join_ms 1: the clocks start at once, seats joined or not (test_fair_clock tests the wait)
    policy = pb.TimePolicy(move_ms=LONG, on_expiry=on_expiry, join_ms=1)

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            return await create(referee_pb2_grpc.RefereeStub(ch), seats=3, seed=5,
                                policy=policy)
    return asyncio.run(run())


def _abandon(srv, mid, seat, token=ADMIN, unless_joined=False):
    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            return await referee_pb2_grpc.RefereeStub(ch).AbandonSeat(
                pb.AbandonSeatRequest(match_id=mid, seat=seat, reason="bot exited (code 3)",
                                      unless_joined=unless_joined), metadata=md(token))
    return asyncio.run(run())


def test_forfeit_policy_forfeits_at_once(server):
    mid, _ = _new(server, pb.FORFEIT)
    rt = server.service.matches[mid]
    seat = (rt.decision.seat + 1) % 3  # not even the seat to move
    resp = _abandon(server, mid, seat)
    assert resp.abandoned and resp.forfeited
    wait_for(lambda: rt.game_over is not None)
    record = asyncio.run(record_of(server, mid))
    assert record["forfeited"] == seat and record["moves"] == []


def test_other_policies_play_the_abandoned_seat_at_once(server):
    mid, tokens = _new(server, pb.RANDOM_LEGAL)
    rt = server.service.matches[mid]
    gone = rt.decision.seat
    resp = _abandon(server, mid, gone)
    assert resp.abandoned and not resp.forfeited

    async def others():  # the two live seats play; the abandoned one never waits its clock
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return await asyncio.wait_for(asyncio.gather(*(
                play_seat(stub, mid, tokens[s], random.Random(s)) for s in range(3)
                if s != gone)), 120)

    logs = asyncio.run(others())
    assert all(log.game_over is not None for log in logs)
    record = asyncio.run(record_of(server, mid))
    mine = [m for m in record["moves"] if m["seat"] == gone]
    assert mine and all(m["timeout"] and m["policy"] == "RANDOM_LEGAL" for m in mine)
    assert record["forfeited"] is None


def _stored_abandoned(srv, mid):
    conn = sqlite3.connect(srv.data_dir / "referee.sqlite3")
    try:
        text = conn.execute("SELECT abandoned_json FROM matches WHERE id=?", (mid,)).fetchone()[0]
    finally:
        conn.close()
    return json.loads(text) if text else None


def _play_out_without(srv, mid, tokens, gone, connect_gone=False):
    """The other seats play random moves to the end; with ``connect_gone`` the abandoned seat's
    bot is connected too but never answers. Bounded generously: with 10-minute clocks a seat
    that waited on its clock would hang the match, and only this bound would end the test."""
    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            seats = [play_seat(stub, mid, tokens[s], random.Random(s), react=s != gone)
                     for s in range(3) if s != gone or connect_gone]
            return await asyncio.wait_for(asyncio.gather(*seats), 120)
    return asyncio.run(run())


def test_an_abandonment_survives_a_referee_restart(make_server, tmp_path):
    """Issue 12: the abandoned set is committed before AbandonSeat replies and restored on
    resume, so a restarted referee plays the seat at once instead of waiting on its clock."""
    srv = make_server(tmp_path / "data")
    mid, tokens = _new(srv, pb.RANDOM_LEGAL)
    rt = srv.service.matches[mid]
    gone = (rt.decision.seat + 1) % 3  # not the seat to move: nothing is played before the stop
    version = rt.match.version
    assert _abandon(srv, mid, gone).abandoned
    assert _stored_abandoned(srv, mid) == {str(gone): "bot exited (code 3)"}  # before the reply
    assert rt.match.version == version
    srv.stop()

    srv.start()  # same data dir
    rt2 = srv.service.matches[mid]
    assert rt2 is not rt and rt2.match.version == version
    assert rt2.abandoned == {gone: "bot exited (code 3)"}
    logs = _play_out_without(srv, mid, tokens, gone)
    assert all(log.game_over is not None for log in logs)
    record = asyncio.run(record_of(srv, mid))
    mine = [m for m in record["moves"] if m["seat"] == gone]
    assert mine and all(m["timeout"] and m["policy"] == "RANDOM_LEGAL" for m in mine)
    assert record["forfeited"] is None


def test_a_bot_joining_an_abandoned_seat_does_not_take_it_back(server):
    """Abandonment is final for the match (referee.proto, AbandonSeat): the seat's bot connects
    afterwards and never answers, and its decisions are still played at once."""
    mid, tokens = _new(server, pb.DEFAULT_MOVE)
    rt = server.service.matches[mid]
    gone = rt.decision.seat
    assert _abandon(server, mid, gone).abandoned
    logs = _play_out_without(server, mid, tokens, gone, connect_gone=True)
    assert all(log.game_over is not None for log in logs)
    joined = next(log for log in logs if log.seat == gone)
    assert joined.welcome is not None and rt.abandoned == {gone: "bot exited (code 3)"}
    record = asyncio.run(record_of(server, mid))
    mine = [m for m in record["moves"] if m["seat"] == gone]
    assert mine and all(m["timeout"] and m["policy"] == "DEFAULT_MOVE" for m in mine)


def test_an_abandonment_the_store_cannot_commit_is_not_acknowledged(server):
    mid, _ = _new(server, pb.RANDOM_LEGAL)
    rt = server.service.matches[mid]
    store = server.service.store
    seat = rt.decision.seat
    version = rt.match.version

    def failing(match_id, abandoned):
        fut = asyncio.get_running_loop().create_future()
        fut.set_exception(RuntimeError("store commit failed: disk full"))
        return fut

    store.set_abandoned = failing
    try:
        with pytest.raises(grpc.aio.AioRpcError) as ei:
            _abandon(server, mid, seat)
    finally:
        del store.set_abandoned
    assert ei.value.code() == grpc.StatusCode.INTERNAL
    assert not rt.abandoned and rt.match.version == version and rt.game_over is None
    assert _stored_abandoned(server, mid) is None
    assert _abandon(server, mid, seat).abandoned  # and a later attempt that commits works


async def _joined(stub, mid, token):
    """A Play stream of the seat, joined (its Welcome read)."""
    call = stub.Play(metadata=md(token))
    await call.write(pb.ClientMessage(join=pb.Join(match_id=mid)))
    assert (await call.read()).HasField("welcome")
    return call


def test_unless_joined_leaves_a_joined_seat_alone(server):
    mid, tokens = _new(server, pb.FORFEIT)
    rt = server.service.matches[mid]
    seat = rt.decision.seat

    async def join_then_abandon():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            call = await _joined(stub, mid, tokens[seat])
            resp = await stub.AbandonSeat(pb.AbandonSeatRequest(
                match_id=mid, seat=seat, unless_joined=True), metadata=md(ADMIN))
            call.cancel()
            return resp

    resp = asyncio.run(join_then_abandon())
    assert not resp.abandoned and rt.game_over is None
    other = (seat + 1) % 3  # never joined: the join timeout applies
    assert _abandon(server, mid, other, unless_joined=True).forfeited


@pytest.mark.parametrize("token, seat, code, reason", [
    ("not-the-admin", 0, grpc.StatusCode.PERMISSION_DENIED, None),
    (ADMIN, 7, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED"),
    (ADMIN, -1, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED"),
])
def test_bad_requests_change_nothing(server, token, seat, code, reason):
    mid, _ = _new(server, pb.FORFEIT)
    rt = server.service.matches[mid]
    version = rt.match.version
    with pytest.raises(grpc.aio.AioRpcError) as ei:
        _abandon(server, mid, seat, token=token)
    assert ei.value.code() in (code, grpc.StatusCode.UNAUTHENTICATED)
    if reason:
        assert reason_of(ei.value) == reason
    assert rt.game_over is None and rt.match.version == version and not rt.abandoned


def test_unknown_match_is_not_found(server):
    with pytest.raises(grpc.aio.AioRpcError) as ei:
        _abandon(server, "feedfacefeedface", 0)
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.fixture
def no_time_policy(monkeypatch):
    """The time policy never plays (its expiry does nothing): what a bot sends for an abandoned
    seat is then judged on its own, with no race against the policy's move."""
    from referee.server.play.runtime import MatchRuntime
    monkeypatch.setattr(MatchRuntime, "_expired", lambda self, version: None)


async def _submit_legal(stub, mid, token):
    """The seat's pending decision answered with its first legal move, by SubmitMove."""
    d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid), metadata=md(token))
    assert d.legal_moves, "not this seat's turn"
    return await stub.SubmitMove(pb.SubmitMoveRequest(
        match_id=mid, state_version=d.state_version, move=d.legal_moves[0]), metadata=md(token))


def test_an_abandoned_seat_has_no_move_accepted_even_after_a_restart(make_server, tmp_path,
                                                                     no_time_policy):
    """Issue 18, item 3: AbandonSeat is final (referee.proto): a bot that joined the seat has
    its moves refused with SEAT_ABANDONED, on its Play stream and by SubmitMove, before and
    after a referee restart. A seat never abandoned still plays."""
    srv = make_server(tmp_path / "data")
    mid, tokens = _new(srv, pb.RANDOM_LEGAL)
    rt = srv.service.matches[mid]
    gone = rt.decision.seat
    version = rt.match.version

    async def joined_then_abandoned():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            call = await _joined(stub, mid, tokens[gone])
            d = (await call.read()).decision
            assert (await stub.AbandonSeat(pb.AbandonSeatRequest(
                match_id=mid, seat=gone, reason="bot hung"), metadata=md(ADMIN))).abandoned
            await call.write(pb.ClientMessage(submit=pb.Submit(
                state_version=d.state_version, move=d.legal_moves[0], request_id="late")))
            res = (await call.read()).move_result
            call.cancel()
            assert not res.accepted and res.reason == pb.SEAT_ABANDONED, res
            assert res.request_id == "late"
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await _submit_legal(stub, mid, tokens[gone])
            assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert reason_of(ei.value) == "SEAT_ABANDONED"

    asyncio.run(joined_then_abandoned())
    assert rt.match.version == version and rt.match.moves == []
    srv.stop()

    srv.start()  # same data dir: the abandonment is restored, and still final
    rt2 = srv.service.matches[mid]
    assert rt2.abandoned == {gone: "bot hung"}

    async def after_restart():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await _submit_legal(stub, mid, tokens[gone])
            assert reason_of(ei.value) == "SEAT_ABANDONED"

    asyncio.run(after_restart())
    assert rt2.match.version == version


def test_a_seat_never_abandoned_plays_on_beside_an_abandoned_one(server, no_time_policy):
    mid, tokens = _new(server, pb.RANDOM_LEGAL)
    rt = server.service.matches[mid]
    mover = rt.decision.seat
    gone = (mover + 1) % 3
    assert _abandon(server, mid, gone).abandoned

    async def play():
        async with grpc.aio.insecure_channel(server.target) as ch:
            return await _submit_legal(referee_pb2_grpc.RefereeStub(ch), mid, tokens[mover])

    assert asyncio.run(play()).accepted


def test_unless_joined_remembers_a_join_from_before_a_restart(make_server, tmp_path):
    """Issue 18, item 3: a bot that joined, then lost its connection when the referee
    restarted, is not given up on by a join timeout (AbandonSeat unless_joined) before it is
    back; nor is a seat that has moves of its own in the log."""
    srv = make_server(tmp_path / "data")
    mid, tokens = _new(srv, pb.FORFEIT)
    rt = srv.service.matches[mid]
    seat = rt.decision.seat

    async def join():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            (await _joined(referee_pb2_grpc.RefereeStub(ch), mid, tokens[seat])).cancel()

    asyncio.run(join())
    wait_for(lambda: _stored_joined(srv, mid) == [seat])  # the join is on disk
    srv.stop()
    srv.start()
    resp = _abandon(srv, mid, seat, unless_joined=True)
    assert not resp.abandoned and srv.service.matches[mid].game_over is None
    other = (seat + 1) % 3  # never joined: the join timeout still applies
    assert _abandon(srv, mid, other, unless_joined=True).forfeited


def _stored_joined(srv, mid):
    conn = sqlite3.connect(srv.data_dir / "referee.sqlite3")
    try:
        text = conn.execute("SELECT joined_json FROM matches WHERE id=?", (mid,)).fetchone()[0]
    except sqlite3.OperationalError:  # no such column (an older store)
        return None
    finally:
        conn.close()
    return json.loads(text) if text else None


@pytest.mark.parametrize("on_expiry", [pb.FORFEIT, pb.DEFAULT_MOVE])
def test_the_abandon_reason_is_in_the_record(server, on_expiry):
    """Issue 18, item 5: AbandonSeat's reason is "for the record" (referee.proto): the record
    lists each abandoned seat with it, the published schema accepts it, and replay verify
    reads the record."""
    import jsonschema

    from referee.core import registry
    from referee.core.match import replay
    from referee.schema import record_schema

    mid, tokens = _new(server, on_expiry)
    rt = server.service.matches[mid]
    gone = rt.decision.seat
    assert _abandon(server, mid, gone).abandoned
    if on_expiry != pb.FORFEIT:
        _play_out_without(server, mid, tokens, gone)
    wait_for(lambda: rt.game_over is not None)
    record = asyncio.run(record_of(server, mid))
    assert record["abandoned"] == [{"seat": gone, "reason": "bot exited (code 3)"}]
    jsonschema.validate(record, record_schema())
    replay(registry.get(record["game"]), record)
    bad = {**record, "abandoned": [{"seat": gone}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, record_schema())
