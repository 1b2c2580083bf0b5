"""Write a bot by subclassing :class:`Bot`; play a seat with :func:`run_bot`.

The referee pushes a ``Decision`` whenever your seat must act. It carries your view of the game
and EVERY legal move as a concrete ``referee.v1.Move``; a bot answers with one of them,
unchanged. That is the whole contract::

    from referee_client import Bot, run_bot

    class FirstMoveBot(Bot):
        def choose(self, decision):
            return decision.legal_moves[0]

    game_over = run_bot(FirstMoveBot(), "127.0.0.1:50051", match_id, seat_token)

:func:`run_bot` drives the ``Play`` stream: it sends ``Join``, answers each ``Decision`` with
``Submit{state_version, move, note}``, and returns the ``GameOver`` message. If the referee is
unreachable or the stream drops (a restart, a network blip) it reconnects with exponential
backoff and joins again with the same token; the referee then pushes the pending decision again,
so no move is lost or played twice.

The SDK sends what ``choose`` returns as it is. A move the referee refuses (not legal now,
malformed) comes back with its reason and the rule's message: the SDK logs it as ``move
rejected``, counts it (:attr:`PlayStats.refused`), calls :meth:`Bot.on_refused` and asks ``choose``
again for the same decision, at most :data:`REASKS` more times; then it stops answering that
decision and the referee's time policy plays it (a timeout in the record). Playing a substitute
move instead is an explicit option (``fallback="first_legal"``), reported as an incident each
time it is used. docs/bot-authors.md says all this for bot authors.
"""
from __future__ import annotations

import asyncio
import inspect
import random
import re
import time
import unicodedata
import uuid
from dataclasses import dataclass, field

import grpc

from referee.v1 import referee_pb2, referee_pb2_grpc

from .connection import RefereeError, TlsConfig, aio_channel, bearer, reason_of
from .logs import get_logger
from .receipts import Receipts

log = get_logger("referee_client")

#: Status codes after which the bot reconnects (with backoff, up to ``Backoff.give_up_after``)
#: instead of giving up; the same in every kit (docs/bot/protocol.md, "Reconnecting").
#: UNAVAILABLE is the referee's own (restarting, NOT_OWNER, STORE_UNAVAILABLE). The others are
#: what a stream cut by a dying referee or proxy ends with: nginx cannot send a status for an
#: upstream that died after the response headers, it resets the stream (RST_STREAM code 2),
#: which gRPC reports as INTERNAL (issue 31 item 2); UNKNOWN, CANCELLED, ABORTED,
#: DEADLINE_EXCEEDED likewise. RESOURCE_EXHAUSTED: the stream's rate limit.
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)


class Bot:
    """Base class for bots. Override :meth:`choose`; the hooks are optional.

    ``choose`` runs on the event loop of :func:`run_bot`; keep it reasonably quick (the match
    has a time policy) or do heavy thinking in a thread/process of your own."""

    #: Display name used in logs.
    name: str = "bot"
    #: The games this bot plays (referee game names); empty: any game. Joining a match of
    #: another game stops the bot with :class:`WrongGame` before it makes a move.
    games: tuple[str, ...] = ()
    #: the note of the answer being built (see :meth:`note`)
    _referee_note: str = ""

    def on_welcome(self, welcome: referee_pb2.Welcome) -> None:
        """Called after every successful (re)join: the match, game, your seat, options."""

    def choose(self, decision: referee_pb2.Decision) -> referee_pb2.Move:
        """Return one of ``decision.legal_moves`` (the message itself or an equal copy).

        May also be ``async def`` (it is awaited), e.g. to think in an executor without
        blocking the stream. ``decision.deadline_unix_ms`` (0 = none) is when the referee's
        time policy plays for you."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose()")

    def on_event(self, event: referee_pb2.MatchEvent) -> None:
        """Called for each public match event (auction won, pirates, ...). The referee sends
        events only to bots that override this method (see :meth:`wants_events`)."""

    def wants_events(self) -> bool:
        """Ask the referee for MatchEvents (``Join.events``): true when ``on_event`` is
        overridden. Every Decision carries the full view, so events are optional."""
        return type(self).on_event is not Bot.on_event

    def on_move_result(self, result: referee_pb2.MoveResult) -> None:
        """Called with the referee's answer to each of your submissions."""

    def on_refused(self, refusal: Refusal) -> None:
        """Called when the referee refused one of your answers (``refusal.reason``,
        ``refusal.message`` naming the rule). Unless ``refusal.final``, :meth:`choose` is then
        called again for the same decision; a bot may remember the refused move to avoid it."""

    def note(self, text: str) -> None:
        """Attach ``text`` to the answer :meth:`choose` is building (call it during ``choose``):
        your reasoning, an evaluation. Sent with the move and recorded with it; never shown to
        the other seats during the match. Cleaned by :func:`clean_note` (control characters
        dropped, cut to :data:`NOTE_LIMIT` bytes of UTF-8); the last call before ``choose``
        returns wins."""
        self._referee_note = text

    def on_game_over(self, game_over: referee_pb2.GameOver) -> None:
        """Called once with final scores and ranks."""


