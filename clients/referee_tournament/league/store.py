"""The league's own database (``league.sqlite`` in its run folder).

Every match the league created (``matches``: ``creating`` from just before ``CreateMatch``,
with the call's ``request_id``, ``running`` once its id and seat tokens are known, until its
record is complete, then done or failed; a runner stopped between the two sends the same
CreateMatch again when it restarts, and the referee answers with the match the first call
made, if it made one; ``lost`` when that cannot be done), every rating (``ratings``, one row per bot **version**: a remote bot is its version
0), each rating change (``history``), the incidents of hosted and remote bots (``incidents``),
the consecutive start crashes of each hosted version (``crash_streaks``) and the league file
(``meta``). The lobby's challenges to the entrants it took in are rows of ``matches`` too
(``challenge`` = 1, each match id once; ``seed`` holds its finishing time), kept out of the
league's own counts and rows (:meth:`LeagueStore.challenge_rows`). A finished match, the ratings it changed, their history and its incidents are
committed in one transaction before the standings are published, so a runner killed at any
point (kill -9 included) loses no finished result and never rates a match twice: a restarted
runner finds its ``running`` matches again (the referee still holds them) and follows them to
their end.

A running match keeps the seat tokens of its hosted seats (``hosted_tokens``) so that a
restarted runner can start those bots again; they are deleted when the match ends. The file is
created 0600.
"""
from __future__ import annotations

