"""The embedded store: SQLite in WAL mode, with group commit.

Every write is a small operation queued together with an asyncio future; the operations queued
together run in ONE transaction, are committed, and only then are their futures resolved. Moves
arriving together from concurrent matches therefore share one commit, while an acknowledged move
is always on disk: the server awaits the future before it sends the acceptance.

Where the group commit runs depends on the durability:

* ``normal`` (synchronous=NORMAL, the default): on the event loop itself. The first write of a
  loop turn schedules a flush with ``loop.call_soon``; every write queued until that callback
  runs (the rest of the turn: other streams' moves, other matches' timers) joins the batch, which
  is committed on the loop thread. In WAL with synchronous=NORMAL a commit writes to the WAL
  without an fsync, so it costs less than handing the batch to a thread and back would. The loop
  never waits for another process's write lock: a busy file is tried again a moment later on
  the loop, a few times (``BUSY_RETRY_S``, ``BUSY_RETRIES``); a file still busy then (or a batch
  to redo write by write) sends the batch, and those queued after it, to a writer thread (see
  ``_flush``).
* ``full`` (synchronous=FULL): on one writer thread, since every commit fsyncs and that must not
  block the loop; the thread takes everything waiting and resolves the futures with one
  ``call_soon_threadsafe`` per event loop and batch.

Reads use their own connections on the caller's thread: the whole log at startup, and one
primary-key lookup (``match_status``) for a match that is no longer held in memory.

Outages (docs/organizer/referee.md, "When the store is away"): a database that stops or
restarts, a full disk, a file that cannot be written. No connection's failure kills the writer
thread or stays with a reader: a lost connection is opened again on the next use, at most every
0.1 s doubling to 2 s while it keeps failing (:class:`Backoff`); meanwhile every write or read
that needs the store fails at once with UNAVAILABLE / STORE_UNAVAILABLE (``store_outage`` says
which errors are the store's being away rather than a bug), nothing of it committed. The outage
is logged once (``store_unavailable``, warning) and its end once (``store_recovered``, info).
A batch whose COMMIT itself failed so may have been committed (its reply lost): it is never
sent again, its writes fail with :class:`CommitUnknown`, and their caller asks the store.
"""
from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import queue
import sqlite3
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from referee.core.match import LEGACY_RECORD_FORMAT, RECORD_FORMAT
from referee.server.base import errors
from referee.server.base.clock import now_ms

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id                TEXT PRIMARY KEY,
    game              TEXT NOT NULL,
    options_json      TEXT NOT NULL,
    seats             INTEGER NOT NULL,
    seed              TEXT NOT NULL,
    components_name   TEXT NOT NULL,
    components_sha256 TEXT NOT NULL,
    time_policy_json  TEXT NOT NULL,
    token_hashes_json TEXT NOT NULL,   -- SHA-256 hex of each seat token, never the token
    names_json        TEXT NOT NULL,
    status            TEXT NOT NULL,   -- running | finished | broken
    created_ms        INTEGER NOT NULL,
    finished_ms       INTEGER,
    forfeited         INTEGER,
    result_json       TEXT,
    rejected_json     TEXT,            -- moves refused per seat, e.g. [0, 2, 0]
    abandoned_json    TEXT,            -- seats the host abandoned: {"2": "bot exited (code 1)"}
    joined_json       TEXT,            -- seats whose bot has joined, e.g. [0, 2]
    reveal_policy     TEXT,            -- safe (NULL: older stores) | none; see CreateMatch
    record_format     TEXT,            -- referee-record/2 (NULL: older stores, whose matches
                                       -- drew chance as referee-record/1)
    league            TEXT,            -- the league it belongs to (CreateMatch.league), or NULL
    unlisted          INTEGER,         -- 1: kept out of the match list and league pages
    seat_bots_json    TEXT,            -- the bot bound to each seat, e.g. ["a", "", "b"]
    seat_versions_json TEXT,           -- the version of each bound bot, e.g. [3, 0, 0]
    start_json        TEXT,            -- where it started (a record's "start"), NULL: set-up
    seed_salt         TEXT,            -- the salt of its seed commitment (hex; NULL: older
                                       -- stores), secret until the match is over
    extra_json        TEXT             -- fields its record adds, e.g. a lobby match's "lobby"
                                       -- (NULL: none)
);
CREATE TABLE IF NOT EXISTS moves (
    match_id        TEXT NOT NULL,
    n               INTEGER NOT NULL,
    seat            INTEGER NOT NULL,
    version_before  INTEGER NOT NULL,
    move_json       TEXT NOT NULL,
    state_hash      TEXT NOT NULL,
    elapsed_ms      INTEGER NOT NULL,
    timeout         INTEGER NOT NULL DEFAULT 0,
    policy          TEXT,
    note            TEXT,              -- the bot's note on its move (Submit.note), or NULL
    PRIMARY KEY (match_id, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leases (  -- which referee runs each running match (see Leases)
    match_id    TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,     -- the referee's --lease-owner; '' = released
    epoch       INTEGER NOT NULL,  -- +1 at every acquisition: a stale holder's writes fail
    expires_ms  INTEGER NOT NULL,  -- renewed by its owner; past it, another may take over
    address     TEXT               -- where other referees reach its owner (--advertise), or NULL
);
CREATE INDEX IF NOT EXISTS leases_owner ON leases (owner);
CREATE TABLE IF NOT EXISTS seat_tokens (  -- a seat token's match, for a referee that does not
    token_hash  TEXT PRIMARY KEY,         -- hold the match in memory (SHA-256 hex, never the
    match_id    TEXT NOT NULL,            -- token)
    seat        INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS records (  -- finished matches' records, where the store keeps
    match_id    TEXT PRIMARY KEY,      -- them (keeps_records: PostgreSQL, whose referees may
    json        TEXT NOT NULL          -- be on other hosts than the record file)
);
CREATE TABLE IF NOT EXISTS settings (  -- values every referee on the store shares
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS create_requests (  -- CreateMatchRequest.request_id: written in the
    admin_hash      TEXT NOT NULL,            -- transaction of the match it created (SHA-256
    request_id      TEXT NOT NULL,            -- hex of the admin token, never the token)
    request_sha256  TEXT NOT NULL,            -- the request, request_id left out
    match_id        TEXT NOT NULL,
    PRIMARY KEY (admin_hash, request_id)
);
"""


#: The version of the schema this referee writes, kept in the settings row below. 1: the
#: tables of release 0.1.0 (which wrote no row: a store without one is version 1, or a
#: development store from before, which ADDED_COLUMNS brings up to it). Raise it with any
#: change an older referee would misread; columns and tables only ever get added.
SCHEMA_VERSION = 1
SCHEMA_VERSION_SETTING = "schema_version"


class StoreSchemaError(RuntimeError):
    """The store was written by a newer referee (a higher schema version): it is not opened."""


@dataclass(slots=True)
class MatchRow:
    id: str
    game: str
    options: dict[str, Any]
    seats: int
    seed: int
    components_name: str
    components_sha256: str
    time_policy: dict[str, Any]
    token_hashes: list[str]
    names: list[str]
    status: str
    created_ms: int
    finished_ms: int | None
    forfeited: int | None
    result: dict[str, Any] | None
    rejected: list[int] | None = None
    abandoned: dict[int, str] | None = None  # seat -> reason (AbandonSeat)
    joined: list[int] | None = None  # seats whose bot has joined
    reveal_policy: str = "safe"  # safe | none (CreateMatchRequest.reveal_policy)
    record_format: str = RECORD_FORMAT  # how its game draws chance (referee.core.match)
    league: str = ""  # CreateMatchRequest.league
    unlisted: bool = False  # CreateMatchRequest.unlisted
    seat_bots: list[str] | None = None  # CreateMatchRequest.seat_bots
    seat_versions: list[int] | None = None  # CreateMatchRequest.seat_bot_versions
    start: dict[str, Any] | None = None  # CreateMatchRequest.start as its record keeps it
    seed_salt: str = ""  # its seed commitment's salt (referee.core.provenance); "": none
    extra: dict[str, Any] | None = None  # fields its record adds (a lobby match's "lobby")


@dataclass(slots=True)
class MoveRow:
    n: int
    seat: int
    version_before: int
    move: dict[str, Any]
    state_hash: str
    elapsed_ms: int
    timeout: bool
    policy: str | None
    note: str = ""  # the bot's note (Submit.note); "" for none


_STOP = object()

#: Group commit on the loop (``Store._flush``) that finds another process committing (a
#: cluster's workers on one SQLite file) tries again this much later, up to ``BUSY_RETRIES``
#: times in a row, before it hands the batch to the writer thread. Another worker's commit
#: holds the lock for a fraction of a millisecond; the hand-over (a thread woken, the
#: futures resolved across threads) cost each worker more CPU per move than the wait.
BUSY_RETRY_S = 0.0005
BUSY_RETRIES = 4

log = structlog.get_logger("referee.store")

#: SQLite's primary result codes that mean the file cannot be written or read now (a full disk,
#: a file or folder made read-only or removed, an I/O error, a lock held past the busy timeout):
#: the store is away, not the referee at fault
_SQLITE_AWAY = frozenset({
    sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_PERM, sqlite3.SQLITE_NOLFS,
})
#: errno values of a file the store writes (a finished match's record) that mean the same
_OS_AWAY = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM,
                      errno.EIO})


def store_outage(exc: BaseException) -> bool:
    """Whether ``exc`` means the store is away (unreachable, restarting, full, not writable)
    rather than a bug: a refusal with STORE_UNAVAILABLE, to be tried again, instead of INTERNAL.
    PostgreSQL: psycopg's OperationalError (connection lost or refused, server shutting down or
    starting, disk full, lock timeout) and InterfaceError (a closed connection); SQLite: the
    result codes of ``_SQLITE_AWAY``; a file the store writes: the errno values of
    ``_OS_AWAY``. An integrity or syntax error is not one."""
    if isinstance(exc, errors.RefereeError):
        return exc.reason == "STORE_UNAVAILABLE"
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and (code & 0xFF) in _SQLITE_AWAY
    if isinstance(exc, OSError):
        return exc.errno in _OS_AWAY
    psycopg = sys.modules.get("psycopg")  # imported only for a PostgreSQL store
    return psycopg is not None and isinstance(exc, (psycopg.OperationalError,
                                                    psycopg.InterfaceError))


_UNAVAILABLE_TEXT = ("the match store ({}) is unreachable or cannot write now; nothing was "
                     "changed: retry shortly, the referee recovers by itself when the store is "
                     "back")


def _busy(exc: BaseException) -> bool:
    """An SQLite COMMIT refused because another connection holds a lock: nothing was
    committed and the transaction is still open (it is rolled back and redone)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.Error) and code is not None \
        and (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def unavailable(kind: str) -> errors.RefereeError:
    """The answer to a call the store cannot serve now. It names no host, path or database
    error (those are in the referee's log): only that the store is away and to retry."""
    return errors.store_unavailable(_UNAVAILABLE_TEXT.format(kind))


class CommitUnknown(errors.RefereeError):
    """A write whose COMMIT failed because the store went away (a connection lost as the
    commit was sent, a COMMIT that failed on a full disk): the database may have committed it
    all the same, its reply lost. Its caller answers it as STORE_UNAVAILABLE like any outage,
    but must not take "not written" for granted: the store is the truth, and is read once it
    answers (a match's move: ``MatchRuntime._reconcile``). Such a batch is never sent again by
    the store itself (it would run twice, or fail on its own rows)."""

    def __init__(self, kind: str):
        away = unavailable(kind)
        super().__init__(away.code, away.reason, away.message)


class _CommitFailed(Exception):
    """Raised by ``Store._try_batch``: the batch's COMMIT itself failed for an outage (its
    outcome is unknown, see CommitUnknown)."""

    def __init__(self, error: BaseException):
        super().__init__(repr(error))
        self.error = error


#: The size of the probe's write (``Store.probe``): four SQLite pages of 4 KiB, more than any
#: move's commit writes (one row of ``moves``, its index pages, the refusal counts' row).
PROBE_BYTES = 16384


class Backoff:
    """When a failed connection may be tried again: at once the first time, then after 0.1 s,
    doubling to at most 2 s while it keeps failing, so that a store that is away is not
    hammered and one that is back is found within 2 s of the next call."""

    FIRST_S = 0.1
    CAP_S = 2.0

    __slots__ = ("delay", "next_at")

    def __init__(self) -> None:
        self.delay = 0.0
        self.next_at = 0.0

    def ready(self) -> bool:
        return time.monotonic() >= self.next_at

    def failed(self) -> float:
        """One more failure: the delay until the next try (seconds)."""
        self.delay = min(self.CAP_S, self.delay * 2 if self.delay else self.FIRST_S)
        self.next_at = time.monotonic() + self.delay
        return self.delay

    def ok(self) -> None:
        self.delay = 0.0
        self.next_at = 0.0


def _light(fn: Callable[[Any], object]) -> Callable[[Any], object]:
    """Mark a write whose success says nothing about the store's health (a lease renewal, a
    probe): it may succeed on a full disk, where adding a row fails, so it does not end an
    outage (see ``Store._settle``)."""
    fn._referee_light = True  # type: ignore[attr-defined]
    return fn

# A move's JSON text by the identity of its dict: the engine's move dicts are shared, immutable
# values (``referee.core.match.move_json``), so each is encoded once, not once per move played.
# The entry keeps its dict alive, so an id is never reused while it is here.
_MOVE_TEXT: dict[int, tuple[dict[str, Any], str]] = {}
_MOVE_TEXT_LIMIT = 4_096


def _move_text(move: dict[str, Any]) -> str:
    hit = _MOVE_TEXT.get(id(move))
    if hit is not None and hit[0] is move:
        return hit[1]
    text = json.dumps(move, separators=(",", ":"))
    if len(_MOVE_TEXT) >= _MOVE_TEXT_LIMIT:
        _MOVE_TEXT.clear()
    _MOVE_TEXT[id(move)] = (move, text)
    return text


#: What a write operation gets: a DB-API connection whose ``execute`` / ``executemany`` take
#: ``?`` placeholders, whatever the backend (the PostgreSQL store adapts them).
DbConn = Any


class Store(ABC):
    """The store contract: what the server, the bot sessions and the leagues read and write,
    whatever the database. One subclass per backend supplies its connections, its schema
    dialect and its errors (:class:`SqliteStore`, the embedded default;
    ``referee.server.store.postgres.PostgresStore``); everything else (group commit, the typed
    writes, the reads) is written once, here, in SQL both accept.

    ``durability`` is "normal" (a commit survives a crash of the referee process; with SQLite
    the last commits may be lost on power failure or an OS crash) or "full" (every group commit
    is fsynced before moves are acknowledged). ``on_loop``: whether the group commit runs on the
    event loop (see the module's docstring) or on a writer thread."""

    #: a short name for logs and errors: "sqlite" or "postgresql"
    kind = ""

    def __init__(self, durability: str = "normal", *, on_loop: bool = False):
        if durability not in ("normal", "full"):
            raise ValueError(f"durability is normal or full, not {durability!r}")
        self.durability = durability
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        # group commit on the event loop: the batch of this loop turn
        self.on_loop = on_loop
        self._pending: list = []
        self._flush_loop: asyncio.AbstractEventLoop | None = None
        self._busy_tries = 0  # flushes in a row that found the file's write lock taken
        self._loop: asyncio.AbstractEventLoop | None = None  # of the last write
        self._writer: DbConn | None = None
        self._handed = 0  # writes the loop handed to the writer thread, not yet committed
        self.batches = 0  # group commits done (for tests and stats)
        self.ops = 0
        self._reader: DbConn | None = None
        # leases (enable_leases): this referee's name, the epoch of each match it holds, and
        # what to call when a write finds a match taken over (on the event loop)
        self.owner = ""
        self.address = ""  # the owner's --advertise address, written in its leases
        self.lease_ttl_ms = 0
        self.epochs: dict[str, int] = {}
        self._ending: set[str] = set()  # matches whose finish is being committed
        self.on_lost: Callable[[str], None] | None = None
        # outages (see the module's docstring): whether the last write that tells found the
        # store usable, since when it has not, and when connections may be tried again
        self.available = True
        self._down_since = 0.0
        self._health = threading.Lock()
        self._writer_backoff = Backoff()
        self._reader_backoff = Backoff()

    # ------------------------------------------------------------------ backend hooks
    @abstractmethod
    def _connect(self) -> DbConn:
        """A new connection in autocommit mode (transactions are explicit BEGIN / COMMIT)."""

    @abstractmethod
    def columns(self, conn: DbConn, table: str) -> set[str]:
        """The names of ``table``'s columns."""

    @abstractmethod
    def _script(self, conn: DbConn, script: str) -> None:
        """Run a schema script (CREATE TABLE / INDEX IF NOT EXISTS ...) in this dialect."""

    #: whether a finished match's record is also kept in the store (table records), for
    #: referees on other hosts than its record file
    keeps_records = False
    #: how a write transaction starts (SQLite: IMMEDIATE, so that two processes on one file
    #: wait for each other at BEGIN instead of failing at the first write)
    begin = "BEGIN"
    #: appended to the lease check of a write: PostgreSQL locks the lease row until the
    #: transaction ends, so a take-over waits for a write in progress (SQLite: the whole
    #: database is locked by BEGIN IMMEDIATE already)
    lease_lock = ""

    def _usable(self, conn: DbConn) -> bool:
        """Whether the writer's connection still works (a server may close it)."""
        return True

    def ensure_schema(self, script: str, added: dict[str, dict[str, str]] | None = None,
                      after: str = "") -> None:
        """Create the tables of ``script`` if missing, add the columns of ``added`` (table ->
        column -> declaration) a store from an older referee lacks (columns are only ever
        added), then run ``after`` (indexes on added columns)."""
        with self.connection() as conn:
            self._script(conn, script)
            self.check_schema_version(conn)
            for table, cols in (added or {}).items():
                have = self.columns(conn, table)
                for col, decl in cols.items():
                    if col not in have:
                        conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")
            if after:
                self._script(conn, after)

    def check_schema_version(self, conn: DbConn) -> None:
        """Refuse a store a newer referee has written (its schema_version setting is above
        ours: its tables may mean things this referee does not know, and writing them could
        corrupt it); otherwise record ours, so the next upgrade knows where it starts. A store
        without the setting is from release 0.1.0 (schema 1) or a development build since."""
        row = conn.execute("SELECT value FROM settings WHERE name = ?",
                           (SCHEMA_VERSION_SETTING,)).fetchone()
        have = int(row[0]) if row and str(row[0]).isdigit() else 0
        if have > SCHEMA_VERSION:
            raise StoreSchemaError(
                f"the store {self.describe()} has schema version {have}, written by a newer "
                f"referee; this one knows up to {SCHEMA_VERSION}: run the newer referee (or "
                "restore a backup taken before the upgrade)")
        if have < SCHEMA_VERSION:
            conn.execute("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name)"
                         " DO UPDATE SET value = excluded.value",
                         (SCHEMA_VERSION_SETTING, str(SCHEMA_VERSION)))

    @contextmanager
    def connection(self) -> Iterator[DbConn]:
        """A connection of its own for reads at start-up (and a schema), closed after."""
        conn = self._connect()
        try:
            yield conn
        finally:
            conn.close()

    def describe(self) -> str:
        """Where the store is, for logs (never a password)."""
        return self.kind

    def queue_depth(self) -> int:
        """Writes queued and not yet committed (the metric referee_store_queue_depth; read at
        scrape time from another thread, so an approximate count)."""
        return len(self._pending) + (self._handed if self.on_loop else self._queue.qsize())

    def _backfill_seat_tokens(self) -> None:
        """A store from before the seat_tokens table: its running matches' tokens go in (once,
        while the table is empty), so another referee finds them."""
        with self.connection() as conn:
            if conn.execute("SELECT 1 FROM seat_tokens LIMIT 1").fetchone():
                return
            rows = [(h, mid, seat) for mid, hashes in conn.execute(
                        "SELECT id, token_hashes_json FROM matches WHERE status='running'")
                    for seat, h in enumerate(json.loads(hashes))]
            if rows:
                conn.executemany("INSERT INTO seat_tokens (token_hash, match_id, seat)"
                                 " VALUES (?,?,?) ON CONFLICT (token_hash) DO NOTHING", rows)

    # ------------------------------------------------------------------ group commit
    def start(self) -> None:
        if self.on_loop:
            self._writer = self._connect_loop_writer()
            return
        self._thread = threading.Thread(target=self._run, name="referee-store", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._pending:  # writes queued in the loop's last turn (normally flushed already)
            loop = self._flush_loop
            if loop is not None and loop.is_running() and not _on_thread_of(loop):
                asyncio.run_coroutine_threadsafe(_noop(), loop).result(10)  # let it flush
            if self._pending:
                self._flush(retry=False)
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join()
            self._thread = None
        if self.owner:  # a clean stop: another referee may take these matches over at once
            with contextlib.suppress(Exception):
                self.release_leases()
            self.owner = ""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _run(self) -> None:
        """The writer thread: commits what is queued, one batch at a time, until close. It
        never dies on a store error: a connection that cannot be opened or was lost fails the
        batch (STORE_UNAVAILABLE) and is opened again for a later one (``_writer_conn``)."""
        conn: DbConn | None = None
        q = self._queue
        try:
            while True:
                item = q.get()
                if item is _STOP:
                    return
                batch = [item]
                stop = False
                while True:
                    try:
                        nxt = q.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is _STOP:
                        stop = True
                        break
                    batch.append(nxt)
                try:
                    conn = self._commit(conn, batch)
                except BaseException as exc:  # a bug here must not stop the thread
                    log.exception("store_writer_error", error=repr(exc))
                    self._settle(batch, [exc] * len(batch), count=False)
                finally:
                    if self.on_loop:  # batches the loop handed over (see _flush): done
                        with contextlib.suppress(RuntimeError):  # loop closed at shutdown
                            batch[0][1].call_soon_threadsafe(self._handed_back, len(batch))
                if stop:
                    return
        finally:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()

    def _writer_conn(self, conn: DbConn | None) -> DbConn | None:
        """The writer thread's connection: ``conn`` while it works, else a new one, unless the
        last attempt failed too recently (``Backoff``); None when there is none to use now."""
        if conn is not None:
            if self._usable(conn):
                return conn
            with contextlib.suppress(Exception):
                conn.close()
        try:
            return self._open(self._writer_backoff)
        except Exception as exc:  # the store is away: this batch fails
            if not store_outage(exc):
                raise
            self._down(exc)
            return None

    def _open(self, backoff: Backoff) -> DbConn | None:
        """A new connection (the writer's or the reader's, each with its ``backoff``); None
        when the last attempt failed too recently. Raises what opening it raised, counted as
        a failure of ``backoff`` when the store is away."""
        if not backoff.ready():
            return None
        try:
            conn = self._connect()
        except Exception as exc:
            if store_outage(exc):
                backoff.failed()
            raise
        backoff.ok()
        return conn

    def _commit(self, conn: DbConn | None, batch: list) -> DbConn | None:
        """One transaction for ``batch`` (items: operation, loop, future, the match whose
        lease it needs or "", the match it creates or ""); then the futures are resolved.
        Returns the connection to use next (a new one if ``conn`` was lost; None if none could
        be opened: the batch failed with STORE_UNAVAILABLE)."""
        for _attempt in range(2):
            conn = self._writer_conn(conn)
            if conn is None:
                self._settle(batch, [unavailable(self.kind)] * len(batch), count=False)
                return None
            try:
                if self._try_batch(conn, batch):
                    self._settle(batch, [None] * len(batch))
                    return conn
            except _CommitFailed as failed:  # committed or not: never sent again
                self._unknown(batch, failed)  # (CommitUnknown)
                return conn if self._usable(conn) else None
            if self._usable(conn):
                break
            # the connection died (a restarted database closes it): once more on a new one,
            # so that the first write after the database is back does not fail for nothing
        assert conn is not None  # each attempt returned when it had none
        errors: list[BaseException | None] = [None] * len(batch)
        # One bad operation must not fail the others of its group: redo them one by one.
        for i, item in enumerate(batch):
            try:
                conn.execute(self.begin)
                stale = self._stale(self._check_leases(conn, [item]))
                if stale:
                    errors[i] = stale[item[3]]
                    _rollback(conn)
                    continue
                item[0](conn)
            except BaseException as exc:  # noqa: BLE001 - reported to its waiter
                _rollback(conn)
                errors[i] = exc
                continue
            try:
                conn.execute("COMMIT")
            except BaseException as exc:  # noqa: BLE001 - reported to its waiter
                _rollback(conn)
                errors[i] = CommitUnknown(self.kind) \
                    if store_outage(exc) and not _busy(exc) else exc
        self._settle(batch, errors)
        return conn

    def _try_batch(self, conn: DbConn, batch: list, begun: bool = False) -> bool:
        """The whole batch in one transaction (begun already if ``begun``): whether it
        committed (if not, it was rolled back)."""
        try:
            # BEGIN, the lease check and the writes go out together (PostgreSQL: one round
            # trip); the check is read before COMMIT, which only a batch whose leases all hold
            # reaches (they stay locked until then: lease_lock)
            with self._pipeline(conn):
                if not begun:
                    conn.execute(self.begin)
                check = self._check_leases(conn, batch)
                for fn, _loop, _fut, _fence, _new in batch:
                    fn(conn)
            if self._stale(check):
                raise _Stale()  # redo one by one, without the stale matches' writes
        except BaseException:  # noqa: BLE001
            _rollback(conn)
            return False
        try:
            conn.execute("COMMIT")
        except BaseException as exc:
            _rollback(conn)
            if store_outage(exc) and not _busy(exc):
                # the connection died or the disk filled as the COMMIT went out: the server
                # may have committed the batch and its reply be what was lost
                raise _CommitFailed(exc) from exc
            return False  # refused by the database (nothing committed): redone one by one
        return True

    def _unknown(self, batch: list, failed: _CommitFailed) -> None:
        """A batch whose COMMIT failed for an outage: each of its writes fails with
        CommitUnknown (STORE_UNAVAILABLE to its caller), none is tried again."""
        self._down(failed.error)
        self._settle(batch, [CommitUnknown(self.kind)] * len(batch), count=False)

    def _settle(self, batch: list, errors: list[BaseException | None],
                count: bool = True) -> None:
        """Count a committed batch and resolve its futures (each with its error, if any; an
        error of the store's being away becomes STORE_UNAVAILABLE). Marks the outage's start
        (any such error) or end (a write that is not light committed)."""
        if count:
            self.batches += 1
            self.ops += len(batch)
        # (the per-move path: a batch without errors costs one any() and one attribute here)
        away = next((e for e in errors if e is not None and store_outage(e)), None) \
            if any(errors) else None
        if away is not None:
            self._down(away)
            answer = unavailable(self.kind)
            errors = [e if isinstance(e, CommitUnknown) else
                      answer if e is not None and store_outage(e) else e for e in errors]
        elif not self.available and any(
                e is None and not getattr(item[0], "_referee_light", False)
                for item, e in zip(batch, errors)):
            self._up()
        by_loop: dict[Any, list] = {}
        for (_fn, loop, fut, _fence, _new), err in zip(batch, errors):
            if fut is not None:
                by_loop.setdefault(loop, []).append((fut, err))
        for loop, futs in by_loop.items():
            if _on_thread_of(loop):
                _resolve(futs)  # group commit on the loop: the waiters run next turn
                continue
            try:
                loop.call_soon_threadsafe(_resolve, futs)
            except RuntimeError:  # loop closed during shutdown
                pass

    def _down(self, exc: BaseException) -> None:
        """The store is away: logged once per outage, at warning, with what failed."""
        with self._health:
            if not self.available:
                log.debug("store_still_unavailable", store=self.kind, error=repr(exc)[:300])
                return
            self.available = False
            self._down_since = time.monotonic()
        log.warning("store_unavailable", store=self.describe(), error=repr(exc)[:300],
                    hint="calls that need the store are refused with STORE_UNAVAILABLE "
                         "until it is back; the referee retries by itself")

    def _up(self) -> None:
        """A write committed after an outage: its end, logged once at info."""
        with self._health:
            if self.available:
                return
            self.available = True
            down_s = time.monotonic() - self._down_since
        self._reader_backoff.ok()
        log.info("store_recovered", store=self.describe(), down_s=round(down_s, 1))

    async def probe(self) -> bool:
        """Whether a write commits now (one row of ``settings`` rewritten, through the group
        commit and its connection, which it opens again if lost; an empty transaction would
        commit on a full disk or an unwritable file): asked before a forfeit and by a match
        whose time policy waits for the store. The row is ``PROBE_BYTES`` of fresh random
        text, so that the probe writes more than a move does (with SQLite, a rewritten small
        row is one WAL frame, which may still fit on a nearly full disk where a move's
        frames do not: the probe would pass, the move fail, and a decision waiting for the
        store be timed afresh again and again). It still does not end an outage by itself
        (``_light``): only a write of the store's own does."""
        stamp = f"{now_ms()}:{os.urandom(PROBE_BYTES // 2).hex()}"

        def op(c: DbConn) -> None:
            c.execute("INSERT INTO settings (name, value) VALUES ('store_probe', ?)"
                      " ON CONFLICT (name) DO UPDATE SET value=excluded.value", (stamp,))

        try:
            await self._submit(_light(op))
        except Exception:  # noqa: BLE001 - still away
            return False
        return True

    def _check_leases(self, conn: DbConn, batch: list) -> tuple[list[str], list[Any]]:
        """Fencing, for a whole batch in its transaction: the query of the leases its writes
        need (the matches, and the cursors to read once the statements are sent)."""
        if not self.owner:
            return [], []
        created = {item[4] for item in batch if item[4]}
        ids = sorted({item[3] for item in batch if item[3] and item[3] not in created})
        cursors = []
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            cur = conn.execute(
                "SELECT match_id, epoch FROM leases WHERE owner=? AND match_id IN ("
                + ",".join("?" * len(part)) + ")" + self.lease_lock, (self.owner, *part))
            # read now unless pipelined: an SQLite cursor steps lazily, and the batch's own
            # writes (a finish deletes its lease) would change what it reads later
            cursors.append(cur if self.pipelined else cur.fetchall())
        return ids, cursors

    def _stale(self, check: tuple[list[str], list[Any]]) -> dict[str, BaseException]:
        """The matches of a lease check that this referee no longer holds at the epoch it
        acquired (taken over by another referee), each with the NOT_OWNER error its writes
        fail with."""
        ids, cursors = check
        if not ids:
            return {}
        held: dict[str, int] = {}
        for cur in cursors:
            held.update(cur if isinstance(cur, list) else cur.fetchall())
        stale: dict[str, BaseException] = {}
        for mid in ids:
            if mid not in self.epochs or held.get(mid) != self.epochs[mid]:
                self._lost(mid)
                stale[mid] = errors.not_owner(
                    f"match {mid} was taken over by another referee (its lease expired); "
                    "call again: the referee that runs it now answers")
        return stale

    #: whether _pipeline sends statements without waiting (their results read after)
    pipelined = False

    def _pipeline(self, conn: DbConn) -> contextlib.AbstractContextManager:
        """Where a backend can send a batch's statements without waiting for each answer."""
        return contextlib.nullcontext()

    def _submit(self, fn: Callable[[DbConn], object], fence: str = "",
                creates: str = "") -> asyncio.Future:
        """Queue ``fn`` for the next group commit. ``fence``: the match whose lease the write
        needs (checked in its transaction); ``creates``: the match whose lease it creates."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        fut = loop.create_future()
        item = (fn, loop, fut, fence, creates)
        if not self.on_loop:
            self._queue.put(item)
            return fut
        if not self._pending:
            loop.call_soon(self._flush)
            self._flush_loop = loop
        self._pending.append(item)
        return fut

    def _flush(self, retry: bool = True) -> None:
        """Commit the writes queued during the loop turn that scheduled this (loop mode).

        The loop never waits for the database: when another process holds the file's write
        lock (``_begin_now`` fails at once), the loop tries again ``BUSY_RETRY_S`` later, up to
        ``BUSY_RETRIES`` times in a row (``retry``: close() does not), the writes queued
        meanwhile joining the batch; when the lock stays taken, or the batch fails and must be
        redone one write at a time, the batch goes to the writer thread, which may wait for
        the lock (the busy timeout) while the loop serves everything else; until the thread
        is done, later batches follow it there, so writes still commit in the order they were
        queued. Either way a write's future resolves only once it is committed."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        try:
            if self._writer is None or not self._usable(self._writer):
                self._writer = self._connect_loop_writer()
        except Exception:  # noqa: BLE001 - the thread tries again (backoff) and reports it
            self._writer = None
            self._hand_over(batch)
            return
        busy = False
        try:
            began = not self._handed and self._begin_now(self._writer)
            busy = not began and not self._handed
        except Exception:  # noqa: BLE001 - the thread tries again and reports what fails
            _rollback(self._writer)
            began = False
        if not began:
            if busy and retry and self._busy_tries < BUSY_RETRIES and self._flush_loop:
                # another process is committing: try again in a moment on the loop, the
                # writes queued meanwhile joining this batch (a hand-over to the thread and
                # back costs each worker of a cluster more than the wait: docs/benchmarks.md)
                self._busy_tries += 1
                self._pending = batch + self._pending
                self._flush_loop.call_later(BUSY_RETRY_S, self._flush)
                return
            self._busy_tries = 0
            self._hand_over(batch)
            return
        self._busy_tries = 0
        try:
            ok = self._try_batch(self._writer, batch, begun=True)
        except _CommitFailed as failed:  # not handed over: it may be committed already
            self._unknown(batch, failed)
            return
        if ok:
            self._settle(batch, [None] * len(batch))
        else:
            self._hand_over(batch)

    def _connect_loop_writer(self) -> DbConn:
        """The connection of the group commit on the loop (see ``_begin_now``)."""
        return self._connect()

    def _begin_now(self, conn: DbConn) -> bool:
        """Begin a write transaction on the loop's connection if that needs no wait; False
        when the database is busy (another process writes): nothing was begun."""
        conn.execute(self.begin)
        return True

    def _hand_over(self, batch: list) -> None:
        """Commit ``batch`` on the writer thread (loop mode; started on first use)."""
        self._handed += len(batch)
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="referee-store",
                                            daemon=True)
            self._thread.start()
        for item in batch:
            self._queue.put(item)

    def _handed_back(self, n: int) -> None:
        self._handed -= n

    def reader(self) -> DbConn:
        """The connection of the one-row lookups (on the caller's thread), which survives an
        outage (``_Reader``): a lost connection is opened again, and a call while the store
        is away fails with STORE_UNAVAILABLE."""
        if self._reader is None:
            self._reader = _Reader(self)
        return self._reader

    # ------------------------------------------------------------------ writes (awaitable)
    def write(self, fn: Callable[[DbConn], Any]) -> asyncio.Future:
        """Run ``fn(connection)`` in the next group commit (tables of other modules, e.g.
        referee.server.play.sessions); operations commit in the order they were queued."""
        return self._submit(fn)

    # ------------------------------------------------------------------ leases
    def enable_leases(self, owner: str, ttl_ms: int, on_lost: Callable[[str], None],
                      address: str = "") -> None:
        """From now on every write for a match checks, in its transaction, that this referee
        (``owner``) still holds the match's lease at the epoch it acquired; a write that finds
        it taken over fails with UNAVAILABLE / NOT_OWNER and ``on_lost(match_id)`` is called
        on the loop. Without this (a bare store in tests) writes are not fenced. ``address``
        (``--advertise``) goes in every lease this referee takes: the other referees hand it
        the calls for its matches."""
        self.owner = owner
        self.address = address
        self.lease_ttl_ms = ttl_ms
        self.on_lost = on_lost

    def _lost(self, match_id: str) -> None:
        if self.epochs.pop(match_id, None) is None or self.on_lost is None:
            return
        loop = self._flush_loop if self.on_loop else None
        callback = self.on_lost
        if loop is not None and _on_thread_of(loop):
            loop.call_soon(callback, match_id)
        elif self._loop is not None:
            with contextlib.suppress(RuntimeError):  # closed during shutdown
                self._loop.call_soon_threadsafe(callback, match_id)

    def try_lease(self, match_id: str) -> int | None:
        """Acquire the lease of ``match_id`` if it is free: never held, released, expired, or
        held under this referee's own name (a restart of it); the new epoch, or None while
        another referee holds it. One short transaction of its own (the caller then loads
        the match from the store: a take-over, or resuming at start-up)."""
        now = now_ms()
        conn = self.reader()
        conn.execute(self.begin)
        try:
            conn.execute("INSERT INTO leases (match_id, owner, epoch, expires_ms)"
                         " VALUES (?, '', 0, 0) ON CONFLICT (match_id) DO NOTHING", (match_id,))
            took = conn.execute(
                "UPDATE leases SET owner=?, epoch=epoch+1, expires_ms=?, address=?"
                " WHERE match_id=? AND (owner=? OR owner='' OR expires_ms<?)",
                (self.owner, now + self.lease_ttl_ms, self.address or None, match_id,
                 self.owner, now)).rowcount
            epoch = conn.execute("SELECT epoch FROM leases WHERE match_id=?",
                                 (match_id,)).fetchone()[0] if took else None
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        if epoch is not None:
            self.epochs[match_id] = epoch
        return epoch

    def lease_holder(self, match_id: str) -> tuple[str, int, str] | None:
        """(owner, expires_ms, address: "" if not advertised) of a match's lease, or None."""
        row = self.reader().execute("SELECT owner, expires_ms, address FROM leases"
                                    " WHERE match_id=?", (match_id,)).fetchone()
        return (row[0], row[1], row[2] or "") if row else None

    def held_leases(self) -> list[str]:
        """The matches whose lease is under this referee's name (live or expired)."""
        if not self.owner:
            return []
        return [r[0] for r in self.reader().execute(
            "SELECT match_id FROM leases WHERE owner=?", (self.owner,)).fetchall()]

    def renew_leases(self) -> asyncio.Future:
        """Extend every lease this referee holds, in one statement of the next group commit,
        and find the ones it lost (taken over while it was stopped or cut off): those are
        passed to ``on_lost``."""
        held = dict(self.epochs)

        def op(c: DbConn) -> None:
            c.execute("UPDATE leases SET expires_ms=? WHERE owner=?",
                      (now_ms() + self.lease_ttl_ms, self.owner))
            mine = dict(c.execute("SELECT match_id, epoch FROM leases WHERE owner=?",
                                  (self.owner,)).fetchall())
            for match_id, epoch in held.items():
                if match_id in self._ending:
                    continue
                if mine.get(match_id) != epoch and self.epochs.get(match_id) == epoch:
                    self._lost(match_id)

        return self._submit(_light(op))  # rewrites rows: says little of a full disk

    def release_lease(self, match_id: str) -> asyncio.Future:
        """Give up the lease of one match this referee holds, as a write of the next group
        commit: after every write queued before it (its last acknowledged move among them),
        so a referee that takes the match at once loads it whole. A draining referee
        (``RefereeService.drain``) hands each match over this way as soon as it lets go of
        it, instead of at ``close`` after its streams' grace: the next call of the match
        reaches another referee (a cluster's next worker, through nginx's ``backup``) that
        takes it at once (``MatchRegistry.adopt``). Only the epoch this referee acquired is
        released (a lease already taken over stays the taker's); the renewals skip the match
        meanwhile, which must not count its release as a loss."""
        epoch = self.epochs.get(match_id)
        if not self.owner or epoch is None:
            fut = asyncio.get_running_loop().create_future()
            fut.set_result(None)
            return fut
        owner = self.owner

        def op(c: DbConn) -> None:
            c.execute("UPDATE leases SET owner='', expires_ms=0 WHERE match_id=? AND owner=?"
                      " AND epoch=?", (match_id, owner, epoch))

        self._ending.add(match_id)

        def done(f: asyncio.Future) -> None:
            self._ending.discard(match_id)
            if not f.cancelled() and f.exception() is None:
                self.epochs.pop(match_id, None)

        fut = self._submit(_light(op))
        fut.add_done_callback(done)
        return fut

    def release_leases(self, keep: Iterable[str] = ()) -> None:
        """Give up the leases held under this referee's name (all but ``keep``): at a clean
        shutdown, so another referee may take its matches over at once, and at start-up for
        the matches of a previous run that were not resumed."""
        if not self.owner:
            return
        keep = set(keep)
        conn = self.reader()
        mine = [r[0] for r in conn.execute("SELECT match_id FROM leases WHERE owner=?",
                                           (self.owner,)).fetchall() if r[0] not in keep]
        if mine:
            conn.execute(self.begin)
            try:
                conn.executemany("UPDATE leases SET owner='', expires_ms=0 WHERE match_id=?"
                                 " AND owner=?", [(m, self.owner) for m in mine])
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
        for m in mine:
            self.epochs.pop(m, None)

    def match_of_token(self, token_h: str) -> tuple[str, int] | None:
        """(match id, seat) of a seat token's hash, from the store (one primary-key lookup):
        for a match this referee does not hold in memory."""
        row = self.reader().execute("SELECT match_id, seat FROM seat_tokens WHERE token_hash=?",
                                   (token_h,)).fetchone()
        return (row[0], row[1]) if row else None

    def load_match(self, match_id: str) -> MatchRow | None:
        rows = self.load_matches(match_id=match_id)
        return rows[0] if rows else None

    def load_record(self, match_id: str) -> str | None:
        """A finished match's record as the store keeps it (keeps_records), or None."""
        row = self.reader().execute("SELECT json FROM records WHERE match_id=?",
                                    (match_id,)).fetchone()
        return row[0] if row else None

    def finished_lobby_matches(self, after_ms: int) -> list[tuple[str, int, dict[str, Any]]]:
        """(id, finished_ms, extra) of the finished lobby matches (their record's added fields
        hold "lobby"; an event's match adds "event" only) finished after ``after_ms``, oldest
        first: what ListLeagueChallenges sifts.
        A read connection of its own; the league runner asks with its last time, so each call
        reads only the matches finished since."""
        rows = self.reader().execute(
            "SELECT id, finished_ms, extra_json FROM matches WHERE status='finished'"
            " AND extra_json LIKE '%\"lobby\":%' AND finished_ms>? ORDER BY finished_ms, id",
            (after_ms,)).fetchall()
        return [(r[0], int(r[1] or 0), json.loads(r[2])) for r in rows]

    def running_twins(self, game: str, seed: int, match_id: str) -> list[str]:
        """The running matches of ``game`` on ``seed`` but ``match_id``, whichever referee on
        the store runs them (see referee.server.base.embargo)."""
        rows = self.reader().execute(
            "SELECT id FROM matches WHERE game=? AND seed=? AND status='running' AND id<>?",
            (game, str(seed), match_id)).fetchall()
        return [r[0] for r in rows]

    def shared_value(self, name: str, default: str) -> str:
        """The value every referee on this store shares under ``name``: the stored one, else
        ``default`` is stored (the first referee to ask sets it)."""
        conn = self.reader()
        conn.execute("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name)"
                     " DO NOTHING", (name, default))
        return conn.execute("SELECT value FROM settings WHERE name=?", (name,)).fetchone()[0]

    def created_by(self, admin_hash: str, request_id: str) -> tuple[str, str, int] | None:
        """(request fingerprint, match id, seat count) of the match an admin's CreateMatch
        with ``request_id`` created, or None (one primary-key lookup)."""
        row = self.reader().execute(
            "SELECT r.request_sha256, r.match_id, m.seats FROM create_requests r"
            " JOIN matches m ON m.id = r.match_id WHERE r.admin_hash=? AND r.request_id=?",
            (admin_hash, request_id)).fetchone()
        return (row[0], row[1], row[2]) if row else None

    # ------------------------------------------------------------------ typed writes
    def insert_match(self, row: MatchRow,
                     request: tuple[str, str, str] | None = None) -> asyncio.Future:
        """A new match, its seat tokens' hashes and its lease; ``request`` (admin hash,
        request id, request fingerprint: CreateMatch's idempotency) goes in the same
        transaction, so a store never has one without the other, and a second match for the
        same request fails whole (the primary key)."""
        values = (
            row.id, row.game, json.dumps(row.options, sort_keys=True), row.seats, str(row.seed),
            row.components_name, row.components_sha256, json.dumps(row.time_policy),
            json.dumps(row.token_hashes), json.dumps(row.names), row.status, row.created_ms,
            row.reveal_policy, row.record_format, row.league or None, int(row.unlisted),
            json.dumps(row.seat_bots) if row.seat_bots else None,
            json.dumps(row.seat_versions) if row.seat_versions else None,
            json.dumps(row.start, sort_keys=True) if row.start is not None else None,
            row.seed_salt or None,
            json.dumps(row.extra, sort_keys=True) if row.extra else None,
        )
        seats = [(h, row.id, s) for s, h in enumerate(row.token_hashes)]
        if self.owner:
            self.epochs[row.id] = 1
        lease = (row.id, self.owner, now_ms() + self.lease_ttl_ms, self.address or None)

        def op(c: DbConn) -> None:
            c.execute(
                "INSERT INTO matches (id, game, options_json, seats, seed, components_name,"
                " components_sha256, time_policy_json, token_hashes_json, names_json, status,"
                " created_ms, reveal_policy, record_format, league, unlisted, seat_bots_json,"
                " seat_versions_json, start_json, seed_salt, extra_json)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                values,
            )
            c.executemany("INSERT INTO seat_tokens (token_hash, match_id, seat) VALUES (?,?,?)"
                          " ON CONFLICT (token_hash) DO NOTHING", seats)
            if self.owner:
                c.execute("INSERT INTO leases (match_id, owner, epoch, expires_ms, address)"
                          " VALUES (?, ?, 1, ?, ?)", lease)
            if request is not None:
                c.execute("INSERT INTO create_requests (admin_hash, request_id,"
                          " request_sha256, match_id) VALUES (?,?,?,?)", (*request, row.id))

        def failed(f: asyncio.Future) -> None:  # no match, no lease to keep
            if f.cancelled() or f.exception() is not None:
                self.epochs.pop(row.id, None)

        fut = self._submit(op, creates=row.id)
        fut.add_done_callback(failed)
        return fut


    def insert_move(
        self, match_id: str, m: MoveRow, rejected: list[int] | None = None
    ) -> asyncio.Future:
        """One move; ``rejected`` (the per-seat count of refused moves, when it changed since
        the last write) rides in the same transaction, so counting refusals costs no commit."""
        values = (
            match_id, m.n, m.seat, m.version_before, _move_text(m.move),
            m.state_hash, m.elapsed_ms, int(m.timeout), m.policy, m.note or None,
        )
        counts = (json.dumps(rejected), match_id) if rejected is not None else None

        def op(c: DbConn) -> None:
            c.execute("INSERT INTO moves (match_id, n, seat, version_before, move_json,"
                      " state_hash, elapsed_ms, timeout, policy, note)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?)", values)
            if counts is not None:
                c.execute("UPDATE matches SET rejected_json=? WHERE id=?", counts)

        return self._submit(op, fence=match_id)

    def set_abandoned(self, match_id: str, abandoned: dict[int, str]) -> asyncio.Future:
        """The seats the host abandoned (AbandonSeat), all of them: a rare admin operation, so
        one write of its own, awaited before the RPC replies."""
        text = json.dumps({str(s): r for s, r in sorted(abandoned.items())})
        def op(c: DbConn) -> None:
            c.execute("UPDATE matches SET abandoned_json=? WHERE id=?", (text, match_id))

        return self._submit(op, fence=match_id)

    def set_joined(self, match_id: str, seats: list[int]) -> asyncio.Future:
        """The seats whose bot has joined, all of them (once per seat and match)."""
        text = json.dumps(sorted(seats))
        def op(c: DbConn) -> None:
            c.execute("UPDATE matches SET joined_json=? WHERE id=?", (text, match_id))

        return self._submit(op, fence=match_id)

    def finish_match(
        self,
        match_id: str,
        *,
        status: str,
        finished_ms: int,
        forfeited: int | None,
        result: dict[str, Any] | None,
        record_path: Path | None = None,
        record: dict[str, Any] | None = None,
        rejected: list[int] | None = None,
    ) -> asyncio.Future:
        result_json = json.dumps(result) if result is not None else None
        rejected_json = json.dumps(rejected) if rejected is not None else None

        def op(c: DbConn) -> None:
            if record_path is not None and record is not None:
                record_path.parent.mkdir(parents=True, exist_ok=True)
                tmp = record_path.with_suffix(".json.tmp")
                # one line: json's C encoder only runs without indent, and the indented
                # (pure-Python) encoding was ~9% of the referee's CPU per move
                text = json.dumps(record, sort_keys=True) + "\n"
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(record_path)
                if self.keeps_records:
                    c.execute("INSERT INTO records (match_id, json) VALUES (?, ?) ON CONFLICT"
                              " (match_id) DO UPDATE SET json=excluded.json", (match_id, text))
            c.execute(
                "UPDATE matches SET status=?, finished_ms=?, forfeited=?, result_json=?,"
                " rejected_json=COALESCE(?, rejected_json) WHERE id=?",
                (status, finished_ms, forfeited, result_json, rejected_json, match_id),
            )
            c.execute("DELETE FROM leases WHERE match_id=?", (match_id,))

        self._ending.add(match_id)  # its lease row goes: no renewal may take that for a loss

        def done(f: asyncio.Future) -> None:
            self._ending.discard(match_id)
            if not f.cancelled() and f.exception() is None:
                self.epochs.pop(match_id, None)

        fut = self._submit(op, fence=match_id)
        fut.add_done_callback(done)
        return fut

    # ------------------------------------------------------------------ reads (startup)
    def load_matches(self, status: str | None = None, match_id: str = "") -> list[MatchRow]:
        with self.connection() as conn:
            sql = (
                "SELECT id, game, options_json, seats, seed, components_name, components_sha256,"
                " time_policy_json, token_hashes_json, names_json, status, created_ms,"
                " finished_ms, forfeited, result_json, rejected_json, abandoned_json,"
                " joined_json, reveal_policy, record_format, league, unlisted, seat_bots_json,"
                " seat_versions_json, start_json, seed_salt, extra_json FROM matches"
                + (" WHERE status=?" if status else " WHERE id=?" if match_id else "")
            )
            args = (status,) if status else (match_id,) if match_id else ()
            rows = conn.execute(sql + " ORDER BY created_ms", args).fetchall()
        return [
            MatchRow(
                id=r[0], game=r[1], options=json.loads(r[2]), seats=r[3], seed=int(r[4]),
                components_name=r[5], components_sha256=r[6], time_policy=json.loads(r[7]),
                token_hashes=json.loads(r[8]), names=json.loads(r[9]), status=r[10],
                created_ms=r[11], finished_ms=r[12], forfeited=r[13],
                result=json.loads(r[14]) if r[14] else None,
                rejected=json.loads(r[15]) if r[15] else None,
                abandoned={int(k): v for k, v in json.loads(r[16]).items()} if r[16] else None,
                joined=json.loads(r[17]) if r[17] else None,
                reveal_policy=r[18] or "safe",
                record_format=r[19] or LEGACY_RECORD_FORMAT,
                league=r[20] or "", unlisted=bool(r[21]),
                seat_bots=json.loads(r[22]) if r[22] else None,
                seat_versions=json.loads(r[23]) if r[23] else None,
                start=json.loads(r[24]) if r[24] else None,
                seed_salt=r[25] or "",
                extra=json.loads(r[26]) if r[26] else None,
            )
            for r in rows
        ]

    def match_status(self, match_id: str) -> str | None:
        """running | finished | broken, or None for a match this store never had. For matches
        no longer held in memory; one primary-key lookup on a read connection of its own (WAL:
        readers never wait for the writer thread)."""
        row = self.reader().execute(
            "SELECT status FROM matches WHERE id=?", (match_id,)
        ).fetchone()
        return row[0] if row else None

    def stored_moves(self, match_id: str, first: int) -> list[tuple[int, int, str]]:
        """(number, seat, state hash) of the match's stored moves numbered ``first`` or more,
        in order: what a match whose commit's outcome is unknown (CommitUnknown) reads to learn
        whether its move is in the store. On the reader (STORE_UNAVAILABLE while the store is
        away)."""
        rows = self.reader().execute(
            "SELECT n, seat, state_hash FROM moves WHERE match_id=? AND n>=? ORDER BY n",
            (match_id, first)).fetchall()
        return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    def reveal_key(self, match_id: str) -> tuple[str, int, str] | None:
        """(game, seed, reveal policy) of a match, or None for a match this store never had:
        what deciding whether its hidden information is embargoed needs (one primary-key
        lookup, like ``match_status``)."""
        row = self.reader().execute(
            "SELECT game, seed, reveal_policy FROM matches WHERE id=?", (match_id,)
        ).fetchone()
        return (row[0], int(row[1]), row[2] or "safe") if row else None

    def load_moves(self, match_id: str) -> list[MoveRow]:
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT n, seat, version_before, move_json, state_hash, elapsed_ms, timeout,"
                " policy, note FROM moves WHERE match_id=? ORDER BY n",
                (match_id,),
            ).fetchall()
        return [
            MoveRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], bool(r[6]), r[7], r[8] or "")
            for r in rows
        ]