class BotError(RuntimeError):
    """The bot cannot go on: bad token, unknown match, retries exhausted, bot bug..."""


class LeaveToTimePolicy(Exception):
    """Raised by :meth:`Bot.choose` to send no move for this decision: the referee's time
    policy plays it when its clock runs out (a timeout in the record), as after
    :data:`REASKS` refused answers. Logged as an incident (``left_to_time_policy``) with the
    exception's message, and counted in :attr:`PlayStats.gave_up`. For a bot that could not
    find an answer it trusts (the chat-model bot after its re-asks, :mod:`.llm`)."""


class WrongGame(BotError):
    """The match is of a game this bot was not written for (see :attr:`Bot.games`)."""


@dataclass(slots=True)
class Backoff:
    """Exponential backoff with full jitter: ``initial`` doubling up to ``maximum``; give up
    after ``give_up_after`` seconds without a successful join (0 = never give up)."""

    initial: float = 0.1
    maximum: float = 5.0
    give_up_after: float = 120.0

    def delays(self, rng: random.Random):
        delay = self.initial
        while True:
            yield rng.uniform(delay / 2, delay)
            delay = min(delay * 2, self.maximum)


#: gRPC's wording around the cause of a failed connection ("failed to connect to all
#: addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Connection refused" says "Connection
#: refused")
_CONNECT_NOISE = re.compile(
    r"^(?:UNAVAILABLE: )?failed to connect to all addresses; last error: "
    r"(?:[A-Z_]+: )?(?:(?:ipv4|ipv6|unix|unix-abstract):\S+: )?"
)


class Reconnect:
    """The retry loop of a stream to the referee (a bot's ``Play``, a ``Session``): backoff
    delays, the give-up budget, and whether the referee has answered at all. Until it has
    (``up``), a failure is logged as ``cannot reach the referee at ADDRESS: reason``: the
    address is wrong or nothing listens there yet; after, as a lost connection."""

    def __init__(self, backoff: Backoff, address: str, *, reached: bool = False):
        self.backoff, self.address, self.reached = backoff, address, reached
        self._rng = random.Random()
        self._delays = backoff.delays(self._rng)
        self.failing_since: float | None = None

    def up(self) -> None:
        """The referee answered: the backoff and the give-up clock start again."""
        self.reached = True
        self.failing_since = None
        self._delays = self.backoff.delays(self._rng)

    def unreachable(self, cause: str) -> str:
        return f"cannot reach the referee at {self.address}: {_CONNECT_NOISE.sub('', cause)}"

    def failed(self, cause: str, blog, lost: str) -> float:
        """One failed attempt (``cause``): log it (``lost`` once the referee had answered) and
        return the delay before the next. Raises :class:`BotError` past ``give_up_after``."""
        now = time.monotonic()
        give_up = self.backoff.give_up_after
        if self.failing_since is None:
            self.failing_since = now
        elif give_up and now - self.failing_since > give_up:
            if not self.reached:
                raise BotError(f"{self.unreachable(cause)} (gave up after {give_up:g}s)")
            raise BotError(f"gave up after {give_up:.0f}s without reaching the referee at "
                           f"{self.address} (last error: {cause})")
        delay = next(self._delays)
        if self.reached:
            blog.warning(lost, cause=cause, retry_in_s=round(delay, 3))
        else:
            blog.warning(f"{self.unreachable(cause)}; retrying", retry_in_s=round(delay, 3))
        return delay


