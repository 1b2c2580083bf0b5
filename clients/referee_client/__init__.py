"""Python client SDK for the board-game referee.

Speaks only the wire protocol (``referee.v1.*_pb2`` generated from ``proto/referee/v1``).

* :class:`Bot` and :func:`run_bot` / :func:`play` — play a seat over the ``Play`` stream, with
  reconnection; refused moves are reported (:class:`Refusal`) and the bot asked again, a note
  goes with a move (:meth:`Bot.note`).
* :func:`run_session` / :func:`session` — a persistent bot session: connect once with a bot
  token, play every match the referee assigns (several at once).
* :func:`register_entrant`, :func:`upload_bot` — join a league as an entrant (invite code, no
  admin token) and upload a hosted bot's archive (:mod:`referee_client.league`).
* :class:`SeatClient`, :class:`AdminClient`, :func:`watch` — blocking unary helpers.
* :class:`Receipts`, :func:`check_record` — what the referee acknowledged (the Welcome's seed
  commitment, each accepted move's state hash; kept in :attr:`PlayStats.receipts`), checked
  against the published record.
* :func:`aio_channel`, :func:`sync_channel`, :func:`bearer`, :class:`TlsConfig` — connections.
* ``referee_client.llm`` — :class:`~referee_client.llm.ChatModelBot`, a bot that asks any
  OpenAI-compatible chat model (``referee-bot llm``; needs the ``llm`` extra, httpx).
* ``referee_client.bots`` — reference bots (``random``, ``greedy-batavia``); command line
  ``referee-bot``.
"""
from .bot import (
    NOTE_LIMIT,
    REASKS,
    Backoff,
    Bot,
    BotError,
    LeaveToTimePolicy,
    PlayStats,
    Refusal,
    WrongGame,
    clean_note,
    play,
    run_bot,
)
from .connection import RefereeError, TlsConfig, aio_channel, bearer, sync_channel
from .league import register_entrant, upload_bot
from .receipts import Receipts, check_record
from .session import SessionStats, register_bot, run_session, session
from .unary import AdminClient, SeatClient, watch

__all__ = [
    "NOTE_LIMIT",
    "REASKS",
    "AdminClient",
    "Backoff",
    "Bot",
    "BotError",
    "LeaveToTimePolicy",
    "PlayStats",
    "Receipts",
    "RefereeError",
    "Refusal",
    "SeatClient",
    "SessionStats",
    "TlsConfig",
    "WrongGame",
    "aio_channel",
    "bearer",
    "check_record",
    "clean_note",
    "play",
    "register_bot",
    "register_entrant",
    "run_bot",
    "run_session",
    "session",
    "sync_channel",
    "upload_bot",
    "watch",
]
