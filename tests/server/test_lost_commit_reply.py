"""A move's commit whose outcome the referee cannot know, and decisions timed afresh after an
outage (issue 31 item 1, follow-up).

The fault is injected at the exact point between the database's commit and the referee's
reading of its reply: a wrapper around every store connection whose COMMIT of a move commits
and then fails as a lost connection does (psycopg's OperationalError with the connection closed;
SQLite's SQLITE_IOERR), or fails without committing. The referee refuses the move with
STORE_UNAVAILABLE either way (it cannot tell), then asks the store, which is the truth: the
match goes on as if the move had been acknowledged when it is stored, and stays where it was
when it is not. Before the fix the store sent the batch again, the move's insert failed on its
primary key and the match went offline (``broken``)."""
from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from typing import Any

import grpc
import psycopg
import pytest

from referee.server.base.clock import MatchClock
from referee.server.store.postgres import PostgresStore
from referee.server.store.sqlite import SqliteStore, unavailable
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md

#: generous: the machine is loaded (the store's connections are retried every 2 s at most)
WAIT_S = 15.0


class Fault:
    """What the wrapped connections do to the next COMMIT of a transaction that inserted a
    move (``lose``: "committed", the commit goes through and its reply is lost; "rolled back",
    it fails before it commits) or finished a match (``finish``, the same), or to the next
    ``insert_fails`` inserts of a move (SQLITE_FULL, as on a full disk)."""

    def __init__(self) -> None:
        self.lose = ""
        self.finish = ""  # as ``lose``, for the COMMIT of a match's end
        self.fired = 0
        self.insert_fails = 0

    def error(self, conn: Any) -> Exception:
        if isinstance(conn, sqlite3.Connection):
            exc = sqlite3.OperationalError("disk I/O error")
            exc.sqlite_errorcode = sqlite3.SQLITE_IOERR  # type: ignore[attr-defined]
            return exc
        conn.raw.close()  # the connection dies with the reply
        return psycopg.OperationalError("consuming input failed: server closed the connection "
                                        "unexpectedly")


class FaultyConn:
    """A store connection (sqlite3's or the PostgreSQL store's PgConn) with ``Fault`` in it."""

    def __init__(self, conn: Any, fault: Fault):
        self._conn = conn
        self._fault = fault
        self._move = False  # the open transaction inserted a move
        self._finish = False  # the open transaction finished a match

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, sql: Any, params: Any = ()) -> Any:
        f = self._fault
        if isinstance(sql, str) and sql.startswith("INSERT INTO moves"):
            if f.insert_fails:
                f.insert_fails -= 1
                exc = sqlite3.OperationalError("database or disk is full")
                exc.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
                raise exc
            self._move = True
        if isinstance(sql, str) and sql.startswith("UPDATE matches SET status"):
            self._finish = True
        if sql == "COMMIT" and ((self._move and f.lose) or (self._finish and f.finish)):
            if self._finish and f.finish:
                lose, f.finish = f.finish, ""
            else:
                lose, f.lose = f.lose, ""
            self._move = self._finish = False
            f.fired += 1
            if lose == "committed":
                self._conn.execute(sql)
            raise f.error(self._conn)
        if sql in ("COMMIT", "ROLLBACK"):
            self._move = self._finish = False
        return self._conn.execute(sql, params)


@pytest.fixture
def fault(monkeypatch) -> Fault:
    """Every connection either store opens from now on carries the same ``Fault``."""
    f = Fault()
    for cls in (SqliteStore, PostgresStore):
        orig = cls._connect
        monkeypatch.setattr(cls, "_connect",
                            lambda self, _orig=orig: FaultyConn(_orig(self), f))
    return f


