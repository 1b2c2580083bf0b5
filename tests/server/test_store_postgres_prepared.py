"""The PostgreSQL store prepares its statements on the server (issue 37, item 5: the database's
CPU per move), and nothing of that may fail a write: not a batch whose pipeline failed (its
statements after the failing one were never parsed, and its ROLLBACK makes psycopg forget and
deallocate what it had prepared), not a restart of the database server (the lost connection
takes its prepared statements with it). A real PostgreSQL server (bench/pgserver.py)."""
from __future__ import annotations

import asyncio
import time

import pytest

from referee.server.base.errors import RefereeError
from referee.server.store.postgres import PostgresStore
from referee.server.store.sqlite import MoveRow

from .test_store_contract import row
from .test_store_outage import RECOVERY_S, own_pg  # noqa: F401 - the fixture


def _move(n: int) -> MoveRow:
    return MoveRow(n, n % 3, n - 1, {"bid": {"amount": n}}, "f" * 64, n, False, None)


def test_the_store_prepares_its_repeated_statements(pg_server):
    """A statement a connection runs again is a named prepared statement on the server."""
    store = PostgresStore(pg_server.new_database())
    conn = store._connect()
    try:
        for n in range(3):
            conn.execute("SELECT status FROM matches WHERE id = ?", (f"m{n}",)).fetchall()
        prepared = conn.execute("SELECT statement FROM pg_prepared_statements").fetchall()
        assert any("FROM matches WHERE id" in s for (s,) in prepared), prepared
    finally:
        conn.close()
        store.close()


def test_a_rollback_heals_a_stale_prepared_statement(pg_server):
    """What the store relies on when psycopg's cache names a statement the server no longer
    has (the failure once seen after a failed pipeline): the statement fails, and the ROLLBACK
    that every failed batch and write ends with (``_rollback``) makes psycopg forget its
    prepared statements, so the same statement works again on the same connection."""
    import psycopg

    from referee.server.store.sqlite import _rollback

    store = PostgresStore(pg_server.new_database())
    conn = store._connect()
    sql = "SELECT status FROM matches WHERE id = ?"
    try:
        for n in range(3):
            conn.execute(sql, (f"m{n}",)).fetchall()  # prepared by now
        conn.raw.pgconn.exec_(b"DEALLOCATE ALL")  # behind psycopg's back: its cache is stale
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            conn.execute(sql, ("m9",)).fetchall()
        _rollback(conn)
        assert conn.execute(sql, ("m9",)).fetchall() == []
    finally:
        conn.close()
        store.close()


def test_a_failed_batch_leaves_no_stale_prepared_statement(pg_server):
    """Batches whose pipeline fails (a duplicate move among good ones: the batch is redone
    write by write) between batches of the same, prepared statements: every good write
    commits, every later batch too, and only the duplicates fail."""
    store = PostgresStore(pg_server.new_database())
    store.enable_leases("prep", 600_000, lambda mid: None)
    store.start()
    failed: list[int] = []

    async def run() -> None:
        await store.insert_match(row("m1"))
        n = 0
        for round_ in range(6):
            futs = []
            for _ in range(5):
                n += 1
                futs.append(store.insert_move("m1", _move(n)))
            if round_ % 2 == 0:  # this batch's pipeline fails on a move already stored
                # (in the first batch, before the statements after it are prepared)
                futs.insert(2, store.insert_move("m1", _move(max(1, n - 7))))
            got = await asyncio.gather(*futs, return_exceptions=True)
            for i, res in enumerate(got):
                if res is not None:
                    assert isinstance(res, RuntimeError), res  # "store commit failed"
                    failed.append(i)

    try:
        asyncio.run(run())
    finally:
        store.close()
    assert failed == [2, 2, 2]  # the three duplicates, nothing else
    assert [m.n for m in store.load_moves("m1")] == list(range(1, 31))


def test_prepared_statements_survive_a_postgresql_restart(own_pg):  # noqa: F811
    """After the database server restarts (its sessions, and their prepared statements,
    gone) the store's writes commit again on a new connection, which prepares anew."""
    store = PostgresStore(own_pg.new_database())
    store.enable_leases("prep", 600_000, lambda mid: None)
    store.start()

    async def write(first: int) -> None:
        await asyncio.gather(*(store.insert_move("m1", _move(n))
                               for n in range(first, first + 5)))

    async def run() -> None:
        await store.insert_match(row("m1"))
        for first in (1, 6, 11):  # prepared by the second batch
            await write(first)
        await asyncio.to_thread(own_pg.halt, "fast")
        await asyncio.to_thread(own_pg.resume)
        deadline = time.monotonic() + RECOVERY_S
        first = 16
        while True:  # the first writes after the restart may find the store away
            try:
                await store.insert_move("m1", _move(first))
                break
            except RefereeError as exc:
                assert exc.reason in ("STORE_UNAVAILABLE", "COMMIT_UNKNOWN"), exc
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
        for first in (17, 22, 27):
            await write(first)

    try:
        asyncio.run(run())
    finally:
        store.close()
    assert [m.n for m in store.load_moves("m1")] == list(range(1, 32))