import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ladder import Rating
from ..store import Row, add_columns, private_db

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
  idx INTEGER PRIMARY KEY,
  match_id TEXT,
  game TEXT NOT NULL,
  seating TEXT NOT NULL,          -- JSON: rating keys by seat (bot, or bot@version)
  seed TEXT NOT NULL,
  status TEXT NOT NULL,           -- creating | running | done | failed | lost
  started REAL NOT NULL,
  finished REAL,
  scores TEXT,
  ranks TEXT,
  outcome TEXT,                   -- JSON: each seat's incidents, as a tournament's
  record_path TEXT,
  error TEXT,
  hosted_tokens TEXT,             -- JSON {seat: token} while running; NULL once over
  request_id TEXT                 -- CreateMatch's, stored before the call is sent
);
CREATE TABLE IF NOT EXISTS ratings (
  key TEXT PRIMARY KEY,
  bot TEXT NOT NULL,
  version INTEGER NOT NULL,
  mu REAL NOT NULL,
  sigma REAL NOT NULL,
  matches INTEGER NOT NULL DEFAULT 0,
  wins REAL NOT NULL DEFAULT 0,
  updated REAL
);
CREATE TABLE IF NOT EXISTS history (
  key TEXT NOT NULL,
  t_ms INTEGER NOT NULL,
  rating REAL NOT NULL,
  match_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS incidents (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,             -- timeout | crash | refused | forfeit | hung | start_crash
  match_id TEXT,
  t_ms INTEGER NOT NULL,
  message TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS crash_streaks (key TEXT PRIMARY KEY, streak INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  name TEXT PRIMARY KEY,
  spec TEXT NOT NULL,             -- JSON: the [[events]] table as first stored (kept as is)
  status TEXT NOT NULL,           -- scheduled | running | done | cancelled
  entrants TEXT,                  -- JSON: rating keys drawn at the start, seed order
  started REAL,
  finished REAL,
  error TEXT
);
"""


def key_of(bot: str, version: int) -> str:
    """The rating key of a bot version: ``bot@3``; a remote bot (version 0) is its name."""
    return f"{bot}@{version}" if version else bot


def split_key(key: str) -> tuple[str, int]:
    bot, _, v = key.partition("@")
    return bot, int(v) if v else 0


@dataclass
class Running:
    idx: int
    match_id: str
    game: str
    seating: list[str]
    seed: int
    started: float
    hosted_tokens: dict[int, str]


@dataclass
class Creating:
    idx: int
    game: str
    seating: list[str]
    seed: int
    request_id: str  # "" in a database from before request ids


class LeagueStore:
    def __init__(self, path: Path):
        self.db = sqlite3.connect(private_db(path), isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        add_columns(self.db, "matches", {"request_id": "TEXT"})  # from before request ids
        # from before events: a match's event, its index in the event, whether it is rated
        add_columns(self.db, "matches", {"event": "TEXT", "event_idx": "INTEGER",
                                         "rated": "INTEGER NOT NULL DEFAULT 1"})
        # a lobby challenge to an entrant (issue 33), taken in from its signed record: the
        # league did not create it; ``rated`` says whether it moved the ratings
        add_columns(self.db, "matches", {"challenge": "INTEGER NOT NULL DEFAULT 0"})
        self.db.execute("CREATE UNIQUE INDEX IF NOT EXISTS matches_challenge_id ON matches"
                        " (match_id) WHERE challenge=1")

    def close(self) -> None:
        self.db.close()

    # ---------------------------------------------------------------- meta
    def set_meta(self, values: dict[str, str]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                            list(values.items()))

    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta"))

    # ---------------------------------------------------------------- matches
    def next_index(self) -> int:
        return (self.db.execute("SELECT MAX(idx) FROM matches").fetchone()[0] or 0) + 1

    def intend(self, idx: int, game: str, seating: list[str], seed: int,
               event: tuple[str, int, bool] | None = None) -> str:
        """A match about to be created, committed before ``CreateMatch`` is sent, with the
        call's request_id (returned): sent again with it, the call gets the match the first
        one made (the referee's CreateMatch is idempotent) instead of a second one."""
        rid = uuid.uuid4().hex
        name, eidx, rated = event or (None, None, True)
        self.db.execute(
            "INSERT INTO matches (idx, game, seating, seed, status, started, request_id,"
            " event, event_idx, rated) VALUES (?,?,?,?,'creating',?,?,?,?,?)",
            (idx, game, json.dumps(seating), str(seed), time.time(), rid, name, eidx,
             int(rated)))
        return rid

    def rated(self, idx: int) -> bool:
        row = self.db.execute("SELECT rated FROM matches WHERE idx=?", (idx,)).fetchone()
        return bool(row[0]) if row else True

    # ---------------------------------------------------------------- events
    def add_event(self, name: str, spec: dict[str, Any]) -> None:
        """An event of the league file, stored once (its first spec is the one it plays)."""
        self.db.execute("INSERT OR IGNORE INTO events (name, spec, status) VALUES (?,?,"
                        "'scheduled')", (name, json.dumps(spec)))

    def events(self) -> list[dict[str, Any]]:
        return [{"name": n, "spec": json.loads(spec), "status": st,
                 "entrants": json.loads(ent) if ent else [], "started": started,
                 "finished": finished, "error": error or ""}
                for n, spec, st, ent, started, finished, error in self.db.execute(
                    "SELECT name, spec, status, entrants, started, finished, error FROM events"
                    " ORDER BY json_extract(spec, '$.start_unix'), name")]

    def set_event(self, name: str, status: str, *, entrants: list[str] | None = None,
                  error: str = "") -> None:
        now = time.time()
        if status == "running":
            self.db.execute("UPDATE events SET status=?, entrants=?, started=? WHERE name=?",
                            (status, json.dumps(entrants or []), now, name))
        else:
            self.db.execute("UPDATE events SET status=?, finished=?, error=? WHERE name=?",
                            (status, now, error[:300], name))

    def event_league_idx(self, name: str) -> dict[int, int]:
        """The event's match indices -> their league indices (the report's match rows)."""
        return dict(self.db.execute("SELECT event_idx, idx FROM matches WHERE event=?",
                                    (name,)))

    def event_rows(self, name: str) -> list[tuple[Row, str | None]]:
        """The event's matches as store rows whose ``idx`` is the index in the event, with
        their league match ids (None while being created)."""
        out = []
        for (eidx, mid, game, seating, seed, status, started, finished, scores, ranks,
             outcome, error) in self.db.execute(
                "SELECT event_idx, match_id, game, seating, seed, status, started, finished,"
                " scores, ranks, outcome, error FROM matches WHERE event=? ORDER BY event_idx",
                (name,)):
            names = tuple(json.loads(seating))
            out.append((Row(
                idx=eidx, round=0, group=game, table=tuple(sorted(names)), seating=names,
                seed=int(seed), status=status, attempts=1, match_id=mid, referee=None,
                seconds=round(finished - started, 3) if finished else None,
                scores=json.loads(scores) if scores else None,
                ranks=json.loads(ranks) if ranks else None,
                outcome=json.loads(outcome) if outcome else None, record_path=None,
                error=error, finished=finished), mid))
        return out

    def forget(self, idx: int) -> None:
        """A match the referee refused to create."""
        self.db.execute("DELETE FROM matches WHERE idx=? AND status='creating'", (idx,))

    def start(self, idx: int, match_id: str, seat_tokens: dict[int, str]) -> None:
        """The match exists: its id and seat tokens, before any bot starts."""
        self.db.execute(
            "UPDATE matches SET match_id=?, status='running', hosted_tokens=? WHERE idx=?",
            (match_id, json.dumps({str(k): v for k, v in seat_tokens.items()}), idx))

    def event_of(self, idx: int) -> str:
        """The name of the league event match ``idx`` belongs to ("" for a scheduled match):
        sent as CreateMatchRequest.event, the same on every sending of the same request."""
        row = self.db.execute("SELECT event FROM matches WHERE idx=?", (idx,)).fetchone()
        return (row[0] or "") if row else ""

    def creating(self) -> list[Creating]:
        """The matches a runner stopped while creating (it never learnt their id or tokens)."""
        return [Creating(idx, game, json.loads(seating), int(seed), rid or "")
                for idx, game, seating, seed, rid in self.db.execute(
                    "SELECT idx, game, seating, seed, request_id FROM matches"
                    " WHERE status='creating' ORDER BY idx")]

    def lose(self, idx: int, error: str) -> None:
        """A match being created that cannot be created again (no request_id stored, or the
        referee refused the same call again): ``lost``, never rated. If the referee made it,
        its time policy plays its hosted seats."""
        self.db.execute("UPDATE matches SET status='lost', error=? WHERE idx=?"
                        " AND status='creating'", (error[:300], idx))

    def running(self) -> list[Running]:
        return [Running(idx, mid, game, json.loads(seating), int(seed), started,
                        {int(k): v for k, v in json.loads(tokens or "{}").items()})
                for idx, mid, game, seating, seed, started, tokens in self.db.execute(
                    "SELECT idx, match_id, game, seating, seed, started, hosted_tokens"
                    " FROM matches WHERE status='running' ORDER BY idx")]

    def count(self, status: str | None = None) -> int:
        """The league's own matches (challenges taken in are not: they are no league's)."""
        if status is None:
            return self.db.execute("SELECT COUNT(*) FROM matches WHERE challenge=0"
                                   ).fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM matches WHERE status=? AND challenge=0",
                               (status,)).fetchone()[0]

    # ---------------------------------------------------------------- challenges (issue 33)
    def has_challenge(self, match_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM matches WHERE challenge=1 AND match_id=?",
                               (match_id,)).fetchone() is not None

    def challenge_cursor(self) -> int:
        """The finishing time (referee's Unix ms) of the newest challenge taken in: the
        runner asks the referee for those finished after it."""
        row = self.db.execute("SELECT MAX(CAST(seed AS INTEGER)) FROM matches WHERE challenge=1"
                              ).fetchone()
        return int(row[0] or 0)

    def take_challenge(self, match_id: str, game: str, seating: list[str], finished_ms: int,
                       result: dict[str, Any], changed: list[Rating], error: str = "") -> bool:
        """A finished challenge taken in once: its row and the ratings it changed (with their
        history) in one transaction; False (nothing written) when it was taken in already, so
        a runner restarted at any point (kill -9 included) never rates it twice. ``seed``
        keeps its finishing time (the cursor); ``rated`` is whether ``changed`` moved."""
        now = time.time()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if self.has_challenge(match_id):
                return False
            idx = self.next_index()
            self.db.execute(
                "INSERT INTO matches (idx, match_id, game, seating, seed, status, started,"
                " finished, scores, ranks, record_path, error, rated, challenge)"
                " VALUES (?,?,?,?,?,'done',?,?,?,?,?,?,?,1)",
                (idx, match_id, game, json.dumps(seating), str(finished_ms), now, now,
                 json.dumps(result.get("scores")), json.dumps(result.get("ranks")),
                 result.get("record_path"), error[:300] or None, int(bool(changed))))
            self._rate_rows(changed, now, match_id)
        return True

    def challenge_rows(self) -> list[tuple[Row, bool]]:
        """The challenges taken in, oldest first, as store rows with whether each was rated."""
        out = []
        for (idx, mid, game, seating, finished, scores, ranks, path, error,
             rated) in self.db.execute(
                "SELECT idx, match_id, game, seating, finished, scores, ranks, record_path,"
                " error, rated FROM matches WHERE challenge=1 ORDER BY idx"):
            names = tuple(json.loads(seating))
            out.append((Row(
                idx=idx, round=0, group=game, table=tuple(sorted(names)), seating=names,
                seed=0, status="done", attempts=1, match_id=mid, referee=None, seconds=None,
                scores=json.loads(scores) if scores else None,
                ranks=json.loads(ranks) if ranks else None, outcome=None, record_path=path,
                error=error, finished=finished), bool(rated)))
        return out

    def finish(self, idx: int, result: dict[str, Any], changed: list[Rating],
               incidents: list[tuple[str, str, str]], streaks: dict[str, int]) -> None:
        """A match's outcome, the ratings it changed (with their history), its incidents
        (key, kind, message) and the crash streaks it moved, in one transaction."""
        now = time.time()
        t_ms = int(now * 1000)
        status = "done" if result.get("ranks") else "failed"
        mid = result.get("match_id") or ""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "UPDATE matches SET status=?, finished=?, scores=?, ranks=?, outcome=?,"
                " record_path=?, error=?, hosted_tokens=NULL WHERE idx=?",
                (status, now, json.dumps(result.get("scores")), json.dumps(result.get("ranks")),
                 json.dumps(result.get("outcome")) if result.get("outcome") else None,
                 result.get("record_path"), result.get("error"), idx))
            self._rate_rows(changed, now, mid)
            self.db.executemany("INSERT INTO incidents (key, kind, match_id, t_ms, message)"
                                " VALUES (?,?,?,?,?)",
                                [(k, kind, mid, t_ms, msg[:300]) for k, kind, msg in incidents])
            self.db.executemany("INSERT OR REPLACE INTO crash_streaks (key, streak)"
                                " VALUES (?, ?)", list(streaks.items()))

    def _rate_rows(self, changed: list[Rating], now: float, mid: str) -> None:
        """The ratings ``changed`` and their history (inside the caller's transaction)."""
        self.db.executemany(
            "INSERT INTO ratings (key, bot, version, mu, sigma, matches, wins, updated)"
            " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET mu=excluded.mu,"
            " sigma=excluded.sigma, matches=excluded.matches, wins=excluded.wins,"
            " updated=excluded.updated",
            [(r.name, *split_key(r.name), r.mu, r.sigma, r.matches, r.wins, now)
             for r in changed])
        self.db.executemany("INSERT INTO history (key, t_ms, rating, match_id)"
                            " VALUES (?,?,?,?)",
                            [(r.name, int(now * 1000), r.ordinal, mid) for r in changed])

    # ---------------------------------------------------------------- ratings
    def ratings(self) -> dict[str, Rating]:
        return {k: Rating(k, mu, sigma, matches, wins) for k, mu, sigma, matches, wins in
                self.db.execute("SELECT key, mu, sigma, matches, wins FROM ratings")}

    def streaks(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT key, streak FROM crash_streaks"))

    def history(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for k, t, rating, mid in self.db.execute(
                "SELECT key, t_ms, rating, match_id FROM history ORDER BY rowid"):
            out.setdefault(k, []).append({"t": t, "rating": round(rating, 4), "match": mid})
        return out

    def incidents(self, per_key: int = 20) -> dict[str, list[dict[str, Any]]]:
        """The latest ``per_key`` incidents of each key, newest first."""
        out: dict[str, list[dict[str, Any]]] = {}
        for k, kind, mid, t, msg in self.db.execute(
                "SELECT key, kind, match_id, t_ms, message FROM incidents ORDER BY id DESC"):
            lst = out.setdefault(k, [])
            if len(lst) < per_key:
                lst.append({"kind": kind, "match": mid or "", "t": t, "message": msg})
        return out

    def rows(self, rated_only: bool = False) -> list[Row]:
        """Every league match as a tournament's store row, in the order they finished
        (``rated_only``: without the matches of unrated events); challenges taken in are
        :meth:`challenge_rows`."""
        out = []
        for (idx, mid, game, seating, seed, status, started, finished, scores, ranks, outcome,
             path, error) in self.db.execute(
                "SELECT idx, match_id, game, seating, seed, status, started, finished, scores,"
                " ranks, outcome, record_path, error FROM matches WHERE challenge=0"
                + (" AND rated=1" if rated_only else "") +
                " ORDER BY finished IS NULL, finished, idx"):
            names = tuple(json.loads(seating))
            out.append(Row(
                idx=idx, round=0, group=game, table=tuple(sorted(names)), seating=names,
                seed=int(seed), status=status, attempts=1, match_id=mid, referee=None,
                seconds=round(finished - started, 3) if finished else None,
                scores=json.loads(scores) if scores else None,
                ranks=json.loads(ranks) if ranks else None,
                outcome=json.loads(outcome) if outcome else None, record_path=path,
                error=error, finished=finished))
        return out
