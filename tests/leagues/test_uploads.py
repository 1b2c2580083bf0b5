"""UploadBot and GetBotArchive on the wire (issue 19, item 2: hosted entrants upload an
archive, each upload a new version; hostile archives are refused with BAD_ARCHIVE and nothing
is stored)."""
from __future__ import annotations

import asyncio
import hashlib
import io
import tarfile

import grpc
import pytest

from referee.server.leagues.archive import Limits
from referee.v1 import referee_pb2 as pb

from .archives import (
    BOT,
    MANIFEST,
    good_tar_gz,
    reg,
    special,
    tar_gz,
    tar_gz_bomb,
    zip_bomb,
    zip_of,
)
from .helpers import (
    ADMIN,
    db_rows,
    error_of,
    md,
    open_league,
    refused_upload,
    stub_for,
    upload,
)


def _run(coro):
    return asyncio.run(coro)


async def _register(stub, name, kind=pb.BOT_KIND_HOSTED) -> str:
    return (await stub.RegisterBot(pb.RegisterBotRequest(name=name, league="spring", kind=kind),
                                   metadata=md(ADMIN))).bot_token


def _stored(server) -> tuple[list, list]:
    files = sorted(p.relative_to(server.data_dir).as_posix()
                   for p in (server.data_dir / "bots").rglob("*") if p.is_file()) \
        if (server.data_dir / "bots").exists() else []
    return db_rows(server, "SELECT bot, version FROM bot_versions ORDER BY bot, version"), files


