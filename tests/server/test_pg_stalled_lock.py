"""A stalled referee's open transaction on the PostgreSQL store must not hold up a take-over.

A referee stopped (SIGSTOP, a paused VM) between the statements of one of its transactions
keeps its row locks, among them the lease row its group commit reads ``FOR SHARE`` to fence
its writes (docs/ARCHITECTURE.md, Deployment). Another referee taking the match over updates
that row: without a limit it would wait for the lock for as long as the stalled one sleeps.
The store's connections set ``idle_in_transaction_session_timeout``
(``pgstore.STALLED_TRANSACTION_MS``), so the server ends the stalled session and the take-over
goes through; the stalled referee finds its connection gone when it wakes.
"""
from __future__ import annotations

import threading
import time

import psycopg
import pytest

from referee.server.store.postgres import PostgresStore

TTL_MS = 300
HANG_GUARD_S = 20  # far above the server's timeout: only a take-over that hangs trips it


@pytest.fixture()
def url(pg_server) -> str:
    return pg_server.new_database()


def test_a_stalled_transaction_does_not_block_the_take_over(url):
    a, b = PostgresStore(url), PostgresStore(url)
    a.enable_leases("referee-a", TTL_MS, on_lost=lambda m: None)
    b.enable_leases("referee-b", TTL_MS, on_lost=lambda m: None)
    try:
        assert a.try_lease("m1") is not None
        # A's transaction stops half-way, holding the lease row as its commits do
        stalled = a._connect()
        stalled.execute("BEGIN")
        stalled.execute("SELECT epoch FROM leases WHERE match_id=? FOR SHARE", ("m1",))
        time.sleep(TTL_MS / 1000 + 0.1)  # the lease has expired: B may take the match over
        got: list[object] = []
        worker = threading.Thread(target=lambda: got.append(b.try_lease("m1")), daemon=True)
        worker.start()
        worker.join(HANG_GUARD_S)
        assert not worker.is_alive(), "the take-over waited on the stalled referee's lock"
        assert got == [2]  # B holds the lease at the next epoch
        with pytest.raises(psycopg.Error):  # the server ended the stalled session
            stalled.execute("COMMIT")
    finally:
        a.close()
        b.close()
