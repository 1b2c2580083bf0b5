"""The `referee` command line: serve (port file, admin token file), games, replay verify,
--components, --help."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from referee.cli import build_parser
from referee.cli import main as cli_main
from referee.core import registry
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

GAME = registry.get("batavia")


def organizer_sheet(tmp_path: Path) -> Path:
    doc = json.loads(json.dumps(GAME.default_components(GAME.spec.parse_options({})).document))
    doc["sheet"] = "batavia-organizer-verified"
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(doc))
    return path


def test_help_of_every_subcommand(capsys):
    for argv in (["--help"], ["serve", "--help"], ["replay", "--help"],
                 ["replay", "verify", "--help"], ["games", "--help"]):
        with pytest.raises(SystemExit) as ei:
            build_parser().parse_args(argv)
        assert ei.value.code == 0
        out = capsys.readouterr().out
        assert "usage: referee" in out
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    out = capsys.readouterr().out
    for flag in ("--port-file", "--data-dir", "--admin-token", "--components", "--durability",
                 "--max-message-bytes", "--log-level", "--tls-cert", "power",
                 "--max-connection-idle", "--max-connection-age", "--keepalive-time",
                 "--keepalive-timeout", "--max-pending-calls"):
        assert flag in out


def test_games_table_and_json(capsys, tmp_path):
    assert cli_main(["games"]) == 0
    out = capsys.readouterr().out
    assert "batavia" in out and "face_down" in out and "provisional" in out
    sheet = organizer_sheet(tmp_path)
    assert cli_main(["games", "--json", "--components", f"batavia={sheet}"]) == 0
    data = json.loads(capsys.readouterr().out)
    (g,) = [g for g in data["games"] if g["name"] == "batavia"]
    assert g["components"][0]["name"] == "batavia-organizer-verified"


def test_replay_verify_rejects_garbage(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2")
    assert cli_main(["replay", "verify", str(bad)]) == 1
    bad.write_text(json.dumps({"format": "referee-record/1", "game": "batavia", "seats": 3,
                               "seed": "1", "moves": [{"n": 1, "seat": 0, "move": {"bogus": 1},
                                                       "version_before": 0, "state_hash": ""}]}))
    assert cli_main(["replay", "verify", str(bad)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_serve_subprocess_port_file_admin_token_and_components(tmp_path):
    data = tmp_path / "data"
    port_file = tmp_path / "port"
    sheet = organizer_sheet(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--port", "0", "--port-file",
         str(port_file), "--data-dir", str(data), "--components", f"batavia={sheet}"],
        stderr=subprocess.PIPE, env=env,
    )
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        port = int(port_file.read_text())
        token_path = data / "admin.token"
        assert stat.S_IMODE(token_path.stat().st_mode) == 0o600
        admin = token_path.read_text().strip()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            games = stub.ListGames(pb.ListGamesRequest())
            (g,) = [g for g in games.games if g.name == "batavia"]
            assert g.components[0].name == "batavia-organizer-verified"
            resp = stub.CreateMatch(pb.CreateMatchRequest(game="batavia", seats=3),
                                    metadata=(("authorization", f"Bearer {admin}"),))
            assert len(resp.seats) == 3
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
    lines = [json.loads(x) for x in err.decode().splitlines() if x.startswith("{")]
    assert any(x.get("event") == "admin_token" and x.get("path") == str(token_path.resolve())
               for x in lines)
    created = [x for x in lines if x.get("event") == "match_created"]
    assert created and created[0]["match_id"] == resp.match_id
    assert proc.returncode == 0


# --- `referee serve` start-up errors and log formats -------------------------------------------

def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """`referee serve ARGS` that is expected to stop at once; run in tmp_path so that even the
    default ./data would land there."""
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", "serve", "--admin-token", "t", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)


def _one_error_line(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, proc.stderr
    (line,) = lines
    assert line.startswith("referee serve: ")
    for word in words:
        assert word in line
    return line


def _busy_port() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_busy_grpc_port_is_one_line_exit_2_and_creates_no_data_dir(tmp_path):
    data = tmp_path / "data"
    with _busy_port() as busy:
        port = str(busy.getsockname()[1])
        proc = _serve(tmp_path, "--port", port, "--data-dir", str(data))
    line = _one_error_line(proc, "--port", port, "127.0.0.1", "in use")
    assert "--http-port" not in line
    assert not data.exists()


def test_busy_http_port_is_one_line_exit_2(tmp_path):
    data = tmp_path / "data"
    with _busy_port() as busy:
        port = str(busy.getsockname()[1])
        proc = _serve(tmp_path, "--port", "0", "--http-port", port, "--data-dir", str(data))
    _one_error_line(proc, "--http-port", port, "in use")
    assert not data.exists()


@pytest.mark.parametrize("case", ["missing folder", "regular file"])
def test_unusable_unix_socket_path(tmp_path, case):
    if case == "regular file":
        path = tmp_path / "taken"
        path.write_text("not a socket")
    else:
        path = tmp_path / "nowhere" / "referee.sock"
    data = tmp_path / "data"
    proc = _serve(tmp_path, "--port", "0", "--unix", str(path), "--data-dir", str(data))
    _one_error_line(proc, "--unix", str(path))
    assert not data.exists()
    if case == "regular file":
        assert path.read_text() == "not a socket"
    else:
        assert not path.parent.exists()  # the folder is not made for it


def test_missing_or_lone_tls_file(tmp_path):
    key = tmp_path / "key.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    data = tmp_path / "data"
    missing = tmp_path / "cert.pem"
    proc = _serve(tmp_path, "--port", "0", "--tls-cert", str(missing), "--tls-key", str(key),
                  "--data-dir", str(data))
    _one_error_line(proc, "--tls-cert", str(missing))
    proc = _serve(tmp_path, "--port", "0", "--tls-key", str(key), "--data-dir", str(data))
    _one_error_line(proc, "--tls-key", "--tls-cert")
    assert not data.exists()


def test_data_dir_that_is_a_file(tmp_path):
    data = tmp_path / "data"
    data.write_text("a file")
    proc = _serve(tmp_path, "--port", "0", "--data-dir", str(data))
    _one_error_line(proc, "--data-dir", str(data), "not a directory")
    assert data.read_text() == "a file"


def test_unusable_components_sheet(tmp_path):
    data = tmp_path / "data"
    proc = _serve(tmp_path, "--port", "0", "--components", "no_such_game=x.json",
                  "--data-dir", str(data))
    _one_error_line(proc, "--components", "no_such_game")
    sheet = tmp_path / "sheet.json"
    sheet.write_text("{")
    proc = _serve(tmp_path, "--port", "0", "--components", f"batavia={sheet}",
                  "--data-dir", str(data))
    _one_error_line(proc, "--components", f"batavia={sheet}")
    assert not data.exists()


def _serve_logs(tmp_path: Path, *args: str) -> list[str]:
    """Start `referee serve` with stderr a pipe, wait until it serves, stop it; its log lines.
    The port file goes into the data directory, which does not exist yet."""
    data = tmp_path / "data"
    port_file = data / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--port", "0", "--port-file",
         str(port_file), "--data-dir", str(data), "--admin-token", "t", "--log-level", "debug",
         *args], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    return [x for x in err.splitlines() if x.strip()]


def _json_lines(lines: list[str]) -> list[dict]:
    out = [json.loads(x) for x in lines]  # every line is one JSON object
    assert all(isinstance(x, dict) for x in out)
    return out


@pytest.mark.parametrize("args", [("--log-format", "json"), ()], ids=["json", "auto-on-a-pipe"])
def test_log_format_json(tmp_path, args):
    lines = _json_lines(_serve_logs(tmp_path, *args))
    assert any(x.get("event") == "serving" and x.get("port") for x in lines)
    # stdlib records (asyncio's, at debug) are JSON lines too
    assert any(x.get("logger") == "asyncio" for x in lines)


def test_log_format_console(tmp_path):
    lines = _serve_logs(tmp_path, "--log-format", "console")
    for line in lines:
        with pytest.raises(ValueError):
            json.loads(line)
        assert "\x1b[" not in line  # no colours on a pipe
    serving = [x for x in lines if " serving " in x]
    assert serving and "port=" in serving[0] and "[info" in serving[0]
    assert any("[asyncio]" in x for x in lines)  # stdlib records in the same layout


def test_port_taken_between_check_and_bind_is_a_startup_error(tmp_path, monkeypatch):
    """The checks passed, then another process took the port: gRPC's refusal and uvicorn's
    sys.exit become StartupError, and what had started is stopped (its gRPC port is free)."""
    from referee.server import RefereeServer, ServerConfig, app
    from referee.server.startup import StartupError

    monkeypatch.setattr(app, "check_config", lambda cfg: None)

    async def start(cfg: ServerConfig) -> tuple[RefereeServer, str]:
        server = RefereeServer(cfg)
        with pytest.raises(StartupError) as ei:
            await server.start()
        return server, str(ei.value)

    def failed_start(cfg: ServerConfig) -> tuple[RefereeServer, str]:
        # in a thread: a SystemExit escaping the event loop ends only the thread, and a start
        # that hangs fails the test instead of blocking it
        done: list[tuple[RefereeServer, str]] = []
        t = threading.Thread(target=lambda: done.append(asyncio.run(start(cfg))), daemon=True)
        t.start()
        t.join(60)
        assert done, "the start neither failed with StartupError nor returned"
        return done[0]

    with _busy_port() as busy:
        port = busy.getsockname()[1]
        _, msg = failed_start(ServerConfig(port=port, data_dir=str(tmp_path / "a"),
                                           admin_token="t"))
        assert f"--port {port}" in msg and "in use" in msg
        server, msg = failed_start(ServerConfig(port=0, http_port=port, admin_token="t",
                                                data_dir=str(tmp_path / "b")))
        assert f"--http-port {port}" in msg and "in use" in msg
    assert server.port
    with socket.socket() as s:
        s.bind(("127.0.0.1", server.port))


def test_admin_token_file_missing_or_empty_is_one_line_exit_2(tmp_path, capsys):
    """Issue 18: the admin token comes from a file, not the command line any user can read."""
    empty = tmp_path / "empty.token"
    empty.write_text("\n")
    for path, says in ((tmp_path / "absent.token", "No such file"), (empty, "is empty")):
        assert cli_main(["serve", "--admin-token-file", str(path),
                         "--data-dir", str(tmp_path / "data")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("referee serve: --admin-token-file: ") and says in err
    assert not (tmp_path / "data").exists()
    with pytest.raises(SystemExit) as ei:  # one or the other
        build_parser().parse_args(["serve", "--admin-token", "t", "--admin-token-file", "f"])
    assert ei.value.code == 2
