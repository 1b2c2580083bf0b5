"""Python client SDK for the board-game referee.

Speaks only the wire protocol (``referee.v1.*_pb2`` generated from ``proto/referee/v1``).

* :class:`Bot` and :func:`run_bot` / :func:`play` — play a seat over the ``Play`` stream, with
  reconnection.
* :class:`SeatClient`, :class:`AdminClient`, :func:`watch` — blocking unary helpers.
* :func:`aio_channel`, :func:`sync_channel`, :func:`bearer`, :class:`TlsConfig` — connections.
* ``referee_client.bots`` — reference bots (``random``, ``greedy-batavia``); command line
  ``referee-bot``.
"""
from .bot import Backoff, Bot, BotError, PlayStats, play, run_bot
from .connection import RefereeError, TlsConfig, aio_channel, bearer, sync_channel
from .unary import AdminClient, SeatClient, watch

__all__ = [
    "AdminClient",
    "Backoff",
    "Bot",
    "BotError",
    "PlayStats",
    "RefereeError",
    "SeatClient",
    "TlsConfig",
    "aio_channel",
    "bearer",
    "play",
    "run_bot",
    "sync_channel",
    "watch",
]
