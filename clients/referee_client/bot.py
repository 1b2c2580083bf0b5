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
``Submit{state_version, move}``, logs rejected moves, and returns the ``GameOver`` message. If the
referee is unreachable or the stream drops (a restart, a network blip) it reconnects with
exponential backoff and joins again with the same token; the referee then pushes the pending
decision again, so no move is lost or played twice.
"""
from __future__ import annotations

import asyncio
import inspect
import random
import re
import time
import uuid
from dataclasses import dataclass

import grpc

from referee.v1 import referee_pb2, referee_pb2_grpc

from .connection import RefereeError, TlsConfig, aio_channel, bearer, reason_of
from .logs import get_logger

log = get_logger("referee_client")

#: Status codes after which the bot reconnects instead of giving up. UNAVAILABLE is the
#: common one (server down or restarting); the others appear when a server goes away in the
#: middle of a stream.
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
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

    def on_game_over(self, game_over: referee_pb2.GameOver) -> None:
        """Called once with final scores and ranks."""


class BotError(RuntimeError):
    """The bot cannot go on: bad token, unknown match, retries exhausted, bot bug..."""


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


@dataclass(slots=True)
class PlayStats:
    """What happened on the stream; returned by :func:`play` alongside the GameOver."""

    decisions: int = 0
    submitted: int = 0
    rejected: int = 0
    reconnects: int = 0
    fallbacks: int = 0  # first legal move played for the bot (illegal choice or rejection)


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
    channel_options: tuple = (),
    channel: grpc.aio.Channel | None = None,
) -> tuple[referee_pb2.GameOver, PlayStats]:
    """Play one seat to the end of the match (asyncio version of :func:`run_bot`).

    ``strict``: if ``choose`` returns a move that is not in ``legal_moves``, raise
    :class:`BotError`; by default the SDK logs the bug and plays the first legal move instead,
    so a buggy bot does not stall the match until its clock runs out.

    ``channel``: play on this channel (one HTTP/2 connection shared with a bot session, see
    :mod:`.session`) instead of opening one; it is left open."""
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
                    join=referee_pb2.Join(match_id=match_id, events=bot.wants_events())
                )
            )
            answered: set[int] = set()  # versions answered on THIS stream
            retried: set[int] = set()  # versions re-answered after a rejection
            pending: referee_pb2.Decision | None = None  # the last decision received
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
                    bot.on_welcome(msg.welcome)
                elif which == "decision":
                    decision = msg.decision
                    pending = decision
                    retry.failing_since = None
                    if decision.state_version in answered:
                        continue  # a re-push of a decision already answered on this stream
                    stats.decisions += 1
                    move = await _choose(bot, decision, strict, blog, stats)
                    answered.add(decision.state_version)
                    await call.write(
                        referee_pb2.ClientMessage(
                            submit=referee_pb2.Submit(
                                state_version=decision.state_version,
                                move=move,
                                request_id=uuid.uuid4().hex[:12],
                            )
                        )
                    )
                    stats.submitted += 1
                elif which == "move_result":
                    result = msg.move_result
                    if not result.accepted:
                        stats.rejected += 1
                        blog.warning(
                            "move rejected",
                            reason=referee_pb2.Reason.Name(result.reason),
                            message=result.message,
                            state_version=result.state_version,
                        )
                        # A move the referee calls illegal leaves the decision pending and is
                        # not pushed again: answer once more with the first legal move rather
                        # than wait for the time policy. (STALE_STATE / NOT_YOUR_TURN mean a
                        # newer decision is on its way; nothing to do.)
                        version = result.state_version
                        if (
                            result.reason in _RETRY_REASONS
                            and pending is not None
                            and pending.state_version == version
                            and version not in retried
                        ):
                            retried.add(version)
                            stats.fallbacks += 1
                            await call.write(
                                referee_pb2.ClientMessage(
                                    submit=referee_pb2.Submit(
                                        state_version=version,
                                        move=pending.legal_moves[0],
                                        request_id=uuid.uuid4().hex[:12],
                                    )
                                )
                            )
                            stats.submitted += 1
                    bot.on_move_result(result)
                elif which == "event":
                    bot.on_event(msg.event)
                elif which == "game_over":
                    blog.info(
                        "game over",
                        winners=list(msg.game_over.winners),
                        scores={s.seat: s.score for s in msg.game_over.seats},
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


#: Rejections after which the SDK answers the same decision once more (first legal move).
_RETRY_REASONS = frozenset(
    {
        referee_pb2.ILLEGAL_MOVE,
        referee_pb2.MALFORMED,
        referee_pb2.WRONG_GAME,
        referee_pb2.REASON_UNSPECIFIED,
    }
)


async def _choose(bot: Bot, decision, strict: bool, blog, stats: PlayStats) -> referee_pb2.Move:
    if not decision.legal_moves:
        raise BotError(f"decision {decision.state_version} lists no legal move (referee bug?)")
    move = bot.choose(decision)
    if inspect.isawaitable(move):
        move = await move
    if decision.deadline_unix_ms and time.time() * 1000 > decision.deadline_unix_ms:
        blog.warning("choose() answered after the deadline; the time policy may have moved",
                     state_version=decision.state_version, kind=decision.kind)
    if isinstance(move, referee_pb2.Move) and _is_legal(move, decision.legal_moves):
        return move
    if strict:
        raise BotError(f"{bot.name}.choose() returned a move that is not legal: {move!r}")
    stats.fallbacks += 1
    blog.error(
        "choose() returned a move that is not among legal_moves; playing the first legal move",
        kind=decision.kind,
        returned=str(move)[:200],
    )
    return decision.legal_moves[0]


def run_bot(
    bot: Bot,
    address: str,
    match_id: str,
    token: str,
    *,
    tls: TlsConfig | None = None,
    backoff: Backoff | None = None,
    strict: bool = False,
) -> referee_pb2.GameOver:
    """Play ``bot`` in the seat of ``token`` until the match ends; return the ``GameOver``.

    Blocking wrapper around :func:`play` (which see). Raises :class:`BotError` when the
    referee refuses the token or match, or stays unreachable for ``backoff.give_up_after``."""
    game_over, _ = asyncio.run(
        play(bot, address, match_id, token, tls=tls, backoff=backoff, strict=strict)
    )
    return game_over


__all__ = [
    "Backoff",
    "Bot",
    "BotError",
    "PlayStats",
    "Reconnect",
    "RefereeError",
    "play",
    "run_bot",
]
