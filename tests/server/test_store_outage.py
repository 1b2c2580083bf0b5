"""The store going away mid-match and coming back (issue 31 item 1): a PostgreSQL server stopped
with ``pg_ctl stop -m fast`` and started again, and an SQLite data directory whose disk is full
(a real one: a small tmpfs filled to the last byte) and then freed.

While the store is away, CreateMatch is refused with UNAVAILABLE / STORE_UNAVAILABLE and a
Play-stream move with MoveResult reason STORE_UNAVAILABLE, and the move is not played (the
match's state version stays); once the store is back the same referee, never restarted,
accepts the same move again and new matches, the match finishes, and every move a bot was told
was accepted is in the record and in the store, nothing else.

The bots here resend a refused move after a short pause, as docs/bot/protocol.md asks. On the
code before the fix these fail: the writer thread died on its reconnect (PostgreSQL), or the
move was refused INTERNAL and the match taken offline (SQLite)."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from bench.pgserver import PgServer, binaries, skip_reason
from referee.core.match import move_json
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, reason_of

#: how long the referee may take to find the store back (generous: the machine is loaded; the
#: referee retries every 2 s at most)
RECOVERY_S = 60.0


@dataclass
class Bot:
    """One seat on a Play stream: answers each Decision with a random legal move once ``go``
    is set, once per state version (a decision timed afresh is pushed again); a move refused
    with STORE_UNAVAILABLE is sent again, the same, after 0.2 s."""

    match_id: str
    token: str
    rng: random.Random
    go: asyncio.Event
    seat: int = -1
    acked: list[tuple[int, str]] = field(default_factory=list)  # (version before, move)
    unavailable: list[pb.MoveResult] = field(default_factory=list)
    other_refusals: list[pb.MoveResult] = field(default_factory=list)
    game_over: pb.GameOver | None = None
    pending: tuple[int, pb.Move] | None = None  # sent, not answered yet
    waiting: bool = False  # a decision to answer, held until ``go``

    async def run(self, stub) -> None:
        out: asyncio.Queue = asyncio.Queue()
        out.put_nowait(pb.ClientMessage(join=pb.Join(match_id=self.match_id)))

        async def requests():
            while (m := await out.get()) is not None:
                yield m

        async def send(version: int, move: pb.Move, delay: float = 0.0) -> None:
            if delay:
                await asyncio.sleep(delay)
            self.waiting = True
            await self.go.wait()
            self.waiting = False
            self.pending = (version, move)
            out.put_nowait(pb.ClientMessage(submit=pb.Submit(
                state_version=version, move=move, request_id=str(version))))

        call = stub.Play(requests(), metadata=md(self.token))
        tasks: set[asyncio.Task] = set()
        answered: set[int] = set()  # versions whose decision this bot answered
        try:
            async for msg in call:
                which = msg.WhichOneof("msg")
                if which == "welcome":
                    self.seat = msg.welcome.seat
                elif which == "decision":
                    d = msg.decision
                    if d.state_version in answered:
                        continue  # pushed again (timed afresh): answered already, as the SDK
                    answered.add(d.state_version)
                    tasks.add(asyncio.ensure_future(
                        send(d.state_version, self.rng.choice(list(d.legal_moves)))))
                elif which == "move_result":
                    r = msg.move_result
                    assert self.pending is not None
                    version, move = self.pending
                    self.pending = None
                    if r.accepted:
                        self.acked.append((version, move.SerializeToString().hex()))
                    elif r.reason == pb.STORE_UNAVAILABLE:
                        self.unavailable.append(r)
                        tasks.add(asyncio.ensure_future(send(version, move, 0.2)))
                    else:
                        self.other_refusals.append(r)
                elif which == "game_over":
                    self.game_over = msg.game_over
        finally:
            out.put_nowait(None)
            call.cancel()
            for t in tasks:
                t.cancel()


async def _until(check, what: str, timeout: float = RECOVERY_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def _create_refused(stub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(stub, seed=99)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE, err.value
    assert reason_of(err.value) == "STORE_UNAVAILABLE"
    assert "retry" in (err.value.details() or "")


async def _create_soon(stub) -> str:
    """CreateMatch, retried while the store is still away, until it works."""
    deadline = time.monotonic() + RECOVERY_S
    while True:
        try:
            mid, _tokens = await create(stub, seed=98)
            return mid
        except grpc.aio.AioRpcError as exc:
            assert reason_of(exc) == "STORE_UNAVAILABLE", exc
            assert time.monotonic() < deadline, "CreateMatch never worked again"
            await asyncio.sleep(0.2)


def _get(url: str) -> tuple[int, dict]:
    """GET ``url``: (HTTP status, its JSON)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def _get_until(url: str, status: int) -> dict:
    """GET ``url`` (in a thread: the web server runs on this loop) until it answers
    ``status``; its JSON."""
    deadline = time.monotonic() + RECOVERY_S
    while True:
        got, body = await asyncio.to_thread(_get, url)
        if got == status:
            return body
        assert got in (200, 503), (got, body)  # never a 500
        assert time.monotonic() < deadline, f"{url} never answered {status}"
        await asyncio.sleep(0.2)


