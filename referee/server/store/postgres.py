"""The PostgreSQL store (``referee serve --store postgresql://...``): the store contract of
``referee.server.store.sqlite`` over psycopg 3, so that referees on several machines share matches,
bots and leagues.

The same schema and SQL as the embedded SQLite store, adapted in one place (:class:`PgConn`):
``?`` placeholders become psycopg's ``%s``, ``INTEGER`` columns ``BIGINT`` (times are
milliseconds since 1970), and SQLite's ``WITHOUT ROWID`` is dropped. Group commit runs on a
writer thread with its own connection (a commit is a round trip to the server, which must not
block the event loop): the writes waiting at a time share one transaction, committed before any
of them is acknowledged, as with SQLite. The schema is created under an advisory lock, so
several referees starting at once on one database do not race.

The password is never in the URL given on a command line (``store_url`` refuses it): libpq
reads ``$PGPASSWORD`` or a ``PGPASSFILE``, or the URL comes from ``--store-file`` or
``$REFEREE_STORE_URL``.
"""
from __future__ import annotations

import contextlib
import re
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import psycopg

from referee.server.store.sqlite import ADDED_COLUMNS, INDEXES, SCHEMA, Store

#: the key of the advisory lock held while the schema is created or migrated
SCHEMA_LOCK = 0x72656665  # "refe"
#: A referee's own transactions are one pipeline or a few statements in a row: one left idle
#: inside a transaction for this long belongs to a stalled process (SIGSTOP, a paused VM, a
#: debugger), and the server ends its session so that its row locks (the lease row it read FOR
#: SHARE) cannot hold up the take-over of its matches by another referee. The stalled referee
#: finds its connection gone when it wakes, and its writes fail as fenced-off writes do.
STALLED_TRANSACTION_MS = 3000
#: The longest any statement waits for a lock before it fails (and is answered as a store
#: failure) instead of hanging the referee: a backstop behind STALLED_TRANSACTION_MS.
LOCK_TIMEOUT_MS = 15000
#: How long opening a connection may take (libpq's connect_timeout, unless the URL sets one):
#: readers connect on the event loop, which must not hang on a database host that is away.
CONNECT_TIMEOUT_S = 3
#: psycopg prepares a statement on the server (a named prepared statement, parsed and planned
#: once per connection) the second time a connection runs it: the writes of a move (the lease
#: check, the move row, the match row) then cost the server no parse nor plan, which halves its
#: CPU per move in the store bench (docs/benchmarks.md, "PostgreSQL"). A connection that is lost
#: takes its statements with it (a new one prepares again), and a failed batch's ROLLBACK makes
#: psycopg forget them all and DEALLOCATE ALL (tests/server/test_store_postgres_prepared.py).
PREPARE_THRESHOLD = 2


@lru_cache(maxsize=512)
def pg_sql(sql: str) -> str:
    """A statement written for SQLite (``?`` placeholders) in psycopg's form."""
    return sql.replace("%", "%%").replace("?", "%s")


def pg_schema(script: str) -> str:
    """A schema script written for SQLite in PostgreSQL's dialect."""
    script = re.sub(r"\bINTEGER\b", "BIGINT", script)
    return script.replace("WITHOUT ROWID", "")


class PgConn:
    """A psycopg connection with the face of an sqlite3 one (what the store's operations use:
    ``execute`` returning a cursor to iterate or fetch from, ``executemany``)."""

    __slots__ = ("raw",)

    def __init__(self, raw: psycopg.Connection):
        self.raw = raw

    def execute(self, sql: str, params: Any = ()) -> psycopg.Cursor:
        return self.raw.execute(pg_sql(sql), params or None)

    def executemany(self, sql: str, rows: Any) -> psycopg.Cursor:
        cur = self.raw.cursor()
        cur.executemany(pg_sql(sql), list(rows))
        return cur

    def close(self) -> None:
        self.raw.close()


class PostgresStore(Store):
    kind = "postgresql"
    lease_lock = " FOR SHARE"
    pipelined = True
    keeps_records = True  # its referees may run on other hosts than a match's record file

    def __init__(self, url: str, durability: str = "normal"):
        super().__init__(durability, on_loop=False)
        self.url = url
        self.ensure_schema(SCHEMA, ADDED_COLUMNS, INDEXES)
        self._backfill_seat_tokens()

    def _connect(self) -> PgConn:
        timeout: dict[str, Any] = ({} if "connect_timeout" in self.url
                                   else {"connect_timeout": CONNECT_TIMEOUT_S})
        raw = psycopg.connect(self.url, autocommit=True, prepare_threshold=PREPARE_THRESHOLD,
                              **timeout)
        # durability as with SQLite: "normal" survives a crash of the referee (the server has
        # the commit) but not of the database server's machine (synchronous_commit=off: the
        # WAL is flushed within a few hundred ms, not before the commit returns); "full"
        # waits for the server's fsync (on, or whatever the server's configuration says)
        try:
            if self.durability == "normal":
                raw.execute("SET synchronous_commit = off")
            raw.execute(f"SET idle_in_transaction_session_timeout = {STALLED_TRANSACTION_MS}")
            raw.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
        except BaseException:  # the server went away between connect and set-up
            raw.close()
            raise
        return PgConn(raw)

    def _pipeline(self, conn: PgConn) -> contextlib.AbstractContextManager:
        """A batch's statements go out together (psycopg's pipeline mode): one round trip
        for the batch instead of one per write."""
        return conn.raw.pipeline()

    def _usable(self, conn: PgConn) -> bool:
        return not conn.raw.closed and not conn.raw.broken

    def columns(self, conn: PgConn, table: str) -> set[str]:
        rows = conn.execute("SELECT column_name FROM information_schema.columns"
                            " WHERE table_schema = current_schema() AND table_name = ?",
                            (table,)).fetchall()
        return {r[0] for r in rows}

    def _script(self, conn: PgConn, script: str) -> None:
        conn.raw.execute(pg_schema(script).encode())

    def ensure_schema(self, script: str, added: dict[str, dict[str, str]] | None = None,
                      after: str = "") -> None:
        with self.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(?)", (SCHEMA_LOCK,))
            try:
                self._script(conn, script)
                self.check_schema_version(conn)
                for table, cols in (added or {}).items():
                    have = self.columns(conn, table)
                    for col, decl in cols.items():
                        if col not in have:
                            conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} "
                                         f"{pg_schema(decl)}")
                if after:
                    self._script(conn, after)
            finally:
                conn.execute("SELECT pg_advisory_unlock(?)", (SCHEMA_LOCK,))

    def describe(self) -> str:
        """host/database, never a password."""
        parts = urlsplit(self.url)
        return f"postgresql://{parts.hostname or ''}{parts.path}"
