"""Archives are checked in bounded memory (issue 31, item 4): a refused bomb, or a large good
archive, costs the referee at most a few MB beyond the archive's own size, whatever it
unpacks to. Memory is the peak of Python's allocations (tracemalloc, every thread of the
process, the in-process server's included) while the archive is checked, never a time."""
from __future__ import annotations

import asyncio
import gzip
import io
import tarfile
import tracemalloc
import zipfile

import grpc
import pytest

from referee.server.leagues.archive import ArchiveError, Limits, check_archive
from referee.v1 import referee_pb2 as pb

from .archives import BOT, MANIFEST, zip_bomb
from .helpers import ADMIN, db_rows, error_of, md, open_league, stub_for, upload

MB = 1 << 20
#: what checking may cost beyond the archive's own bytes
SLACK = 4 * MB


def _peak(fn) -> int:
    """Peak bytes allocated by Python (all threads) while ``fn`` runs, above the start."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            fn()
        finally:
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - base


def _zeros_tar_gz(files: int, each: int) -> bytes:
    """A small tar.gz of ``files`` honest members of ``each`` zero bytes, and a manifest."""
    raw = io.BytesIO()
    block = b"\0" * each
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as gz, \
            tarfile.open(fileobj=gz, mode="w") as tf:
        for name, content in (("bot.toml", MANIFEST), ("bot.py", BOT)):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tf.addfile(info, io.BytesIO(content))
        for i in range(files):
            info = tarfile.TarInfo(f"data/{i}.bin")
            info.size = each
            tf.addfile(info, io.BytesIO(block))
    return raw.getvalue()


def _zeros_zip(files: int, each: int) -> bytes:
    raw = io.BytesIO()
    block = b"\0" * each
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("bot.py", BOT)
        for i in range(files):
            zf.writestr(f"data/{i}.bin", block)
    return raw.getvalue()


def _refused(name: str, data: bytes, limits: Limits, tmp_path) -> None:
    with pytest.raises(ArchiveError, match="once unpacked"):
        check_archive(name, data, limits, tmp_path)


def test_a_tar_bomb_is_refused_in_bounded_memory(tmp_path):
    """Issue 31 item 4: 70 members of 1 MiB (honest headers, so the cap is reached by bytes
    actually unpacked, 64 MiB of them): refused, and memory grows by a few MB at most."""
    data = _zeros_tar_gz(70, MB)
    assert len(data) < MB
    peak = _peak(lambda: _refused("b.tar.gz", data, Limits(), tmp_path))
    assert peak < len(data) + SLACK, f"{peak} bytes for a {len(data)}-byte archive"
    assert not list(tmp_path.iterdir())  # the scratch and output files are gone


def test_a_zip_bomb_is_refused_in_bounded_memory(tmp_path):
    """Issue 31 item 4: a zip whose one member unpacks to 96 MiB is refused (its declared size
    already passes the cap), with memory growing by a few MB at most."""
    data = zip_bomb(96 * MB)
    peak = _peak(lambda: _refused("b.zip", data, Limits(), tmp_path))
    assert peak < len(data) + SLACK, f"{peak} bytes for a {len(data)}-byte archive"


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_a_large_good_archive_is_checked_and_packed_in_bounded_memory(tmp_path, kind):
    """Issue 31 item 4: 48 MiB unpacked (under the 64 MiB cap) is unpacked and re-packed
    through files, never held: memory grows by a few MB, not by the contents."""
    data = _zeros_zip(48, MB) if kind == "zip" else _zeros_tar_gz(48, MB)
    out = []
    peak = _peak(lambda: out.append(check_archive(f"b.{kind}", data, Limits(), tmp_path)))
    checked = out[0]
    assert (checked.files, checked.size) == (50, 48 * MB + len(MANIFEST) + len(BOT))
    assert peak < len(data) + SLACK, f"{peak} bytes for a {len(data)}-byte archive"
    with tarfile.open(checked.path, "r:gz") as tf:
        assert len(tf.getnames()) == 51  # and the folder data/
    checked.discard()


def test_a_bomb_uploaded_over_grpc_costs_the_referee_a_few_mb(server):
    """Issue 31 item 4: the whole UploadBot path (chunks spooled to a file, the archive
    checked from it) keeps a refused bomb's cost to a few MB beyond its size."""
    data = _zeros_tar_gz(70, MB)

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)
            token = (await stub.RegisterBot(pb.RegisterBotRequest(
                name="host", league="spring", kind=pb.BOT_KIND_HOSTED),
                metadata=md(ADMIN))).bot_token
            tracemalloc.start()
            try:
                tracemalloc.reset_peak()
                base = tracemalloc.get_traced_memory()[0]
                refusal = await error_of(upload(stub, token, "b.tar.gz", data, chunk=256 * 1024))
                peak = tracemalloc.get_traced_memory()[1] - base
            finally:
                tracemalloc.stop()
            return refusal, peak

    (code, reason, text), peak = asyncio.run(run())
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_ARCHIVE"), text
    assert peak < len(data) + SLACK, f"{peak} bytes for a {len(data)}-byte archive"
    assert db_rows(server, "SELECT count(*) FROM bot_versions") == [(0,)]


def test_other_zip_methods_and_sparse_tar_members_are_refused(tmp_path):
    """Issue 31 item 4: zipfile decompresses bzip2 and LZMA members without an output bound,
    and tarfile reads a sparse member's map whole: neither is read."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_BZIP2) as zf:
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("bot.py", BOT)
    with pytest.raises(ArchiveError, match="compressed with method 12"):
        check_archive("b.zip", raw.getvalue(), Limits(), tmp_path)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tf:
        info = tarfile.TarInfo("bot.py")
        info.type = tarfile.GNUTYPE_SPARSE
        tf.addfile(info)
    with pytest.raises(ArchiveError, match="sparse"):
        check_archive("b.tar.gz", raw.getvalue(), Limits(), tmp_path)


def test_an_oversized_tar_metadata_header_is_refused_before_it_is_read(tmp_path):
    """Issue 31 item 4: tarfile reads a pax header (or a GNU long name) whole into memory, so
    one over 64 KiB is refused from its size, before its content is read."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo("bot.py")
        info.pax_headers = {"comment": "x" * (200 * 1024)}
        info.size = len(BOT)
        tf.addfile(info, io.BytesIO(BOT))
    with pytest.raises(ArchiveError, match=r"metadata header .* at most 65536 are read"):
        check_archive("b.tar.gz", raw.getvalue(), Limits(), tmp_path)