def test_a_good_upload_is_a_new_pending_version_and_reads_back(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            token = await _register(stub, "host")
            data = good_tar_gz([reg("weights.bin", bytes(range(256)) * 5000)])
            v1 = await upload(stub, token, "bot.tar.gz", data, chunk=1 << 20)  # 1 MiB chunks
            assert (v1.bot, v1.version, v1.status, v1.runtime, v1.files) == (
                "host", 1, pb.VERSION_PENDING, "python", 3)
            assert v1.size == len(MANIFEST) + len(BOT) + 256 * 5000
            v2 = await upload(stub, token, "bot.py", BOT)
            assert (v2.version, v2.files) == (2, 1)
            assert _stored(server) == ([("host", 1), ("host", 2)],
                                       ["bots/host/1.tar.gz", "bots/host/2.tar.gz"])
            # the admin reads the checked archive back, header first
            assert (await error_of(_collect(stub.GetBotArchive(
                pb.GetBotArchiveRequest(bot="host", version=1), metadata=md(token)))))[0] == \
                grpc.StatusCode.PERMISSION_DENIED
            chunks = await _collect(stub.GetBotArchive(
                pb.GetBotArchiveRequest(bot="host", version=1), metadata=md(ADMIN)))
            assert chunks[0].version == v1 and all(not c.HasField("version") for c in chunks[1:])
            blob = b"".join(c.data for c in chunks)
            assert hashlib.sha256(blob).hexdigest() == v1.sha256
            with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tf:
                assert sorted(tf.getnames()) == ["bot.py", "bot.toml", "weights.bin"]
            # version 0 = the current (newest ready) one: none yet
            assert (await error_of(_collect(stub.GetBotArchive(
                pb.GetBotArchiveRequest(bot="host"), metadata=md(ADMIN)))))[0] == \
                grpc.StatusCode.NOT_FOUND
            await stub.SetBotStatus(pb.SetBotStatusRequest(
                bot="host", version=2, version_status=pb.VERSION_READY), metadata=md(ADMIN))
            current = await _collect(stub.GetBotArchive(pb.GetBotArchiveRequest(bot="host"),
                                                         metadata=md(ADMIN)))
            assert current[0].version.version == 2

    _run(run())


async def _collect(call) -> list:
    return [c async for c in call]


HOSTILE = {
    "traversal.tar.gz": good_tar_gz([reg("../../outside.py", BOT)]),
    "absolute.tar.gz": good_tar_gz([reg("/tmp/abs.py", BOT)]),
    "symlink-etc.tar.gz": good_tar_gz([special("pw", tarfile.SYMTYPE, "/etc/passwd")]),
    "symlink-sibling.tar.gz": good_tar_gz([special("again.py", tarfile.SYMTYPE, "bot.py")]),
    "hardlink.tar.gz": good_tar_gz([special("hard.py", tarfile.LNKTYPE, "bot.py")]),
    "device.tar.gz": good_tar_gz([special("null", tarfile.CHRTYPE)]),
    "fifo.tar.gz": good_tar_gz([special("pipe", tarfile.FIFOTYPE)]),
    "zipbomb.zip": zip_bomb(96 << 20),
    "targzbomb.tar.gz": tar_gz_bomb(96 << 20),
    "many.tar.gz": good_tar_gz([reg(f"f/{i}.py", b"") for i in range(1001)]),
    "missing.tar.gz": tar_gz([reg("bot.toml", b'runtime = "python"\ncommand = ["nope.py"]\n'),
                              reg("bot.py", BOT)]),
    "nomanifest.zip": zip_of({"bot.py": BOT}),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_uploads_are_refused_and_nothing_is_stored(server, name):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            token = await _register(stub, "host")
            code, reason, text = await error_of(upload(stub, token, name, HOSTILE[name]))
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_ARCHIVE"), text
            assert _stored(server) == ([], [])

    _run(run())


def test_upload_refusals_by_token_and_kind(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            mine = await _register(stub, "mine")
            await _register(stub, "theirs")
            remote = await _register(stub, "remote", pb.BOT_KIND_REMOTE)
            data = good_tar_gz()
            assert (await refused_upload(server.target, "", "b.tar.gz", data))[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            assert (await refused_upload(server.target, "f" * 64, "b.tar.gz", data))[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            assert (await refused_upload(server.target, ADMIN, "b.tar.gz", data))[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            code, reason, _ = await refused_upload(server.target, remote, "b.tar.gz", data)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_HOSTED")
            # a bot's token uploads for that bot only: there is no way to name another
            v = await upload(stub, mine, "b.tar.gz", data)
            assert v.bot == "mine"
            assert _stored(server)[0] == [("mine", 1)]
            # announced or sent size past the cap, a lying header, a first chunk without header
            assert (await refused_upload(server.target, mine, "b.tar.gz", data,
                                         size=17 << 20))[1] == "BAD_ARCHIVE"
            assert (await refused_upload(server.target, mine, "b.tar.gz", data,
                                         size=len(data) + 1))[1] == "BAD_ARCHIVE"
            assert (await refused_upload(server.target, mine, None, data))[1] == "MALFORMED"
            # removed: the token uploads nothing more
            await stub.SetBotStatus(pb.SetBotStatusRequest(bot="mine", status=pb.BOT_REMOVED),
                                    metadata=md(ADMIN))
            assert (await refused_upload(server.target, mine, "b.tar.gz", data))[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            assert _stored(server)[0] == [("mine", 1)]

    _run(run())


def test_the_received_cap_refuses_as_soon_as_it_is_passed(make_server, tmp_path):
    srv = make_server(tmp_path / "d", upload_limits=Limits(max_received=256 * 1024))
    sent = []

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            token = await _register(stub, "host")

            async def frames():
                # announces a small size, then keeps sending: refused once past the cap
                yield pb.UploadBotChunk(header=pb.UploadBotHeader(filename="b.zip", size=1000))
                for _ in range(10_000):
                    sent.append(1)
                    yield pb.UploadBotChunk(data=b"\0" * 32 * 1024)
                    await asyncio.sleep(0)

            code, reason, text = await error_of(stub.UploadBot(frames(), metadata=md(token)))
            # the refusal may reach this client while it is still writing, which gRPC's
            # client reports as its own INTERNAL error (the stream is closed all the same)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_ARCHIVE") or (
                code == grpc.StatusCode.INTERNAL and "from Core" in text), text

    _run(run())
    assert len(sent) < 1000  # it did not read the 320 MB offered
    assert _stored(srv) == ([], [])
