"""The results folder's SQLite database (``tournament.sqlite``): the schedule and every outcome.

One row per scheduled match. ``status``: ``pending`` → ``running`` → ``done`` (the referee
reported a result) or ``failed`` (no result: wall-clock limit, referee error). ``skipped``: the
sequential test separated the pair first. On resume, ``running`` rows (in flight when the runner
stopped) go back to ``pending``; ``done`` rows are never replayed.
"""
from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .formats import MatchSpec

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
  idx INTEGER PRIMARY KEY,
  round INTEGER NOT NULL,
  grp TEXT NOT NULL,
  tbl TEXT NOT NULL,
  seating TEXT NOT NULL,          -- JSON list of entrant names, by seat
  seed TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  match_id TEXT,
  referee TEXT,
  started REAL,
  finished REAL,
  seconds REAL,
  scores TEXT,                    -- JSON list by seat
  ranks TEXT,                     -- JSON list by seat
  outcome TEXT,                   -- JSON: per-seat bot outcomes, timeouts, errors
  record_path TEXT,
  error TEXT,
  request_id TEXT                 -- CreateMatch's request_id, stored before the call is sent
);
"""
#: columns a results folder of an older runner lacks, added when it is opened
ADDED_COLUMNS = {"request_id": "TEXT"}


def add_columns(db: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    """Add to ``table`` those of ``columns`` (name: declaration) it lacks: a database written
    by an older version of the runner, opened by this one."""
    have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    for col, decl in columns.items():
        if col not in have:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")


@dataclass(slots=True)
class Row:
    idx: int
    round: int
    group: str
    table: tuple[str, ...]
    seating: tuple[str, ...]
    seed: int
    status: str
    attempts: int
    match_id: str | None
    referee: str | None
    seconds: float | None
    scores: list[int] | None
    ranks: list[int] | None
    outcome: dict[str, Any] | None
    record_path: str | None
    error: str | None
    finished: float | None


def private_db(path: str | Path) -> Path:
    """A runner's SQLite file made its user's alone before SQLite opens it (issue 31, item 6):
    created 0600 (SQLite gives its -wal and -shm files the same mode), or, left readable by an
    older runner, tightened with them. The schedule holds the seeds of matches not yet played,
    a league's store the seat tokens of running ones."""
    path = Path(path)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if p.exists() and p.stat().st_mode & 0o077:
            os.chmod(p, stat.S_IMODE(p.stat().st_mode) & 0o600)
    return path


