"""Issue 19, item 2: each upload is a new version, checked by a smoke match before it plays;
ratings are per version and the current one plays. A version that crashes at start fails its
check with its error line; the next, good version passes and plays, rated apart."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import textwrap

import grpc
import pytest
from referee_tournament.procs import LocalReferee
from referee_tournament.sandbox import unavailable_reason

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from ..tournament.conftest import cli_command
from .helpers import CRASHER, GOOD_BOT, _rows, _tgz, _upload, _wait, session_bot, stop_all

pytestmark = pytest.mark.skipif(unavailable_reason() is not None,
                                reason=f"no sandbox here: {unavailable_reason()}")


def test_a_crashing_upload_fails_its_check_and_the_next_version_plays(tmp_path):
    ref = LocalReferee(tmp_path / "ref").start()
    procs: list[subprocess.Popen] = []
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    try:
        league_file = tmp_path / "league.toml"
        (tmp_path / "admin.token").write_text(ref.admin_token)
        league_file.write_text(textwrap.dedent(f"""
            [league]
            name = "versions"
            registration = "open"
            [referee]
            address = "{ref.address}"
            unix_socket = "{ref.unix_socket}"
            admin_token_file = "admin.token"
            [[games]]
            name = "santa_maria"
            seats = 2
            [schedule]
            matches_per_minute = 600
            poll_s = 0.2
            [smoke]
            join_timeout_s = 30
        """))
        out = tmp_path / "out"
        serve = subprocess.Popen([*cli_command(), "league", "serve", str(league_file), "--out",
                                  str(out)], env=env, stdout=subprocess.DEVNULL,
                                 stderr=open(tmp_path / "serve.log", "w"),  # noqa: SIM115
                                 start_new_session=True)
        procs.append(serve)
        with grpc.insecure_channel(ref.address) as ch:
            stub = pb_grpc.RefereeStub(ch)
            admin = (("authorization", f"Bearer {ref.admin_token}"),)

            def league_open() -> bool:
                try:
                    stub.GetLeague(pb.GetLeagueRequest(name="versions"), timeout=5)
                except grpc.RpcError:
                    return False
                return True

            _wait("the league to open", league_open, 60)
            tokens = {n: stub.RegisterBot(pb.RegisterBotRequest(
                name=n, league="versions", kind=k), timeout=30).bot_token
                for n, k in (("remote", pb.BOT_KIND_REMOTE), ("hosted", pb.BOT_KIND_HOSTED))}
            procs.append(session_bot(ref.address, tokens["remote"], env))
            v1 = _upload(stub, tokens["hosted"], "bot.tgz", _tgz({
                "bot.toml": 'runtime = "python"\ncommand = ["bot.py"]\n', "bot.py": CRASHER}))

            def version(n: int) -> pb.BotVersion:
                bots = stub.ListLeagueBots(pb.ListLeagueBotsRequest(league="versions"),
                                           metadata=admin, timeout=30).bots
                b = next(b for b in bots if b.name == "hosted")
                return next(v for v in b.versions if v.version == n)

            _wait("v1's check", lambda: version(v1.version).status != pb.VERSION_PENDING)
            failed = version(v1.version)
            assert failed.status == pb.VERSION_FAILED
            assert "ModuleNotFoundError: No module named 'numpy_extra_magic'" in failed.message
            assert not _rows(out / "league.sqlite")  # a failed version never plays
            v2 = _upload(stub, tokens["hosted"], "bot.py", GOOD_BOT.encode())
            assert v2.version == v1.version + 1
            _wait("v2 to play 2 matches", lambda: sum(
                r[2] == "done" for r in _rows(out / "league.sqlite")) >= 2)
            assert version(v2.version).status == pb.VERSION_READY
        con = sqlite3.connect(f"file:{out / 'league.sqlite'}?mode=ro", uri=True)
        keys = {k for (k,) in con.execute("SELECT key FROM ratings")}
        con.close()
        assert keys == {"remote", f"hosted@{v2.version}"}  # rated per version
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(60) == 130
    finally:
        stop_all(procs)
        ref.stop()
