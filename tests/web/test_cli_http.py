"""`referee serve --http-port` from the command line: the web app answers on the same process as
gRPC, and SIGTERM still stops the referee (uvicorn does not take over its signals)."""
from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import httpx

from referee.cli import build_parser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_port_is_off_by_default():
    assert build_parser().parse_args(["serve"]).http_port is None


def test_serve_with_http_port(tmp_path):
    port = _free_port()
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--port", "0", "--port-file",
         str(port_file), "--http-port", str(port), "--data-dir", str(tmp_path / "data"),
         "--admin-token", "t", "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
            time.sleep(0.05)
        r = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert r.status_code == 200 and "Matches" in r.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_replay_html_writes_a_page_per_record_and_reports_bad_ones(tmp_path):
    import json

    from referee.core import registry
    from referee.core.match import Match

    game = registry.get("batavia")
    m = Match.create(game, {}, 3, 5)
    while (d := m.decision()) is not None and m.version < 30:
        m.submit(d.seat, d.moves[0])
    good = tmp_path / "7-abc.json"
    good.write_text(json.dumps(m.record(match_id="abc", seat_names=["x", "y", "z"])))
    bad = tmp_path / "bad.json"
    rec = m.record()
    rec["moves"][3]["state_hash"] = "0" * 64
    bad.write_text(json.dumps(rec))
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", "html", "--out-dir", str(tmp_path / "r"),
         str(good), str(bad)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert "OK" in proc.stdout and "FAIL" in proc.stdout and "state hash" in proc.stdout
    page = (tmp_path / "r" / "7-abc.html").read_text()
    assert "RefereeViewer.start" in page and '"names":["x","y","z"]' in page
    assert "/static/" not in page  # everything inlined: works from the file alone
    assert not (tmp_path / "r" / "bad.html").exists()