class Seat:
    """One seat's Play stream: what it was sent, in order, read with ``expect``."""

    def __init__(self, stub, match_id: str, token: str):
        self.out: asyncio.Queue = asyncio.Queue()
        self.msgs: asyncio.Queue = asyncio.Queue()
        self.decisions: dict[int, pb.Decision] = {}
        self.out.put_nowait(pb.ClientMessage(join=pb.Join(match_id=match_id)))
        self.call = stub.Play(self._requests(), metadata=md(token))
        self.task = asyncio.ensure_future(self._read())

    async def _requests(self):
        while (m := await self.out.get()) is not None:
            yield m

    async def _read(self) -> None:
        async for msg in self.call:
            if msg.WhichOneof("msg") == "decision":  # the last one sent for each version
                self.decisions[msg.decision.state_version] = msg.decision
            await self.msgs.put(msg)

    def submit(self, version: int, move: pb.Move) -> None:
        self.out.put_nowait(pb.ClientMessage(submit=pb.Submit(
            state_version=version, move=move, request_id=f"r{version}")))

    async def expect(self, which: str, check=lambda m: True) -> Any:
        """The next message of kind ``which`` that passes ``check`` (others are skipped)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            msg = await asyncio.wait_for(self.msgs.get(), deadline - time.monotonic())
            if msg.WhichOneof("msg") == which and check(getattr(msg, which)):
                return getattr(msg, which)

    async def close(self) -> None:
        self.out.put_nowait(None)
        self.call.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def _until(check, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def _decision(seats: list[Seat], rt) -> tuple[int, int, pb.Decision]:
    """The pending decision: (seat, version, the Decision its stream was sent)."""
    await _until(lambda: rt.decision is not None and not rt.held, "a decision")
    seat, version = rt.decision.seat, rt.match.version
    await _until(lambda: version in seats[seat].decisions, "the decision to be sent")
    return seat, version, seats[seat].decisions[version]


async def _play_to_end(seats: list[Seat], rt, rng: random.Random) -> None:
    """Random legal moves, each accepted, until the match is over."""
    while True:
        await _until(lambda: rt.game_over is not None or (rt.decision is not None
                                                         and not rt.held), "a decision")
        if rt.game_over is not None:
            return
        await _play(seats, rt, rng)


async def _play(seats: list[Seat], rt, rng: random.Random) -> None:
    """One move of the pending decision, accepted."""
    seat, version, d = await _decision(seats, rt)
    seats[seat].submit(version, rng.choice(list(d.legal_moves)))
    r = await seats[seat].expect("move_result")
    assert r.accepted, r


def _same_log(srv, rt, mid: str) -> None:
    """The store holds exactly the moves the referee played, in order."""
    stored = [(m.n, m.seat, m.state_hash) for m in srv.server.store.load_moves(mid)]
    assert stored == [(e.n, e.seat, e.state_hash) for e in rt.match.moves]


@pytest.mark.parametrize("lose", ["committed", "committed, store unread", "rolled back"])
def test_a_commit_whose_reply_is_lost_is_settled_by_the_store(make_server, tmp_path, store_url,
                                                             fault, lose):
    """issue 31 item 1 (follow-up): a move whose COMMIT fails with the connection is refused
    STORE_UNAVAILABLE, and the store decides. Stored after all ("committed"): the match goes on
    by itself as if it had been acknowledged (the next decision is sent), the same move sent
    again is refused as a duplicate (STALE_STATE / NOT_YOUR_TURN, not counted as a refused
    move), the match never goes offline and plays to its end with the store's log equal to
    the referee's and the record's. While the store cannot be read ("store unread") a resend
    is refused STORE_UNAVAILABLE and nothing moves. Not stored ("rolled back"): the match
    stays where it was and the resend is accepted. (Before: the batch was sent again, failed on
    the move's primary key and the match went offline.)"""
    srv = make_server(tmp_path / "data", store_url=store_url)
    store = srv.server.store
    reads_fail = asyncio.Event()
    if lose == "committed, store unread":  # the store's read of the moves fails for a while
        real_read = store.stored_moves

        def stored_moves(match_id: str, first: int):
            if reads_fail.is_set():
                raise unavailable(store.kind)
            return real_read(match_id, first)

        store.stored_moves = stored_moves

    async def go() -> None:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11)
            seats = [Seat(stub, mid, t) for t in tokens]
            rt = srv.service.matches[mid]
            rng = random.Random(5)
            try:
                for _ in range(4):
                    await _play(seats, rt, rng)
                seat, version, d = await _decision(seats, rt)
                move = d.legal_moves[0]
                fault.lose = "rolled back" if lose == "rolled back" else "committed"
                if lose == "committed, store unread":
                    reads_fail.set()
                seats[seat].submit(version, move)
                r = await seats[seat].expect("move_result")
                assert fault.fired == 1
                assert not r.accepted and r.reason == pb.STORE_UNAVAILABLE, r
                assert r.state_version == version

                if lose == "committed, store unread":
                    await asyncio.sleep(0.5)  # the referee tries to read, and cannot
                    assert rt.match.version == version and rt.unsure is not None
                    seats[seat].submit(version, move)
                    r = await seats[seat].expect("move_result")
                    assert not r.accepted and r.reason == pb.STORE_UNAVAILABLE, r
                    assert rt.match.version == version
                    reads_fail.clear()

                if lose == "rolled back":
                    await _until(lambda: getattr(rt, "unsure", None) is None,
                                 "the store to be asked")
                    assert rt.match.version == version
                    seats[seat].submit(version, move)
                    r = await seats[seat].expect("move_result")
                    assert r.accepted and r.state_version == version + 1, r
                else:
                    # the match goes on by itself: the move is in the store
                    await _until(lambda: rt.match.version == version + 1, "the move")
                    nxt, v2, _d = await _decision(seats, rt)
                    assert v2 == version + 1
                    seats[seat].submit(version, move)  # the resend of the stored move
                    r = await seats[seat].expect("move_result")
                    assert not r.accepted, r
                    assert r.reason == (pb.STALE_STATE if nxt == seat else pb.NOT_YOUR_TURN)
                    assert rt.rejections == [0, 0, 0]
                assert not rt.broken
                _same_log(srv, rt, mid)

                await _play_to_end(seats, rt, rng)
                assert not rt.broken
                rec = json.loads((await stub.GetRecord(
                    pb.GetRecordRequest(match_id=mid))).record_json)
                stored = srv.server.store.load_moves(mid)
                assert [m["state_hash"] for m in rec["moves"]] == [m.state_hash for m in stored]
                assert rec["rejected_moves"] == [0, 0, 0]
            finally:
                for s in seats:
                    await s.close()

    srv.call(go(), timeout=WAIT_S * 4)


