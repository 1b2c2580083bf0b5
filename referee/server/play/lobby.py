"""The lobby (issue 33): people and bots open seeks, challenge bots, join through a single-use
invitation, and a match starts when every seat is taken (docs/bot/lobby.md).

* **Who calls.** Every lobby call but ``EnterLobby``, ``ListSeeks`` and a public ``GetSeek``
  carries a bearer token: a registered bot's token is that bot (its seats are bound to it, so
  it gets the usual ``Assignment`` on its Session); a person's is the anonymous lobby token
  ``EnterLobby`` issued (only its SHA-256 is kept, in memory). Caps count per identity and per
  client address (``auth.client_key``), so neither fresh lobby tokens nor more connections buy
  more open seeks.
* **A seek** is a match waiting for its seats: the game, its options, seat count and time
  policy are checked when it is opened, by CreateMatch's own checks (``create.plan_match``),
  and the time policy against the lobby's bounds (:func:`lobby_policy`). When the last seat is
  taken the front creates the match exactly as CreateMatch does (``create`` callback), every
  bot's seat bound to it; each person's seat token is then kept for its holder to read with
  ``GetSeek`` until the seek is forgotten (``ttl_s`` after it filled).
* **Bots that accept challenges** say so in their ``SessionHello`` (``accept_challenges``,
  ``challenge_games``, ``max_challenges``): while such a session is open, a challenge naming
  the bot starts a match at once, and a seek that lets bots join (``bots_may_join``) is filled
  with them. A league may let people challenge its entrants (settings ``"challenges": true``;
  the front's ``league_leave`` says which league does); the record then names that league
  (``lobby.league``) for its runner (``ListLeagueChallenges``).
* Seeks live in this referee's memory: a restart forgets the open ones (nothing was promised:
  no match exists yet); a filled seek's match is an ordinary match, stored and resumed as any.

Knows no game by name: the games a bot accepts are names it sent, compared as strings.
"""
from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

import structlog

from referee.server.base import errors
from referee.server.base.auth import RateLimiter, token_hash
from referee.server.base.clock import now_ms, timed
from referee.server.base.errors import clip
from referee.server.base.wire import check_text
from referee.server.play.sessions import BotSessions
from referee.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.lobby")

#: The named clocks people know, as (bank minutes, increment seconds): "5+3" is a bank of 5
#: minutes and 3 s added after each own move (Fischer). "bot" is a clock for programs.
PRESETS: dict[str, tuple[int, int]] = {
    "bullet": (1, 0), "blitz": (5, 3), "rapid": (15, 10), "classical": (30, 20),
}
BOT_PRESET = pb.TimePolicy(move_ms=2_000, bank_ms=10_000, grace_ms=500,
                           on_expiry=pb.RANDOM_LEGAL)
_PRESET_RE = re.compile(r"([0-9]{1,3})\+([0-9]{1,3})")
#: Network grace of a preset's clock (a browser's round trip).
PRESET_GRACE_MS = 1_000

#: The lobby's bounds on a time policy (docs/bot/lobby.md): (field, most allowed). A policy
#: past one, or one that times nothing (nobody could be made to move: a person who leaves would
#: hold the match for ever), or that gives a first move under ``MIN_FIRST_MOVE_MS``, is refused
#: with INVALID_ARGUMENT / BAD_TIME_POLICY. CreateMatch (the organizer's) is not bounded.
POLICY_BOUNDS: tuple[tuple[str, int], ...] = (
    ("move_ms", 3_600_000), ("bank_ms", 3 * 3_600_000), ("increment_ms", 120_000),
    ("grace_ms", 10_000), ("strikes", 100), ("join_ms", 600_000), ("first_move_ms", 120_000),
)
MIN_MOVE_MS = 100
MIN_FIRST_MOVE_MS = 1_000
MAX_NAME = 40
MAX_WAIT_MS = 30_000


