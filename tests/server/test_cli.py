"""The `referee` command line: serve (port file, admin token file), games, replay verify,
--components, --help."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
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
