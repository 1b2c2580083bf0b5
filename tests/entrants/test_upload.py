"""`referee-bot upload` and `pack` (issue 19, item 2): a hosted entrant sends its bot; a
folder is checked here first, as the referee will check it, and packed."""
from __future__ import annotations

import io
import os
import tarfile

import pytest
from referee_client.league import upload_chunks
from referee_tools.pack import Limits, PackError, pack_folder

from referee.v1 import referee_pb2 as pb

from .helpers import bot_folder, bots, open_league, run_cli


@pytest.fixture
def hosted(server, tmp_path, monkeypatch, capsys):
    """A hosted bot `hal` registered in league spring; its token in a file."""
    open_league(server, registration=pb.REGISTRATION_OPEN)
    token_file = tmp_path / "hal.token"
    code, _, err = run_cli(monkeypatch, capsys, [
        "register", "hal", "--league", "spring", "--kind", "hosted", "--token-file",
        str(token_file), "--address", server.target])
    assert code == 0, err
    return token_file


def upload(server, monkeypatch, capsys, token_file, what) -> tuple[int, str, str]:
    return run_cli(monkeypatch, capsys, ["upload", str(what), "--token-file", str(token_file),
                                         "--address", server.target])


def test_a_good_folder_is_checked_packed_and_becomes_a_pending_version(
        server, tmp_path, monkeypatch, capsys, hosted):
    folder = bot_folder(tmp_path / "hal")
    code, out, err = upload(server, monkeypatch, capsys, hosted, folder)
    assert code == 0, err
    assert "checked" in err and "3 files" in err and "runtime python" in err
    assert "uploaded hal version 1" in out and "VERSION_PENDING" in out
    (folder / "bot.py").write_text("print('better')\n")
    code, out, err = upload(server, monkeypatch, capsys, hosted, folder)
    assert code == 0 and "uploaded hal version 2" in out, err
    versions = bots(server)["hal"].versions
    assert [(v.version, v.files, v.runtime, v.status) for v in versions] == [
        (1, 3, "python", pb.VERSION_PENDING), (2, 3, "python", pb.VERSION_PENDING)]


def test_the_token_can_come_from_the_environment(server, tmp_path, monkeypatch, capsys, hosted):
    single = tmp_path / "solo.py"
    single.write_text("print('one file')\n")
    monkeypatch.setenv("REFEREE_BOT_TOKEN", hosted.read_text().strip())
    code, out, err = run_cli(monkeypatch, capsys, ["upload", str(single), "--address",
                                                   server.target])
    assert code == 0 and "uploaded hal version 1" in out, err


def test_a_folder_with_a_symlink_is_refused_here_and_nothing_is_sent(
        server, tmp_path, monkeypatch, capsys, hosted):
    folder = bot_folder(tmp_path / "hal")
    (folder / "lib" / "passwd").symlink_to("/etc/passwd")
    code, _, err = upload(server, monkeypatch, capsys, hosted, folder)
    assert code == 1
    assert "refused here, nothing sent: lib/passwd is a symbolic link (to /etc/passwd)" in err
    assert not bots(server)["hal"].versions


def test_an_archive_the_referee_refuses_shows_its_message(server, tmp_path, monkeypatch,
                                                          capsys, hosted):
    """A ready-made .tar.gz is sent as it is; the referee's BAD_ARCHIVE refusal is shown."""
    archive = tmp_path / "hal.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        info = tarfile.TarInfo("bot.toml")
        body = b'runtime = "python"\ncommand = ["bot.py"]\n'
        info.size = len(body)
        tf.addfile(info, io.BytesIO(body))
        link = tarfile.TarInfo("bot.py")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
    code, _, err = upload(server, monkeypatch, capsys, hosted, archive)
    assert code == 1
    assert "the referee refused the archive: 'bot.py' is a symbolic link" in err
    assert not bots(server)["hal"].versions


def test_a_remote_bot_has_nothing_to_upload(server, tmp_path, monkeypatch, capsys):
    open_league(server, registration=pb.REGISTRATION_OPEN)
    token_file = tmp_path / "rem.token"
    assert run_cli(monkeypatch, capsys, ["register", "rem", "--league", "spring",
                                         "--token-file", str(token_file), "--address",
                                         server.target])[0] == 0
    code, _, err = upload(server, monkeypatch, capsys, token_file, bot_folder(tmp_path / "r"))
    assert code == 1 and "this bot is a remote one" in err