def preset_policy(name: str) -> pb.TimePolicy:
    """A named preset (``"blitz"``) or ``"M+S"`` (a bank of M minutes, 1-180, and an increment
    of S seconds, 0-120) as a time policy; MALFORMED for anything else."""
    if name == "bot":
        policy = pb.TimePolicy()
        policy.CopyFrom(BOT_PRESET)
        return policy
    pair = PRESETS.get(name)
    if pair is None and (m := _PRESET_RE.fullmatch(name)):
        pair = (int(m.group(1)), int(m.group(2)))
    if pair is None or not 1 <= pair[0] <= 180 or pair[1] > 120:
        raise errors.malformed(
            f"unknown preset {clip(name)}: {', '.join([*PRESETS, 'bot'])}, or M+S (a bank of "
            "M minutes, 1 to 180, and an increment of S seconds, 0 to 120), e.g. 5+3")
    return pb.TimePolicy(bank_ms=pair[0] * 60_000, increment_ms=pair[1] * 1_000,
                         grace_ms=PRESET_GRACE_MS, on_expiry=pb.RANDOM_LEGAL)


def lobby_policy(preset: str, policy: pb.TimePolicy) -> pb.TimePolicy:
    """The clock of a lobby match: the preset when one is named, else ``policy`` within the
    lobby's bounds (BAD_TIME_POLICY naming the first value out of them)."""
    if preset:
        return preset_policy(preset)
    if policy.on_expiry not in pb.OnExpiry.values():
        raise errors.malformed(f"unknown on_expiry value {policy.on_expiry}")
    for name, most in POLICY_BOUNDS:
        value = getattr(policy, name)
        if value > most:
            raise errors.bad_time_policy(f"time_policy.{name} is at most {most} in the lobby, not "
                                  f"{value}")
    if not timed(policy):
        raise errors.bad_time_policy("a lobby match needs a clock (move_ms or bank_ms, or a preset): "
                              "without one a seat that leaves holds the match for ever")
    if policy.move_ms and policy.move_ms < MIN_MOVE_MS:
        raise errors.bad_time_policy(f"time_policy.move_ms is at least {MIN_MOVE_MS}, not "
                              f"{policy.move_ms}")
    if policy.move_ms + policy.bank_ms + policy.first_move_ms < MIN_FIRST_MOVE_MS:
        raise errors.bad_time_policy(f"a first move needs at least {MIN_FIRST_MOVE_MS} ms "
                              "(move_ms + bank_ms + first_move_ms)")
    out = pb.TimePolicy()
    out.CopyFrom(policy)
    return out


@dataclass(frozen=True)
class LobbyLimits:
    """The organizer's lobby settings (``ServerConfig.lobby``; ``referee serve --seek-*``)."""

    ttl_s: float = 600.0          # an open seek expires after this; a filled one is forgotten
    per_client: int = 3           # open seeks per identity (a lobby token, a bot)
    per_address: int = 10         # open seeks per client address
    total: int = 1_000            # open seeks on this referee
    open_rate: float = 0.2        # seeks opened (and challenges) per second per address ...
    open_burst: float = 5.0       # ... in bursts of this many
    enter_rate: float = 0.5       # lobby tokens issued per second per address ...
    enter_burst: float = 10.0
    persons: int = 100_000        # lobby identities kept (the oldest forgotten first)
    person_ttl_s: float = 7 * 86_400.0


@dataclass(frozen=True, slots=True)
class Identity:
    key: str          # "bot:<name>" or "person:<token hash>"
    name: str
    bot: str          # the bot's name, "" for a person
    address: str      # auth.client_key of the call


@dataclass(slots=True)
class Claim:
    key: str          # the identity's
    name: str
    bot: str


