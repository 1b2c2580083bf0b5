"""The league runner killed between CreateMatch and its reply (issue 22): it stored the call's
request_id before sending it, so the restarted runner sends the same call again and gets the
match the first one made (CreateMatch is idempotent): played once, rated once, never created
twice. A match being created with no request_id (a database from before them) or whose call
the referee refuses when sent again (here: its request_id was used for another request) is
marked lost, with the reason in the league's log."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess

from referee_tournament.procs import LocalReferee

from ..reply_drop import ReplyDroppingProxy, stored_matches
from ..tournament.conftest import cli_command
from .helpers import remote_league, remote_league_toml, stop_all

LEAGUE = "resend"


def test_a_runner_killed_before_the_reply_plays_and_rates_that_match_once(tmp_path):
    ref = LocalReferee(tmp_path / "ref").start()
    procs: list[subprocess.Popen] = []
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    env["REFEREE_ADMIN_TOKEN"] = ref.admin_token  # the runner's own environment only
    out = tmp_path / "run"
    db = out / "league.sqlite"
    toml = tmp_path / "league.toml"

    def serve(address: str, max_matches: int) -> subprocess.Popen:
        remote_league_toml(toml, LEAGUE, address, f"max_matches = {max_matches}\n")
        p = subprocess.Popen([*cli_command(), "league", "serve", str(toml), "--out", str(out)],
                             env=env, stdout=subprocess.DEVNULL,
                             stderr=open(tmp_path / "serve.log", "a"),  # noqa: SIM115
                             start_new_session=True)
        procs.append(p)
        return p

    runner: dict[str, subprocess.Popen] = {}
    # the first CreateMatch reaches the referee, which makes the match; the runner is killed
    # before its reply arrives
    proxy = ReplyDroppingProxy(ref.address,
                               on_drop=lambda: os.killpg(runner["proc"].pid, signal.SIGKILL))
    try:
        remote_league(ref.address, ref.admin_token, LEAGUE, ["r0", "r1"], env, procs)
        runner["proc"] = serve(proxy.address, 1)
        assert runner["proc"].wait(120) == -signal.SIGKILL
        (first,) = stored_matches(ref.data_dir)  # made, and its reply never arrived
        con = sqlite3.connect(db)
        (row,) = con.execute("SELECT idx, status, match_id, request_id, game, seating, seed"
                             " FROM matches").fetchall()
        assert row[:3] == (1, "creating", None) and row[3]
        # two more rows a restarted runner finds being created: one from before request ids,
        # one whose request_id the referee already knows for another request
        con.execute("INSERT INTO matches (idx, game, seating, seed, status, started)"
                    " VALUES (2, ?, ?, ?, 'creating', 0)", row[4:])
        con.execute("INSERT INTO matches (idx, game, seating, seed, status, started,"
                    " request_id) VALUES (3, ?, ?, '12345', 'creating', 0, ?)",
                    (row[4], row[5], row[3]))
        con.commit()
        con.close()

        again = serve(ref.address, 4)  # the three rows count: one new match after them
        assert again.wait(180) == 0, (tmp_path / "serve.log").read_text()[-3000:]
        con = sqlite3.connect(db)
        rows = con.execute("SELECT idx, status, match_id, error FROM matches ORDER BY idx"
                           ).fetchall()
        rated = dict(con.execute("SELECT match_id, COUNT(*) FROM history GROUP BY match_id"))
        con.close()
        assert [r[:2] for r in rows] == [(1, "done"), (2, "lost"), (3, "lost"), (4, "done")]
        assert rows[0][2] == first  # the match the lost reply was for, played to its end
        made = stored_matches(ref.data_dir)
        assert len(made) == 2 and made[0] == first and rows[3][2] == made[1]  # none twice
        assert rated == {first: 2, made[1]: 2}  # each rated once: one entry per seat
        assert "before request ids" in rows[1][3]
        assert "REQUEST_ID_REUSED" in rows[2][3] or "different CreateMatch" in rows[2][3]
        log = [json.loads(line) for line in (out / "league.log").read_text().splitlines()
               if line.startswith("{")]
        lost = {d["idx"]: d["error"] for d in log if d.get("event") == "match_lost"}
        assert set(lost) == {2, 3}
        assert [d["idx"] for d in log if d.get("event") == "match_resend"] == [1, 3]
    finally:
        proxy.close()
        stop_all(procs)
        ref.stop()
