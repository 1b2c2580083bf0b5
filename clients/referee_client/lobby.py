"""The referee's lobby from the SDK (docs/bot/lobby.md): challenge a named bot and get the seat.

``referee-bot llm --challenge BOT`` uses it to try a chat model against a house bot in one
command: an anonymous lobby identity (``EnterLobby``; its token stays in this process), a
``Challenge``, and the seat's token from the reply (or from ``GetSeek`` when the seek still
waits for seats). Given a bot token, it challenges as that bot instead: the seat then comes as
an Assignment on the bot's Session, not in the reply. The MCP server (``referee_tools.mcp_server``) calls the same RPCs itself,
since it keeps its seeks across tool calls.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import grpc

from referee.v1 import referee_pb2, referee_pb2_grpc

from .connection import TlsConfig, aio_channel, bearer, reason_of

#: The longest GetSeek waits per call (the referee caps it at 30 s).
WAIT_MS = 25_000


class LobbyRefused(Exception):
    """The lobby said no: its machine-readable reason and its message."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason, self.message = reason, message


@dataclass(frozen=True)
class LobbySeat:
    """A seat the lobby gave: the match, the seat and its secret token (keep it); seat -1 and
    no token for a bot's challenge, whose seat is assigned on the bot's Session."""

    match_id: str
    seat: int
    token: str
    seek_id: str
    game: str


def _refused(err: grpc.aio.AioRpcError) -> LobbyRefused:
    return LobbyRefused(reason_of(err) or err.code().name, err.details() or "")


async def challenge(address: str, bot: str, game: str, *, preset: str, seats: int = 2,
                    options: dict[str, str] | None = None, name: str = "",
                    tls: TlsConfig | None = None, wait_s: float = 600.0,
                    bot_token: str | None = None) -> LobbySeat:
    """Challenge ``bot`` to a match of ``game`` as an anonymous lobby identity named ``name``
    (or as the bot whose ``bot_token`` is given: its seat is then assigned on its Session, and
    the returned seat has no token), and wait (at most ``wait_s``) until the match exists; raises :class:`LobbyRefused` with the
    lobby's reason (``NOT_FOUND`` for an unknown bot, ``NOT_CHALLENGEABLE``, ``BOT_BUSY``,
    ``MALFORMED`` for an unknown preset, ``BAD_TIME_POLICY``...)."""
    async with aio_channel(address, tls=tls) as channel:
        stub = referee_pb2_grpc.RefereeStub(channel)
        try:
            if bot_token:
                auth = bearer(bot_token)
            else:
                me = await stub.EnterLobby(referee_pb2.EnterLobbyRequest(name=name[:40]),
                                           timeout=10)
                auth = bearer(me.lobby_token)
            got = await stub.Challenge(referee_pb2.ChallengeRequest(
                bot=bot, game=game, seats=seats, options=options or {}, preset=preset,
                name=name[:40]), metadata=auth, timeout=30)
            end = time.monotonic() + wait_s
            while got.seek.state == referee_pb2.SEEK_OPEN and time.monotonic() < end:
                got = await stub.GetSeek(referee_pb2.GetSeekRequest(
                    seek_id=got.seek.seek_id, wait_ms=WAIT_MS), metadata=auth, timeout=40)
        except grpc.aio.AioRpcError as err:
            raise _refused(err) from None
    if got.seek.state != referee_pb2.SEEK_FILLED or not (got.seat_tokens or bot_token):
        state = referee_pb2.SeekState.Name(got.seek.state).removeprefix("SEEK_").lower()
        raise LobbyRefused("SEEK_CLOSED", f"the challenge's seek is {state}: no match")
    if not got.seat_tokens:  # the bot's: assigned on its Session
        return LobbySeat(got.seek.match_id, -1, "", got.seek.seek_id, got.seek.game)
    mine = got.seat_tokens[0]
    return LobbySeat(got.seek.match_id, mine.seat, mine.token, got.seek.seek_id, got.seek.game)
