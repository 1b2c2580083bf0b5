"""League entrants: register a bot into a league and upload a hosted bot's archive.

An entrant needs no admin token: with an invite code the organizer handed out (or none, when
the league's registration is open) :func:`register_entrant` registers a bot name and returns
its bot token, once. A **remote** bot then plays with that token over a ``Session``
(:func:`~referee_client.session.run_session`, or a kit's session mode); a **hosted** one sends
its archive with :func:`upload_bot`, and the league runs it::

    from referee_client.league import register_entrant, upload_bot

    token = register_entrant("league.example:50051", "my-bot", "spring",
                             invite_code=code, kind="hosted").bot_token
    version = upload_bot("league.example:50051", token, "my-bot.tar.gz", data)

Refusals raise :class:`~referee_client.connection.RefereeError` with the referee's reason:
``BAD_INVITE`` (no, a wrong, a used-up or an expired invite code), ``ALREADY_EXISTS`` (the name
is taken), ``NOT_FOUND`` (no such league), ``LEAGUE_STOPPED``, ``BAD_ARCHIVE`` (the upload
failed the referee's checks; the message names the first problem), ``NOT_HOSTED`` (a remote
bot has nothing to upload), ``UPLOAD_QUOTA`` (RESOURCE_EXHAUSTED: the bot's versions a day or
its stored bytes are at the organizer's limit; the message names it, and when the daily count
frees up).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc

from referee.v1 import referee_pb2, referee_pb2_grpc

from .connection import RefereeError, TlsConfig, bearer, sync_channel

#: bytes of archive per UploadBotChunk (the referee takes at most 1 MiB)
CHUNK = 256 * 1024
KINDS = {"remote": referee_pb2.BOT_KIND_REMOTE, "hosted": referee_pb2.BOT_KIND_HOSTED}
#: a large upload's chunks need more than the channel's default message size
_OPTIONS = (("grpc.max_send_message_length", 2 * 1024 * 1024),)


def register_entrant(address: str, name: str, league: str, *, invite_code: str = "",
                     kind: str = "remote", owner: str = "", description: str = "",
                     tls: TlsConfig | None = None,
                     timeout: float = 30.0) -> referee_pb2.RegisterBotResponse:
    """Register the bot ``name`` into ``league`` as an entrant (no admin token); returns the
    response, whose ``bot_token`` is shown this once. ``kind`` is ``remote`` or ``hosted``."""
    if kind not in KINDS:
        raise ValueError(f"kind is one of {', '.join(KINDS)}, not {kind!r}")
    request = referee_pb2.RegisterBotRequest(
        name=name, league=league, invite_code=invite_code, kind=KINDS[kind], owner=owner,
        description=description)
    with sync_channel(address, tls=tls) as channel:
        try:
            return referee_pb2_grpc.RefereeStub(channel).RegisterBot(request, timeout=timeout)
        except grpc.RpcError as err:
            raise RefereeError.from_rpc_error(err) from None


def get_league(address: str, name: str, *, tls: TlsConfig | None = None,
               timeout: float = 30.0) -> referee_pb2.League:
    """A league's public description and state (no token needed)."""
    with sync_channel(address, tls=tls) as channel:
        try:
            return referee_pb2_grpc.RefereeStub(channel).GetLeague(
                referee_pb2.GetLeagueRequest(name=name), timeout=timeout)
        except grpc.RpcError as err:
            raise RefereeError.from_rpc_error(err) from None


def upload_chunks(filename: str, data: bytes, progress: Callable[[int], None] | None = None,
                  chunk: int = CHUNK) -> Iterator[referee_pb2.UploadBotChunk]:
    """The UploadBot stream of ``data``: the header, then the bytes ``chunk`` at a time;
    ``progress(n)`` is called with the bytes of each chunk as it is taken."""
    yield referee_pb2.UploadBotChunk(
        header=referee_pb2.UploadBotHeader(filename=filename, size=len(data)))
    view = memoryview(data)
    for start in range(0, len(data), chunk):
        part = bytes(view[start:start + chunk])
        yield referee_pb2.UploadBotChunk(data=part)
        if progress is not None:
            progress(len(part))


def upload_bot(address: str, bot_token: str, filename: str, data: bytes, *,
               progress: Callable[[int], None] | None = None, tls: TlsConfig | None = None,
               timeout: float = 600.0) -> referee_pb2.BotVersion:
    """Upload ``data`` (a .tar.gz / .tgz, .zip or single .py, named by ``filename``) as a new
    version of the hosted bot whose token this is; returns the stored version (status
    VERSION_PENDING until the league has checked it with a smoke match)."""
    with sync_channel(address, tls=tls, options=_OPTIONS) as channel:
        try:
            return referee_pb2_grpc.RefereeStub(channel).UploadBot(
                upload_chunks(filename, data, progress), metadata=bearer(bot_token),
                timeout=timeout)
        except grpc.RpcError as err:
            raise RefereeError.from_rpc_error(err) from None


__all__ = ["CHUNK", "KINDS", "get_league", "register_entrant", "upload_bot", "upload_chunks"]
