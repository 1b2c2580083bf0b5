"""referee.server.leagues.archive: what an upload must be to be kept, checked without trusting any
header (issue 19, item 2: size, file-count and path checks, no '..', no links, no device
files, clear refusals)."""
from __future__ import annotations

import io
import tarfile

import pytest

from referee.server.leagues.archive import ArchiveError, Limits, check_archive

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

SMALL = Limits(max_received=1 << 20, max_unpacked=1 << 20, max_files=20, max_path=40)


def _members(tar_gz_bytes: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(tar_gz_bytes), mode="r:gz") as tf:
        return tf.getmembers()


def test_a_good_tar_gz_is_normalised_and_hashed_the_same_every_time():
    data = good_tar_gz([reg("lib/util.py", b"x = 1\n", 0o4777), reg("run.sh", b"#!", 0o700)])
    a = check_archive("bot.tar.gz", data)
    b = check_archive("bot.tgz", data)
    assert a.sha256 == b.sha256 and a.tar_gz == b.tar_gz
    assert (a.runtime, a.command, a.files) == ("python", ["bot.py"], 4)
    assert a.size == len(MANIFEST) + len(BOT) + 6 + 2
    members = {m.name: m for m in _members(a.tar_gz)}
    assert sorted(members) == ["bot.py", "bot.toml", "lib", "lib/util.py", "run.sh"]
    assert members["lib"].isdir()
    # modes 0644 / 0755 only (no setuid, no group or world write), no owners, time 0
    assert {oct(m.mode) for m in members.values()} <= {"0o644", "0o755"}
    assert members["lib/util.py"].mode == 0o755 and members["bot.py"].mode == 0o644
    assert all(m.uid == 0 and m.uname == "" and m.mtime == 0 for m in members.values())


def test_a_zip_and_a_single_py_file():
    z = check_archive("b.zip", zip_of({"bot.toml": MANIFEST, "bot.py": BOT, "d/": b""}))
    assert z.files == 2 and z.command == ["bot.py"]
    py = check_archive("mybot.py", BOT)
    assert (py.runtime, py.command, py.files) == ("python", ["mybot.py"], 1)


def test_a_binary_command_is_made_executable():
    data = tar_gz([reg("bot.toml", b'runtime = "binary"\ncommand = ["./bin/bot", "--fast"]\n'),
                   reg("bin/bot", b"\x7fELF")])
    c = check_archive("b.tar.gz", data)
    assert c.command == ["bin/bot", "--fast"]
    assert {m.name: m.mode for m in _members(c.tar_gz)}["bin/bot"] == 0o755


@pytest.mark.parametrize(("members", "words"), [
    ([reg("../evil.py", BOT)], "leaves the archive"),
    ([reg("a/../../evil.py", BOT)], "leaves the archive"),
    ([reg("/etc/evil", BOT)], "absolute path"),
    ([special("passwd", tarfile.SYMTYPE, "/etc/passwd")], "symbolic link"),
    ([special("other.py", tarfile.SYMTYPE, "bot.py")], "symbolic link"),
    ([special("hard.py", tarfile.LNKTYPE, "bot.py")], "hard link"),
    ([special("null", tarfile.CHRTYPE)], "device file"),
    ([special("disk", tarfile.BLKTYPE)], "device file"),
    ([special("pipe", tarfile.FIFOTYPE)], "device file, fifo"),
    ([reg("bad\x1bname.py", BOT)], "control character"),
    ([reg("a\\b.py", BOT)], "backslash"),
    ([reg("bot.py", BOT)], "twice"),
    ([reg("./x.py", BOT)], "'.' component"),
    ([reg("bot.py/x", BOT)], "file and a folder"),
    ([reg("p" * 41, BOT)], "longer than 40"),
])
def test_hostile_tar_entries_are_refused_by_name(members, words):
    with pytest.raises(ArchiveError, match=words):
        check_archive("b.tar.gz", good_tar_gz(members), SMALL)


