"""Leagues in the referee: their description and state, invites, the league bots' details and
uploaded versions, and the standings the league runner publishes (docs/ARCHITECTURE.md,
*Leagues*). The league runner (`referee-tournament league serve`, an admin client) plays the
matches; this module keeps what it and the web pages share.

* **Tables** (same SQLite store, same writer thread: every acknowledged change is committed
  before the reply): ``leagues``, ``invites`` (only the SHA-256 of a code, its uses left and
  expiry), ``bot_versions``, ``standings`` (the latest document of each league); the ``bots``
  rows of :mod:`referee.server.play.sessions` gain league, kind, status, message, owner and
  description.
* **Archives** of hosted bots are checked by :mod:`referee.server.leagues.archive` and kept as files,
  ``<data-dir>/bots/<bot>/<version>.tar.gz`` (written and fsynced before the version's row is
  committed): up to 16 MiB each, they would otherwise pass through the one writer thread that
  commits every move, and grow the WAL by that much per upload. An upload is spooled to an
  anonymous file in ``<data-dir>/bots/.incoming/`` as it arrives and checked from there, never
  joined in memory (issue 31, item 4).
* **Quotas and pruning** (``Limits``: ``referee serve --upload-versions-per-day``,
  ``--upload-max-stored-bytes``, ``--upload-keep-versions``): a bot uploads at most so many
  versions in any 24 hours and keeps at most so many bytes of archives; refusals are
  RESOURCE_EXHAUSTED with reason ``UPLOAD_QUOTA`` naming the limit, its value and when the
  count frees up. Once a version is kept, older ones beyond the newest ``keep_versions`` are
  pruned (their archive deleted, their row kept and marked), except the current ready one, any
  pending one (the league runner has yet to check it) and any a running match is bound to.
* Everything is also held in memory (a few rows per bot), which the RPCs and the web pages read.

Knows no game and no match: :class:`RefereeService` asks it to check a CreateMatch's league and
bound bots, and hands it the RPCs below.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import structlog
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from referee.core import registry
from referee.schema import standings_schema
from referee.server.base import errors, metrics
from referee.server.base.auth import Context, RateLimiter, client_key, new_token, token_hash
from referee.server.base.clock import now_ms
from referee.server.base.errors import clip
from referee.server.base.wire import check_text
from referee.server.leagues.archive import ArchiveError, Limits, check_archive
from referee.server.play.sessions import BOT_NAME_RE, BotSessions
from referee.server.store.sqlite import DbConn, Store
from referee.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.leagues")

SCHEMA = """
CREATE TABLE IF NOT EXISTS leagues (
    name          TEXT PRIMARY KEY,
    title         TEXT NOT NULL,
    description   TEXT NOT NULL,
    games_json    TEXT NOT NULL,
    registration  INTEGER NOT NULL,   -- referee.v1.Registration, numbered as in 0.1.0
    approval      INTEGER NOT NULL,
    state         INTEGER NOT NULL,   -- referee.v1.LeagueState
    reason        TEXT NOT NULL,      -- SetLeagueState's reason, shown on the league page
    settings_json TEXT NOT NULL,
    created_ms    INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS invites (
    code_hash   TEXT PRIMARY KEY,     -- SHA-256 hex of the code, never the code
    league      TEXT NOT NULL,
    uses_left   INTEGER NOT NULL,
    expires_ms  INTEGER,              -- NULL: until the league stops
    created_ms  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS bot_versions (
    bot          TEXT NOT NULL,
    version      INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    size         INTEGER NOT NULL,
    files        INTEGER NOT NULL,
    runtime      TEXT NOT NULL,
    command_json TEXT NOT NULL,
    status       INTEGER NOT NULL,    -- referee.v1.VersionStatus
    message      TEXT NOT NULL,
    uploaded_ms  INTEGER NOT NULL,
    stored_bytes INTEGER,             -- bytes of the stored .tar.gz (NULL: an older row)
    pruned_ms    INTEGER,             -- when its archive was deleted (the keep policy)
    PRIMARY KEY (bot, version)
);
CREATE TABLE IF NOT EXISTS standings (
    league        TEXT PRIMARY KEY,
    json          TEXT NOT NULL,
    published_ms  INTEGER NOT NULL
);
"""

#: Columns an older store's bot_versions lacks (issue 31, item 4).
VERSION_COLUMNS = {"stored_bytes": "INTEGER", "pruned_ms": "INTEGER"}

LEAGUE_SELECT = ("SELECT name, title, description, games_json, registration, approval, state,"
                 " reason, settings_json, created_ms, updated_ms FROM leagues")

MAX_TITLE = 200
MAX_DESCRIPTION = 2000
MAX_SETTINGS = 64 * 1024
MAX_OWNER = 64
MAX_BOT_DESCRIPTION = 512
MAX_REASON = 200
MAX_STANDINGS = 4 * 1024 * 1024
MAX_CHUNK = 1024 * 1024  # UploadBotChunk.data
ARCHIVE_CHUNK = 256 * 1024  # BotArchiveChunk.data sent
DAY_MS = 24 * 3600 * 1000  # the window of the daily upload count
#: Registrations without the admin token, per client address (``auth.client_key``: one budget
#: whether the client registers over gRPC or on the web): a burst, then one a minute.
REGISTER_RATE = 1 / 60
REGISTER_BURST = 20


@dataclass(slots=True)
class LeagueRow:
    league: pb.League
    reason: str = ""
    created_ms: int = 0


@dataclass(slots=True)
class BotRow:
    name: str
    league: str
    kind: Any  # referee.v1.BotKind
    status: Any  # referee.v1.BotStatus
    message: str
    owner: str
    description: str
    registered_ms: int
    versions: list[pb.BotVersion] = field(default_factory=list)
    commands: dict[int, list[str]] = field(default_factory=dict)
    stored: dict[int, int] = field(default_factory=dict)  # version -> bytes of its archive
    pruned: set[int] = field(default_factory=set)  # versions whose archive was deleted

    @property
    def current_version(self) -> int:
        ready = [v.version for v in self.versions if v.status == pb.VERSION_READY]
        return max(ready, default=0)


@dataclass(slots=True)
class Invite:
    league: str
    uses_left: int
    expires_ms: int | None


@dataclass(slots=True)
class Standings:
    text: str
    doc: dict[str, Any]
    published_ms: int


#: The store keeps Registration and BotKind as release 0.1.0 numbered them (0 = invite,
#: 0 = remote: the column default of ``bots.kind``), so a store outlives the protocol's
#: renumbering both ways (an older referee opened on it reads what it wrote). UNSPECIFIED is
#: never stored: a request's 0 is read as the default first (docs/bot/protocol.md).
STORED_REGISTRATION = {pb.REGISTRATION_INVITE: 0, pb.REGISTRATION_OPEN: 1,
                       pb.REGISTRATION_CLOSED: 2}
STORED_KIND = {pb.BOT_KIND_REMOTE: 0, pb.BOT_KIND_HOSTED: 1}
_REGISTRATION_OF = {v: k for k, v in STORED_REGISTRATION.items()}
_KIND_OF = {v: k for k, v in STORED_KIND.items()}


def _enum(enum: Any, value: int, what: str, allow_zero: bool = True) -> int:
    if value not in enum.values() or (not allow_zero and value == 0):
        raise errors.malformed(f"unknown {what} value {value}")
    return value


class Leagues:
    def __init__(self, store: Store, data_dir: Path, sessions: BotSessions,
                 limiter: RateLimiter, limits: Limits | None = None,
                 register_limiter: RateLimiter | None = None):
        self.store = store
        self.sessions = sessions
        self.limiter = limiter
        self.limits = limits or Limits()
        self.register_limiter = register_limiter or RateLimiter(REGISTER_RATE, REGISTER_BURST)
        self.archive_dir = Path(data_dir) / "bots"
        self.incoming = self.archive_dir / ".incoming"  # uploads being received and checked
        self.validator = Draft202012Validator(standings_schema())
        self.leagues: dict[str, LeagueRow] = {}
        self.bots: dict[str, BotRow] = {}  # league bots (those registered with a league)
        self.invites: dict[str, Invite] = {}  # code hash -> invite
        self.standings: dict[str, Standings] = {}
        self._upload_locks: dict[str, asyncio.Lock] = {}
        self._load()
        self._clean_incoming()

    # ------------------------------------------------------------------ loading
    def _clean_incoming(self) -> None:
        """Make the private folders of uploads (0700) and remove what an interrupted upload
        left there (the spooled bytes are anonymous files, gone with their process; a packed
        archive not yet renamed into place is a named one, removed once an hour old: the
        workers of a cluster share the folder, and one that restarts must not take the file
        of an upload the home worker is keeping); delete the archives of pruned versions a
        crash left behind."""
        self.incoming.mkdir(mode=0o700, parents=True, exist_ok=True)
        for folder in (self.archive_dir, self.incoming):
            os.chmod(folder, 0o700)
        stale = time.time() - 3600
        for leftover in self.incoming.iterdir():
            with contextlib.suppress(FileNotFoundError):
                if leftover.stat().st_mtime < stale:
                    leftover.unlink()
        for bot in self.bots.values():
            for number in bot.pruned:
                self.archive_path(bot.name, number).unlink(missing_ok=True)

    def _load(self) -> None:
        self.store.ensure_schema(SCHEMA, {"bot_versions": VERSION_COLUMNS})
        with self.store.connection() as conn:
            for r in conn.execute(LEAGUE_SELECT):
                self._learn_league(r)
            for h, league, uses, expires in conn.execute(
                    "SELECT code_hash, league, uses_left, expires_ms FROM invites"):
                self.invites[h] = Invite(league, uses, expires)
            for name, league, kind, status, message, owner, desc, created in conn.execute(
                    "SELECT name, league, kind, status, message, owner, description, created_ms"
                    " FROM bots WHERE league IS NOT NULL"):
                self.bots[name] = BotRow(name, league, _KIND_OF.get(kind, kind), status,
                                         message or "", owner or "", desc or "", created)
            for row in conn.execute(
                    "SELECT bot, version, sha256, size, files, runtime, command_json, status,"
                    " message, uploaded_ms, stored_bytes, pruned_ms FROM bot_versions"
                    " ORDER BY bot, version"):
                bot = self.bots.get(row[0])
                if bot is None:
                    continue
                bot.versions.append(pb.BotVersion(
                    bot=row[0], version=row[1], sha256=row[2], size=row[3], files=row[4],
                    runtime=row[5], status=row[7], message=row[8], uploaded_unix_ms=row[9]))
                bot.commands[row[1]] = json.loads(row[6])
                if row[11] is not None:
                    bot.pruned.add(row[1])
                elif row[10] is not None:
                    bot.stored[row[1]] = row[10]
                else:  # a row from before stored_bytes: its file says
                    path = self.archive_path(row[0], row[1])
                    bot.stored[row[1]] = path.stat().st_size if path.exists() else 0
            for league, text, published in conn.execute(
                    "SELECT league, json, published_ms FROM standings"):
                self.standings[league] = Standings(text, json.loads(text), published)

    # ------------------------------------------------------------------ lookups (also web)
    def _learn_league(self, r: Any) -> LeagueRow:
        (name, title, desc, games, reg, appr, state, reason, settings, created, updated) = r
        row = self.leagues[name] = LeagueRow(pb.League(
            name=name, title=title, description=desc, games=json.loads(games),
            registration=_REGISTRATION_OF.get(reg, reg), approval=bool(appr), state=state,
            settings_json=settings,
            updated_unix_ms=updated), reason, created)
        return row

    def league(self, name: str) -> LeagueRow:
        row = self.leagues.get(name)
        if row is None:
            if not BOT_NAME_RE.fullmatch(name):  # no league has it (open_league checks the name);
                # and PostgreSQL would refuse the lookup of a name with a NUL (issue 31 item 5)
                raise errors.not_found(f"no league {clip(name)}")
            # opened through another referee on the store? one primary-key lookup
            found = self.store.reader().execute(LEAGUE_SELECT + " WHERE name=?",
                                                (name,)).fetchone()
            if found is None:
                raise errors.not_found(f"no league {clip(name)}")
            row = self._learn_league(found)
        return row

    def bot(self, name: str) -> BotRow:
        row = self.bots.get(name)
        if row is None:
            raise errors.not_found(f"no league bot {clip(name)}")
        return row

    def challenge_leave(self, bot: str, game: str = "") -> str | None:
        """The league that lets people challenge ``bot`` in the lobby ("play the champion",
        issue 33): an active remote entrant of a running league whose settings say
        ``"challenges": true``, in one of the league's games (``game``; "": any); None
        otherwise. Such matches are no league matches: the league runner does not create
        them; their records name the league (``lobby.league``) and its runner takes their
        results in apart, rated only when its file says ``rate_challenges``."""
        row = self.bots.get(bot)
        if row is None or row.status != pb.BOT_ACTIVE or row.kind == pb.BOT_KIND_HOSTED:
            return None
        league = self.leagues.get(row.league)
        if league is None or league.league.state != pb.LEAGUE_RUNNING:
            return None
        if game and game not in league.league.games:
            return None
        try:
            settings = json.loads(league.league.settings_json or "{}")
        except ValueError:
            return None
        return row.league if isinstance(settings, dict) and settings.get("challenges") is True \
            else None

    def league_bot(self, row: BotRow) -> pb.LeagueBot:
        return pb.LeagueBot(
            name=row.name, league=row.league, kind=row.kind, status=row.status,
            message=row.message, current_version=row.current_version, versions=row.versions,
            registered_unix_ms=row.registered_ms, owner=row.owner, description=row.description,
            connected=self.sessions.connected(row.name))

    def bots_of(self, league: str) -> list[BotRow]:
        return sorted((b for b in self.bots.values() if b.league == league),
                      key=lambda b: b.name)

    def command(self, bot: str, version: int) -> list[str]:
        return self.bots[bot].commands.get(version, [])

    # ------------------------------------------------------------------ public JSON (web)
    def league_json(self, name: str) -> dict[str, Any]:
        """A league as the web shows it: no invite, no token, nothing only the admin sees."""
        row = self.league(name)
        lg = row.league
        st = self.standings.get(name)
        return {
            "name": lg.name, "title": lg.title, "description": lg.description,
            "games": list(lg.games), "state": _state_word(lg.state), "reason": row.reason,
            "registration": pb.Registration.Name(lg.registration).removeprefix(
                "REGISTRATION_").lower(),
            "approval": lg.approval, "updated_unix_ms": lg.updated_unix_ms,
            "settings": json.loads(lg.settings_json or "{}"),
            "standings_unix_ms": st.published_ms if st else None,
            "bots": [b.name for b in self.bots_of(name) if b.status != pb.BOT_REMOVED],
        }

    def standings_json(self, name: str) -> dict[str, Any] | None:
        """The league's latest standings, without the bots removed since (gone from pages)."""
        self.league(name)
        st = self.standings.get(name)
        if st is None:
            return None
        gone = {b.name for b in self.bots_of(name) if b.status == pb.BOT_REMOVED}
        if not gone:
            return st.doc
        doc = dict(st.doc)
        doc["entries"] = [e for e in doc["entries"] if e["bot"] not in gone]
        doc["head_to_head"] = [h for h in doc.get("head_to_head", [])
                               if h["bot"] not in gone and h["opponent"] not in gone]
        ch = doc.get("challenges")
        if isinstance(ch, dict):  # the challenges taken in (issue 33): the same bots gone
            ch = doc["challenges"] = dict(ch)
            ch["by_entrant"] = [e for e in ch.get("by_entrant", []) if e["bot"] not in gone]
            ch["recent"] = [{**m, "entrants": {b: r for b, r in m["entrants"].items()
                                               if b not in gone}}
                            for m in ch.get("recent", [])]
        return doc

    def bot_json(self, name: str) -> dict[str, Any]:
        """A league bot as the web shows it (a removed bot is gone: NOT_FOUND)."""
        row = self.bot(name)
        if row.status == pb.BOT_REMOVED:
            raise errors.not_found(f"no league bot {clip(name)}")
        doc = self.standings_json(row.league) or {}
        entry = next((e for e in doc.get("entries", ()) if e["bot"] == name), None)
        rank = next((i + 1 for i, e in enumerate(doc.get("entries", ())) if e["bot"] == name),
                    None)
        return {
            "name": row.name, "league": row.league,
            "kind": "hosted" if row.kind == pb.BOT_KIND_HOSTED else "remote",
            "status": pb.BotStatus.Name(row.status).removeprefix("BOT_").lower(),
            "message": row.message, "owner": row.owner, "description": row.description,
            "registered_unix_ms": row.registered_ms, "current_version": row.current_version,
            "versions": [{
                "version": v.version, "status": pb.VersionStatus.Name(v.status)
                .removeprefix("VERSION_").lower(), "message": v.message, "sha256": v.sha256,
                "size": v.size, "files": v.files, "runtime": v.runtime,
                "uploaded_unix_ms": v.uploaded_unix_ms, "pruned": v.version in row.pruned}
                for v in reversed(row.versions)],
            "rank": rank, "standing": entry,
            "head_to_head": [h for h in doc.get("head_to_head", ()) if h["bot"] == name],
        }

    def health_json(self, name: str, running: int) -> dict[str, Any]:
        """The organizer page's view of a league (admin only): every bot with its status,
        sessions and versions waiting for their check."""
        row = self.league(name)
        st = self.standings.get(name)
        bots = self.bots_of(name)
        return {
            "league": self.league_json(name),
            "standings_unix_ms": st.published_ms if st else None,
            "runner_health": (st.doc.get("health") if st else None),
            "running_matches": running,
            "connected_sessions": sum(len(self.sessions.conns.get(b.name, ())) for b in bots),
            "versions_pending": sum(1 for b in bots for v in b.versions
                                    if v.status == pb.VERSION_PENDING),
            "invites_open": sum(1 for i in self.invites.values()
                                if i.league == name and i.uses_left > 0
                                and (i.expires_ms is None or i.expires_ms > now_ms())),
            "bots": [{**self.bot_summary(b), "connected": self.sessions.connected(b.name)}
                     for b in bots],
            "reason": row.reason,
        }

    def bot_summary(self, b: BotRow) -> dict[str, Any]:
        return {"name": b.name, "kind": "hosted" if b.kind == pb.BOT_KIND_HOSTED else "remote",
                "status": pb.BotStatus.Name(b.status).removeprefix("BOT_").lower(),
                "message": b.message, "owner": b.owner, "current_version": b.current_version,
                "versions": len(b.versions)}

    # ------------------------------------------------------------------ CreateMatch
    def check_match(self, league: str, bots: list[str], versions: Iterable[int]) -> list[int]:
        """CreateMatch's league, bound bots and versions checked: the league exists and is not
        stopped, a disabled or removed remote bot is not bound, ``versions`` is empty or one
        per seat."""
        versions = list(versions)
        if league:
            row = self.league(league)
            if row.league.state == pb.LEAGUE_STOPPED:
                raise errors.precondition("LEAGUE_STOPPED", f"league {league} is stopped")
        if versions and len(versions) != len(bots):
            raise errors.malformed(f"seat_bot_versions has {len(versions)} entries for "
                                   f"{len(bots)} bound seats (one per seat_bots entry)")
        for name in bots:
            b = self.bots.get(name) if name else None
            if b is not None and b.kind == pb.BOT_KIND_REMOTE and b.status in (
                    pb.BOT_DISABLED, pb.BOT_REMOVED):
                raise errors.precondition(
                    "BOT_UNAVAILABLE", f"bot {name} is {pb.BotStatus.Name(b.status)[4:].lower()}"
                    " and plays no matches")
        return versions

    def hosted(self, name: str) -> bool:
        b = self.bots.get(name)
        return b is not None and b.kind == pb.BOT_KIND_HOSTED

    # ------------------------------------------------------------------ leagues
    async def open_league(self, request: pb.OpenLeagueRequest) -> pb.League:
        want = request.league
        if not BOT_NAME_RE.fullmatch(want.name):
            raise errors.malformed("a league name is 1-64 letters, digits, '.', '_', '+' or "
                                   "'-', starting with a letter or digit")
        check_text(want.title, "a league's title", max_len=MAX_TITLE)
        check_text(want.description, "a league's description", max_len=MAX_DESCRIPTION,
                   lines=True)
        known = registry.games()
        for g in want.games:
            if g not in known:
                raise errors.malformed(f"unknown game {clip(g)}; this referee hosts "
                                       f"{', '.join(sorted(known))}")
        _enum(pb.Registration, want.registration, "registration")
        # unset (an older client's INVITE, numbered 0 then) is the default, INVITE
        registration = want.registration or pb.REGISTRATION_INVITE
        _enum(pb.LeagueState, want.state, "state")
        if want.settings_json:
            if len(want.settings_json) > MAX_SETTINGS:
                raise errors.malformed(f"settings_json is at most {MAX_SETTINGS} characters")
            try:
                settings = json.loads(want.settings_json)
            except ValueError:
                raise errors.malformed("settings_json is not JSON") from None
            if not isinstance(settings, dict):
                raise errors.malformed("settings_json is a JSON object")
        old = self.leagues.get(want.name)
        state = want.state or (old.league.state if old else pb.LEAGUE_RUNNING)
        ts = now_ms()
        league = pb.League(name=want.name, title=want.title or want.name,
                           description=want.description, games=sorted(set(want.games)),
                           registration=registration, approval=want.approval, state=state,
                           settings_json=want.settings_json or "{}", updated_unix_ms=ts)
        reason = old.reason if old and state == old.league.state else ""
        created = old.created_ms if old else ts
        values = (league.name, league.title, league.description, json.dumps(list(league.games)),
                  STORED_REGISTRATION[registration], int(league.approval), league.state, reason,
                  league.settings_json, created, ts)
        await self.store.write(lambda c: c.execute(
            "INSERT INTO leagues (name, title, description, games_json, registration,"
            " approval, state, reason, settings_json, created_ms, updated_ms)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (name) DO UPDATE SET"
            " title=excluded.title, description=excluded.description,"
            " games_json=excluded.games_json, registration=excluded.registration,"
            " approval=excluded.approval, state=excluded.state, reason=excluded.reason,"
            " settings_json=excluded.settings_json, created_ms=excluded.created_ms,"
            " updated_ms=excluded.updated_ms", values))
        self.leagues[league.name] = LeagueRow(league, reason, created)
        log.info("league_opened", league=league.name, state=pb.LeagueState.Name(state))
        return league

    async def set_state(self, request: pb.SetLeagueStateRequest) -> pb.League:
        row = self.league(request.name)
        _enum(pb.LeagueState, request.state, "state", allow_zero=False)
        reason = check_text(request.reason[:MAX_REASON], "reason", max_len=MAX_REASON)
        ts = now_ms()
        await self.store.write(lambda c: c.execute(
            "UPDATE leagues SET state=?, reason=?, updated_ms=? WHERE name=?",
            (request.state, reason, ts, request.name)))
        row.league.state = request.state
        row.league.updated_unix_ms = ts
        row.reason = reason
        log.info("league_state", league=request.name, state=pb.LeagueState.Name(request.state),
                 reason=reason)
        return row.league

    async def create_invite(self, request: pb.CreateInviteRequest) -> pb.CreateInviteResponse:
        row = self.league(request.league)
        if row.league.state == pb.LEAGUE_STOPPED:
            raise errors.precondition("LEAGUE_STOPPED", f"league {request.league} is stopped")
        code = new_token()[:32]  # 128 bits, easy to read out and type
        h = token_hash(code)
        uses = request.uses or 1
        expires = now_ms() + request.valid_s * 1000 if request.valid_s else None
        await self.store.write(lambda c: c.execute(
            "INSERT INTO invites (code_hash, league, uses_left, expires_ms, created_ms)"
            " VALUES (?,?,?,?,?)", (h, request.league, uses, expires, now_ms())))
        self.invites[h] = Invite(request.league, uses, expires)
        log.info("invite_created", league=request.league, uses=uses, valid_s=request.valid_s)
        return pb.CreateInviteResponse(code=code)

    # ------------------------------------------------------------------ registration
    def _meta(self, request: pb.RegisterBotRequest) -> dict[str, Any]:
        """The bot's league columns as stored; its kind, unset (an older client's REMOTE,
        numbered 0 then), read as the default REMOTE."""
        check_text(request.owner, "owner", max_len=MAX_OWNER)
        check_text(request.description, "description", max_len=MAX_BOT_DESCRIPTION, lines=True)
        _enum(pb.BotKind, request.kind, "kind")
        kind = request.kind or pb.BOT_KIND_REMOTE
        if not BOT_NAME_RE.fullmatch(request.name):
            raise errors.malformed("a bot name is 1-64 letters, digits, '.', '_', '+' or '-', "
                                   "starting with a letter or digit")
        return {"league": request.league, "kind": STORED_KIND[kind], "owner": request.owner,
                "description": request.description, "message": ""}

    async def register(self, request: pb.RegisterBotRequest, *, admin: bool,
                       peer: str) -> pb.RegisterBotResponse:
        """RegisterBot with ``league`` set (the admin's, or an entrant's). ``peer``: who asks,
        as its transport determined it (trusted proxies included); every transport draws on
        the one budget of its ``client_key``."""
        if not admin and not self.register_limiter.allow(client_key(peer)):
            raise errors.exhausted("too many registrations from this address; try later")
        row = self.league(request.league)
        meta = self._meta(request)
        kind = _KIND_OF[meta["kind"]]
        if row.league.state == pb.LEAGUE_STOPPED:
            raise errors.precondition("LEAGUE_STOPPED",
                                      f"league {request.league} is stopped: no registration")
        also = None
        invite_hash = ""
        if not admin:
            if request.name in self.sessions.bots.values() or request.name in self.bots:
                raise errors.already_exists(f"a bot named {request.name} is already registered")
            reg = row.league.registration
            if reg == pb.REGISTRATION_CLOSED:
                raise errors.permission_denied(f"league {request.league} takes no registration"
                                               " (the organizer registers its bots)")
            if reg == pb.REGISTRATION_INVITE:
                invite_hash = self._use_invite(request.league, request.invite_code)
                left = self.invites[invite_hash].uses_left

                def also(c: DbConn, h: str = invite_hash, left: int = left) -> None:
                    c.execute("UPDATE invites SET uses_left=? WHERE code_hash=?", (left, h))
        status = pb.BOT_PENDING if row.league.approval and not admin else pb.BOT_ACTIVE
        meta["status"] = status
        if not admin:
            # reserve the name before awaiting the store: a concurrent entrant gets
            # ALREADY_EXISTS, never this bot's token
            self.bots[request.name] = BotRow(request.name, request.league, kind, status,
                                             "", meta["owner"], meta["description"], now_ms())
        try:
            ts = now_ms()
            resp = await self.sessions.register(request.name, meta, also, created_ms=ts)
        except BaseException:
            if not admin:
                self.bots.pop(request.name, None)
                if invite_hash:
                    self.invites[invite_hash].uses_left += 1
            raise
        old = self.bots.get(request.name)
        row_bot = BotRow(request.name, request.league, kind, status, "", meta["owner"],
                         meta["description"], ts)
        if old is not None:  # the admin re-registered it: its versions stay its own
            row_bot.versions, row_bot.commands = old.versions, old.commands
            row_bot.stored, row_bot.pruned = old.stored, old.pruned
        self.bots[request.name] = row_bot
        log.info("league_bot_registered", bot=request.name, league=request.league,
                 kind=pb.BotKind.Name(kind), status=pb.BotStatus.Name(status),
                 by="admin" if admin else "entrant")
        return resp

    def _use_invite(self, league: str, code: str) -> str:
        """The hash of a valid invite of ``league``, one use taken (in memory; the caller
        stores it with the bot)."""
        if not code:
            raise errors.bad_invite(f"league {league} needs an invite code to register")
        h = token_hash(code)
        inv = self.invites.get(h)
        if inv is None or inv.league != league:
            raise errors.bad_invite("unknown invite code for this league")
        if inv.uses_left <= 0:
            raise errors.bad_invite("this invite code is used up")
        if inv.expires_ms is not None and now_ms() >= inv.expires_ms:
            raise errors.bad_invite("this invite code has expired")
        inv.uses_left -= 1
        return h

    # ------------------------------------------------------------------ bots
    def list_bots(self, request: pb.ListLeagueBotsRequest) -> pb.ListLeagueBotsResponse:
        self.league(request.league)
        return pb.ListLeagueBotsResponse(
            bots=[self.league_bot(b) for b in self.bots_of(request.league)])

    async def set_status(self, request: pb.SetBotStatusRequest) -> pb.LeagueBot:
        row = self.bot(request.bot)
        _enum(pb.BotStatus, request.status, "status")
        _enum(pb.VersionStatus, request.version_status, "version_status")
        message = check_text(request.message[:500], "message", max_len=500, lines=True)
        version: pb.BotVersion | None = None
        if request.version_status:
            version = next((v for v in row.versions if v.version == request.version), None)
            if version is None:
                raise errors.not_found(f"bot {request.bot} has no version {request.version}")
        elif request.version:
            raise errors.malformed("version is given with version_status")
        if not request.status and version is None:
            raise errors.malformed("set status, or version and version_status")
        status = request.status or row.status
        bot_message = message if request.status else row.message

        def op(c: DbConn) -> None:
            if request.status:
                c.execute("UPDATE bots SET status=?, message=? WHERE name=?",
                          (status, bot_message, request.bot))
            if version is not None:
                c.execute("UPDATE bot_versions SET status=?, message=? WHERE bot=? AND version=?",
                          (request.version_status, message, request.bot, request.version))

        await self.store.write(op)
        row.status = status
        row.message = bot_message
        if version is not None:
            version.status = request.version_status
            version.message = message
            # the league runner's smoke check reports its verdict here (ready or rejected)
            metrics.SMOKE_CHECKS.labels(pb.VersionStatus.Name(request.version_status)
                                        .removeprefix("VERSION_").lower()).inc()
        self.sessions.set_blocked(request.bot, status == pb.BOT_REMOVED)
        log.info("bot_status", bot=request.bot, status=pb.BotStatus.Name(status),
                 version=request.version,
                 version_status=pb.VersionStatus.Name(request.version_status))
        return self.league_bot(row)

    # ------------------------------------------------------------------ uploads
    async def upload(self, request_iterator: AsyncIterator[bytes],
                     context: Context) -> pb.BotVersion:
        """UploadBot: the token's own bot (a hosted, not removed one); its daily count checked
        before anything is received, then the chunks spooled to a file up to the cap on bytes
        received, and the archive checked from it off the event loop."""
        try:
            data = await request_iterator.__anext__()
        except StopAsyncIteration:
            raise errors.malformed("send an UploadBotChunk with the header first") from None
        name = self.sessions.bot_of_token(context)
        row = self.uploader(name)
        first = _chunk(data)
        if first.WhichOneof("part") != "header":
            raise errors.malformed("the first UploadBotChunk carries the header")
        header = first.header
        cap = self.limits.max_received
        if header.size > cap:
            raise errors.bad_archive(f"the archive is larger than {cap} bytes ({header.size} announced)")
        if not header.filename or len(header.filename) > 255:
            raise errors.malformed("header.filename is 1-255 characters")

        async def chunks() -> AsyncIterator[bytes]:
            async for data in request_iterator:
                if not self.limiter.allow(f"upload:{name}"):
                    raise errors.exhausted("rate limit exceeded; slow down")
                if len(data) > MAX_CHUNK + 64:
                    raise errors.malformed(f"chunks carry at most {MAX_CHUNK} bytes")
                msg = _chunk(data)
                if msg.WhichOneof("part") != "data":
                    raise errors.malformed("only the first UploadBotChunk carries a header")
                yield msg.data

        return await self.receive(row, header.filename, chunks(), announced=header.size)

    async def receive(self, row: BotRow, filename: str, chunks: AsyncIterator[bytes],
                      announced: int = 0) -> pb.BotVersion:
        """The upload of ``row``'s bot that ``chunks`` bring (UploadBot's and the web form's
        alike): its daily count checked before anything is received, the bytes spooled to a
        file as they arrive up to the cap on bytes received (never joined in memory), then kept
        (``keep_upload``). ``announced``: the size the client said it would send (0: unsaid),
        which the bytes received must match."""
        try:
            version = await self._receive(row, filename, chunks, announced)
        except errors.RefereeError as exc:
            metrics.UPLOADS.labels(exc.reason.lower()).inc()
            raise
        metrics.UPLOADS.labels("accepted").inc()
        return version

    async def _receive(self, row: BotRow, filename: str, chunks: AsyncIterator[bytes],
                       announced: int) -> pb.BotVersion:
        self.check_daily(row)
        cap = self.limits.max_received
        with self.spool() as spool:
            received = 0
            async for data in chunks:
                received += len(data)
                if received > cap:
                    raise errors.bad_archive(f"the archive is larger than {cap} bytes")
                # into the page cache, no fsync: a chunk (at most 1 MiB) costs the loop a copy
                spool.write(data)
            if announced and received != announced:
                raise errors.bad_archive(f"{received} bytes received, the header announced "
                                         f"{announced}")
            return await self.keep_upload(row.name, filename, spool)

    def spool(self) -> IO[bytes]:
        """An anonymous file in the data directory's private upload folder (never /tmp, which
        may be a small tmpfs in memory) for an upload's bytes as they arrive; gone when closed,
        or when the process dies."""
        return tempfile.TemporaryFile(dir=self.incoming)

    def uploader(self, name: str) -> BotRow:
        """The league bot ``name`` (a token's own) if it may upload: a hosted one."""
        row = self.bots.get(name)
        if row is None or row.kind != pb.BOT_KIND_HOSTED:
            raise errors.precondition("NOT_HOSTED", f"bot {name} is not a hosted league bot "
                                      "(a remote bot plays over its Session; nothing to upload)")
        return row

    def check_daily(self, row: BotRow) -> None:
        """UPLOAD_QUOTA if the bot has uploaded ``versions_per_day`` versions in the last 24
        hours (kept ones: a refused upload does not count), saying when the next one may come."""
        per_day = self.limits.versions_per_day
        if per_day <= 0:
            return
        now = now_ms()
        recent = sorted(v.uploaded_unix_ms for v in row.versions
                        if v.uploaded_unix_ms > now - DAY_MS)
        if len(recent) < per_day:
            return
        # the count falls below the limit when the oldest upload that keeps it there leaves
        # the 24-hour window
        free = recent[len(recent) - per_day] + DAY_MS
        raise errors.upload_quota(
            f"bot {row.name} uploaded {len(recent)} versions in the last 24 hours: the limit is "
            f"{per_day} a day (--upload-versions-per-day); the next upload is possible at "
            f"{_utc(free)} (in {_minutes(free - now)})")

    def in_use(self, bot: str) -> set[int]:
        """The versions of ``bot`` bound to a running match (a league's or a smoke check's),
        from the store: on several hosts the match may run on another one."""
        used: set[int] = set()
        for bots_json, versions_json in self.store.reader().execute(
                "SELECT seat_bots_json, seat_versions_json FROM matches WHERE status=?"
                " AND seat_versions_json IS NOT NULL", ("running",)):
            bots, versions = json.loads(bots_json or "[]"), json.loads(versions_json)
            used.update(v for b, v in zip(bots, versions, strict=False) if b == bot and v)
        return used

    def prune_plan(self, row: BotRow, new: int) -> list[int]:
        """The versions the keep policy prunes once version ``new`` is kept: all but the
        newest ``keep_versions`` (0: none pruned), the current ready one, the pending ones
        (not yet checked by the league runner) and those a running match is bound to."""
        keep_n = self.limits.keep_versions
        live = [v for v in row.versions if v.version not in row.pruned]
        if keep_n <= 0 or len(live) + 1 <= keep_n:
            return []
        newest = sorted([new, *(v.version for v in live)], reverse=True)[:keep_n]
        keep = set(newest) | {row.current_version} | self.in_use(row.name)
        keep |= {v.version for v in live if v.status == pb.VERSION_PENDING}
        return [v.version for v in live if v.version not in keep]

    def check_stored(self, row: BotRow, prune: list[int], new_bytes: int) -> None:
        """UPLOAD_QUOTA if the bot's archives kept after this upload (and the pruning it
        brings) would hold more than ``max_stored_bytes``."""
        limit = self.limits.max_stored_bytes
        if limit <= 0:
            return
        kept = {n: b for n, b in row.stored.items() if n not in row.pruned and n not in prune}
        total = sum(kept.values()) + new_bytes
        if total > limit:
            raise errors.upload_quota(
                f"bot {row.name} would keep {total} bytes of archives (this one {new_bytes}, "
                f"versions {_numbers(kept)} {sum(kept.values())}): the limit is {limit} bytes "
                "(--upload-max-stored-bytes); the current, pending and playing versions are "
                "kept, older ones pruned")

    async def keep_upload(self, name: str, filename: str,
                          source: bytes | IO[bytes]) -> pb.BotVersion:
        """Check an uploaded archive of bot ``name`` (its bytes, or the file it was spooled
        to; off the event loop) and keep it as its next version, pruning what the keep policy
        lets go; BAD_ARCHIVE or UPLOAD_QUOTA, and nothing stored, if it is refused. UploadBot
        and the web's upload form both end here."""
        row = self.uploader(name)
        self.check_daily(row)
        try:
            checked = await asyncio.to_thread(check_archive, filename, source, self.limits,
                                              self.incoming)
        except ArchiveError as exc:
            log.info("upload_refused", bot=name, error=str(exc)[:200])
            raise errors.bad_archive(str(exc)) from None
        lock = self._upload_locks.setdefault(name, asyncio.Lock())
        try:
            async with lock:
                self.check_daily(row)  # again: another upload may have been kept meanwhile
                number = max((v.version for v in row.versions), default=0) + 1
                prune = self.prune_plan(row, number)
                self.check_stored(row, prune, checked.stored)
                path = self.archive_path(name, number)
                await asyncio.to_thread(_place, checked.path, path)
                ts = now_ms()
                version = pb.BotVersion(bot=name, version=number, sha256=checked.sha256,
                                        size=checked.size, files=checked.files,
                                        runtime=checked.runtime, status=pb.VERSION_PENDING,
                                        uploaded_unix_ms=ts)
                values = (name, number, checked.sha256, checked.size, checked.files,
                          checked.runtime, json.dumps(checked.command), pb.VERSION_PENDING, "",
                          ts, checked.stored)

                def op(c: DbConn) -> None:
                    c.execute("INSERT INTO bot_versions (bot, version, sha256, size, files,"
                              " runtime, command_json, status, message, uploaded_ms,"
                              " stored_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?)", values)
                    for old in prune:
                        c.execute("UPDATE bot_versions SET pruned_ms=? WHERE bot=? AND"
                                  " version=?", (ts, name, old))

                await self.store.write(op)
                row.versions.append(version)
                row.commands[number] = checked.command
                row.stored[number] = checked.stored
                for old in prune:
                    row.pruned.add(old)
                    row.stored.pop(old, None)
                # the rows say pruned before the files go: a crash in between leaves files
                # that the next start deletes, never a row without its file
                await asyncio.to_thread(_remove, [self.archive_path(name, n) for n in prune])
        finally:
            checked.discard()
        log.info("bot_uploaded", bot=name, version=number, size=checked.size,
                 stored=checked.stored, files=checked.files, runtime=checked.runtime,
                 pruned=prune)
        return version

    def archive_path(self, bot: str, version: int) -> Path:
        # both are checked: a bot name matches BOT_NAME_RE (no '/', no leading '.')
        return self.archive_dir / bot / f"{version}.tar.gz"

    async def archive(self, request: pb.GetBotArchiveRequest,
                      ) -> AsyncGenerator[pb.BotArchiveChunk, None]:
        row = self.bot(request.bot)
        number = request.version or row.current_version
        version = next((v for v in row.versions if v.version == number), None)
        if version is None:
            raise errors.not_found(f"bot {request.bot} has no version {request.version}"
                                   if request.version else
                                   f"bot {request.bot} has no ready version")
        if number in row.pruned:
            raise errors.not_found(f"version {number} of bot {request.bot} was pruned (its "
                                   "archive is deleted; the referee keeps the newest ones)")
        data = await asyncio.to_thread(self.archive_path(request.bot, number).read_bytes)
        first = True
        for i in range(0, max(len(data), 1), ARCHIVE_CHUNK):
            chunk = pb.BotArchiveChunk(data=data[i:i + ARCHIVE_CHUNK])
            if first:
                chunk.version.CopyFrom(version)
                first = False
            yield chunk

    # ------------------------------------------------------------------ standings
    async def publish(self, request: pb.PublishStandingsRequest) -> pb.PublishStandingsResponse:
        self.league(request.league)
        text = request.standings_json
        if len(text.encode("utf-8")) > MAX_STANDINGS:
            raise errors.malformed(f"standings_json is at most {MAX_STANDINGS} bytes")
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise errors.malformed(f"standings_json is not JSON ({exc})") from None
        err = best_match(self.validator.iter_errors(doc))
        if err is not None:
            where = "/".join(str(p) for p in err.absolute_path) or "(the document)"
            raise errors.malformed(f"standings_json at {where}: {err.message}")
        if doc["league"] != request.league:
            raise errors.malformed(f"standings_json at league: {clip(doc['league'])} is not "
                                   f"{request.league}")
        ts = now_ms()
        await self.store.write(lambda c: c.execute(
            "INSERT INTO standings (league, json, published_ms) VALUES (?,?,?) ON CONFLICT"
            " (league) DO UPDATE SET json=excluded.json, published_ms=excluded.published_ms",
            (request.league, text, ts)))
        self.standings[request.league] = Standings(text, doc, ts)
        log.info("standings_published", league=request.league, entries=len(doc["entries"]))
        return pb.PublishStandingsResponse(published_unix_ms=ts)


def _state_word(state: int) -> str:
    """running | paused | stopped (LeagueState's name, as the web says it)."""
    return pb.LeagueState.Name(state).removeprefix("LEAGUE_").lower()


def _chunk(data: bytes) -> pb.UploadBotChunk:
    try:
        return pb.UploadBotChunk.FromString(data)
    except Exception:  # noqa: BLE001 - any parser error: the frame is not a message
        raise errors.malformed(errors.not_a(pb.UploadBotChunk)) from None


def _place(tmp: Path, path: Path) -> None:
    """A checked archive fsynced and renamed into place (its folder 0700): a version's row is
    committed only after."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _minutes(ms: int) -> str:
    minutes = max(1, -(-ms // 60_000))
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60} min"


def _numbers(kept: dict[int, int]) -> str:
    return ", ".join(str(n) for n in sorted(kept)) or "none"
