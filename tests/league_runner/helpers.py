"""Shared by the league runner's tests: bots to upload, archives, uploads, reading a
league's database while its runner writes it, waiting for a condition."""
from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

from referee_tournament.ladder import Rating
from referee_tournament.league.store import LeagueStore

from referee.v1 import referee_pb2 as pb

GOOD_BOT = textwrap.dedent('''
    """A hosted bot: uniformly random legal moves, with the SDK the league gives it."""
    import os
    import random
    import time

    from referee_client import Bot, run_bot


    class RandomBot(Bot):
        def choose(self, decision):
            time.sleep(0.03)  # a thinking bot: its matches last long enough to be caught mid-way
            return random.choice(list(decision.legal_moves))


    run_bot(RandomBot(), os.environ["REFEREE_ADDRESS"], os.environ["REFEREE_MATCH"],
            os.environ["REFEREE_TOKEN"])
''')
CRASHER = "import numpy_extra_magic  # not installed: it dies before its first move\n"


def _tgz(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _upload(stub, token: str, filename: str, data: bytes) -> pb.BotVersion:
    chunks = [pb.UploadBotChunk(header=pb.UploadBotHeader(filename=filename, size=len(data))),
              pb.UploadBotChunk(data=data)]
    return stub.UploadBot(iter(chunks), metadata=(("authorization", f"Bearer {token}"),),
                          timeout=30)


def _web_port(log: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if "web_serving" in line:
                return int(json.loads(line)["port"])
        time.sleep(0.1)
    raise AssertionError("the referee did not say where its web server is")


def _rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT idx, match_id, status FROM matches ORDER BY idx").fetchall()
    except sqlite3.OperationalError:  # the runner is still creating it
        return []
    finally:
        con.close()


def _wait(what: str, check, timeout: float = 120, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the league process exited ({proc.returncode})")
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def finished_league_folder(tmp_path: Path) -> Path:
    """A league run folder with one finished match, built through the league's store."""
    out = tmp_path / "league-x"
    out.mkdir()
    s = LeagueStore(out / "league.sqlite")
    s.set_meta({"name": "x", "format": "league", "settings": json.dumps(
        {"games": [{"name": "batavia", "seats": 2, "options": {}}], "time_policy": {}})})
    outcome = {"seats": [{"seat": 0, "entrant": "a", "moves": 5, "timeouts": 0},
                         {"seat": 1, "entrant": "b@1", "moves": 0, "timeouts": 3,
                          "crashed": True, "exit_code": 1, "error": "ValueError: boom"}]}
    s.intend(1, "batavia", ["a", "b@1"], 1)
    s.start(1, "m1", {})
    s.finish(1, {"match_id": "m1", "scores": [9, 3], "ranks": [1, 2], "outcome": outcome},
             [Rating("a", 27.0, 8.0, 1, 1.0), Rating("b@1", 23.0, 8.0, 1, 0.0)], [], {})
    s.close()
    return out


def session_bot(address: str, bot_token: str, env: dict[str, str]) -> subprocess.Popen:
    """A remote entrant: the Python SDK's ``referee-bot session random``, its bot token in its
    own environment only."""
    child = {k: v for k, v in env.items() if k != "REFEREE_ADMIN_TOKEN"}
    child["REFEREE_BOT_TOKEN"] = bot_token
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "referee-bot"), "session", "random", "--address",
         address, "--log-level", "warning"], env=child, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, cwd=os.getcwd())


def remote_league_toml(path: Path, league: str, address: str, schedule: str = "",
                       more: str = "") -> None:
    """The league file of :func:`remote_league`'s league: one match at a time, polled every
    0.2 s; ``schedule``: more lines of its ``[schedule]`` table, ``more``: of its ``[league]``
    table."""
    path.write_text(f'[league]\nname = "{league}"\nregistration = "closed"\n{more}\n'
                    + textwrap.dedent(f"""
        [referee]
        address = "{address}"
        [[games]]
        name = "santa_maria"
        seats = 2
        [schedule]
        concurrency = 1
        matches_per_minute = 600
        poll_s = 0.2
    """) + schedule)


def remote_league(address: str, admin_token: str, league: str, bots: list[str],
                  env: dict[str, str], procs: list[subprocess.Popen]) -> None:
    """Open a league of Santa Maria (2 seats, registration closed) on the referee at
    ``address`` and register ``bots`` in it as remote bots, each played by a session bot
    (added to ``procs``)."""
    import grpc

    from referee.v1 import referee_pb2_grpc as pb_grpc

    admin = (("authorization", f"Bearer {admin_token}"),)
    with grpc.insecure_channel(address) as ch:
        stub = pb_grpc.RefereeStub(ch)
        stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
            name=league, games=["santa_maria"], registration=pb.REGISTRATION_CLOSED)),
            metadata=admin, timeout=30)
        for name in bots:
            token = stub.RegisterBot(pb.RegisterBotRequest(
                name=name, league=league, kind=pb.BOT_KIND_REMOTE), metadata=admin,
                timeout=30).bot_token
            procs.append(session_bot(address, token, env))


def stop_all(procs: list[subprocess.Popen]) -> None:
    """Kill every process group a test started (bots, league runners) and reap them."""
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    for p in procs:
        p.wait(10)