#: A move refused with STORE_UNAVAILABLE (the referee's database is away; nothing was played) is
#: sent again, unchanged, after a delay doubling from STORE_RESEND_S[0] up to STORE_RESEND_S[1]
#: seconds (jittered), for as long as the decision's move clock allows (its deadline_unix_ms,
#: less one delay), or for STORE_RESEND_LIMIT_S seconds when the decision has no deadline;
#: then the decision is left to the referee's time policy. A resend is safe: the move carries
#: the decision's state_version, so it is played at most once (a second copy is STALE_STATE).
STORE_RESEND_S = (0.1, 2.0)
STORE_RESEND_LIMIT_S = 60.0

#: After the referee refuses an answer, the SDK asks ``choose`` again for the same decision at
#: most this many times (so at most 1 + REASKS answers per decision); then it stops answering
#: that decision and the referee's time policy plays it.
REASKS = 2
#: The substitute moves :func:`play` can be asked to make (``fallback=``): ``first_legal``, the
#: decision's first legal move.
FALLBACKS = ("first_legal",)
#: The most bytes of UTF-8 the referee takes in a move's note (``Submit.note``).
NOTE_LIMIT = 512
#: The control characters a note may keep (the referee refuses any other).
_NOTE_KEEPS = frozenset("\n\t")


def clean_note(text: str) -> str:
    """``text`` as the referee takes it: control characters other than newline and tab
    dropped, characters that cannot be UTF-8 (lone surrogates) dropped, then cut to at most
    :data:`NOTE_LIMIT` bytes of UTF-8 at a character boundary."""
    kept = "".join(c for c in str(text)
                   if c in _NOTE_KEEPS or unicodedata.category(c) not in ("Cc", "Cs"))
    return kept.encode("utf-8")[:NOTE_LIMIT].decode("utf-8", "ignore")


@dataclass(slots=True, frozen=True)
class Refusal:
    """One answer of the bot the referee refused (given to :meth:`Bot.on_refused`)."""

    state_version: int
    kind: str  # the decision's kind
    move: referee_pb2.Move  # what was sent
    reason: str  # the referee's Reason by name: ILLEGAL_MOVE, MALFORMED, ...
    message: str  # the referee's message, naming the rule
    attempt: int  # 1 for the first answer to this decision, 2 for the next...
    final: bool  # no more asks for this decision: the time policy (or the fallback) plays it


@dataclass(slots=True)
class PlayStats:
    """What happened on the stream; returned by :func:`play` alongside the GameOver."""

    decisions: int = 0
    combined: int = 0  # of those, decisions that came inside a MoveResult (combine_decision)
    submitted: int = 0
    rejected: int = 0  # answers the referee did not accept (stale ones included)
    refused: int = 0  # of those, the bot's moves the referee refused (illegal, malformed)
    gave_up: int = 0  # decisions left to the time policy (1 + REASKS refused answers, or
    # LeaveToTimePolicy)
    reconnects: int = 0
    fallbacks: int = 0  # substitute moves played for the bot (only with fallback=)
    store_resends: int = 0  # moves sent again after a STORE_UNAVAILABLE refusal
    notes: int = 0  # answers sent with a note
    # the Welcome's seed commitment and each accepted move's state hash: check the record
    # against them once it is out (receipts.check_record, `referee replay verify --receipts`)
    receipts: Receipts = field(default_factory=Receipts)