@dataclass(eq=False)
class SeekEntry:
    id: str
    game: str
    options: dict[str, str]
    seats: int
    policy: pb.TimePolicy
    preset: str
    rated: bool
    private: bool
    bots_may_join: bool
    opener: Identity
    challenged: str
    claims: list[Claim | None]
    created_ms: int
    expires_ms: int
    invitation: str | None = None   # the SHA-256 of the unused invitation secret
    starting: bool = False          # every seat is taken and its match is being created
    state: pb.SeekState = pb.SEEK_OPEN
    match_id: str = ""
    tokens: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def open_seats(self) -> list[int]:
        return [s for s, c in enumerate(self.claims) if c is None]

    def seated(self, key: str) -> bool:
        return any(c is not None and c.key == key for c in self.claims)

    def touch(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def public(self) -> pb.Seek:
        return pb.Seek(
            seek_id=self.id, game=self.game, options=self.options, seats=self.seats,
            time_policy=self.policy, preset=self.preset, rated=self.rated, state=self.state,
            seat_list=[pb.SeekSeat(seat=s, name=c.name if c else "", bot=c.bot if c else "")
                       for s, c in enumerate(self.claims)],
            opener=self.opener.name, match_id=self.match_id, created_unix_ms=self.created_ms,
            expires_unix_ms=self.expires_ms, challenged=self.challenged,
            bots_may_join=self.bots_may_join)


#: What the front gives the lobby: CreateMatch's checks of a request (raising its refusals),
#: and the creation of a checked request's match (its id and seat tokens) with the record
#: fields the lobby adds.
Check = Callable[[pb.CreateMatchRequest], object]
Create = Callable[[pb.CreateMatchRequest, dict[str, object]], Awaitable[tuple[str, list[str]]]]


class Lobby:
    def __init__(self, sessions: BotSessions, check: Check, create: Create,
                 limits: LobbyLimits | None = None,
                 league_leave: Callable[[str, str], str | None] | None = None,
                 is_live: Callable[[str], bool] | None = None,
                 house: Iterable[str] = ()):
        self.sessions = sessions
        self.check = check
        self.create = create
        self.limits = limits or LobbyLimits()
        lim = self.limits
        # (bot, game) -> the league that lets people challenge the bot in that game ("" game:
        # in any of its games), or None
        self.league_leave = league_leave or (lambda bot, game: None)
        self.is_live = is_live or (lambda match_id: False)
        self.house = frozenset(house)  # the referee's own reference bots (--house-bots)
        # set by ``answer_polls`` (a draining referee): GetSeek answers at once, never waits
        self.polls_closed = False
        self.seeks: dict[str, SeekEntry] = {}
        self.invitations: dict[str, str] = {}   # sha256(secret) -> seek id
        self.persons: dict[str, tuple[str, int]] = {}  # sha256(lobby token) -> (name, expires)
        self.playing: dict[str, set[str]] = {}  # bot -> lobby matches it was seated in
        self.open_limiter = RateLimiter(lim.open_rate, lim.open_burst)
        self.enter_limiter = RateLimiter(lim.enter_rate, lim.enter_burst)

    # ------------------------------------------------------------------ identities
    def enter(self, name: str, address: str) -> pb.LobbyPass:
        if not self.enter_limiter.allow(address):
            raise errors.exhausted("too many lobby identities from this address; keep the one "
                                   "you have (it lasts a week)")
        name = check_text(name, "name", max_len=MAX_NAME).strip() or "guest"
        token = secrets.token_hex(32)
        expires = now_ms() + int(self.limits.person_ttl_s * 1000)
        if len(self.persons) >= self.limits.persons:  # the oldest goes (dicts keep order)
            self.persons.pop(next(iter(self.persons)))
        self.persons[token_hash(token)] = (name, expires)
        return pb.LobbyPass(lobby_token=token, name=name, expires_unix_ms=expires)

    def identity(self, token: str | None, address: str) -> Identity:
        """Whom a lobby call's bearer token names: a bot or a person (UNAUTHENTICATED for no
        token or an unknown one)."""
        if token is None:
            raise errors.unauthenticated("the lobby's calls need a token (authorization: "
                                         "Bearer): a bot's token, or a person's from EnterLobby")
        h = token_hash(token)
        person = self.persons.get(h)  # first: a person's call costs no look-up in the store
        if person is not None and person[1] >= now_ms():
            return Identity(f"person:{h}", person[0], "", address)
        bot = self.sessions.bot_named_by(h)
        if bot is not None and bot not in self.sessions.blocked:
            return Identity(f"bot:{bot}", bot, bot, address)
        raise errors.unauthenticated("unknown lobby token (EnterLobby gives one; seat and "
                                     "admin tokens are no lobby identity)")

    # ------------------------------------------------------------------ bots
    def _accepting(self, bot: str) -> tuple[frozenset[str], int] | None:
        """The games (empty: all) and the limit of lobby matches of a bot whose open sessions
        accept challenges, or None."""
        conns = [c for c in self.sessions.conns.get(bot, ()) if c.accept_challenges
                 and not c.dropped]
        if not conns:
            return None
        games: set[str] = set()
        if all(c.challenge_games for c in conns):
            for c in conns:
                games |= c.challenge_games
        most = sum(c.max_challenges or c.capacity for c in conns)
        return frozenset(games), most

    def _busy(self, bot: str) -> int:
        """Lobby matches the bot plays now (the finished ones are forgotten here)."""
        held = self.playing.get(bot)
        if not held:
            return 0
        for m in [m for m in held if not self.is_live(m)]:
            held.discard(m)
        return len(held)

    def bots(self) -> list[pb.LobbyBot]:
        """The connected bots that take challenges now: their own (their Session says so), or
        by their league's leave ("play the champion")."""
        out = []
        for bot in sorted(self.sessions.conns):
            if bot in self.sessions.blocked:
                continue
            acc = self._accepting(bot)
            league = self.league_leave(bot, "") or ""
            if acc is not None:
                out.append(pb.LobbyBot(name=bot, games=sorted(acc[0]), house=bot in self.house,
                                       playing=self._busy(bot), max_challenges=acc[1],
                                       league=league))
            elif league:
                out.append(pb.LobbyBot(name=bot, league=league, playing=self._busy(bot)))
        return out

    def _can_take(self, bot: str, game: str) -> bool:
        acc = self._accepting(bot)
        return acc is not None and (not acc[0] or game in acc[0]) and self._busy(bot) < acc[1]

    # ------------------------------------------------------------------ seeks
    def _sweep(self) -> None:
        now = now_ms()
        for sid, s in list(self.seeks.items()):
            if s.expires_ms > now or s.starting:  # its match is being created: not now
                continue
            if s.state == pb.SEEK_OPEN:
                s.state = pb.SEEK_EXPIRED
                s.touch()
                log.info("seek_expired", seek=sid)
            self._forget(s)

    def _forget(self, s: SeekEntry) -> None:
        self.seeks.pop(s.id, None)
        s.tokens.clear()
        if s.invitation is not None:
            self.invitations.pop(s.invitation, None)
            s.invitation = None

    def _caps(self, who: Identity) -> None:
        if not self.open_limiter.allow(who.address):
            raise errors.exhausted("seeks and challenges are opened too fast from this "
                                   "address; slow down")
        mine = [s for s in self.seeks.values() if s.state == pb.SEEK_OPEN]
        lim = self.limits
        if sum(1 for s in mine if s.opener.key == who.key) >= lim.per_client:
            raise errors.seek_limit(f"at most {lim.per_client} open seeks per player: cancel one "
                             "or wait for one to fill")
        if sum(1 for s in mine if s.opener.address == who.address) >= lim.per_address:
            raise errors.seek_limit(f"at most {lim.per_address} open seeks per address")
        if len(mine) >= lim.total:
            raise errors.seek_limit(f"this referee holds {lim.total} open seeks, its most; try later")

    def _checked(self, game: str, options: dict[str, str], seats: int, preset: str,
                 policy: pb.TimePolicy) -> tuple[int, pb.TimePolicy]:
        """The seat count and the clock of a new seek, checked as CreateMatch checks them."""
        clock = lobby_policy(preset, policy)
        req = pb.CreateMatchRequest(game=game, options=options, seats=seats, time_policy=clock)
        plan = self.check(req)
        return int(getattr(plan, "seats", seats)), clock

    async def open_seek(self, who: Identity, req: pb.OpenSeekRequest) -> pb.SeekReply:
        self._sweep()
        seats, clock = self._checked(req.game, dict(req.options), req.seats, req.preset,
                                     req.time_policy)
        take = req.take_seats or 1
        if take > seats:
            raise errors.malformed(f"take_seats is at most the {seats} seats, not {take}")
        name = self._seat_name(req.name, who)
        self._caps(who)  # after the checks: a refused request opens nothing, costs nothing
        seek = self._new(who, req.game, dict(req.options), seats, clock, req.preset, req.rated,
                         req.private, req.bots_may_join, "")
        for s in range(take):
            seek.claims[s] = Claim(who.key, name, who.bot)
        log.info("seek_opened", seek=seek.id, game=seek.game, seats=seats, by=who.key[:40])
        await self._opened(seek)
        return self.reply(seek, who, self._invite(seek))

    async def challenge(self, who: Identity, req: pb.ChallengeRequest) -> pb.SeekReply:
        self._sweep()
        bot = req.bot
        if not bot or not self.sessions.known(bot):
            raise errors.not_found(f"no bot {clip(bot)} on this referee (ListSeeks lists the "
                                   "bots that accept challenges)")
        if bot == who.bot:
            raise errors.malformed("a bot cannot challenge itself")
        seats, clock = self._checked(req.game, dict(req.options), req.seats, req.preset,
                                     req.time_policy)
        if seats < 2:
            raise errors.malformed("a challenge needs two seats at least")
        name = self._seat_name(req.name, who)
        self._caps(who)
        league = None
        if not self._can_take(bot, req.game):
            league = self.league_leave(bot, req.game)
            acc = self._accepting(bot)
            if acc is not None and (not acc[0] or req.game in acc[0]):
                raise errors.bot_busy(f"bot {bot!r} plays {self._busy(bot)} lobby matches, "
                                      "its most; try again later")
            if league is None or not self.sessions.connected(bot):
                raise errors.not_challengeable(
                    f"bot {bot!r} does not accept challenges for "
                    f"{clip(req.game)} now (no open session that accepts them, and no league "
                    "that allows challenges to its entrants in that game)")
            # a league's entrant takes as many lobby matches as its sessions' capacity
            room = sum(c.capacity for c in self.sessions.conns.get(bot, ()))
            if self._busy(bot) >= room:
                raise errors.bot_busy(f"bot {bot!r} plays {self._busy(bot)} lobby matches, "
                                      "as many as its sessions take; try again later")
        seek = self._new(who, req.game, dict(req.options), seats, clock, req.preset,
                         req.rated, True, req.bots_may_join, bot)
        seek.claims[0] = Claim(who.key, name, who.bot)
        seek.claims[1] = Claim(f"bot:{bot}", bot, bot)
        log.info("challenge", seek=seek.id, bot=bot, game=seek.game, league=league)
        await self._opened(seek)
        return self.reply(seek, who, self._invite(seek))

    async def _opened(self, seek: SeekEntry) -> None:
        """A new seek's bots seated (and its match started, if that fills it); a seek whose
        match could not be created is not left open behind the refusal."""
        try:
            await self._fill(seek)
        except BaseException:
            self._forget(seek)
            raise

    def _new(self, who: Identity, game: str, options: dict[str, str], seats: int,
             clock: pb.TimePolicy, preset: str, rated: bool, private: bool,
             bots_may_join: bool, challenged: str) -> SeekEntry:
        sid = "s" + secrets.token_hex(8)
        now = now_ms()
        seek = SeekEntry(sid, game, options, seats, clock, preset, rated, private,
                         bots_may_join, who, challenged, [None] * seats, now,
                         now + int(self.limits.ttl_s * 1000))
        self.seeks[sid] = seek
        return seek

    def _invite(self, seek: SeekEntry) -> str:
        """The single-use invitation secret of a seek with a seat left open ("" when none)."""
        if seek.state != pb.SEEK_OPEN or not seek.open_seats():
            return ""
        secret = secrets.token_hex(24)
        seek.invitation = token_hash(secret)
        self.invitations[seek.invitation] = seek.id
        return secret

    @staticmethod
    def _seat_name(given: str, who: Identity) -> str:
        return check_text(given, "name", max_len=MAX_NAME).strip() or who.name

    def _find(self, seek_id: str) -> SeekEntry:
        seek = self.seeks.get(seek_id)
        if seek is None:
            raise errors.not_found(f"no seek {clip(seek_id)} (expired, or never opened)")
        return seek

    async def join(self, who: Identity, req: pb.JoinSeekRequest) -> pb.SeekReply:
        self._sweep()
        if req.invitation:
            h = token_hash(req.invitation)
            sid = self.invitations.pop(h, None)
            seek = self.seeks.get(sid or "")
            if seek is None:
                raise errors.bad_invitation(
                    "this invitation is used, expired or unknown (each is good for one seat)")
            seek.invitation = None
        elif req.seek_id:
            seek = self._find(req.seek_id)
            if seek.private:  # joined through its invitation only; its id says nothing
                raise errors.not_found(f"no seek {clip(req.seek_id)} (expired, or never "
                                       "opened)")
        else:
            raise errors.malformed("JoinSeek needs a seek_id or an invitation")
        if seek.state != pb.SEEK_OPEN or not seek.open_seats():
            raise seek_closed(seek)
        if seek.seated(who.key):
            raise errors.already_seated("you already have a seat in this "
                                      "seek; a friend joins with its invitation")
        seat = seek.open_seats()[0]
        seek.claims[seat] = Claim(who.key, self._seat_name(req.name, who), who.bot)
        seek.touch()
        try:
            await self._fill(seek)
        except BaseException:
            if seek.state == pb.SEEK_OPEN:
                seek.claims[seat] = None
            raise
        return self.reply(seek, who)

    async def cancel(self, who: Identity, req: pb.CancelSeekRequest) -> pb.Seek:
        self._sweep()
        seek = self._find(req.seek_id)
        if seek.opener.key != who.key:
            raise errors.permission_denied("only the seek's opener cancels it")
        if seek.state != pb.SEEK_OPEN or seek.starting:
            raise seek_closed(seek)
        seek.state = pb.SEEK_CANCELLED
        seek.touch()
        self._forget(seek)
        log.info("seek_cancelled", seek=seek.id)
        return seek.public()

    async def get(self, who: Identity | None, req: pb.GetSeekRequest) -> pb.SeekReply:
        self._sweep()
        seek = self._find(req.seek_id)
        if seek.private and (who is None or not seek.seated(who.key)):
            raise errors.not_found(f"no seek {clip(req.seek_id)} (expired, or never opened)")
        wait = 0 if self.polls_closed else min(req.wait_ms, MAX_WAIT_MS)
        if wait and seek.state == pb.SEEK_OPEN:
            left = max(0, seek.expires_ms - now_ms()) + 50
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(seek.changed.wait(), min(wait, left) / 1000)
            self._sweep()
        return self.reply(seek, who)

    def answer_polls(self) -> None:
        """A draining referee: every GetSeek waiting for a change answers now with the seek as
        it is, and later ones do not wait (their clients poll again, here or elsewhere)."""
        self.polls_closed = True
        for seek in self.seeks.values():
            seek.touch()

    def listing(self, game: str = "") -> pb.ListSeeksResponse:
        self._sweep()
        seeks = [s.public() for s in self.seeks.values()
                 if s.state == pb.SEEK_OPEN and not s.private and (not game or s.game == game)]
        return pb.ListSeeksResponse(seeks=seeks, bots=self.bots())

    def reply(self, seek: SeekEntry, who: Identity | None, invitation: str = "") -> pb.SeekReply:
        tokens = seek.tokens.get(who.key, []) if who is not None else []
        return pb.SeekReply(seek=seek.public(), invitation=invitation,
                            seat_tokens=[pb.SeatToken(seat=s, token=t) for s, t in tokens])

    # ------------------------------------------------------------------ filling
    async def _fill(self, seek: SeekEntry) -> None:
        """Seat challenge-accepting bots in the open seats if the seek lets them, and start the
        match once every seat is taken."""
        if seek.bots_may_join:
            taken = {c.bot for c in seek.claims if c is not None and c.bot}
            for seat in seek.open_seats():
                bot = next((b for b in sorted(self.sessions.conns) if b not in taken
                            and b not in self.sessions.blocked
                            and self._can_take(b, seek.game)), None)
                if bot is None:
                    break
                seek.claims[seat] = Claim(f"bot:{bot}", bot, bot)
                taken.add(bot)
        if not seek.open_seats():
            try:
                await self._start(seek)
            except BaseException:
                for s, c in enumerate(seek.claims):  # the bots seated just now stand up
                    if c is not None and c.bot and c.key != seek.opener.key \
                            and c.bot != seek.challenged:
                        seek.claims[s] = None
                raise

    async def _start(self, seek: SeekEntry) -> None:
        claims = [c for c in seek.claims if c is not None]
        # seats in a random order: whoever opened the seek does not always move first
        secrets.SystemRandom().shuffle(claims)
        req = pb.CreateMatchRequest(
            game=seek.game, options=seek.options, seats=seek.seats, time_policy=seek.policy,
            seat_names=[c.name for c in claims], seat_bots=[c.bot for c in claims])
        lobby: dict[str, object] = {"seek": seek.id, "rated": seek.rated,
                                    "challenged": seek.challenged, "preset": seek.preset}
        # a challenge to an entrant of a league that allows them: the league named, so that
        # its runner finds the match (ListLeagueChallenges) and, if its organizer says so,
        # rates it; the signed record is what the runner trusts
        league = self.league_leave(seek.challenged, seek.game) if seek.challenged else None
        if league:
            lobby["league"] = league
        extra: dict[str, object] = {"lobby": lobby}
        seek.starting = True
        try:
            match_id, tokens = await self.create(req, extra)
        finally:
            seek.starting = False
        seek.claims = list(claims)
        seek.match_id = match_id
        seek.state = pb.SEEK_FILLED
        for s, c in enumerate(claims):
            if c.bot:
                self.playing.setdefault(c.bot, set()).add(match_id)
            else:
                seek.tokens.setdefault(c.key, []).append((s, tokens[s]))
        # kept for its seats to read their tokens, then forgotten
        seek.expires_ms = now_ms() + int(self.limits.ttl_s * 1000)
        if seek.invitation is not None:
            self.invitations.pop(seek.invitation, None)
            seek.invitation = None
        seek.touch()
        log.info("seek_filled", seek=seek.id, match_id=match_id)


def seek_closed(seek: SeekEntry) -> errors.RefereeError:
    state = pb.SeekState.Name(seek.state).removeprefix("SEEK_").lower()
    if seek.state == pb.SEEK_OPEN:  # every seat is taken, its match is being created
        state = "full"
    return errors.seek_closed(f"seek {seek.id} is {state}")
