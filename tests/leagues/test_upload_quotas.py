"""Bounded uploads (issue 31, item 4): a bot's daily count of versions and its stored bytes are
limited, refusals name the limit (RESOURCE_EXHAUSTED, reason UPLOAD_QUOTA) on the gRPC and the
web paths alike, and old versions are pruned by the keep policy, never one that is current,
pending or bound to a running match."""
from __future__ import annotations

import asyncio
import os

import grpc
import httpx
import pytest

from referee.server.leagues.archive import ArchiveError, Limits, check_archive
from referee.v1 import referee_pb2 as pb

from .archives import BOT, MANIFEST, good_tar_gz, reg, tar_gz
from .helpers import ADMIN, db_rows, error_of, md, open_league, stub_for, upload


def _run(coro):
    return asyncio.run(coro)


async def _hosted(stub, name: str = "host") -> str:
    return (await stub.RegisterBot(pb.RegisterBotRequest(
        name=name, league="spring", kind=pb.BOT_KIND_HOSTED), metadata=md(ADMIN))).bot_token


def _versions(server, bot: str = "host") -> list[int]:
    return [v for (v,) in db_rows(server, "SELECT version FROM bot_versions WHERE bot=?"
                                  " ORDER BY version", (bot,))]


def _archive(n: int, noise: int = 0) -> bytes:
    """A distinct good archive; ``noise`` bytes of incompressible content make it that big."""
    extra = [reg("n.txt", str(n).encode())]
    if noise:
        extra.append(reg("noise.bin", os.urandom(noise)))
    return good_tar_gz(extra)


def test_the_sixth_version_in_a_day_is_refused_naming_the_limit(make_server):
    """Issue 31 item 4: by default a bot uploads at most 5 versions in any 24 hours; the 6th
    is refused with RESOURCE_EXHAUSTED / UPLOAD_QUOTA, the message naming the limit, its value
    and when the count frees up; nothing is stored."""
    server = make_server()

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            token = await _hosted(stub)
            for i in range(5):
                await upload(stub, token, "b.tar.gz", _archive(i))
            code, reason, text = await error_of(upload(stub, token, "b.tar.gz", _archive(6)))
            assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "UPLOAD_QUOTA")
            assert "5 a day" in text and "--upload-versions-per-day" in text, text
            assert "next upload is possible at" in text and "UTC" in text, text
            assert _versions(server) == [1, 2, 3, 4, 5]
            assert sorted(p.name for p in (server.data_dir / "bots" / "host").iterdir()) == [
                f"{i}.tar.gz" for i in range(1, 6)]

    _run(run())


def test_the_web_upload_is_held_to_the_same_daily_count(make_server):
    """Issue 31 item 4: the web's POST /api/bots/<name>/upload ends in the same checks as
    UploadBot: past the daily count it answers 429 with reason UPLOAD_QUOTA."""
    server = make_server(http_port=0, upload_limits=Limits(versions_per_day=2))

    async def setup() -> str:
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            return await _hosted(stub)

    token = _run(setup())
    url = f"http://127.0.0.1:{server.server.http_port}/api/bots/host/upload"
    headers = {"authorization": f"Bearer {token}", "x-filename": "b.tar.gz"}
    for i in range(2):
        assert httpx.post(url, content=_archive(i), headers=headers, timeout=60).status_code == 200
    r = httpx.post(url, content=_archive(3), headers=headers, timeout=60)
    assert (r.status_code, r.json()["reason"]) == (429, "UPLOAD_QUOTA")
    assert "2 a day" in r.json()["error"]
    assert _versions(server) == [1, 2]


def test_the_stored_bytes_limit_is_named_and_nothing_is_stored(make_server):
    """Issue 31 item 4: a bot keeps at most --upload-max-stored-bytes of archives; an upload
    that would pass it is refused with UPLOAD_QUOTA naming the limit and its value."""
    server = make_server(upload_limits=Limits(versions_per_day=0, keep_versions=0,
                                              max_stored_bytes=100_000))

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            token = await _hosted(stub)
            await upload(stub, token, "b.tar.gz", _archive(1, noise=40_000))
            await upload(stub, token, "b.tar.gz", _archive(2, noise=40_000))
            code, reason, text = await error_of(
                upload(stub, token, "b.tar.gz", _archive(3, noise=40_000)))
            assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "UPLOAD_QUOTA")
            assert "100000 bytes" in text and "--upload-max-stored-bytes" in text, text
            assert _versions(server) == [1, 2]
            # a small one still fits
            await upload(stub, token, "b.tar.gz", _archive(4))
            assert _versions(server) == [1, 2, 3]
            assert not list((server.data_dir / "bots" / ".incoming").iterdir())

    _run(run())