def test_a_time_policy_move_whose_reply_is_lost_is_settled_by_the_store(make_server, tmp_path,
                                                                       fault):
    """issue 31 item 1 (follow-up): the time policy's own move, committed but its reply lost,
    is found in the store: the match goes on from it (one strike, as if acknowledged), never
    offline, and the store's log equals the referee's. (Before: the retried batch failed on the
    move's primary key and the match went offline.)"""
    srv = make_server(tmp_path / "data")
    policy = pb.TimePolicy(move_ms=300, grace_ms=50, on_expiry=pb.RANDOM_LEGAL, strikes=5)

    async def go() -> None:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11, policy=policy)
            seats = [Seat(stub, mid, t) for t in tokens]
            rt = srv.service.matches[mid]
            try:
                seat, version, _d = await _decision(seats, rt)
                fault.lose = "committed"  # nobody answers: the time policy moves
                await _until(lambda: fault.fired == 1, "the time policy's move")
                await _until(lambda: rt.match.version == version + 1, "the move")
                assert rt.match.moves[-1].timeout
                assert rt.clock.strikes_used[seat] == 1
                assert not rt.broken and rt.unsure is None
                _same_log(srv, rt, mid)
            finally:
                for s in seats:
                    await s.close()

    srv.call(go(), timeout=WAIT_S * 2)


def test_a_decision_timed_afresh_is_sent_again_with_its_new_deadline(make_server, tmp_path,
                                                                     fault):
    """issue 31 item 1 (follow-up): a move refused because the store could not commit it
    times its decision afresh; the seat is sent that decision again with the new deadline
    (same state version), and the spectators a clock with it, so that what they are shown is
    what the referee enforces. (Before: the bot kept the old deadline.)"""
    srv = make_server(tmp_path / "data")
    policy = pb.TimePolicy(move_ms=20000, grace_ms=100)

    async def go() -> None:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11, policy=policy)
            seats = [Seat(stub, mid, t) for t in tokens]
            rt = srv.service.matches[mid]
            watch = stub.Watch(pb.WatchRequest(match_id=mid))
            try:
                seat, version, d = await _decision(seats, rt)
                await asyncio.sleep(0.3)  # the new deadline is later than the first
                fault.insert_fails = 3  # the batch, then each write of it again
                seats[seat].submit(version, d.legal_moves[0])
                r = await seats[seat].expect("move_result")
                assert not r.accepted and r.reason == pb.STORE_UNAVAILABLE, r
                again = await seats[seat].expect(
                    "decision", lambda x: x.state_version == version)
                assert again.deadline_unix_ms > d.deadline_unix_ms
                assert again.deadline_unix_ms == rt.clock.deadline_ms
                assert list(again.legal_moves) == list(d.legal_moves)
                # a re-Join gets the same
                assert rt.decision_for(seat).deadline_unix_ms == again.deadline_unix_ms
                async for msg in watch:
                    if (msg.WhichOneof("msg") == "update" and msg.update.HasField("clock")
                            and msg.update.clock.deadline_unix_ms == again.deadline_unix_ms):
                        break
                seats[seat].submit(version, d.legal_moves[0])
                r = await seats[seat].expect("move_result")
                assert r.accepted, r
            finally:
                watch.cancel()
                for s in seats:
                    await s.close()

    srv.call(go(), timeout=WAIT_S * 2)


