"""The data directory is private (issue 31, item 6): the referee creates it 0700 and its files
0600 (the SQLite store and its -wal/-shm files, archives, keys), tightens a directory left
readable by an older referee, and `referee serve` refuses a data directory its group or
others can write (one line naming it, exit code 2)."""
from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import grpc
from structlog.testing import capture_logs

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.leagues.archives import good_tar_gz
from tests.leagues.helpers import open_league, upload
from tests.server.conftest import ADMIN
from tests.server.helpers import md


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _modes(root: Path) -> dict[str, int]:
    """Mode of every file and folder under ``root`` (the root as '.'), sockets left out."""
    out = {".": _mode(root)}
    for p in root.rglob("*"):
        if p.is_dir() or p.is_file():
            out[p.relative_to(root).as_posix()] = _mode(p)
    return out


def _loose(modes: dict[str, int]) -> dict[str, str]:
    return {p: f"{m:04o}" for p, m in modes.items() if m & 0o077}


def test_the_referee_makes_its_data_directory_and_files_private(make_server, tmp_path):
    """Issue 31 item 6: with the test process's umask (022, not the serve command's), the data
    directory, the store's files (-wal and -shm too), the archives and their folders, the keys
    and the records folder are the referee's user's alone."""
    old = os.umask(0o022)
    try:
        server = make_server(tmp_path / "data")

        async def run():
            async with grpc.aio.insecure_channel(server.target) as ch:
                stub = referee_pb2_grpc.RefereeStub(ch)
                await open_league(stub)
                token = (await stub.RegisterBot(pb.RegisterBotRequest(
                    name="host", league="spring", kind=pb.BOT_KIND_HOSTED),
                    metadata=md(ADMIN))).bot_token
                await upload(stub, token, "b.tar.gz", good_tar_gz())

        asyncio.run(run())
        modes = _modes(server.data_dir)
        assert {"referee.sqlite3", "referee.sqlite3-wal", "referee.sqlite3-shm",
                "bots/host/1.tar.gz", "records"} <= set(modes), sorted(modes)
        assert _loose(modes) == {}
        assert modes["."] == 0o700 and modes["referee.sqlite3"] == 0o600
    finally:
        os.umask(old)


def test_a_readable_data_directory_from_before_is_tightened(make_server, tmp_path):
    """Issue 31 item 6: a data directory an older referee left 0755 with a 0644 store is
    tightened at start (0700, 0600), and a warning says so."""
    data = tmp_path / "data"
    first = make_server(data)
    first.stop()
    os.chmod(data, 0o755)
    for name in ("referee.sqlite3", "referee.sqlite3-wal", "referee.sqlite3-shm"):
        if (data / name).exists():
            os.chmod(data / name, 0o644)
    os.chmod(data / "records", 0o755)
    with capture_logs() as logs:
        make_server(data)
    modes = {p: m for p, m in _modes(data).items() if "/" not in p}
    assert _loose(modes) == {}, modes
    assert modes["."] == 0o700 and modes["referee.sqlite3"] == 0o600
    (warning,) = [x for x in logs if x["event"] == "data_dir_tightened"]
    assert warning["log_level"] == "warning"
    assert f"{data / 'referee.sqlite3'} (0644)" in warning["paths"], warning


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", "serve", "--admin-token", "t", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)


def test_serve_refuses_a_data_directory_others_can_write(tmp_path):
    """Issue 31 item 6: `referee serve` on a data directory its group or others can write
    stops at once: one line naming the directory and the fix, exit code 2, nothing created."""
    for mode, who in ((0o777, "its group and others"), (0o775, "its group"),
                      (0o757, "others")):
        data = tmp_path / f"data-{mode:o}"
        data.mkdir()
        os.chmod(data, mode)
        proc = _serve(tmp_path, "--port", "0", "--data-dir", str(data))
        assert proc.returncode == 2, proc.stderr
        lines = [x for x in proc.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert lines[0].startswith(f"referee serve: --data-dir {data} is writable by {who}")
        assert f"chmod 700 {data}" in lines[0]
        assert list(data.iterdir()) == []


def test_serve_writes_every_file_private_under_its_umask(tmp_path):
    """Issue 31 item 6: `referee serve` sets its umask at start, so files written without an
    explicit mode (the port file, a record, the store's) are 0600 too."""
    data = tmp_path / "data"
    port_file = data / "port"
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--port", "0", "--port-file",
         str(port_file), "--data-dir", str(data), "--admin-token", ADMIN],
        stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        port = int(port_file.read_text())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            resp = stub.CreateMatch(pb.CreateMatchRequest(
                game="batavia", seats=3, time_policy=pb.TimePolicy(on_expiry=pb.FORFEIT)),
                metadata=md(ADMIN))
            # a seat forfeits: the match ends and its record is written
            stub.AbandonSeat(pb.AbandonSeatRequest(match_id=resp.match_id, seat=0),
                             metadata=md(ADMIN))
        record = data / "records" / f"{resp.match_id}.json"
        while not record.exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    modes = _modes(data)
    assert _loose(modes) == {}, modes
    assert modes["port"] == 0o600 and modes[f"records/{resp.match_id}.json"] == 0o600
