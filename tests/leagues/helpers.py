"""Raw-stub helpers for the league tests (no SDK: the wire protocol itself)."""
from __future__ import annotations

import asyncio
import json
import sqlite3

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN
from tests.server.helpers import md, reason_of

__all__ = ["ADMIN", "db_rows", "error_of", "md", "open_league", "reason_of", "refused_upload",
           "standings_doc", "stub_for", "upload"]


def stub_for(channel: grpc.aio.Channel) -> referee_pb2_grpc.RefereeStub:
    return referee_pb2_grpc.RefereeStub(channel)


async def error_of(awaitable) -> tuple[grpc.StatusCode, str | None, str]:
    """(code, referee-reason, details) of a call the referee refuses."""
    try:
        await awaitable
    except grpc.aio.AioRpcError as err:
        return err.code(), reason_of(err), err.details() or ""
    raise AssertionError("the call was not refused")


async def open_league(stub, name: str = "spring", **fields) -> pb.League:
    fields.setdefault("games", ["batavia"])
    return await stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(name=name, **fields)),
                                 metadata=md(ADMIN))


async def upload(stub, token: str, filename: str, data: bytes, chunk: int = 32 * 1024,
                 size: int | None = None) -> pb.BotVersion:
    return await stub.UploadBot(_frames(filename, data, chunk, size), metadata=md(token))


def _frames(filename: str | None, data: bytes, chunk: int, size: int | None):
    """An upload's frames: the header (none when ``filename`` is None), then the chunks."""
    if filename is not None:
        yield pb.UploadBotChunk(header=pb.UploadBotHeader(
            filename=filename, size=len(data) if size is None else size))
    for i in range(0, len(data), chunk):
        yield pb.UploadBotChunk(data=data[i:i + chunk])


def _sync_refusal(target: str, token: str, filename: str | None, data: bytes,
                  size: int | None) -> tuple[grpc.StatusCode, str | None, str]:
    with grpc.insecure_channel(target) as ch:
        try:
            referee_pb2_grpc.RefereeStub(ch).UploadBot(
                _frames(filename, data, 32 * 1024, size), metadata=md(token))
        except grpc.RpcError as err:
            return err.code(), reason_of(err), err.details() or ""  # type: ignore[attr-defined]
    raise AssertionError("the upload was not refused")


async def refused_upload(target: str, token: str, filename: str | None, data: bytes,
                         size: int | None = None) -> tuple[grpc.StatusCode, str | None, str]:
    """(code, reason, details) of an upload the referee refuses before reading it all, sent
    with grpcio's synchronous client as the SDK sends it. grpcio's asyncio client can report
    such a call as INTERNAL: when the server ends a client-streaming call while the client is
    still writing, the late write's failure overwrites the server's status (grpc/grpc issue
    36066), which made these assertions flaky under load; the synchronous client reports the
    server's status. ``filename=None`` sends no header, only the data."""
    return await asyncio.to_thread(_sync_refusal, target, token, filename, data, size)


def db_rows(server, sql, args=()):
    con = sqlite3.connect(server.data_dir / "referee.sqlite3")
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def standings_doc(league: str = "spring", bots=("alpha", "beta")) -> dict:
    """A standings document as the league runner publishes it (OpenSkill, mu - 3 sigma)."""
    entries = []
    for i, bot in enumerate(bots):
        mu, sigma, wins = 28.0 - 3 * i, 2.5 + i % 5, max(0, 7 - 4 * i)
        entries.append({
            "bot": bot, "version": max(0, 2 - i), "rating": round(mu - 3 * sigma, 3), "mu": mu,
            "sigma": sigma, "interval": [mu - 3 * sigma, mu + 3 * sigma], "matches": 12,
            "wins": wins, "win_rate": wins / 12,
            "incidents": {"timeouts": i, "crashes": i, "refused": 0, "forfeits": 0},
            "history": [{"t": 1_700_000_000_000 + k * 60_000, "rating": k * (1.5 - i),
                         "match": f"m{k:04d}"} for k in range(12)],
            "recent_incidents": [{"kind": "crash", "match": "m0003", "t": 1_700_000_180_000,
                                  "message": "Traceback: ZeroDivisionError: division by zero"}]
            if i else [],
        })
    return {
        "league": league, "generated_unix_ms": 1_700_000_900_000, "games": ["batavia"],
        "rating_model": "openskill plackett-luce; rating = mu - 3 sigma", "entries": entries,
        "head_to_head": [{"bot": bots[0], "opponent": bots[1], "matches": 12, "wins": 7,
                          "losses": 3, "draws": 2},
                         {"bot": bots[1], "opponent": bots[0], "matches": 12, "wins": 3,
                          "losses": 7, "draws": 2}],
        "health": {"running_matches": 2, "matches_total": 12, "paused": False,
                   "last_error": ""},
    }


def standings_json(**kw) -> str:
    return json.dumps(standings_doc(**kw))