def _is_legal(move: referee_pb2.Move, legal: list[referee_pb2.Move]) -> bool:
    return any(move == candidate for candidate in legal)


async def play(
    bot: Bot,
    address: str,
    match_id: str,
    token: str,
    *,
    tls: TlsConfig | None = None,
    backoff: Backoff | None = None,
    strict: bool = False,
    fallback: str | None = None,
    channel_options: tuple = (),
    channel: grpc.aio.Channel | None = None,
    combine_decision: bool = True,
) -> tuple[referee_pb2.GameOver, PlayStats]:
    """Play one seat to the end of the match (asyncio version of :func:`run_bot`).

    What ``choose`` returns is sent as it is (an answer that is not a ``Move`` at all is sent
    as an empty move, which the referee refuses as MALFORMED). A refused answer is logged
    (``move rejected``, with the referee's reason and message), counted in
    :attr:`PlayStats.refused` and given to :meth:`Bot.on_refused`; then ``choose`` is asked
    again for the same decision, at most :data:`REASKS` times, after which the decision is left
    to the referee's time policy.

    ``strict``: raise :class:`BotError` at the first refused answer instead of asking again.

    ``fallback="first_legal"``: an answer that is not among ``legal_moves`` is replaced by the
    first legal move before it is sent, and so is the last answer when the referee still
    refuses it; each substitute is logged as an error and counted in
    :attr:`PlayStats.fallbacks`. Off by default: the referee sees what the bot answered.

    ``channel``: play on this channel (one HTTP/2 connection shared with a bot session, see
    :mod:`.session`) instead of opening one; it is left open.

    ``combine_decision`` (on by default): join with ``Join.combine_decision``, so that when the
    bot acts again right after its own move the referee sends the next Decision inside that
    move's MoveResult (one message instead of two). The bot sees no difference: ``choose`` is
    called with that Decision as with any other, and ``on_move_result`` gets the MoveResult
    without it."""
    if fallback is not None and fallback not in FALLBACKS:
        raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)} or None, "
                         f"not {fallback!r}")
    stats = PlayStats()
    metadata = bearer(token)
    blog = log.bind(match=match_id, bot=bot.name, address=address)
    shared = channel
    # a shared channel comes from a session the referee has answered
    retry = Reconnect(backoff or Backoff(), address, reached=shared is not None)

    while True:
        channel = shared or aio_channel(address, tls=tls, options=channel_options)
        try:
            stub = referee_pb2_grpc.RefereeStub(channel)
            call = stub.Play(metadata=metadata)
            await call.write(
                referee_pb2.ClientMessage(
                    join=referee_pb2.Join(match_id=match_id, events=bot.wants_events(),
                                          combine_decision=combine_decision)
                )
            )
            answering = _Answering(call, stats)
            seat = -1
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    # The server closed the stream without GameOver: treat as a drop.
                    raise _Dropped("the referee closed the stream before the game ended")
                which = msg.WhichOneof("msg")
                if which == "welcome":
                    if bot.games and msg.welcome.game not in bot.games:
                        raise WrongGame(
                            f"{bot.name} plays {' and '.join(bot.games)} only; match "
                            f"{msg.welcome.match_id} is {msg.welcome.game} (use `random`, or "
                            f"this game's own bot)")
                    seat = msg.welcome.seat
                    blog = blog.bind(seat=seat)
                    if retry.failing_since is not None or stats.reconnects:
                        blog.info("rejoined", reconnects=stats.reconnects)
                    else:
                        blog.info("joined", game=msg.welcome.game, seats=msg.welcome.seat_count)
                    retry.up()
                    stats.receipts.welcome(msg.welcome.match_id, seat,
                                           msg.welcome.seed_commitment)
                    bot.on_welcome(msg.welcome)
                elif which == "decision":
                    retry.failing_since = None
                    await answering.take(msg.decision, bot, fallback, blog)
                elif which == "move_result":
                    result = msg.move_result
                    nxt = None
                    if result.HasField("next"):  # combine_decision: the seat acts again
                        nxt = result.next  # kept by the reference when cleared below
                        stats.combined += 1
                        result.ClearField("next")  # the bot sees the MoveResult it always did
                    if result.accepted:
                        stats.receipts.accepted(result.state_version, result.state_hash)
                    else:
                        stats.rejected += 1
                        # STALE_STATE / NOT_YOUR_TURN mean a newer decision is on its way;
                        # nothing to do. A refused move leaves the decision pending and is not
                        # pushed again: the bot is asked again, a bounded number of times.
                        pending, sent = answering.pending, answering.sent
                        if (result.reason == referee_pb2.STORE_UNAVAILABLE and pending is not None
                                and sent is not None
                                and pending.state_version == result.state_version):
                            await answering.resend_after_store_refusal(result, blog)
                        elif (result.reason in _REFUSED and pending is not None and sent is not None
                                and pending.state_version == result.state_version):
                            answering.sent = None
                            move = await _refused(bot, pending, sent, answering.attempts, result,
                                                  strict, fallback, blog, stats)
                            if move is not None:
                                await answering.submit(*move)
                        else:
                            blog.warning("move not accepted",
                                         reason=referee_pb2.Reason.Name(result.reason),
                                         message=result.message,
                                         state_version=result.state_version)
                    bot.on_move_result(result)
                    if nxt is not None:
                        await answering.take(nxt, bot, fallback, blog)
                elif which == "event":
                    bot.on_event(msg.event)
                elif which == "game_over":
                    blog.info(
                        "game over",
                        winners=list(msg.game_over.winners),
                        scores={s.seat: s.score for s in msg.game_over.seats},
                        refused=stats.refused or None,
                    )
                    bot.on_game_over(msg.game_over)
                    call.cancel()
                    return msg.game_over, stats
        except grpc.aio.AioRpcError as err:
            code = err.code()
            if code == grpc.StatusCode.FAILED_PRECONDITION and reason_of(err) == "MATCH_OVER":
                # The match ended while we were away (e.g. the GameOver was lost in a drop and
                # the referee has since archived the match): nothing left to play.
                blog.warning("the match is already over; no final result was received",
                             details=err.details())
                over = referee_pb2.GameOver(match_id=match_id, summary="match already over")
                bot.on_game_over(over)
                return over, stats
            if code not in RETRYABLE:
                raise BotError(
                    f"{RefereeError(code, err.details() or '', reason_of(err))}"
                    f" (match {match_id}, address {address})"
                ) from None
            cause = f"{code.name}: {err.details()}"
        except (_Dropped, asyncio.InvalidStateError) as exc:
            # InvalidStateError: a write raced the end of a stream the server closed
            cause = str(exc) or "the stream ended"
        finally:
            if shared is None:
                await channel.close(grace=None)

        delay = retry.failed(cause, blog, "connection lost; reconnecting")
        stats.reconnects += 1
        await asyncio.sleep(delay)