def test_pruning_keeps_the_newest_the_current_the_pending_and_those_in_use(make_server,
                                                                          store_url):
    """Issue 31 item 4: with --upload-keep-versions 2 an upload prunes older versions (archive
    deleted, row kept and marked), never the current ready one, a pending one or one a running
    match is bound to; GetBotArchive names a pruned version; numbering goes on after a
    restart, which keeps what was pruned pruned (SQLite and PostgreSQL stores)."""
    limits = Limits(versions_per_day=0, keep_versions=2)

    async def set_version(stub, version, status):
        await stub.SetBotStatus(pb.SetBotStatusRequest(
            bot="host", version=version, version_status=status), metadata=md(ADMIN))

    def files(server) -> list[int]:
        return sorted(int(p.name.split(".")[0])
                      for p in (server.data_dir / "bots" / "host").glob("*.tar.gz"))

    server = make_server(upload_limits=limits, store_url=store_url, http_port=0)
    data_dir = server.data_dir

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            token = await _hosted(stub)
            for i in range(1, 4):
                await upload(stub, token, "b.tar.gz", _archive(i))
            # nothing pruned yet: 1-3 are pending (the runner has not checked them)
            assert files(server) == [1, 2, 3]
            await set_version(stub, 1, pb.VERSION_READY)
            await set_version(stub, 2, pb.VERSION_FAILED)
            await set_version(stub, 3, pb.VERSION_FAILED)
            # version 3 plays in a running match
            await stub.CreateMatch(pb.CreateMatchRequest(
                game="batavia", seats=3, seed=5, league="spring",
                seat_bots=["host", "", ""], seat_bot_versions=[3, 0, 0]), metadata=md(ADMIN))
            await upload(stub, token, "b.tar.gz", _archive(4))
            await set_version(stub, 4, pb.VERSION_FAILED)
            await upload(stub, token, "b.tar.gz", _archive(5))
            # kept: 1 (current ready), 3 (in a running match), 4 and 5 (the newest two);
            # pruned: 2
            assert files(server) == [1, 3, 4, 5]
            assert server.service.leagues.bots["host"].pruned == {2}
            code, _, text = await error_of(_collect(stub.GetBotArchive(
                pb.GetBotArchiveRequest(bot="host", version=2), metadata=md(ADMIN))))
            assert code == grpc.StatusCode.NOT_FOUND and "pruned" in text
            listed = {v["version"]: v["pruned"]
                      for v in server.service.leagues.bot_json("host")["versions"]}
            assert listed == {1: False, 2: True, 3: False, 4: False, 5: False}
            await set_version(stub, 5, pb.VERSION_FAILED)

    _run(run())
    page = httpx.get(f"http://127.0.0.1:{server.server.http_port}/bots/host", timeout=60).text
    assert page.count("(archive pruned)") == 1  # the bot's page says so too
    server.stop()
    again = make_server(data_dir, upload_limits=limits, store_url=store_url)

    async def after():
        async with grpc.aio.insecure_channel(again.target) as ch:
            stub = stub_for(ch)
            token = await _hosted(stub)  # the admin registers it again: a new token
            v = await upload(stub, token, "b.tar.gz", _archive(6))
            assert v.version == 6
            # 3 is still in its running match (resumed); 4 goes now; 1 is current
            assert files(again) == [1, 3, 5, 6]
            assert again.service.leagues.bots["host"].pruned == {2, 4}

    _run(after())


async def _collect(call) -> list:
    return [c async for c in call]


def test_a_bot_toml_too_large_is_refused():
    """Issue 31 item 4: the manifest is the one file read into memory, so it is bounded."""
    big = MANIFEST + b"#" * (70 * 1024) + b"\n"
    with pytest.raises(ArchiveError, match=r"bot\.toml is larger than"):
        check_archive("b.tar.gz", tar_gz([reg("bot.toml", big), reg("bot.py", BOT)]))