def test_hostile_zip_entries_are_refused():
    with pytest.raises(ArchiveError, match="leaves the archive"):
        check_archive("b.zip", zip_of({"bot.toml": MANIFEST, "bot.py": BOT, "../x": b""}))
    with pytest.raises(ArchiveError, match="absolute path"):
        check_archive("b.zip", zip_of({"bot.toml": MANIFEST, "bot.py": BOT, "/x": b""}))
    link = zip_of({"bot.toml": MANIFEST, "bot.py": BOT, "l": b"/etc/passwd"},
                  modes={"l": 0o120777})
    with pytest.raises(ArchiveError, match="symbolic link"):
        check_archive("b.zip", link)
    fifo = zip_of({"bot.toml": MANIFEST, "bot.py": BOT, "f": b""}, modes={"f": 0o010644})
    with pytest.raises(ArchiveError, match="special file"):
        check_archive("b.zip", fifo)
    with pytest.raises(ArchiveError, match="not a valid zip"):
        check_archive("b.zip", b"PK\x03\x04 nothing")


def test_duplicate_zip_names_are_refused():
    import warnings
    import zipfile

    raw = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(raw, "w") as zf:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate it writes
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("bot.py", BOT)
        zf.writestr("bot.py", b"other")
    with pytest.raises(ArchiveError, match="twice"):
        check_archive("b.zip", raw.getvalue())


def test_archive_bombs_stop_at_the_unpacked_cap():
    limits = Limits(max_unpacked=8 << 20)
    zb = zip_bomb(64 << 20)
    assert len(zb) < 200_000  # small compressed, huge unpacked
    with pytest.raises(ArchiveError, match="once unpacked"):
        check_archive("b.zip", zb, limits)
    tb = tar_gz_bomb(64 << 20)
    assert len(tb) < 200_000
    with pytest.raises(ArchiveError, match="once unpacked"):
        check_archive("b.tar.gz", tb, limits)


def test_too_many_files_and_too_many_bytes_received():
    many = [reg(f"f{i}.py", b"") for i in range(25)]
    with pytest.raises(ArchiveError, match="more than 20 files"):
        check_archive("b.tar.gz", good_tar_gz(many), SMALL)
    with pytest.raises(ArchiveError, match="more than 20 files"):
        check_archive("b.zip", zip_of({"bot.toml": MANIFEST, "bot.py": BOT,
                                       **{f"f{i}": b"" for i in range(25)}}), SMALL)
    with pytest.raises(ArchiveError, match="larger than"):
        check_archive("b.py", b"#" * (SMALL.max_received + 1), SMALL)


@pytest.mark.parametrize(("manifest", "words"), [
    (None, "no bot.toml"),
    (b"runtime = python", "not valid TOML"),
    (b'runtime = "java"\ncommand = ["bot.py"]', "runtime must be one of"),
    (b'runtime = "python"\ncommand = "bot.py"', "command must be a list"),
    (b'runtime = "python"\ncommand = []', "command must be a list"),
    (b'runtime = "python"\ncommand = ["missing.py"]', "not a file of the archive"),
    (b'runtime = "python"\ncommand = ["lib"]', "not a file of the archive"),
])
def test_the_manifest_is_required_and_checked(manifest, words):
    members = [reg("bot.py", BOT), reg("lib/x.py", b"")]
    if manifest is not None:
        members.append(reg("bot.toml", manifest))
    with pytest.raises(ArchiveError, match=words):
        check_archive("b.tar.gz", tar_gz(members))


def test_unknown_formats_and_garbage_are_refused():
    with pytest.raises(ArchiveError, match="unknown archive format"):
        check_archive("bot.rar", b"x")
    with pytest.raises(ArchiveError, match="not a valid"):
        check_archive("bot.tar.gz", b"\x1f\x8bgarbage")