class _Dropped(Exception):
    pass


class _Answering:
    """The decision a Play stream is answering: the last one received, the last answer sent to
    it (None once refused and not answered again) and how many answers it has had."""

    def __init__(self, call, stats: PlayStats):
        self.call, self.stats = call, stats
        self.pending: referee_pb2.Decision | None = None
        self.sent: referee_pb2.Move | None = None
        self.note = ""
        self.attempts = 0
        # the STORE_UNAVAILABLE resends of the answer sent: next delay, first refusal's time
        self.store_delay: float = STORE_RESEND_S[0]
        self.store_since: float | None = None
        self.answered: set[int] = set()  # versions answered on THIS stream

    def start(self, decision: referee_pb2.Decision) -> None:
        self.pending, self.sent, self.attempts = decision, None, 0

    async def take(self, decision: referee_pb2.Decision, bot: Bot, fallback: str | None,
                   blog) -> None:
        """Answer ``decision`` (a Decision message, or one inside a MoveResult), unless this
        stream answered its version already (a re-push)."""
        if decision.state_version in self.answered:
            return
        self.start(decision)
        self.stats.decisions += 1
        self.answered.add(decision.state_version)
        answer = await _answer(bot, decision, fallback, blog, self.stats)
        if answer is not None:
            await self.submit(*answer)

    async def submit(self, move: referee_pb2.Move, note: str = "") -> None:
        assert self.pending is not None
        self.sent, self.note, self.attempts = move, note, self.attempts + 1
        self.store_delay, self.store_since = STORE_RESEND_S[0], None
        self.stats.submitted += 1
        self.stats.notes += bool(note)
        await self._write(move, note)

    async def _write(self, move: referee_pb2.Move, note: str) -> None:
        assert self.pending is not None
        await self.call.write(referee_pb2.ClientMessage(submit=referee_pb2.Submit(
            state_version=self.pending.state_version, move=move, note=note,
            request_id=uuid.uuid4().hex[:12])))

    async def resend_after_store_refusal(self, result: referee_pb2.MoveResult, blog) -> None:
        """The referee refused the move sent with STORE_UNAVAILABLE (its store cannot commit
        now; nothing was played): send the same move again after a short, growing delay, while
        the decision's move clock allows (see :data:`STORE_RESEND_S`). It is not the bot's
        refusal: ``choose`` is not asked again and the attempt is not counted."""
        assert self.pending is not None and self.sent is not None
        now = time.monotonic()
        if self.store_since is None:
            self.store_since = now
        delay = random.uniform(self.store_delay / 2, self.store_delay)
        self.store_delay = min(self.store_delay * 2, STORE_RESEND_S[1])
        deadline = self.pending.deadline_unix_ms
        if deadline:
            late = time.time() * 1000 + delay * 1000 >= deadline
        else:
            late = now + delay - self.store_since > STORE_RESEND_LIMIT_S
        if late:
            blog.error("the referee's store stayed unavailable until the move clock ran out; "
                       "its time policy plays this decision", incident="store_unavailable",
                       state_version=self.pending.state_version, message=result.message)
            self.sent = None
            return
        blog.warning("the referee's store is unavailable; sending the move again",
                     state_version=self.pending.state_version, message=result.message,
                     retry_in_s=round(delay, 3))
        await asyncio.sleep(delay)
        self.stats.store_resends += 1
        await self._write(self.sent, self.note)


