"""The Session / RegisterBot RPCs on the wire: bad input gets a clear status and changes
nothing; assignments reach the right bot, respect capacity, survive drops and restarts, and a
bot that never answers loses no match (the time policy ends it)."""
from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3

import grpc
import pytest

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.helpers import play_seat

from .helpers import ADMIN, RawSession, create_bound, md, reason_of, register


def _run(coro):
    return asyncio.run(coro)


def _db_rows(server, sql, args=()):
    con = sqlite3.connect(server.data_dir / "referee.sqlite3")
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


async def _session_error(target: str, token: str | None, first=None):
    """(code, details, referee-reason) of a Session the referee refuses."""
    async with grpc.aio.insecure_channel(target) as ch:
        s = RawSession(ch, token)
        if first is None:
            first = pb.SessionClientMessage(hello=pb.SessionHello(capacity=1))
        # the referee may refuse before it reads what is written: the call's status tells
        with contextlib.suppress(grpc.aio.AioRpcError):
            await s.call.write(first)
        code, details = await s.call.code(), await s.call.details()
        reason = dict(await s.call.trailing_metadata() or ()).get("referee-reason")
        s.close()
        return code, details, reason


def test_session_refuses_missing_unknown_seat_and_admin_tokens(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            await register(stub, "alice")
            _, seat_tokens = await create_bound(stub, ["", "", ""])
        for token in (None, "not-a-token", seat_tokens[0], ADMIN):
            code, details, reason = await _session_error(server.target, token)
            assert code == grpc.StatusCode.UNAUTHENTICATED, token
            assert reason == "UNAUTHENTICATED"
            assert "bot token" in details

    _run(go())


def test_register_bot_needs_the_admin_token_and_a_sane_name(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            for meta, code in (((), grpc.StatusCode.UNAUTHENTICATED),
                               (md("wrong"), grpc.StatusCode.PERMISSION_DENIED)):
                with pytest.raises(grpc.aio.AioRpcError) as ei:
                    await stub.RegisterBot(pb.RegisterBotRequest(name="x"), metadata=meta)
                assert ei.value.code() == code
            # "alpha\n": a look-alike of "alpha" that a "$"-anchored pattern let through
            for bad in ("", "-dash", "a b", "x" * 65, "alpha\n"):
                with pytest.raises(grpc.aio.AioRpcError) as ei:
                    await stub.RegisterBot(pb.RegisterBotRequest(name=bad), metadata=md(ADMIN))
                assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert reason_of(ei.value) == "MALFORMED"
        assert _db_rows(server, "SELECT name FROM bots") == []
        # the store keeps the token's hash, never the token
        async with grpc.aio.insecure_channel(server.target) as ch:
            token = await register(referee_pb2_grpc.RefereeStub(ch), "alice")
        rows = _db_rows(server, "SELECT name, token_hash FROM bots")
        assert rows[0][0] == "alice" and token not in rows[0][1]

    _run(go())


def test_session_needs_hello_first_and_a_sane_capacity(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            token = await register(referee_pb2_grpc.RefereeStub(ch), "alice")
        ack = pb.SessionClientMessage(ack=pb.AssignmentAck(match_id="m", seat=0, accept=True))
        big = pb.SessionClientMessage(hello=pb.SessionHello(capacity=100000))
        for first in (ack, big):
            code, _, reason = await _session_error(server.target, token, first)
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            assert reason == "MALFORMED"

    _run(go())


def test_create_match_with_unknown_or_miscounted_seat_bots_creates_nothing(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            await register(stub, "alice")
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await create_bound(stub, ["alice", "nobody", ""])
            assert ei.value.code() == grpc.StatusCode.NOT_FOUND
            assert "nobody" in ei.value.details()
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await stub.CreateMatch(pb.CreateMatchRequest(
                    game="batavia", seats=3, seat_bots=["alice", ""]), metadata=md(ADMIN))
            assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert _db_rows(server, "SELECT COUNT(*) FROM matches") == [(0,)]
        assert _db_rows(server, "SELECT COUNT(*) FROM assignments") == [(0,)]

    _run(go())


def test_assignments_reach_their_bot_only_and_foreign_acks_change_nothing(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            tb = await register(stub, "bob")
            sa, sb = RawSession(ch, ta), RawSession(ch, tb)
            await sa.hello()
            await sb.hello()
            match_id, tokens = await create_bound(stub, ["alice", "", "bob"])
            a = await sa.assignment()
            b = await sb.assignment()
            assert (a.match_id, a.seat, a.game, a.seat_count) == (match_id, 0, "batavia", 3)
            assert (b.match_id, b.seat) == (match_id, 2)
            assert a.seat_token == tokens[0] and b.seat_token == tokens[2]
            assert not a.resent
            # bob answers for alice's seat: refused, and alice still holds it
            await sb.ack(match_id, 0)
            n = (await sb.recv()).notice
            assert (n.reason, n.match_id, n.seat) == ("PERMISSION_DENIED", match_id, 0)
            assert "another bot" in n.message
            # nor can bob decline it for her (that would take it from her session)
            await sb.ack(match_id, 0, accept=False)
            assert (await sb.recv()).notice.reason == "PERMISSION_DENIED"
            assert server.call(_holder(server.service.sessions, (match_id, 0))) == "alice"
            await sa.nothing_for(0.2)  # and alice is not sent it again
            await sb.ack("no-such-match", 0)
            assert (await sb.recv()).notice.reason == "NOT_FOUND"
            await sb.ack("m" * 8000, 0)  # the notice quotes only a prefix of what was sent
            n = (await sb.recv()).notice
            assert n.reason == "NOT_FOUND" and len(n.message) < 150 and "m" * 100 not in n.message
            await sa.ack(a)
            await sb.ack(b)
            key = (match_id, 0)
            sessions = server.service.sessions
            assert server.call(_holder(sessions, key)) == "alice"
            # the seat tokens play the match on ordinary Play streams
            await _play_out(stub, match_id, tokens)
            sa.close()
            sb.close()
        await asyncio.sleep(0.2)
        assert _db_rows(server, "SELECT seat, bot, status FROM assignments ORDER BY seat") == [
            (0, "alice", "done"), (2, "bob", "done")]
        assert not server.service.sessions.open

    _run(go())


async def _play_out(stub, match_id: str, tokens: list[str]) -> None:
    """Random bots on the seat tokens play the match to its end."""
    logs = await asyncio.gather(*(
        play_seat(stub, match_id, t, random.Random(i)) for i, t in enumerate(tokens)))
    assert all(lg.game_over is not None for lg in logs)


async def _holder(sessions, key):
    a = sessions.open.get(key)
    return a.conn.bot if a and a.conn else None


def test_capacity_holds_back_assignments_until_a_match_ends(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            first, tokens1 = await create_bound(stub, ["alice", "", ""], seed=1)
            second, _ = await create_bound(stub, ["alice", "", ""], seed=2)
            s = RawSession(ch, ta, capacity=1)
            welcome = await s.hello()
            assert welcome.pending == 2
            a = await s.assignment()
            assert a.match_id == first  # oldest first
            await s.ack(a)
            await s.nothing_for(0.5)  # capacity 1: the second waits
            await _play_out(stub, first, tokens1)
            b = await s.assignment()
            assert b.match_id == second
            s.close()

    _run(go())


def test_capacity_counts_matches_so_one_bot_in_two_seats_is_not_stalled(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            s = RawSession(ch, ta, capacity=1)
            await s.hello()
            match_id, tokens = await create_bound(stub, ["alice", "", "alice"])
            other, _ = await create_bound(stub, ["alice", "", ""], seed=3)
            got = {(a.match_id, a.seat) for a in [await s.assignment(), await s.assignment()]}
            assert got == {(match_id, 0), (match_id, 2)}
            await s.nothing_for(0.3)  # the other match waits for room
            await _play_out(stub, match_id, tokens)
            assert (await s.assignment()).match_id == other
            s.close()

    _run(go())


def test_a_dropped_session_gets_its_assignments_again_and_a_decline_goes_elsewhere(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            s1 = RawSession(ch, ta)
            await s1.hello()
            match_id, _ = await create_bound(stub, ["alice", "", ""])
            a = await s1.assignment()
            await s1.ack(a)
            s1.close()
            s2 = RawSession(ch, ta)
            await s2.hello()
            again = await s2.assignment()
            assert (again.match_id, again.seat, again.seat_token) == (a.match_id, 0, a.seat_token)
            assert again.resent
            # declined: offered to another session of the same bot, never back to the decliner
            s3 = RawSession(ch, ta)
            await s3.hello()
            await s2.ack(again, accept=False)
            moved = await s3.assignment()
            assert moved.match_id == match_id
            await s2.nothing_for(0.3)
            s2.close()
            s3.close()

    _run(go())


def test_an_unanswered_assignment_times_out_and_the_match_still_ends(make_server):
    server = make_server(session_ack_s=0.3)

    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            s = RawSession(ch, ta)
            await s.hello()
            # join_ms: the clocks start 2 s after creation, not the referee's default 30 s
            # (nobody will join: the seats are never acknowledged)
            policy = pb.TimePolicy(move_ms=20, join_ms=2000, on_expiry=pb.RANDOM_LEGAL)
            match_id, _ = await create_bound(stub, ["alice", "alice", "alice"], policy=policy)
            # every seat of the one match (capacity counts matches); never answered
            got = {(await s.assignment()).seat for _ in range(3)}
            assert got == {0, 1, 2}
            notices = [(await s.recv()).notice for _ in range(3)]
            assert {(n.reason, n.match_id) for n in notices} == {("ACK_TIMEOUT", match_id)}
            assert {n.seat for n in notices} == {0, 1, 2}
            # the referee's time policy plays every seat to the end: no match is lost
            for _ in range(600):
                rec = await stub.GetRecord(pb.GetRecordRequest(match_id=match_id),
                                           metadata=md(ADMIN))
                if rec.complete:
                    break
                await asyncio.sleep(0.1)
            assert rec.complete and '"result"' in rec.record_json
            s.close()
        await asyncio.sleep(0.2)
        assert {r[0] for r in _db_rows(server, "SELECT status FROM assignments")} == {"done"}

    _run(go())


LONG = pb.TimePolicy(move_ms=600_000, on_expiry=pb.RANDOM_LEGAL)  # no clock runs out here


def test_an_unanswered_assignment_goes_to_another_session_of_the_bot(make_server):
    """After session_ack_s the assignment is taken back (ACK_TIMEOUT) and sent to the bot's
    other session, marked resent; a late ack from the first session then changes nothing, and
    the match waits for its seat as before (nothing is played or lost)."""
    server = make_server(session_ack_s=0.3)

    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            s1 = RawSession(ch, ta)
            await s1.hello()
            match_id, tokens = await create_bound(stub, ["alice", "", ""], policy=LONG)
            a = await s1.assignment()
            s2 = RawSession(ch, ta)
            await s2.hello()
            n = (await s1.recv()).notice
            assert (n.reason, n.match_id, n.seat) == ("ACK_TIMEOUT", match_id, 0)
            again = await s2.assignment()
            assert (again.match_id, again.seat, again.seat_token) == (match_id, 0, a.seat_token)
            assert again.resent
            await s2.ack(again)
            await s1.ack(a)  # too late: s2 has it now
            late = (await s1.recv()).notice
            assert (late.reason, late.match_id) == ("PERMISSION_DENIED", match_id)
            sessions = server.service.sessions
            held = sessions.open[(match_id, 0)]
            assert held.acked and held.conn is sessions.conns["alice"][1]
            await s2.nothing_for(0.5)  # acknowledged: no ACK_TIMEOUT for s2
            rt = server.service.matches[match_id]
            assert rt.game_over is None and rt.match.version == 0
            await _play_out(stub, match_id, tokens)
            s1.close()
            s2.close()
        await asyncio.sleep(0.2)
        assert _db_rows(server, "SELECT status FROM assignments") == [("done",)]

    _run(go())


def test_a_late_ack_takes_back_an_assignment_nobody_else_holds(make_server):
    server = make_server(session_ack_s=0.3)

    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            s = RawSession(ch, ta)
            await s.hello()
            match_id, _ = await create_bound(stub, ["alice", "", ""], policy=LONG)
            a = await s.assignment()
            assert (await s.recv()).notice.reason == "ACK_TIMEOUT"
            held = server.service.sessions.open[(match_id, 0)]
            assert held.conn is None
            await s.ack(a)
            await s.nothing_for(0.5)  # no notice: taken back, and no second timeout
            assert held.acked and held.conn is server.service.sessions.conns["alice"][0]
            s.close()

    _run(go())


def test_session_rate_limit_holds_per_peer_address_not_per_connection(make_server):
    """As on the other RPCs (tests/server/test_error_paths.py): unknown tokens on 4
    connections from one address share one burst of 5; the session key used to include the
    client's port, giving every new connection a fresh bucket."""
    server = make_server(rate=0.001, burst=5)

    async def go():
        channels = [grpc.aio.insecure_channel(
            server.target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(4)]
        codes = []
        try:
            for ch in channels:
                for i in range(3):
                    s = RawSession(ch, f"made-up-{i}")
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        await s.call.write(pb.SessionClientMessage(hello=pb.SessionHello()))
                    codes.append(await s.call.code())
                    s.close()
        finally:
            for ch in channels:
                await ch.close()
        return codes

    codes = _run(go())
    assert codes.count(grpc.StatusCode.UNAUTHENTICATED) == 5
    assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == 7


def test_open_assignments_are_sent_again_after_a_referee_restart(make_server, tmp_path):
    data = tmp_path / "restart"
    first = make_server(data)

    async def before():
        async with grpc.aio.insecure_channel(first.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            s = RawSession(ch, ta)
            await s.hello()
            match_id, tokens = await create_bound(stub, ["alice", "", ""])
            a = await s.assignment()
            await s.ack(a)
            s.close()
            return ta, match_id, tokens, a

    ta, match_id, tokens, _a = _run(before())
    first.stop()
    second = make_server(data)

    async def after():
        async with grpc.aio.insecure_channel(second.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            s = RawSession(ch, ta)  # the bot token survives the restart
            assert (await s.hello()).pending == 1
            again = await s.assignment()
            assert (again.match_id, again.seat, again.seat_token) == (match_id, 0, tokens[0])
            assert again.resent
            await s.ack(again)
            await _play_out(stub, match_id, tokens)
            s.close()

    _run(after())


def test_registering_a_bot_again_ends_the_sessions_of_its_old_token(server):
    """Issue 18, item 2: after RegisterBot replaces alice's token, her session opened with the
    old one ends at once (UNAUTHENTICATED, reason TOKEN_REPLACED) and is sent nothing more: a
    new match's assignment (with its seat token) and the one it left unacknowledged go to the
    session of the new token. A reconnect with the current token is served as before."""
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            old = await register(stub, "alice")
            s1 = RawSession(ch, old)
            await s1.hello()
            pending, _ = await create_bound(stub, ["alice", "", ""])
            assert (await s1.assignment()).match_id == pending  # never acknowledged
            new = await register(stub, "alice")
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await s1.recv()
            assert ei.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert reason_of(ei.value) == "TOKEN_REPLACED"
            assert "replaced" in ei.value.details()
            assert not server.service.sessions.conns.get("alice")
            later, tokens = await create_bound(stub, ["alice", "", ""], seed=8)
            s2 = RawSession(ch, new, capacity=2)
            await s2.hello()
            got = {(a.match_id, a.seat_token) for a in
                   [await s2.assignment(), await s2.assignment()]}
            assert got == {(pending, server.service.sessions.seat_token(pending, 0)),
                           (later, tokens[0])}
            assert (await _session_error(server.target, old))[2] == "UNAUTHENTICATED"
            s2.close()
            s3 = RawSession(ch, new, capacity=2)  # a reconnect with the current token: as before
            await s3.hello()
            assert {(await s3.assignment()).match_id, (await s3.assignment()).match_id} == {
                pending, later}
            s3.close()

    _run(go())


def test_a_session_notice_quotes_only_a_prefix_of_a_long_match_id(server):
    """Issue 18: a 50,000-character match id in an ack comes back as its first 64 characters
    and an ellipsis, never whole."""
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            s = RawSession(ch, await register(stub, "alice"))
            await s.hello()
            await s.ack("m" * 50_000, 0)
            n = (await s.recv()).notice
            assert n.reason == "NOT_FOUND"
            assert n.match_id == "m" * 64 + "…"
            await s.ack("short-id", 0)  # a short id is quoted whole, as before
            assert (await s.recv()).notice.match_id == "short-id"
            s.close()

    _run(go())
