"""Persistent bot sessions: connect once, play many matches (the way lichess bots do).

An organizer registers the bot once (``RegisterBot``, admin token) and gets a bot token. The bot
then runs :func:`run_session`: it opens the ``Session`` stream with that token and its
capacity, and for every ``Assignment`` the referee pushes (match id, seat, seat token, game,
options, time policy, and ``event``: the tournament or league event it belongs to) it plays
the seat with :func:`~referee_client.bot.play` on an ordinary ``Play`` stream over the SAME
channel, up to ``capacity`` matches at once::

    from referee_client import Bot, run_session

    class MyBot(Bot):
        def choose(self, decision):
            return decision.legal_moves[0]

    run_session(lambda assignment: MyBot(), "127.0.0.1:50051", bot_token, capacity=4)

``bot_factory`` is called once per assignment (a fresh bot per match). A dropped session
reconnects with backoff while the matches in progress go on; the referee sends every unfinished
assignment again (``resent``), and one already being played is only acknowledged again.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc

from referee.v1 import referee_pb2, referee_pb2_grpc

from .bot import RETRYABLE, Backoff, Bot, BotError, Reconnect, play
from .connection import RefereeError, TlsConfig, aio_channel, bearer, reason_of, sync_channel
from .logs import get_logger

log = get_logger("referee_client.session")

BotFactory = Callable[[referee_pb2.Assignment], Bot]
#: finished assignments remembered (a late re-send of one is acknowledged, not replayed)
REMEMBER_DONE = 4096
RECONNECT_OPTIONS = (("grpc.initial_reconnect_backoff_ms", 100),
                     ("grpc.min_reconnect_backoff_ms", 100),
                     ("grpc.max_reconnect_backoff_ms", 2000))


@dataclass(slots=True)
class SessionStats:
    """What a session did; returned by :func:`session`."""

    assignments: int = 0  # distinct assignments received
    finished: int = 0  # matches played to their end
    failed: int = 0  # matches the bot could not play (BotError)
    reconnects: int = 0
    notices: list[str] = field(default_factory=list)  # the referee's SessionNotices


async def session(
    bot_factory: BotFactory,
    address: str,
    bot_token: str,
    *,
    capacity: int = 1,
    tls: TlsConfig | None = None,
    backoff: Backoff | None = None,
    max_matches: int | None = None,
    strict: bool = False,
    fallback: str | None = None,
    agent: str = "referee_client",
    accept_challenges: bool = False,
    challenge_games: Sequence[str] = (),
    max_challenges: int = 0,
    on_game_over: Callable[[referee_pb2.Assignment, referee_pb2.GameOver], None] | None = None,
) -> SessionStats:
    """Run a bot session until ``max_matches`` matches are over (None: until cancelled).

    ``accept_challenges`` (with ``challenge_games``, empty for every game, and
    ``max_challenges``, 0 for ``capacity``) tells the referee's lobby that this bot takes
    challenges and seats in seeks that let bots join while the session is open
    (docs/bot/lobby.md).

    Raises :class:`BotError` when the referee refuses the bot token (or stays unreachable
    for ``backoff.give_up_after`` seconds)."""
    backoff = backoff or Backoff()
    stats = SessionStats()
    # One channel for the session and every match it plays. Its own reconnection backoff is
    # kept short: gRPC's default (1 s growing to 120 s) would leave every stream failing fast
    # long after a restarted referee is back.
    channel = aio_channel(address, tls=tls, options=RECONNECT_OPTIONS)
    stub = referee_pb2_grpc.RefereeStub(channel)
    slog = log.bind(address=address)
    playing: dict[tuple[str, int], asyncio.Task] = {}
    done: OrderedDict[tuple[str, int], None] = OrderedDict()
    enough = asyncio.Event()
    retry = Reconnect(backoff, address)

    async def play_one(a: referee_pb2.Assignment) -> None:
        key = (a.match_id, a.seat)
        try:
            bot = bot_factory(a)
            over, _ = await play(bot, address, a.match_id, a.seat_token, tls=tls,
                                 backoff=backoff, strict=strict, fallback=fallback,
                                 channel=channel)
            stats.finished += 1
            done[key] = None
            if on_game_over is not None:
                on_game_over(a, over)
        except asyncio.CancelledError:
            raise
        except BotError as exc:
            stats.failed += 1
            slog.error("match failed", match=a.match_id, seat=a.seat, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - one match's bug must not end the session
            stats.failed += 1
            slog.exception("bot crashed in a match", match=a.match_id, seat=a.seat,
                           error=repr(exc))
        finally:
            # a failed match is not remembered: if the referee sends it again, it is retried
            playing.pop(key, None)
            while len(done) > REMEMBER_DONE:
                done.popitem(last=False)
            if max_matches is not None and stats.finished + stats.failed >= max_matches:
                enough.set()

    async def run_stream(call) -> None:
        await call.write(referee_pb2.SessionClientMessage(
            hello=referee_pb2.SessionHello(
                capacity=capacity, agent=agent, accept_challenges=accept_challenges,
                challenge_games=list(challenge_games), max_challenges=max_challenges)))
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                raise _Dropped("the referee closed the session")
            which = msg.WhichOneof("msg")
            if which == "welcome":
                w = msg.welcome
                slog.info("session open", bot=w.bot_name, capacity=w.capacity,
                          pending=w.pending, reconnects=stats.reconnects)
                retry.up()
            elif which == "assignment":
                a = msg.assignment
                key = (a.match_id, a.seat)
                if key not in playing and key not in done:
                    stats.assignments += 1
                    slog.info("assignment", match=a.match_id, seat=a.seat, game=a.game,
                              resent=a.resent)
                    playing[key] = asyncio.create_task(play_one(a))
                await call.write(referee_pb2.SessionClientMessage(
                    ack=referee_pb2.AssignmentAck(match_id=a.match_id, seat=a.seat,
                                                  accept=True)))
            elif which == "notice":
                n = msg.notice
                stats.notices.append(n.reason)
                slog.warning("session notice", reason=n.reason, message=n.message,
                             match=n.match_id, seat=n.seat)

    try:
        while not enough.is_set():
            call = stub.Session(metadata=bearer(bot_token))
            reader = asyncio.create_task(run_stream(call))
            stopper = asyncio.create_task(enough.wait())
            cause = ""
            try:
                await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if stopper.done():
                    break
                reader.result()
            except grpc.aio.AioRpcError as err:
                code = err.code()
                if code not in RETRYABLE:
                    raise BotError(f"{RefereeError(code, err.details() or '', reason_of(err))}"
                                   f" (session at {address})") from None
                cause = f"{code.name}: {err.details()}"
            except _Dropped as exc:
                cause = str(exc)
            finally:
                for t in (reader, stopper):
                    t.cancel()
                call.cancel()
                await asyncio.gather(reader, stopper, return_exceptions=True)
            delay = retry.failed(cause, slog, "session lost; reconnecting")
            stats.reconnects += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(enough.wait(), delay)
        return stats
    finally:
        for t in list(playing.values()):
            t.cancel()
        await asyncio.gather(*playing.values(), return_exceptions=True)
        await channel.close(grace=None)


class _Dropped(Exception):
    pass


def run_session(
    bot_factory: BotFactory,
    address: str,
    bot_token: str,
    capacity: int = 1,
    **kwargs,
) -> SessionStats:
    """Blocking wrapper around :func:`session` (which see)."""
    return asyncio.run(session(bot_factory, address, bot_token, capacity=capacity, **kwargs))


def register_bot(address: str, admin_token: str, name: str, *, tls: TlsConfig | None = None,
                 timeout: float = 10.0) -> str:
    """Register ``name`` on the referee (admin token); returns its new bot token."""
    channel = sync_channel(address, tls=tls)
    try:
        stub = referee_pb2_grpc.RefereeStub(channel)
        resp = stub.RegisterBot(referee_pb2.RegisterBotRequest(name=name),
                                metadata=bearer(admin_token), timeout=timeout)
        return resp.bot_token
    except grpc.RpcError as err:
        raise RefereeError.from_rpc_error(err) from None
    finally:
        channel.close()


__all__ = ["BotFactory", "SessionStats", "register_bot", "run_session", "session"]