class Store:
    def __init__(self, path: Path):
        self.path = private_db(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        add_columns(self.db, "matches", ADDED_COLUMNS)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def bump_session(self) -> int:
        n = int(self.get_meta("sessions") or 0) + 1
        self.set_meta("sessions", str(n))
        return n

    # ------------------------------------------------------------------ schedule
    def ensure_schedule(self, specs: list[MatchSpec]) -> int:
        """Insert the schedule; on a resume check the stored one is the same or a prefix of it
        (more rounds extend a tournament). Returns how many matches were added."""
        rows = self.db.execute("SELECT idx, seating, seed FROM matches ORDER BY idx").fetchall()
        if len(rows) > len(specs) or any(
            r[0] != s.index or json.loads(r[1]) != list(s.seating) or r[2] != str(s.seed)
            for r, s in zip(rows, specs, strict=False)
        ):
            raise ScheduleMismatch(
                f"{self.path} holds a different schedule ({len(rows)} matches) than the "
                f"tournament file ({len(specs)}): use another output folder or delete this one "
                "(only raising rounds or matches_per_pairing can extend a tournament)"
            )
        new = specs[len(rows):]
        if new:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany(
                    "INSERT INTO matches(idx, round, grp, tbl, seating, seed) VALUES (?,?,?,?,?,?)",
                    [(s.index, s.round, s.group, "|".join(s.table), json.dumps(s.seating),
                      str(s.seed)) for s in new],
                )
        return len(new) if rows else 0

    def next_index(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM matches").fetchone()[0])

    def add(self, spec: MatchSpec) -> None:
        """One more match (an arena's table, formed while the event runs)."""
        self.db.execute(
            "INSERT INTO matches(idx, round, grp, tbl, seating, seed) VALUES (?,?,?,?,?,?)",
            (spec.index, spec.round, spec.group, "|".join(spec.table), json.dumps(spec.seating),
             str(spec.seed)))

    def requeue_running(self) -> int:
        """Matches in flight when the runner stopped go back to pending (they are replayed)."""
        cur = self.db.execute("UPDATE matches SET status='pending' WHERE status='running'")
        return cur.rowcount

    def requeue(self, indices: list[int]) -> None:
        self.db.executemany("UPDATE matches SET status='pending' WHERE idx=?",
                            [(i,) for i in indices])

    def retry_failed(self, last_round_only: bool = False) -> int:
        """Failed matches back to pending; ``last_round_only``: those of the last stored round
        (a Swiss's or knockout's later rounds were paired on the earlier ones' results)."""
        if last_round_only:
            cur = self.db.execute(
                "UPDATE matches SET status='pending' WHERE status='failed' "
                "AND round = (SELECT MAX(round) FROM matches)")
        else:
            cur = self.db.execute("UPDATE matches SET status='pending' WHERE status='failed'")
        return cur.rowcount

    # ------------------------------------------------------------------ updates
    def mark_running(self, idx: int, referee: str) -> str:
        """The match is about to be created: its CreateMatch request_id, committed before the
        call is sent. A match interrupted before (the runner killed, the referee gone) keeps
        the one it had, so that creating it again on the same referee returns the match made
        then (the referee's CreateMatch is idempotent) instead of a second one."""
        self.db.execute(
            "UPDATE matches SET status='running', attempts=attempts+1, referee=?, started=?, "
            "error=NULL, request_id=COALESCE(request_id, ?) WHERE idx=?",
            (referee, time.time(), uuid.uuid4().hex, idx),
        )
        return self.db.execute("SELECT request_id FROM matches WHERE idx=?",
                               (idx,)).fetchone()[0]

    def mark_match_id(self, idx: int, match_id: str) -> None:
        self.db.execute("UPDATE matches SET match_id=? WHERE idx=?", (match_id, idx))

    def finish(self, idx: int, result: dict[str, Any]) -> None:
        status = "done" if result.get("ranks") else "failed"
        self.db.execute(
            "UPDATE matches SET status=?, match_id=?, finished=?, seconds=?, scores=?, ranks=?, "
            "outcome=?, record_path=?, error=?, request_id=CASE WHEN ?='failed' THEN NULL ELSE"
            " request_id END WHERE idx=?",
            (
                status, result.get("match_id"), time.time(), result.get("seconds"),
                json.dumps(result.get("scores")) if result.get("scores") is not None else None,
                json.dumps(result.get("ranks")) if result.get("ranks") else None,
                json.dumps(result.get("outcome") or {}), result.get("record_path"),
                result.get("error"), status, idx,  # a failed match is played anew, if again
            ),
        )

    def skip(self, indices: list[int]) -> int:
        """Mark pending matches skipped (early stop); returns how many changed."""
        cur = self.db.executemany(
            "UPDATE matches SET status='skipped' WHERE idx=? AND status='pending'",
            [(i,) for i in indices],
        )
        return cur.rowcount

    # ------------------------------------------------------------------ reads
    def rows(self, status: str | None = None) -> list[Row]:
        q = ("SELECT idx, round, grp, tbl, seating, seed, status, attempts, match_id, referee, "
             "seconds, scores, ranks, outcome, record_path, error, finished FROM matches")
        args: tuple = ()
        if status:
            q += " WHERE status=?"
            args = (status,)
        q += " ORDER BY idx"
        out = []
        for r in self.db.execute(q, args):
            out.append(Row(
                idx=r[0], round=r[1], group=r[2], table=tuple(r[3].split("|")),
                seating=tuple(json.loads(r[4])), seed=int(r[5]), status=r[6], attempts=r[7],
                match_id=r[8], referee=r[9], seconds=r[10],
                scores=json.loads(r[11]) if r[11] else None,
                ranks=json.loads(r[12]) if r[12] else None,
                outcome=json.loads(r[13]) if r[13] else None, record_path=r[14], error=r[15],
                finished=r[16],
            ))
        return out

    def counts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT status, COUNT(*) FROM matches GROUP BY status"))


class ScheduleMismatch(RuntimeError):
    pass
