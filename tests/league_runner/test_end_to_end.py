"""Issue 19's quality bar, end to end: a league runs by itself among two remote session bots
(the Python SDK's ``referee-bot session random`` and the Node kit's ``session_bot.js``) and two
hosted uploads (a good Python bot, checked by its smoke match, and one that crashes at start),
for a bounded number of matches; the league process is killed with SIGKILL mid-run and
restarted; then the standings (JSON API), the league and bot pages (Chromium, Playwright) and
the referee's record of the crashing upload (disabled, with its error line) are checked.

Entrants join on their own: an invite code from ``league invite``, RegisterBot without the
admin token, UploadBot with the bot's own token."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import textwrap
import time
from pathlib import Path

import grpc
import pytest
from referee_tournament.procs import LocalReferee
from referee_tournament.sandbox import unavailable_reason

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from ..tournament.conftest import ROOT, cli_command
from .helpers import (
    CRASHER,
    GOOD_BOT,
    _rows,
    _tgz,
    _upload,
    _wait,
    _web_port,
    session_bot,
    stop_all,
)

NODE_DIR = ROOT / "clients" / "node"
LEAGUE = "e2e"
MATCHES = 10


def _skip_reason() -> str | None:
    if unavailable_reason():
        return f"no sandbox here: {unavailable_reason()}"
    if shutil.which("node") is None:
        return "node is not installed (the Node kit's session bot)"
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not installed"
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=NODE_DIR,
                              capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            return f"npm install failed: {proc.stderr[-300:]}"
    return None



def test_a_league_runs_survives_kill_9_and_shows_its_standings(tmp_path):
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    ref = LocalReferee(tmp_path / "ref", extra_args=("--http-port", "0")).start()
    procs: list[subprocess.Popen] = []
    try:
        base = f"http://127.0.0.1:{_web_port(ref.log_path)}"
        token_file = tmp_path / "admin.token"
        token_file.write_text(ref.admin_token + "\n")
        token_file.chmod(0o600)
        league_file = tmp_path / "league.toml"
        league_file.write_text(textwrap.dedent(f"""
            [league]
            name = "{LEAGUE}"
            title = "End-to-end league"
            registration = "invite"
            [referee]
            address = "{ref.address}"
            unix_socket = "{ref.unix_socket}"
            admin_token_file = "admin.token"
            [[games]]
            name = "santa_maria"
            seats = 2
            [time]
            move_ms = 3000
            strikes = 3
            on_expiry = "forfeit"
            join_ms = 15000
            first_move_ms = 3000
            [schedule]
            matches_per_minute = 600
            concurrency = 2
            per_bot = 1
            poll_s = 0.2
            max_matches = {MATCHES}
            [smoke]
            join_timeout_s = 30
            [hosted]
            crash_limit = 2
        """))
        out = tmp_path / "league-out"
        env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
        env["PYTHONUNBUFFERED"] = "1"

        def cli(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([*cli_command(), "league", *args, str(league_file)],
                                  capture_output=True, text=True, env=env, timeout=60,
                                  check=False)

        def serve() -> subprocess.Popen:
            log = open(tmp_path / "serve.log", "a")  # noqa: SIM115 - closed with the process
            p = subprocess.Popen([*cli_command(), "league", "serve", str(league_file), "--out",
                                  str(out)], env=env, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            procs.append(p)
            return p

        admin = (("authorization", f"Bearer {ref.admin_token}"),)
        channel = grpc.insecure_channel(ref.address)
        stub = pb_grpc.RefereeStub(channel)
        # the organizer opens the league before any bot plays (serve would too)
        stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
            name=LEAGUE, games=["santa_maria"], registration=pb.REGISTRATION_INVITE)),
            metadata=admin, timeout=30)
        got = cli("invite", "--uses", "4")
        assert got.returncode == 0, got.stderr
        code = got.stdout.strip()
        assert code and "\n" not in code

        # entrants register on their own (no admin token): the code is all they need
        tokens = {}
        for name, kind in (("py-remote", pb.BOT_KIND_REMOTE), ("node-remote", pb.BOT_KIND_REMOTE),
                           ("good-hosted", pb.BOT_KIND_HOSTED),
                           ("crasher", pb.BOT_KIND_HOSTED)):
            tokens[name] = stub.RegisterBot(pb.RegisterBotRequest(
                name=name, league=LEAGUE, invite_code=code, kind=kind, owner=f"owner of {name}"),
                timeout=30).bot_token
        # the crasher's upload is vouched for by the organizer (marked ready without the smoke
        # check): the league finds out in real matches, and disables it after 2 start crashes
        v = _upload(stub, tokens["crasher"], "crasher.tar.gz",
                    _tgz({"bot.toml": 'runtime = "python"\ncommand = ["bot.py"]\n',
                          "bot.py": CRASHER}))
        stub.SetBotStatus(pb.SetBotStatusRequest(bot="crasher", version=v.version,
                                                 version_status=pb.VERSION_READY,
                                                 message="vouched for"),
                          metadata=admin, timeout=30)
        procs.append(session_bot(ref.address, tokens["py-remote"], env))
        procs.append(subprocess.Popen(  # the Node kit's session bot
            [shutil.which("node") or "node", str(NODE_DIR / "session_bot.js"), "--address",
             ref.address], env={**env, "REFEREE_BOT_TOKEN": tokens["node-remote"]},
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "node.log", "w"),  # noqa: SIM115
            start_new_session=True))

        league = serve()
        # the good upload arrives while the league runs: checked by a smoke match, then played
        good = _upload(stub, tokens["good-hosted"], "good.py", GOOD_BOT.encode())
        assert good.status == pb.VERSION_PENDING
        db = out / "league.sqlite"

        def mid_match() -> bool:
            """3 matches over, one of the good hosted bot's in flight for a second (its bot
            is killed with the runner and must be started again), none being created."""
            if not db.exists() or sum(r[2] == "done" for r in _rows(db)) < 3:
                return False
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
            try:
                busy = con.execute("SELECT status, seating, started FROM matches"
                                   " WHERE status IN ('creating', 'running')").fetchall()
            finally:
                con.close()
            return (not any(b[0] == "creating" for b in busy)
                    and any("good-hosted@" in b[1] and time.time() - b[2] > 1 for b in busy))

        _wait("a match of the good hosted bot in flight, 3 over", mid_match, 150, league)
        os.killpg(league.pid, signal.SIGKILL)  # kill -9, its hosted bots with it
        league.wait(10)
        before = {r[0]: r[1] for r in _rows(db) if r[2] in ("done", "failed")}
        running = [r for r in _rows(db) if r[2] == "running"]
        assert running

        league = serve()  # finds its running matches again and goes on to MATCHES
        assert league.wait(180) == 0, (tmp_path / "serve.log").read_text()[-3000:]
        rows = _rows(db)
        assert len(rows) == MATCHES and all(r[2] in ("done", "failed") for r in rows), rows
        assert sum(r[2] == "done" for r in rows) >= MATCHES - 1
        after = {r[0]: r[1] for r in rows}
        assert all(after[i] == mid for i, mid in before.items())  # no finished result lost
        assert len(set(after.values())) == MATCHES
        log = (out / "league.log").read_text()
        assert log.count('"match_resume"') == len(running)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        per_match = con.execute("SELECT match_id, COUNT(*) FROM history GROUP BY match_id")
        assert all(n <= 2 for _, n in per_match)  # no match rated twice
        for r in running:  # the matches in flight at the kill were followed to their end
            assert after[r[0]] == r[1]
        con.close()

        bots = {b.name: b for b in stub.ListLeagueBots(
            pb.ListLeagueBotsRequest(league=LEAGUE), metadata=admin, timeout=30).bots}
        crashed = {x.version: x for x in bots["crasher"].versions}[v.version]
        assert crashed.status == pb.VERSION_FAILED
        assert "crashed at start in 2 matches in a row" in crashed.message
        assert "ModuleNotFoundError: No module named 'numpy_extra_magic'" in crashed.message
        ready = {x.version: x for x in bots["good-hosted"].versions}[good.version]
        assert ready.status == pb.VERSION_READY, ready.message

        import httpx

        doc = httpx.get(f"{base}/api/leagues/{LEAGUE}/standings", timeout=30).json()
        doc = doc["standings"]  # as the runner last published it
        entries = {e["bot"]: e for e in doc["entries"]}
        assert set(entries) == {"py-remote", "node-remote", "good-hosted", "crasher"}
        for name in ("py-remote", "node-remote", "good-hosted"):
            assert entries[name]["matches"] > 0, name
        assert entries["good-hosted"]["version"] == good.version
        assert entries["crasher"]["incidents"]["crashes"] >= 2
        assert any("numpy_extra_magic" in i["message"]
                   for i in entries["crasher"]["recent_incidents"])
        bot = httpx.get(f"{base}/api/bots/crasher", timeout=30).json()
        shown = json.dumps(bot)
        assert "crashed at start in 2 matches in a row" in shown and "numpy_extra_magic" in shown
        total = json.dumps(doc) + shown
        for secret in (ref.admin_token, code, *tokens.values()):
            assert secret not in total

        _pages(base, tmp_path, secrets=(ref.admin_token, code, *tokens.values()))
        got = subprocess.run([*cli_command(), "report", str(out)], capture_output=True,
                             text=True, env=env, timeout=120, check=False)
        assert got.returncode == 0, got.stderr
        assert "good-hosted@" in (out / "index.html").read_text()
        channel.close()
    finally:
        stop_all(procs)
        ref.stop()


def _pages(base: str, tmp_path: Path, secrets: tuple[str, ...]) -> None:
    """The league page and the crashing bot's page in Chromium (screenshots kept in
    tmp_path, and in $REFEREE_WEB_SCREENSHOTS when set)."""
    from ..web.browser import skip_reason

    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    from ..web.browser import ARGS, CHROMIUM

    shots = os.environ.get("REFEREE_WEB_SCREENSHOTS")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(f"{base}/leagues/{LEAGUE}")
            table = page.locator("table").first
            table.wait_for()
            for name in ("py-remote", "node-remote", "good-hosted"):
                page.get_by_role("link", name=name).first.wait_for()
            page.screenshot(path=str(tmp_path / "league-e2e.png"), full_page=True)
            html = page.content()
            page.goto(f"{base}/bots/crasher")
            page.get_by_text("numpy_extra_magic").first.wait_for()
            page.screenshot(path=str(tmp_path / "bot-crasher-e2e.png"), full_page=True)
            html += page.content()
            for s in secrets:
                assert s not in html
            if shots:
                for n in ("league-e2e.png", "bot-crasher-e2e.png"):
                    shutil.copy(tmp_path / n, Path(shots) / n)
        finally:
            browser.close()