#: The refusals of the bot's own move (as opposed to a late or out-of-turn one): the decision
#: is still pending, so the bot is asked again.
_REFUSED = frozenset(
    {
        referee_pb2.ILLEGAL_MOVE,
        referee_pb2.MALFORMED,
        referee_pb2.WRONG_GAME,
        referee_pb2.REASON_UNSPECIFIED,
        referee_pb2.INTERNAL,
    }
)

Answer = tuple[referee_pb2.Move, str]  # a move and its (clean) note


async def _answer(bot: Bot, decision, fallback: str | None, blog,
                  stats: PlayStats) -> Answer | None:
    """``choose``'s answer to ``decision`` and the note the bot attached to it, with the
    fallback's substitute when one is asked for and the answer is not legal; None when the bot
    leaves the decision to the time policy (:class:`LeaveToTimePolicy`)."""
    if not decision.legal_moves:
        raise BotError(f"decision {decision.state_version} lists no legal move (referee bug?)")
    bot._referee_note = ""
    try:
        move = bot.choose(decision)
        if inspect.isawaitable(move):
            move = await move
    except LeaveToTimePolicy as why:
        bot._referee_note = ""
        stats.gave_up += 1
        blog.error(f"left to the referee's time policy: {why}", incident="left_to_time_policy",
                   state_version=decision.state_version, kind=decision.kind)
        return None
    note = clean_note(getattr(bot, "_referee_note", "") or "")
    bot._referee_note = ""
    if decision.deadline_unix_ms and time.time() * 1000 > decision.deadline_unix_ms:
        blog.warning("choose() answered after the deadline; the time policy may have moved",
                     state_version=decision.state_version, kind=decision.kind)
    if isinstance(move, referee_pb2.Move):
        if fallback is None or _is_legal(move, decision.legal_moves):
            return move, note
        what = "a move that is not among legal_moves"
    else:
        what = f"{type(move).__name__}, not a referee_pb2.Move"
        if fallback is None:
            blog.error(f"choose() returned {what}; sending an empty move (the referee will "
                       "refuse it)", kind=decision.kind, returned=str(move)[:200])
            return referee_pb2.Move(), note
    return _substitute(decision, f"choose() returned {what}", blog, stats, str(move)), note