def test_a_probe_that_passes_where_moves_fail_times_a_decision_afresh_once(
        make_server, tmp_path, fault, monkeypatch):
    """issue 31 item 1 (follow-up): while every move's write fails but the store's probe
    passes (a nearly full disk can take a small write and not a move's), a decision that ran
    out of time is timed afresh once, not again and again; the time policy then tries its move
    at once, with a growing delay, and plays it as soon as the store takes it (one strike, as
    without the outage). (Before: a fresh move time after every failed try, for as long as the
    disk stayed so.)"""
    srv = make_server(tmp_path / "data")
    policy = pb.TimePolicy(move_ms=300, grace_ms=50, on_expiry=pb.RANDOM_LEGAL)

    async def go() -> None:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11, policy=policy)
            seats = [Seat(stub, mid, t) for t in tokens]
            rt = srv.service.matches[mid]
            restarts: list[int] = []
            real_restart = MatchClock.restart

            def restart(clock: MatchClock, version: int) -> int:
                restarts.append(version)
                return real_restart(clock, version)

            monkeypatch.setattr(MatchClock, "restart", restart)
            try:
                seat, version, _d = await _decision(seats, rt)
                fault.insert_fails = 10**9  # no move can be written; the probe can
                await asyncio.sleep(4)  # nobody answers: many expiries of 0.35 s
                assert rt.match.version == version and not rt.match.moves
                assert restarts == [version]  # timed afresh once
                assert rt.clock.strikes_used == [0, 0, 0]
                fault.insert_fails = 0
                await _until(lambda: rt.match.version == version + 1, "the time policy's move")
                assert rt.match.moves[-1].timeout and rt.clock.strikes_used[seat] == 1
                assert not rt.broken
                _same_log(srv, rt, mid)
            finally:
                for s in seats:
                    await s.close()

    srv.call(go(), timeout=WAIT_S * 2)


@pytest.mark.parametrize("lose", ["committed", "rolled back"])
def test_a_finish_whose_reply_is_lost_is_settled_by_the_store(make_server, tmp_path, store_url,
                                                             fault, lose):
    """issue 31 item 1 (follow-up): the commit of a match's end (its status, its record, its
    lease deleted) whose reply is lost is not written again when the store already has it (the
    lease is gone: the write would be refused NOT_OWNER as if the match had been taken over),
    and is written again when it does not: either way the last move is acknowledged, every
    seat gets its GameOver, and the match is finished in the store. (Before: the last move was
    refused NOT_OWNER and the match dropped.)"""
    srv = make_server(tmp_path / "data", store_url=store_url)

    async def go() -> None:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11)
            seats = [Seat(stub, mid, t) for t in tokens]
            rt = srv.service.matches[mid]
            rng = random.Random(5)
            try:
                fault.finish = lose
                await _play_to_end(seats, rt, rng)
                assert fault.fired == 1
                for s in seats:
                    await s.expect("game_over")
                assert not rt.broken
                assert srv.server.store.match_status(mid) == "finished"
                rec = json.loads((await stub.GetRecord(
                    pb.GetRecordRequest(match_id=mid))).record_json)
                assert len(rec["moves"]) == len(srv.server.store.load_moves(mid))
            finally:
                for s in seats:
                    await s.close()

    srv.call(go(), timeout=WAIT_S * 4)
