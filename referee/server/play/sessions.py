"""Persistent bot sessions: a bot connects once (``Session`` stream, bot token) and the referee
pushes it an ``Assignment`` for every seat a ``CreateMatch`` bound to it (``seat_bots``).

* **Bots** are registered by the admin (``RegisterBot``); only the SHA-256 of a bot token is
  stored (table ``bots``), as for seat tokens.
* **Seat tokens of bound seats** are derived, not stored: HMAC-SHA256 of ``match:seat`` under a
  key kept in ``<data-dir>/bot-seats.key`` (mode 0600). The match row keeps only their hashes,
  like every seat token, and an assignment can be sent again after a restart.
* **Assignments** (table ``assignments``) are committed in the same writer queue as the match,
  ahead of it: a match the store has is never missing its assignments. ``open`` until the match
  ends (``done``). In memory each open assignment is either with one session (sent, maybe
  acknowledged) or waiting for a session with room (``capacity``).
* Registering a bot again replaces its token: the sessions opened with the old one end at once
  (UNAUTHENTICATED, reason TOKEN_REPLACED), are sent nothing more, and give their assignments
  back for the new token's sessions.
* A session that drops gives its assignments back; they go to the bot's next session (a
  reconnect, another copy) marked ``resent``. After a referee restart every open assignment of
  a still-running match is sent again when the bot reconnects.
* An assignment not acknowledged within ``ack_timeout_s`` is taken back from that session
  (``SessionNotice`` ACK_TIMEOUT) and offered to another session of the bot; whoever plays it or
  not, the match's time policy runs, so the match always ends and the assignment with it.

Knows no game and no match internals: the service tells it when a match is created
(:meth:`BotSessions.bind`, :meth:`activate`) and when one is over (:meth:`match_over`).
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import structlog
from google.protobuf import json_format

from referee.server.base import errors, shard
from referee.server.base.auth import CallContext, RateLimiter, bearer, token_hash
from referee.server.base.clock import now_ms
from referee.server.base.errors import RefereeError, clip
from referee.server.play.streams import CLOSE, drain, end_with, put_bounded
from referee.server.store.sqlite import DbConn, Store, store_outage
from referee.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.sessions")

SCHEMA = """
CREATE TABLE IF NOT EXISTS bots (
    name        TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL,       -- SHA-256 hex of the bot token, never the token
    created_ms  INTEGER NOT NULL
    -- league bots (referee.server.leagues.league) add: league, kind, status, message, owner,
    -- description (see BOT_COLUMNS; added to older stores when opened)
);
CREATE TABLE IF NOT EXISTS assignments (
    match_id    TEXT NOT NULL,
    seat        INTEGER NOT NULL,
    bot         TEXT NOT NULL,
    status      TEXT NOT NULL,       -- open | done
    info_json   TEXT NOT NULL,       -- game, options, time policy, seat names
    created_ms  INTEGER NOT NULL,
    acked_ms    INTEGER,
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX IF NOT EXISTS assignments_open ON assignments (status, bot);
"""

MAX_CAPACITY = 256
MAX_CHALLENGE_GAMES = 32  # SessionHello.challenge_games: names kept at most
#: Columns of ``bots`` added for leagues (a store from before them gains them when opened).
BOT_COLUMNS = {"league": "TEXT", "kind": "INTEGER NOT NULL DEFAULT 0",
               "status": "INTEGER NOT NULL DEFAULT 2", "message": "TEXT", "owner": "TEXT",
               "description": "TEXT"}
REMOVED = 4  # referee.v1.BotStatus.BOT_REMOVED: its token opens nothing
#: A bot name, matched with fullmatch (a "$" anchor let "alpha\n", a look-alike of "alpha", through)
BOT_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")


@dataclass(eq=False)
class Conn:
    """One connected Session stream."""

    bot: str
    capacity: int
    peer: str = ""
    token_hash: str = ""  # of the bot token it was opened with
    shard: str | None = None  # the shard its bot token names (referee.server.base.shard)
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)
    active: set[tuple[str, int]] = field(default_factory=set)
    dropped: bool = False  # it read too slowly, or its token was replaced: only its closing
    # error is left to send
    closed: bool = False  # taken out of the bot's sessions (it holds no assignment)
    # the lobby (issue 33, play/lobby.py): its hello said it accepts challenges, for these
    # games (empty: every game), at most max_challenges lobby matches (0: its capacity)
    accept_challenges: bool = False
    challenge_games: frozenset[str] = frozenset()
    max_challenges: int = 0

    def put(self, item: Any) -> None:
        """Bounded like a Play stream: a bot that sends and never reads cannot make the referee
        buffer its notices without end (its assignments come again when it reconnects)."""
        if not self.dropped:
            self.dropped = not put_bounded(self.queue, item)

    def matches(self) -> set[str]:
        return {m for m, _ in self.active}

    def has_room(self, match_id: str) -> bool:
        """Capacity counts matches: another seat of a match it already plays always fits
        (a bot in two seats of one match with capacity 1 would otherwise stall it)."""
        held = self.matches()
        return match_id in held or len(held) < self.capacity


@dataclass(eq=False)
class Assign:
    match_id: str
    seat: int
    bot: str
    info: dict[str, Any]
    created_ms: int
    conn: Conn | None = None
    acked: bool = False
    sent: int = 0  # times sent (one restored after a restart counts as sent before)
    declined: set[int] = field(default_factory=set)  # id() of sessions that declined / timed out
    timer: asyncio.TimerHandle | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.match_id, self.seat)


@dataclass(slots=True)
class Binding:
    """The bound seats of a match being created (see :meth:`BotSessions.bind`)."""

    match_id: str
    seats: list[tuple[int, str]]
    info: dict[str, Any]
    created_ms: int
    stored: asyncio.Future


class BotSessions:
    def __init__(self, store: Store, data_dir: Path, limiter: RateLimiter | None = None,
                 ack_timeout_s: float = 30.0, shard: str | None = None):
        self.store = store
        self.shard = shard  # a cluster worker's: its bot tokens carry it (referee.server.base.shard)
        self.draining = False  # set by end_every: the referee stops taking sessions
        self.limiter = limiter or RateLimiter(0, 1)
        self.ack_timeout_s = ack_timeout_s
        self.key = _load_key(Path(data_dir) / "bot-seats.key")
        # every referee sharing the store must derive the same seat tokens: the store keeps the
        # key's SHA-256 (never the key), and a referee with another key refuses to start
        if store.shared_value("bot_seats_key_sha256", hashlib.sha256(self.key).hexdigest()) \
                != hashlib.sha256(self.key).hexdigest():
            raise OSError(f"{Path(data_dir) / 'bot-seats.key'} is not the key the other referees "
                          "on this store use: copy the first referee's bot-seats.key into every "
                          "referee's data directory")
        store.ensure_schema(SCHEMA, {"bots": BOT_COLUMNS})
        with store.connection() as conn:
            self.bots: dict[str, str] = dict(conn.execute("SELECT token_hash, name FROM bots"))
            # removed league bots: their token opens no Session and uploads nothing
            self.blocked: set[str] = {r[0] for r in conn.execute(
                "SELECT name FROM bots WHERE status=?", (REMOVED,))}
        self.open: dict[tuple[str, int], Assign] = {}
        self.by_bot: dict[str, list[Assign]] = {}
        self.conns: dict[str, list[Conn]] = {}

    # ------------------------------------------------------------------ tokens
    def seat_token(self, match_id: str, seat: int) -> str:
        digest = hmac.new(self.key, f"{match_id}:{seat}".encode(), hashlib.sha256).hexdigest()
        owner = shard.of_match(match_id)  # the proxy routes the seat to its match's worker
        return f"{owner}.{digest}" if owner else digest

    def check_seat_bots(self, names: Iterable[str], seats: int) -> list[str]:
        """``CreateMatchRequest.seat_bots`` checked: [] or one (possibly empty) name per seat,
        every name a registered bot."""
        names = list(names)
        if not names:
            return []
        if len(names) != seats:
            raise errors.malformed(f"seat_bots has {len(names)} entries for {seats} seats "
                                   "(one per seat, \"\" for a seat without a bot)")
        known = set(self.bots.values())
        for n in names:
            if n and not BOT_NAME_RE.fullmatch(n):  # no bot has it: not looked up in the store
                raise errors.malformed(f"seat_bots holds {clip(n)}, which is no bot name")
            if n and n not in known and not self._refresh_name(n):
                raise errors.not_found(f"no registered bot {n!r} (RegisterBot first)")
        return names

    def _refresh_token(self, h: str) -> str | None:
        """A bot token this referee does not know: registered (or replaced) through another
        referee on the store? One primary-key lookup; the cache learns the answer."""
        row = self.store.reader().execute("SELECT name, status FROM bots WHERE token_hash=?",
                                         (h,)).fetchone()
        if row is None:
            return None
        self._learn(row[0], h, row[1])
        return row[0]

    def _refresh_name(self, name: str) -> bool:
        """Whether ``name`` is a bot registered through another referee on the store."""
        row = self.store.reader().execute("SELECT token_hash, status FROM bots WHERE name=?",
                                         (name,)).fetchone()
        if row is not None:
            self._learn(name, row[0], row[1])
        return row is not None

    def _learn(self, name: str, h: str, status: int | None) -> None:
        for old in [k for k, v in self.bots.items() if v == name]:
            del self.bots[old]
        self.bots[h] = name
        if status == REMOVED:
            self.blocked.add(name)
        else:
            self.blocked.discard(name)

    def seat_tokens(self, match_id: str, bots: list[str], tokens: list[str]) -> list[str]:
        """The seat tokens of a new match: bound seats get their derived token."""
        return [self.seat_token(match_id, s) if bots and bots[s] else t
                for s, t in enumerate(tokens)]

    # ------------------------------------------------------------------ registration
    async def register(self, name: str, meta: dict[str, Any] | None = None,
                       also: Callable[[DbConn], object] | None = None,
                       created_ms: int | None = None) -> pb.RegisterBotResponse:
        """A new token for ``name``; ``meta`` sets league columns of its row (BOT_COLUMNS),
        ``also`` runs in the same transaction (an invite's use)."""
        if not BOT_NAME_RE.fullmatch(name):
            raise errors.malformed("a bot name is 1-64 letters, digits, '.', '_', '+' or '-', "
                                   "starting with a letter or digit")
        token = shard.token(self.shard)
        h = token_hash(token)
        meta = dict(meta or {})
        cols = [c for c in BOT_COLUMNS if c in meta]
        sql = ("INSERT INTO bots (name, token_hash, created_ms"
               + "".join(f", {c}" for c in cols) + ") VALUES (?,?,?" + ",?" * len(cols)
               + ") ON CONFLICT(name) DO UPDATE SET token_hash=excluded.token_hash,"
               " created_ms=excluded.created_ms" + "".join(f", {c}=excluded.{c}" for c in cols))
        values = (name, h, created_ms or now_ms(), *(meta[c] for c in cols))

        def op(c: DbConn) -> None:
            c.execute(sql, values)
            if also is not None:
                also(c)

        await self.store.write(op)
        if meta.get("status") is not None:
            self.set_blocked(name, meta["status"] == REMOVED)
        for old in [k for k, v in self.bots.items() if v == name]:
            del self.bots[old]
        self.bots[h] = name
        # whoever held the replaced token gets nothing more, not even the seat token of an
        # assignment: its sessions end now and their assignments wait for the new token
        stale = [c for c in self.conns.get(name, ()) if c.token_hash != h]
        for conn in stale:
            conn.dropped = True
            end_with(conn.queue, errors.token_replaced(
                "this bot's token was replaced (RegisterBot): reconnect with the new token"))
            self._drop(conn)
        log.info("bot_registered", bot=name, sessions_closed=len(stale))
        return pb.RegisterBotResponse(name=name, bot_token=token)

    # ------------------------------------------------------------------ matches
    def bind(self, match_id: str, bots: list[str], *, game: str, options: dict[str, str],
             policy: pb.TimePolicy, names: list[str], event: str = "") -> Binding | None:
        """Store the assignments of a new match; queued BEFORE the match row, so the writer
        thread commits them no later than the match. Await ``.stored``, then :meth:`activate`
        sends them once the match is live."""
        if not any(bots):
            return None
        info = {"game": game, "options": options, "seat_count": len(bots), "seat_names": names,
                "time_policy": json_format.MessageToDict(policy,
                                                         preserving_proto_field_name=True)}
        if event:  # absent otherwise: assignments stored before it read the same
            info["event"] = event
        text = json.dumps(info, sort_keys=True)
        created = now_ms()
        rows = [(match_id, s, b, "open", text, created) for s, b in enumerate(bots) if b]
        stored = self.store.write(lambda c: c.executemany(
            "INSERT INTO assignments (match_id, seat, bot, status, info_json, created_ms)"
            " VALUES (?,?,?,?,?,?)", rows))
        return Binding(match_id, [(s, b) for s, b in enumerate(bots) if b], info, created,
                       stored)

    def cancel(self, binding: Binding | None) -> None:
        """The match of ``binding`` was not created after all (its insert failed): its
        assignments, stored ahead of it, are closed."""
        if binding is not None:
            self._write_later(lambda c: c.execute(
                "UPDATE assignments SET status='done' WHERE match_id=?", (binding.match_id,)))

    def activate(self, binding: Binding | None) -> None:
        if binding is None:
            return
        for seat, bot in binding.seats:
            self._add(Assign(binding.match_id, seat, bot, binding.info, binding.created_ms))
        for bot in sorted({b for _, b in binding.seats}):
            self.dispatch(bot)

    def _add(self, a: Assign) -> None:
        self.open[a.key] = a
        self.by_bot.setdefault(a.bot, []).append(a)

    def _stored_open(self, bots: list[str] | None = None) -> list[tuple[Any, ...]]:
        """The open assignments in the store (of ``bots`` only, if given), oldest first:
        (match id, seat, bot, info, created ms, its match's status or None)."""
        where = ""
        if bots is not None:
            where = f" AND a.bot IN ({','.join('?' * len(bots))})"
        with self.store.connection() as conn:
            return conn.execute(
                "SELECT a.match_id, a.seat, a.bot, a.info_json, a.created_ms, m.status"
                " FROM assignments a LEFT JOIN matches m ON m.id = a.match_id"
                f" WHERE a.status='open'{where} ORDER BY a.created_ms, a.match_id, a.seat",
                bots or ()).fetchall()

    def _take_in(self, match_id: str, seat: int, bot: str, info: str, created: int) -> None:
        """An open assignment read from the store, held here from now on. It may have been
        sent already (by this referee before a restart, or by another one on the store): the
        bot gets it marked as a re-send."""
        self._add(Assign(match_id, seat, bot, json.loads(info), created, sent=1))

    def restore(self, is_live: Callable[[str], bool],
                is_over: Callable[[str], bool] | None = None) -> int:
        """After a restart (or a take-over): the open assignments of matches that are live
        again (sent when their bot reconnects); those of matches that are over (``is_over``;
        by default every match not live here) are closed, the others (run by another referee
        on the store) left as they are."""
        stale: list[tuple[str, int]] = []
        for match_id, seat, bot, info, created, _ in self._stored_open():
            if (match_id, seat) in self.open:
                continue
            if not is_live(match_id):
                if is_over is None or is_over(match_id):
                    stale.append((match_id, seat))
                continue
            self._take_in(match_id, seat, bot, info, created)
        if stale:
            self._write_later(lambda c: c.executemany(
                "UPDATE assignments SET status='done' WHERE match_id=? AND seat=?", stale))
        if self.open:
            log.info("assignments_restored", open=len(self.open), closed=len(stale))
        return len(self.open)

    def pull(self, runs_here: Callable[[str], bool]) -> int:
        """Several hosts on one store: bring in the open assignments of the bots connected
        here that another referee stored, and close those held here of matches that another
        referee ran to their end. Every host holding bot sessions runs it: a host serves a
        CreateMatch binding bots itself while the home host is unreachable, and the bots'
        sessions may be on another host (the proxy spreads them over the others while the
        home host is down) or back on the home host. ``runs_here``: whether a match is live on
        this referee (its own assignments are kept by ``match_over``). An assignment held here
        is never brought in again. Returns how many were brought in."""
        # the bots connected here, and those of assignments held here for matches another
        # referee runs (brought in while their bot was here: let go once the match is over)
        elsewhere = {a.bot for k, a in self.open.items() if not runs_here(k[0])}
        bots = sorted(set(self.conns) | elsewhere)
        if not bots:
            return 0
        rows = self._stored_open(bots)
        live = {(r[0], r[1]) for r in rows if r[5] == "running"}
        ended = {k[0] for k in self.open if k not in live and not runs_here(k[0])}
        for match_id in sorted(ended):
            self.match_over(match_id)
        added: set[str] = set()
        n = 0
        for match_id, seat, bot, info, created, status in rows:
            if (status != "running" or bot not in self.conns or (match_id, seat) in self.open
                    or runs_here(match_id)):
                continue
            self._take_in(match_id, seat, bot, info, created)
            added.add(bot)
            n += 1
        for bot in sorted(added):
            self.dispatch(bot)
        if n:
            log.info("assignments_pulled", assignments=n, bots=len(added))
        return n

    async def pull_every(self, every_s: float, runs_here: Callable[[str], bool]) -> None:
        """:meth:`pull` every ``every_s`` seconds (each host of several)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                self.pull(runs_here)
            except Exception:  # a store hiccup: try again next round
                log.warning("assignments_pull_failed", exc_info=True)

    def forget(self, match_id: str) -> None:
        """A match another referee took over: its assignments leave this one's memory (they
        stay open in the store, for the referee that runs it now)."""
        for k in [k for k in self.open if k[0] == match_id]:
            a = self.open.pop(k)
            self.by_bot[a.bot].remove(a)
            if not self.by_bot[a.bot]:
                del self.by_bot[a.bot]
            self._release(a)

    def match_over(self, match_id: str) -> None:
        keys = [k for k in self.open if k[0] == match_id] if self.open else []
        if not keys:
            return
        bots = set()
        for k in keys:
            a = self.open.pop(k)
            self.by_bot[a.bot].remove(a)
            if not self.by_bot[a.bot]:
                del self.by_bot[a.bot]
            self._release(a)
            bots.add(a.bot)
        self._write_later(lambda c: c.execute(
            "UPDATE assignments SET status='done' WHERE match_id=?", (match_id,)))
        for bot in sorted(bots):
            self.dispatch(bot)

    # ------------------------------------------------------------------ dispatching
    def _release(self, a: Assign) -> None:
        if a.timer is not None:
            a.timer.cancel()
            a.timer = None
        if a.conn is not None:
            a.conn.active.discard(a.key)
            a.conn = None

    def dispatch(self, bot: str) -> None:
        """Give the bot's waiting assignments to its sessions that have room (oldest first;
        the session already in the match, else the least busy)."""
        conns = self.conns.get(bot)
        if not conns:
            return
        for a in self.by_bot.get(bot, ()):
            if a.conn is not None:
                continue
            room = [c for c in conns if c.has_room(a.match_id) and id(c) not in a.declined]
            if not room:
                continue
            # the session already playing this match, else the least busy
            self._send(min(room, key=lambda c: (a.match_id not in c.matches(),
                                                len(c.matches()))), a)

    def _send(self, conn: Conn, a: Assign) -> None:
        a.conn = conn
        a.acked = False
        conn.active.add(a.key)
        info = a.info
        msg = pb.SessionServerMessage(assignment=pb.Assignment(
            match_id=a.match_id, seat=a.seat, seat_token=self.seat_token(a.match_id, a.seat),
            game=info["game"], options=info["options"], seat_count=info["seat_count"],
            seat_names=info["seat_names"], resent=a.sent > 0, event=info.get("event", ""),
            time_policy=json_format.ParseDict(info["time_policy"], pb.TimePolicy()),
        ))
        a.sent += 1
        conn.put(msg)
        if self.ack_timeout_s > 0:
            a.timer = asyncio.get_running_loop().call_later(
                self.ack_timeout_s, self._ack_timeout, a, conn)
        log.debug("assignment_sent", bot=a.bot, match_id=a.match_id, seat=a.seat)

    def _ack_timeout(self, a: Assign, conn: Conn) -> None:
        a.timer = None
        if a.conn is not conn or a.acked or self.open.get(a.key) is not a:
            return
        conn.put(pb.SessionServerMessage(notice=pb.SessionNotice(
            reason="ACK_TIMEOUT", match_id=a.match_id, seat=a.seat,
            message=f"assignment not acknowledged within {self.ack_timeout_s:g}s: offered to "
                    "another session of this bot; the match's time policy applies meanwhile")))
        log.info("assignment_ack_timeout", bot=a.bot, match_id=a.match_id, seat=a.seat)
        a.declined.add(id(conn))
        self._release(a)
        self.dispatch(a.bot)

    def ack(self, conn: Conn, ack: pb.AssignmentAck) -> None:
        if conn.closed:
            return  # its token was replaced: it is ending and takes nothing more
        key = (ack.match_id, ack.seat)
        a = self.open.get(key)
        if a is None:
            self._notice(conn, "NOT_FOUND", f"no open assignment for match "
                         f"{clip(ack.match_id)} seat {ack.seat} (over, or never made)", ack)
            return
        if a.bot != conn.bot:
            self._notice(conn, "PERMISSION_DENIED",
                         "this assignment belongs to another bot", ack)
            return
        if a.conn is not conn:
            if a.conn is None and ack.accept and conn.has_room(a.match_id):
                # a late answer after a timeout, while nobody else holds it: take it back
                a.conn = conn
                conn.active.add(key)
            else:
                self._notice(conn, "PERMISSION_DENIED",
                             "this assignment was not sent to this session (it was taken back "
                             "or given to another session of the bot)", ack)
                return
        if a.timer is not None:
            a.timer.cancel()
            a.timer = None
        if ack.accept:
            if not a.acked:
                a.acked = True
                ts = now_ms()
                self._write_later(lambda c: c.execute(
                    "UPDATE assignments SET acked_ms=? WHERE match_id=? AND seat=?",
                    (ts, a.match_id, a.seat)))
            return
        log.info("assignment_declined", bot=a.bot, match_id=a.match_id, seat=a.seat,
                 message=ack.message[:200])
        a.declined.add(id(conn))
        self._release(a)
        self.dispatch(a.bot)

    @staticmethod
    def _notice(conn: Conn, reason: str, message: str,
                ack: pb.AssignmentAck | None = None) -> None:
        conn.put(pb.SessionServerMessage(notice=pb.SessionNotice(
            reason=reason, message=message, match_id=errors.prefix(ack.match_id) if ack else "",
            seat=ack.seat if ack else 0)))

    def _write_later(self, fn: Callable[[DbConn], Any]) -> None:
        fut = self.store.write(fn)
        fut.add_done_callback(_log_failure)

    # ------------------------------------------------------------------ the RPC
    def _bot_of(self, context: CallContext) -> tuple[str, str]:
        """The bot a Session's token belongs to, and the token's hash."""
        token = bearer(context.invocation_metadata())
        h = token_hash(token) if token else None
        # per known bot token, else per peer ADDRESS (as the service's other RPCs): made-up
        # tokens or more connections (each has its own port) buy no fresh bucket
        if not self.limiter.allow(h if h in self.bots else self.limiter.client(context)):
            raise errors.exhausted("rate limit exceeded; slow down")
        if h is None:
            raise errors.unauthenticated(
                "a Session needs a bot token (authorization: Bearer; see RegisterBot)")
        name = self.bots.get(h) or self._refresh_token(h)
        if name is None:
            raise errors.unauthenticated("unknown bot token (seat and admin tokens open no "
                                         "Session; RegisterBot returns a bot token)")
        if name in self.blocked:
            raise errors.unauthenticated("this bot was removed from its league; its token "
                                         "no longer works")
        return name, h

    def bot_of_token(self, context: CallContext) -> str:
        """The (not removed) bot whose token a call carries (UploadBot), rate-limited like a
        Session."""
        return self._bot_of(context)[0]

    def set_blocked(self, name: str, blocked: bool) -> None:
        """A removed bot's token stops working at once: its open sessions end
        (UNAUTHENTICATED) and give their assignments back."""
        if not blocked:
            self.blocked.discard(name)
            return
        self.blocked.add(name)
        for conn in list(self.conns.get(name, ())):
            conn.dropped = True
            end_with(conn.queue, errors.unauthenticated(
                "this bot was removed from its league; its token no longer works"))
            self._drop(conn)

    def connected(self, name: str) -> bool:
        return bool(self.conns.get(name))

    def bot_named_by(self, h: str) -> str | None:
        """The bot whose token has the hash ``h`` (looked up in the store when not known
        here), or None."""
        return self.bots.get(h) or self._refresh_token(h)

    def known(self, name: str) -> bool:
        """Whether ``name`` is a registered bot (here or, on a shared store, elsewhere) that
        was not removed."""
        if not BOT_NAME_RE.fullmatch(name):
            return False
        found = name in self.bots.values() or self._refresh_name(name)
        return found and name not in self.blocked

    async def Session(self, request_iterator: AsyncIterator[bytes],
                      context: CallContext) -> AsyncGenerator[Any, None]:
        """Frames arrive as raw bytes (the service's ``_guard_stream`` turns what this raises
        into a status: a RefereeError with its reason, anything else INTERNAL). A first frame
        that is not a SessionClientMessage ends the stream with INVALID_ARGUMENT/MALFORMED;
        after the hello a bad frame gets a SessionNotice MALFORMED and the session goes on."""
        conn: Conn | None = None
        reader: asyncio.Task | None = None
        try:
            # the hello is read before the token is checked (as Play reads its Join): a refusal
            # racing the client's first write would reach it as a local INTERNAL error
            try:
                data = await request_iterator.__anext__()
            except StopAsyncIteration:
                return
            if self.draining:  # the referee stops (SIGTERM): the bot reconnects elsewhere/later
                raise errors.draining()
            bot, h = self._bot_of(context)
            try:
                first = pb.SessionClientMessage.FromString(data)
            except Exception:  # noqa: BLE001 - any parser error: the frame is not a message
                log.warning("malformed_request", rpc="Session", bot=bot, peer=context.peer(),
                            size=len(data))
                raise errors.malformed(errors.not_a(pb.SessionClientMessage)) from None
            if first.WhichOneof("msg") != "hello":
                raise errors.malformed("send SessionHello first on a Session stream")
            cap = first.hello.capacity or 1
            if cap > MAX_CAPACITY:
                raise errors.malformed(f"capacity is at most {MAX_CAPACITY}, not {cap}")
            hello = first.hello
            games = frozenset(hello.challenge_games)
            if len(games) > MAX_CHALLENGE_GAMES or any(len(g) > 64 for g in games):
                raise errors.malformed(f"challenge_games: at most {MAX_CHALLENGE_GAMES} "
                                       "names of at most 64 characters")
            if hello.max_challenges > MAX_CAPACITY:
                raise errors.malformed(f"max_challenges is at most {MAX_CAPACITY}, not "
                                       f"{hello.max_challenges}")
            conn = Conn(bot, cap, context.peer() or "", h,
                        shard.of_token(bearer(context.invocation_metadata()) or ""),
                        accept_challenges=hello.accept_challenges, challenge_games=games,
                        max_challenges=hello.max_challenges)
            self.conns.setdefault(bot, []).append(conn)
            conn.put(pb.SessionServerMessage(welcome=pb.SessionWelcome(
                bot_name=bot, capacity=cap, pending=len(self.by_bot.get(bot, ())))))
            log.info("session_open", bot=bot, capacity=cap, peer=conn.peer,
                     agent=first.hello.agent[:100])
            self.dispatch(bot)
            reader = asyncio.ensure_future(self._read(request_iterator, conn))
            async with contextlib.aclosing(drain(conn.queue)) as items:
                async for item in items:
                    yield item
        finally:
            if reader is not None:
                reader.cancel()
            if conn is not None:
                self._drop(conn)

    async def _read(self, request_iterator: AsyncIterator[bytes], conn: Conn) -> None:
        allow = self.limiter.allow
        key = f"session:{conn.bot}"
        parse = pb.SessionClientMessage.FromString
        malformed = 0
        try:
            async for data in request_iterator:
                if not allow(key):
                    conn.put(errors.exhausted("rate limit exceeded on this session; slow down"))
                    return
                try:
                    msg = parse(data)
                except Exception:  # noqa: BLE001 - any parser error: the frame is not a message
                    malformed += 1
                    # the first one per session at warning; the rest would only repeat it
                    (log.warning if malformed == 1 else log.debug)(
                        "malformed_frame", rpc="Session", bot=conn.bot, size=len(data),
                        count=malformed)
                    self._notice(conn, "MALFORMED", errors.not_a(pb.SessionClientMessage))
                    continue
                which = msg.WhichOneof("msg")
                if which == "ack":
                    self.ack(conn, msg.ack)
                elif which == "hello":
                    self._notice(conn, "MALFORMED", "SessionHello is sent once, first")
                else:
                    self._notice(conn, "MALFORMED", "empty session message")
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError:
            return  # the call is gone; the writer side ends with it
        except RefereeError as exc:  # a frame over the size limit: the session ends with it
            conn.put(exc)
            return
        except Exception as exc:
            # as on Play: never leave a session that pushes assignments but no longer reads
            log.exception("session_reader_error", bot=conn.bot, error=repr(exc))
            conn.put(RefereeError(grpc.StatusCode.INTERNAL, "INTERNAL", "internal error"))
        # half-closed by the bot: keep the session (and its assignments) until it cancels

    def _drop(self, conn: Conn) -> None:
        if conn.closed:
            return
        conn.closed = True
        lst = self.conns.get(conn.bot, [])
        if conn in lst:
            lst.remove(conn)
        if not lst:
            self.conns.pop(conn.bot, None)
        for key in list(conn.active):
            a = self.open.get(key)
            if a is not None and a.conn is conn:
                self._release(a)
        conn.active.clear()
        log.info("session_closed", bot=conn.bot, peer=conn.peer)
        self.dispatch(conn.bot)

    def end_all(self, err: RefereeError, token_shard: str) -> int:
        """End every open session opened with a bot token of ``token_shard`` with ``err``
        (their bots reconnect); how many."""
        ended = [c for conns in self.conns.values() for c in conns if c.shard == token_shard]
        for conn in ended:
            conn.dropped = True
            end_with(conn.queue, err)
            self._drop(conn)
        return len(ended)

    def end_every(self, err: RefereeError) -> None:
        """The referee drains: no new session from now on, and every open one ends with
        ``err`` after the frames it has queued (its bot reconnects and is sent its unfinished
        assignments again, as after a restart)."""
        self.draining = True
        for conns in self.conns.values():
            for c in conns:
                c.queue.put_nowait(err)

    def close(self) -> None:
        for conns in self.conns.values():
            for c in conns:
                c.put(CLOSE)
        for a in self.open.values():
            if a.timer is not None:
                a.timer.cancel()
                a.timer = None


def _load_key(path: Path) -> bytes:
    """The key seat tokens of bound seats derive from (created 0600 on first use)."""
    if path.exists():
        try:
            return bytes.fromhex(path.read_text(encoding="ascii").strip())
        except (OSError, ValueError) as exc:
            # never replace it: the seat tokens of every bound seat derive from it
            raise OSError(f"cannot read the bot seat key {path}: {exc}") from None
    key = secrets.token_bytes(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    os.replace(tmp, path)
    return key


def _log_failure(fut: asyncio.Future) -> None:
    if not fut.cancelled() and (exc := fut.exception()) is not None:
        # the store away: it logged the outage once (no error line per write meanwhile)
        (log.debug if store_outage(exc) else log.error)(
            "session_store_write_failed", error=repr(exc))