def _substitute(decision, why: str, blog, stats: PlayStats, returned: str) -> referee_pb2.Move:
    """The fallback's move for ``decision`` (first legal), reported as an incident."""
    stats.fallbacks += 1
    blog.error(f"{why}; playing the first legal move instead (fallback=first_legal)",
               incident="fallback", state_version=decision.state_version, kind=decision.kind,
               returned=returned[:200])
    return decision.legal_moves[0]


async def _refused(bot: Bot, decision, move, attempts: int, result, strict: bool,
                   fallback: str | None, blog, stats: PlayStats) -> Answer | None:
    """The referee refused ``move``, the bot's answer number ``attempts`` to ``decision``:
    report it, then the next answer to send (the bot asked again, or the fallback), or None
    to leave the decision to the time policy."""
    stats.refused += 1
    final = attempts > REASKS
    refusal = Refusal(
        state_version=decision.state_version, kind=decision.kind, move=move,
        reason=referee_pb2.Reason.Name(result.reason), message=result.message,
        attempt=attempts, final=final)
    # the event itself says why: a bot that configures no logging still prints it
    blog.error(f"move rejected: {refusal.reason}: {refusal.message}", incident="refused",
               reason=refusal.reason, message=refusal.message, state_version=refusal.state_version,
               kind=refusal.kind, attempt=attempts, move=str(move).replace("\n", " ")[:200])
    bot.on_refused(refusal)
    if strict:
        raise BotError(f"the referee refused {bot.name}'s move at state {refusal.state_version}"
                       f" ({refusal.kind}): {refusal.reason}: {refusal.message}")
    if not final:
        return await _answer(bot, decision, fallback, blog, stats)
    if fallback is not None and attempts == 1 + REASKS:  # once: a refused substitute is final
        return _substitute(decision, f"the referee refused {attempts} answers", blog, stats,
                           str(move)), ""
    stats.gave_up += 1
    blog.error(f"stopped answering after {attempts} refused answers; the referee's time "
               "policy plays this decision", incident="gave_up",
               state_version=decision.state_version, kind=decision.kind)
    return None


def run_bot(
    bot: Bot,
    address: str,
    match_id: str,
    token: str,
    *,
    tls: TlsConfig | None = None,
    backoff: Backoff | None = None,
    strict: bool = False,
    fallback: str | None = None,
    combine_decision: bool = True,
) -> referee_pb2.GameOver:
    """Play ``bot`` in the seat of ``token`` until the match ends; return the ``GameOver``.

    Blocking wrapper around :func:`play` (which see: refused moves, ``strict``, ``fallback``,
    ``combine_decision``).
    Raises :class:`BotError` when the referee refuses the token or match, or stays unreachable
    for ``backoff.give_up_after``."""
    game_over, _ = asyncio.run(play(bot, address, match_id, token, tls=tls, backoff=backoff,
                                    strict=strict, fallback=fallback,
                                    combine_decision=combine_decision))
    return game_over


__all__ = [
    "FALLBACKS",
    "NOTE_LIMIT",
    "REASKS",
    "Backoff",
    "Bot",
    "BotError",
    "LeaveToTimePolicy",
    "PlayStats",
    "Reconnect",
    "RefereeError",
    "Refusal",
    "clean_note",
    "play",
    "run_bot",
]