class SqliteStore(Store):
    """The embedded store: ``<data-dir>/referee.sqlite3``, SQLite in WAL mode. With durability
    normal (synchronous=NORMAL) a commit costs no fsync and the group commit runs on the event
    loop; with full (synchronous=FULL) on the writer thread."""

    kind = "sqlite"
    begin = "BEGIN IMMEDIATE"

    def __init__(self, data_dir: str | Path, durability: str = "normal"):
        super().__init__(durability, on_loop=durability == "normal")
        self.path = Path(data_dir) / "referee.sqlite3"
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.path.exists():
            # created 0600 before SQLite opens it: it holds every running match's seed, and
            # SQLite gives the -wal and -shm files the database file's mode (issue 31, item 6)
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        self.ensure_schema(SCHEMA, ADDED_COLUMNS, INDEXES)
        self._backfill_seat_tokens()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={'FULL' if self.durability == 'full' else 'NORMAL'}")
        conn.execute("PRAGMA busy_timeout=5000")
        return conn

    def _connect_loop_writer(self) -> sqlite3.Connection:
        # the loop must not wait in BEGIN IMMEDIATE for another process: it gets SQLITE_BUSY
        # at once and hands the batch to the writer thread, whose connection waits instead
        conn = self._connect()
        conn.execute("PRAGMA busy_timeout=0")
        return conn

    def _begin_now(self, conn: sqlite3.Connection) -> bool:
        try:
            conn.execute(self.begin)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                return False
            raise
        return True

    def columns(self, conn: DbConn, table: str) -> set[str]:
        return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}

    def _script(self, conn: DbConn, script: str) -> None:
        conn.executescript(script)

    def describe(self) -> str:
        return str(self.path)


