"""The SQLite store with several processes on one file (a cluster on the embedded store): while
another process holds the file's write lock, the referee's event loop does not wait for it
(BEGIN IMMEDIATE fails at once on the loop's connection and the batch goes to the writer thread,
which waits); other calls are answered meanwhile, and the move is acknowledged only once it is
committed, after the lock is released."""
from __future__ import annotations

import asyncio
import random
import sqlite3
import subprocess
import sys

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md

HOLD = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()  # until the test says so
con.execute("ROLLBACK")
"""


def test_the_loop_answers_while_another_process_holds_the_write_lock(make_server, tmp_path):
    srv = make_server(tmp_path / "data")

    async def start():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=5)
            seat = srv.service.matches[mid].decision.seat
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                         metadata=md(tokens[seat]))
            return mid, tokens, seat, d

    mid, tokens, seat, d = asyncio.run(start())
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(srv.data_dir / "referee.sqlite3")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "locked"

    async def go():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            move = asyncio.ensure_future(stub.SubmitMove(pb.SubmitMoveRequest(
                match_id=mid, state_version=d.state_version,
                move=random.Random(1).choice(list(d.legal_moves))), metadata=md(tokens[seat])))
            await asyncio.sleep(0.5)  # the move reaches the store and waits for the lock
            answers = [len((await stub.ListGames(pb.ListGamesRequest())).games)
                       for _ in range(3)]
            view = await stub.GetView(pb.GetViewRequest(match_id=mid),
                                      metadata=md(tokens[(seat + 1) % 3]))
            pending = not move.done()
            holder.stdin.write("\n")
            holder.stdin.flush()
            return answers, view, pending, await move

    try:
        answers, view, pending, result = asyncio.run(go())
    finally:
        holder.kill()
        holder.wait()
    assert all(answers) and view.state_version >= 0
    assert pending  # answered while the move waited for the file
    assert result.accepted  # and the move committed once the lock was free
    assert len(srv.service.store.load_moves(mid)) == 1


def test_writes_handed_to_the_thread_keep_their_order(tmp_path):
    """Writes queued while an earlier batch waits on the writer thread follow it there, so
    they commit in the order they were queued; each is resolved once committed."""
    from referee.server.store.sqlite import SqliteStore

    store = SqliteStore(tmp_path)
    store.start()
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    order: list[int] = []

    async def run():
        other.execute("BEGIN IMMEDIATE")
        futs = []
        for k in range(6):  # one write per loop turn: six batches
            futs.append(store.write(lambda c, k=k: order.append(k)))
            await asyncio.sleep(0.01)
            if k == 3:
                assert not any(f.done() for f in futs)  # the file is locked: nothing committed
                other.execute("ROLLBACK")
        await asyncio.gather(*futs)
        store.write(lambda c: order.append(6))  # back on the loop once the thread is done
        await asyncio.sleep(0.2)
        await store.write(lambda c: order.append(7))

    asyncio.run(run())
    store.close()
    other.close()
    assert order == list(range(8))


def _retrying_store(tmp_path, monkeypatch, retry_s: float, retries: int):
    """A started SQLite store retrying a busy file every ``retry_s`` up to ``retries`` times,
    a second connection to its file (to take the write lock) and a list its writes append to."""
    from referee.server.store import sqlite as st

    monkeypatch.setattr(st, "BUSY_RETRY_S", retry_s)
    monkeypatch.setattr(st, "BUSY_RETRIES", retries)
    store = st.SqliteStore(tmp_path)
    store.start()
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    return store, other, []


def test_a_short_wait_for_the_lock_is_retried_on_the_loop(tmp_path, monkeypatch):
    """Another process committing holds the write lock for a moment: the loop tries again
    ``BUSY_RETRY_S`` later (up to ``BUSY_RETRIES`` times in a row) and commits there, the writes
    queued meanwhile in the same batch, without a writer thread (a cluster's workers on one
    file: docs/benchmarks.md, "Wake-ups")."""
    # retries without end: only the release ends the wait here
    store, other, order = _retrying_store(tmp_path, monkeypatch, 0.005, 10_000)

    async def run():
        other.execute("BEGIN IMMEDIATE")
        first = store.write(lambda c: order.append(0))
        await asyncio.sleep(0.03)
        second = store.write(lambda c: order.append(1))  # joins the batch that waits
        await asyncio.sleep(0.03)
        assert not first.done() and not second.done()  # nothing committed while locked
        other.execute("ROLLBACK")
        await asyncio.gather(first, second)

    before = store.batches
    asyncio.run(run())
    batches, thread = store.batches - before, store._thread
    store.close()
    other.close()
    assert order == [0, 1]
    assert thread is None  # never handed to the writer thread
    assert batches == 1  # one commit for both writes


def test_a_lock_held_past_the_retries_goes_to_the_writer_thread(tmp_path, monkeypatch):
    """After ``BUSY_RETRIES`` tries in a row the batch goes to the writer thread, which waits
    for the lock, and the write still commits once it is free."""
    store, other, order = _retrying_store(tmp_path, monkeypatch, 0.001, 3)

    async def run():
        other.execute("BEGIN IMMEDIATE")
        fut = store.write(lambda c: order.append(0))
        for _ in range(200):  # the retries end within a few ms; allow a slow machine 2 s
            await asyncio.sleep(0.01)
            if store._thread is not None:
                break
        assert store._thread is not None and not fut.done()
        other.execute("ROLLBACK")
        await fut

    asyncio.run(run())
    store.close()
    other.close()
    assert order == [0]