async def _outage_match(srv, outage, recover, web: str = "", create_first: bool = False) -> None:
    """A 3-seat match played by Bots; after a few moves ``outage()`` (in a thread), a
    CreateMatch and a move refused, ``recover()``, then the same move and a new match
    accepted, and the match played to its end. With ``create_first`` the referee learns of the
    outage from CreateMatch, so the move is refused before it is applied; otherwise from the
    move's own commit, so the move is applied, then taken back."""
    async with grpc.aio.insecure_channel(srv.target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        mid, tokens = await create(stub, seats=3, seed=11)
        go = asyncio.Event()
        go.set()
        bots = [Bot(mid, t, random.Random(i), go) for i, t in enumerate(tokens)]
        runs = [asyncio.ensure_future(b.run(stub)) for b in bots]
        try:
            def acked() -> int:
                return sum(len(b.acked) for b in bots)

            await _until(lambda: acked() >= 6, "six moves")
            go.clear()  # the bots hold their next move; the one in flight is answered
            await _until(lambda: any(b.waiting for b in bots)
                         and not any(b.pending for b in bots), "the bots to pause")
            before = acked()
            rt = srv.service.matches[mid]
            version = rt.match.version
            assert version == before  # one version per move (no forfeit in this match)

            match_before = rt.match
            await asyncio.to_thread(outage)
            if create_first:
                await _create_refused(stub)
            if web:  # the viewer's list: 503 with the reason (its rows are cached for 1 s)
                body = await _get_until(web, 503)
                assert body["reason"] == "STORE_UNAVAILABLE" and "retry" in body["error"]
            go.set()
            await _until(lambda: sum(len(b.unavailable) for b in bots) >= 2,
                         "a move refused twice with STORE_UNAVAILABLE")
            # not played: the referee's match is where it was, and nothing was acknowledged
            assert acked() == before
            assert rt.match.version == version and len(rt.match.moves) == version
            assert not rt.broken
            refused = next(r for b in bots for r in b.unavailable)
            assert refused.state_version == version
            assert "retry" in refused.message
            # applied then taken back (replayed without it), or refused before it was applied
            assert (rt.match is match_before) == create_first
            if not create_first:
                await _create_refused(stub)

            await asyncio.to_thread(recover)
            await _until(lambda: acked() > before, "the move to be accepted again")
            await _create_soon(stub)
            if web:
                await _get_until(web, 200)
            await asyncio.wait_for(asyncio.gather(*runs), RECOVERY_S * 3)
        finally:
            for r in runs:
                r.cancel()
            await asyncio.gather(*runs, return_exceptions=True)

        assert all(b.game_over is not None for b in bots)
        assert not [r for b in bots for r in b.other_refusals]
        # every acknowledged move, and nothing else, is in the record and in the store
        rt = srv.service.matches[mid]
        told = sorted((v, json.dumps(move_json(rt.game, rt.wire.unwrap(pb.Move.FromString(
            bytes.fromhex(m)))), sort_keys=True)) for b in bots for v, m in b.acked)
        rec = json.loads((await stub.GetRecord(pb.GetRecordRequest(match_id=mid))).record_json)
        recorded = [(m["version_before"], json.dumps(m["move"], sort_keys=True))
                    for m in rec["moves"]]
        assert recorded == told
        stored = [(m.version_before, json.dumps(m.move, sort_keys=True))
                  for m in srv.server.store.load_moves(mid)]
        assert stored == told


# ---------------------------------------------------------------------------- PostgreSQL
@pytest.fixture
def own_pg():
    """A PostgreSQL cluster of this test's own (stopping it disturbs no other test)."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    bin_dir = binaries()
    assert bin_dir is not None
    pg = PgServer(bin_dir)
    pg.start()
    try:
        yield pg
    finally:
        with contextlib.suppress(RuntimeError):  # already stopped (a test that failed halted)
            pg.stop()


def test_a_postgresql_restart_mid_match_loses_nothing_and_needs_no_referee_restart(
        make_server, tmp_path, own_pg):
    """issue 31 item 1: pg_ctl stop -m fast mid-match, then start: refusals with
    STORE_UNAVAILABLE meanwhile (the move not played), the same referee accepts the move and
    CreateMatch after, the match finishes with every acknowledged move stored."""
    url = own_pg.new_database()
    # long leases: no renewal fails first in the outage (the move's own commit is to find it)
    srv = make_server(tmp_path / "data", store_url=url, http_port=0, lease_ttl_s=600)
    web = f"http://127.0.0.1:{srv.server.http_port}/api/matches"
    srv.call(_outage_match(srv, lambda: own_pg.halt("fast"), own_pg.resume, web),
             timeout=RECOVERY_S * 5)
    assert srv.server.store.available


# ---------------------------------------------------------------------------- SQLite
@pytest.fixture
def small_disk():
    """A 16 MiB tmpfs of the test's own (a real file system that fills up), or a skip where
    the sandbox cannot mount one."""
    where = Path(tempfile.mkdtemp(prefix="referee-full-"))
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()[:200]}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        with contextlib.suppress(OSError):
            where.rmdir()


def _fill(disk: Path, db: Path) -> Path:
    """Fill ``disk`` to the last byte: the WAL is first checkpointed and truncated (so that the
    next commit must grow it), then a filler file takes every free block. Its path."""
    import sqlite3

    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 4096, 512):  # to the last block
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_mid_match_loses_nothing_and_needs_no_referee_restart(
        make_server, small_disk):
    """issue 31 item 1: the SQLite store's disk fills up mid-match (a real ENOSPC on a tmpfs,
    SQLITE_FULL), then is freed: the same shape as the PostgreSQL restart."""
    data = small_disk / "data"
    srv = make_server(data)
    db = data / "referee.sqlite3"
    fillers: list[Path] = []
    srv.call(_outage_match(srv, lambda: fillers.append(_fill(small_disk, db)),
                           lambda: os.remove(fillers[0]), create_first=True),
             timeout=RECOVERY_S * 5)
    assert srv.server.store.available


@pytest.mark.parametrize("on_expiry", [pb.FORFEIT, pb.RANDOM_LEGAL])
def test_the_time_policy_waits_for_the_store(make_server, tmp_path, own_pg, on_expiry):
    """issue 31 item 1: a decision that runs out of time while the database is away is neither
    forfeited (FORFEIT) nor played for its seat (RANDOM_LEGAL) and no strike counts: once the
    store is back its seat's move is accepted. (Before: the forfeit or the time-policy move
    happened in memory though it could not be stored, and the match went offline.)"""
    url = own_pg.new_database()
    srv = make_server(tmp_path / "data", store_url=url)
    policy = pb.TimePolicy(move_ms=2000, grace_ms=200, on_expiry=on_expiry)

    async def go_on() -> None:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=12, policy=policy)
            go = asyncio.Event()
            go.set()
            bots = [Bot(mid, t, random.Random(i), go) for i, t in enumerate(tokens)]
            runs = [asyncio.ensure_future(b.run(stub)) for b in bots]
            try:
                def acked() -> int:
                    return sum(len(b.acked) for b in bots)

                await _until(lambda: acked() >= 3, "three moves")
                go.clear()
                await _until(lambda: any(b.waiting for b in bots)
                             and not any(b.pending for b in bots), "the bots to pause")
                rt = srv.service.matches[mid]
                version = rt.match.version
                await asyncio.to_thread(own_pg.halt, "fast")
                await asyncio.sleep(5)  # past the decision's 2.2 s: it expires in the outage
                assert rt.match.version == version and rt.match.forfeited is None
                assert rt.game_over is None and not rt.broken
                await asyncio.to_thread(own_pg.resume)
                go.set()
                await _until(lambda: acked() > version, "the seat's own move to be accepted")
                assert rt.match.forfeited is None and rt.game_over is None
                assert rt.clock.strikes_used == [0, 0, 0]
                assert not any(m.timeout for m in rt.match.moves)
            finally:
                for r in runs:
                    r.cancel()
                await asyncio.gather(*runs, return_exceptions=True)
            assert not [r for b in bots for r in b.other_refusals]

    srv.call(go_on(), timeout=RECOVERY_S * 3)


def test_the_store_reader_survives_a_postgresql_restart(own_pg):
    """issue 31 item 1: a read while the database is away fails with STORE_UNAVAILABLE (not a
    psycopg error, answered INTERNAL); after its return the read connection, closed by the
    server, is opened again: the first read after a restart answers."""
    from referee.server.base.errors import RefereeError
    from referee.server.store.postgres import PostgresStore

    store = PostgresStore(own_pg.new_database())
    try:
        assert store.match_status("nope") is None
        own_pg.halt("fast")
        own_pg.resume()
        assert store.match_status("nope") is None  # the first read after the restart
        own_pg.halt("fast")
        with pytest.raises(RefereeError) as err:
            store.match_status("nope")
        assert err.value.reason == "STORE_UNAVAILABLE"
        own_pg.resume()
        deadline = time.monotonic() + RECOVERY_S
        while True:  # within the reader's backoff (2 s at most)
            try:
                assert store.match_status("nope") is None
                break
            except RefereeError as exc:
                assert exc.reason == "STORE_UNAVAILABLE"
                assert time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        store.close()


def _immutable(paths: list[Path], on: bool) -> None:
    """``chattr +i`` / ``-i``: files that not even root may write (the tests run as root, for
    whom a chmod changes nothing)."""
    for p in paths:
        subprocess.run(["chattr", "+i" if on else "-i", str(p)], check=True,
                       capture_output=True)


def test_an_unwritable_store_file_mid_match_loses_nothing(make_server, tmp_path):
    """issue 31 item 1: the SQLite store's files become unwritable mid-match (a real
    condition: chattr +i on the database and its WAL, so every write fails with EPERM,
    SQLITE_IOERR), then writable again: the same shape as the PostgreSQL restart."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    if subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i does not work here (not root, or a file system without it)")
    _immutable([probe], False)
    data = tmp_path / "data"
    srv = make_server(data, lease_ttl_s=600)  # no renewal finds the outage first
    files = [data / "referee.sqlite3", data / "referee.sqlite3-wal"]
    try:
        srv.call(_outage_match(srv, lambda: _immutable(files, True),
                               lambda: _immutable(files, False)),
                 timeout=RECOVERY_S * 5)
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            _immutable(files, False)
    assert srv.server.store.available