def test_upload_needs_a_token(server, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("REFEREE_BOT_TOKEN", raising=False)
    code, _, err = run_cli(monkeypatch, capsys, ["upload", str(bot_folder(tmp_path / "b")),
                                                 "--address", server.target])
    assert code == 2 and "no bot token" in err


# ---------------------------------------------------------------- pack (no referee)

def test_pack_writes_the_same_bytes_for_the_same_folder(tmp_path, monkeypatch, capsys):
    folder = bot_folder(tmp_path / "b")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o700)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"\0")
    out = tmp_path / "b.tar.gz"
    code, text, err = run_cli(monkeypatch, capsys, ["pack", str(folder), "-o", str(out)])
    assert code == 0, err
    assert "4 files" in text
    first = out.read_bytes()
    os.utime(folder / "bot.py", (1, 1))  # times, owners and the order met do not matter
    assert pack_folder(folder).data == first
    with tarfile.open(out) as tf:
        members = {m.name: m for m in tf.getmembers()}
    assert sorted(members) == ["bot.py", "bot.toml", "lib", "lib/strategy.py", "run.sh"]
    assert {m.name: oct(m.mode) for m in members.values()} == {
        "bot.py": "0o644", "bot.toml": "0o644", "lib": "0o755", "lib/strategy.py": "0o644",
        "run.sh": "0o755"}
    assert all(m.mtime == 0 and m.uid == 0 and not m.uname for m in members.values())
    code, _, err = run_cli(monkeypatch, capsys, ["pack", str(folder), "-o", str(out)])
    assert code == 2 and "exists" in err


@pytest.mark.parametrize(("change", "problem"), [
    (lambda f: (f / "bot.toml").unlink(), "no bot.toml in"),
    (lambda f: (f / "bot.toml").write_text('runtime = "java"\ncommand = ["bot.py"]\n'),
     "runtime is one of python, node, binary, not 'java'"),
    (lambda f: (f / "bot.toml").write_text('runtime = "python"\ncommand = ["main.py"]\n'),
     "command names 'main.py', which is not a file of the folder"),
    (lambda f: (f / "bot.toml").write_text('runtime = "python"\ncommand = "bot.py"\n'),
     "command is a list of strings"),
    (lambda f: (f / "bot.toml").write_text("runtime = \n"), "bot.toml is not valid TOML"),
    (lambda f: (f / "lib" / "up").symlink_to(".."), "lib/up is a symbolic link (to ..)"),
    (lambda f: os.mkfifo(f / "pipe"), "pipe is a fifo, socket or device file"),
    (lambda f: (f / "a\x01b").write_text(""), "a name with a control character"),
    (lambda f: (f / ("x" * 201)).write_text(""), "a path longer than 200 characters"),
])
def test_pack_refuses_what_the_referee_would_refuse(tmp_path, change, problem):
    folder = bot_folder(tmp_path / "b")
    change(folder)
    with pytest.raises(PackError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        pack_folder(folder)


def test_pack_counts_files_and_bytes_against_the_limits(tmp_path):
    folder = bot_folder(tmp_path / "b")
    (folder / "data.bin").write_bytes(b"\0" * 5000)
    with pytest.raises(PackError, match="more than 4 files and folders"):
        pack_folder(folder, Limits(max_entries=4))
    with pytest.raises(PackError, match="more than 4096 bytes of files"):
        pack_folder(folder, Limits(max_unpacked=4096))
    (folder / "data.bin").write_bytes(os.urandom(5000))  # does not compress
    with pytest.raises(PackError, match="more than the 4096 the referee takes"):
        pack_folder(folder, Limits(max_archive=4096))


def test_upload_chunks_carry_the_header_then_the_bytes():
    seen: list[int] = []
    frames = list(upload_chunks("b.tar.gz", b"x" * 10, seen.append, chunk=4))
    assert frames[0].header.filename == "b.tar.gz" and frames[0].header.size == 10
    assert [f.data for f in frames[1:]] == [b"xxxx", b"xxxx", b"xx"]
    assert seen == [4, 4, 2]


def test_from_a_terminal_the_upload_shows_a_progress_bar(server, tmp_path, monkeypatch, capsys,
                                                         hosted):
    """A terminal gets rich's progress bar, advanced by each chunk as it is sent."""
    import sys

    from referee_client import league

    real = league.upload_bot
    advanced: list[int] = []

    def counting(address, token, filename, data, *, tls=None, progress=None):
        assert progress is not None  # the bar's
        return real(address, token, filename, data, tls=tls,
                    progress=lambda n: (advanced.append(n), progress(n)))

    monkeypatch.setattr(league, "upload_bot", counting)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    folder = bot_folder(tmp_path / "hal")
    (folder / "noise.bin").write_bytes(os.urandom(600_000))  # three chunks
    code, out, err = upload(server, monkeypatch, capsys, hosted, folder)
    assert code == 0 and "uploaded hal version 1" in out, err
    assert len(advanced) == 3 and sum(advanced) > 600_000


def test_past_the_daily_count_the_quota_refusal_is_shown(server, tmp_path, monkeypatch, capsys,
                                                         hosted):
    """Issue 31 item 4: `referee-bot upload` goes through the same UploadBot checks; the 6th
    version of a day is refused (exit 1) with the referee's message naming the limit."""
    single = tmp_path / "solo.py"
    for i in range(5):
        single.write_text(f"print({i})\n")
        code, _, err = upload(server, monkeypatch, capsys, hosted, single)
        assert code == 0, err
    code, _, err = upload(server, monkeypatch, capsys, hosted, single)
    assert code == 1
    assert "the league's upload limit is reached, nothing was stored" in err, err
    assert "5 a day (--upload-versions-per-day)" in err, err
    assert len(bots(server)["hal"].versions) == 5
