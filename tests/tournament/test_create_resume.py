"""The runner killed between CreateMatch and its reply (issue 22): it stored the match's
request_id before sending the call, so the run resumed against the same referee gets that match
back (CreateMatch is idempotent) instead of creating a second one; none is lost or doubled."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess

from ..reply_drop import ReplyDroppingProxy, stored_matches
from .conftest import RANDOM, cli_command, run_cli, write_toml


def test_a_runner_killed_before_the_reply_resumes_the_same_match(tmp_path):
    from referee_tournament.procs import LocalReferee

    referee = LocalReferee(tmp_path / "referee")
    referee.start()
    token = tmp_path / "admin.token"
    token.write_text(referee.admin_token + "\n")
    token.chmod(0o600)
    out = tmp_path / "res"
    toml = write_toml(tmp_path / "t.toml", f"""
        name = "lost-reply"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "a"
        command = "{RANDOM}"
        [[entrants]]
        name = "b"
        command = "{RANDOM}"
        [[entrants]]
        name = "c"
        command = "{RANDOM}"
        [format]
        seating = "rotate"
        rounds = 1
        [run]
        concurrency = 1
    """)
    runner: dict[str, subprocess.Popen] = {}
    proxy = ReplyDroppingProxy(referee.address,
                               on_drop=lambda: os.kill(runner["proc"].pid, signal.SIGKILL))
    try:
        runner["proc"] = subprocess.Popen(
            [*cli_command(), "run", str(toml), "--no-progress", "--address", proxy.address,
             "--admin-token-file", str(token)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert runner["proc"].wait(120) == -signal.SIGKILL
        (first,) = stored_matches(referee.data_dir)  # made, and its reply never arrived
        again = run_cli("run", str(toml), "--no-progress", "--address", referee.address,
                        "--admin-token-file", str(token))
        assert again.returncode == 0, again.stderr[-3000:]
        data = json.loads((out / "results.json").read_text())
        assert data["status"] == {"done": 3}
        con = sqlite3.connect(out / "tournament.sqlite")
        ran = [r[0] for r in con.execute("SELECT match_id FROM matches ORDER BY idx")]
        con.close()
        made = stored_matches(referee.data_dir)
        assert len(made) == 3 and sorted(ran) == sorted(made) and ran[0] == first
    finally:
        proxy.close()
        referee.stop()