@pytest.mark.parametrize("on_expiry", [pb.FORFEIT, pb.RANDOM_LEGAL])
def test_abandon_seat_while_the_store_is_unwritable_changes_nothing(make_server, tmp_path,
                                                                     on_expiry):
    """issue 31 item 1: AbandonSeat while the store cannot be written (chattr +i on the
    SQLite files) is refused UNAVAILABLE / STORE_UNAVAILABLE and changes nothing (no forfeit,
    no abandoned seat); once the files are writable again it works."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    if subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i does not work here (not root, or a file system without it)")
    _immutable([probe], False)
    data = tmp_path / "data"
    srv = make_server(data)
    files = [data / "referee.sqlite3", data / "referee.sqlite3-wal"]

    async def go() -> None:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, _tokens = await create(stub, seats=3, seed=13, policy=pb.TimePolicy(
                move_ms=60_000, on_expiry=on_expiry))
            rt = srv.service.matches[mid]
            request = pb.AbandonSeatRequest(match_id=mid, seat=1, reason="gone")
            _immutable(files, True)
            try:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await stub.AbandonSeat(request, metadata=md(ADMIN))
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE
                assert reason_of(err.value) == "STORE_UNAVAILABLE"
                assert rt.abandoned == {} and rt.match.forfeited is None
                assert rt.game_over is None
            finally:
                _immutable(files, False)
            deadline = time.monotonic() + RECOVERY_S
            while True:
                try:
                    resp = await stub.AbandonSeat(request, metadata=md(ADMIN))
                    break
                except grpc.aio.AioRpcError as exc:
                    assert reason_of(exc) == "STORE_UNAVAILABLE"
                    assert time.monotonic() < deadline
                    await asyncio.sleep(0.2)
            assert resp.abandoned
            assert resp.forfeited == (on_expiry == pb.FORFEIT)

    srv.call(go(), timeout=RECOVERY_S * 3)