#: Columns an older referee's store lacks, added when it is opened (columns are only added).
ADDED_COLUMNS = {
    "matches": {"rejected_json": "TEXT", "abandoned_json": "TEXT", "joined_json": "TEXT",
                "reveal_policy": "TEXT", "record_format": "TEXT", "league": "TEXT",
                "unlisted": "INTEGER", "seat_bots_json": "TEXT", "seat_versions_json": "TEXT",
                "start_json": "TEXT", "seed_salt": "TEXT", "extra_json": "TEXT"},
    "moves": {"note": "TEXT"},
    "leases": {"address": "TEXT"},
}
#: Indexes on added columns: created once the columns are there.
INDEXES = """CREATE INDEX IF NOT EXISTS matches_league ON matches (league, created_ms);
CREATE INDEX IF NOT EXISTS matches_seed ON matches (game, seed);"""


class _Reader:
    """The store's read connection with the face of a DB-API one (``execute``,
    ``executemany``, ``close``). A statement that fails because the store is away drops the
    connection; outside a transaction it is tried once more on a new connection (a database
    that restarted closed the old one, and the first read after its return must not fail for
    that), else it fails with STORE_UNAVAILABLE. A new connection is tried at most as often as
    ``Store._reader_backoff`` allows while the store stays away."""

    __slots__ = ("conn", "in_tx", "store")

    def __init__(self, store: Store):
        self.store = store
        self.conn: DbConn | None = None
        self.in_tx = False  # between this connection's BEGIN and its COMMIT / ROLLBACK

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self._run("execute", sql, params)

    def executemany(self, sql: str, rows: Any) -> Any:
        return self._run("executemany", sql, list(rows))

    def _run(self, how: str, sql: str, params: Any) -> Any:
        store = self.store
        head = sql.lstrip()[:8].upper()
        if self.conn is None and head.startswith(("COMMIT", "ROLLBACK")):
            # the transaction's connection was dropped (the store went away): nothing to roll
            # back, nothing committed
            if head.startswith("COMMIT"):
                raise unavailable(store.kind)
            return None
        for attempt in (0, 1):
            try:
                conn = self.conn
                if conn is None or not store._usable(conn):
                    self.close()
                    conn = self.conn = store._open(store._reader_backoff)
                    if conn is None:
                        raise unavailable(store.kind)
                cur = getattr(conn, how)(sql, params)
            except Exception as exc:
                if not store_outage(exc):
                    raise
                retry = attempt == 0 and not self.in_tx and self.conn is not None \
                    and not head.startswith(("COMMIT", "ROLLBACK"))
                self.close()
                if retry:
                    continue
                if isinstance(exc, errors.RefereeError):
                    raise
                store._down(exc)
                raise unavailable(store.kind) from exc
            if head.startswith("BEGIN"):
                self.in_tx = True
            elif head.startswith(("COMMIT", "ROLLBACK")):
                self.in_tx = False
            return cur
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        conn, self.conn, self.in_tx = self.conn, None, False
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()


class _Stale(Exception):
    """A batch wrote for a match whose lease was taken over: it is redone without it."""


def _rollback(conn: DbConn) -> None:
    try:
        conn.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - nothing to roll back, or the connection is gone
        pass


def _resolve(futs: list[tuple[asyncio.Future, BaseException | None]]) -> None:
    for fut, error in futs:
        if fut.done():
            continue
        if error is None:
            fut.set_result(None)
        elif isinstance(error, errors.RefereeError):  # NOT_OWNER: the client's answer
            fut.set_exception(error)
        else:
            fut.set_exception(RuntimeError(f"store commit failed: {error!r}"))


def _on_thread_of(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


async def _noop() -> None:
    return None
