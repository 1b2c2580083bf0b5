"""A crashing bot and a hanging bot never stall the run and are recorded; a match past its
wall-clock limit is killed and recorded as failed."""
from __future__ import annotations

import asyncio
import json
import time

from referee_tournament.config import parse
from referee_tournament.runner import Runner

from .conftest import RANDOM

CRASH = ('{python} -c "import sys; sys.stderr.write(\'boom: bot exploded\\\\n\'); sys.exit(3)" '
         "{address} {match} {token}")
HANG = '{python} -c "import time; time.sleep(600)" {address} {match} {token}'


def _cfg(tmp_path, time_cfg, entrants):
    return parse({
        "name": "faults", "output": str(tmp_path / "out"),
        "game": {"name": "batavia", "seats": 3},
        "entrants": [{"name": n, "command": c} for n, c in entrants],
        "format": {"type": "round_robin", "seating": "rotate", "rounds": 1},
        "time": time_cfg,
        "run": {"concurrency": 3},
    }, base_dir=tmp_path)


def test_crashing_and_hanging_bots_do_not_stall_the_run(tmp_path, referee, quiet_console):
    cfg = _cfg(tmp_path,
               {"move_ms": 25, "grace_ms": 0, "on_expiry": "random_legal", "bot_grace_s": 0.5,
                "match_wall_s": 90},
               [("random", RANDOM), ("crasher", CRASH), ("hanger", HANG)])
    # (no time is asserted: the machine is shared; every match ending "done" rather than hitting
    # its wall-clock limit is what shows the run was not stalled)
    data = asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=quiet_console, progress=False).run())
    assert data["status"] == {"done": 3}  # the referee's time policy played for them
    rows = {e["name"]: e for e in data["leaderboard"]}
    assert rows["crasher"]["crashes"] == 3 and rows["crasher"]["hangs"] == 0
    assert rows["hanger"]["hangs"] == 3 and rows["hanger"]["crashes"] == 0
    assert rows["crasher"]["timeouts"] > 0 and rows["hanger"]["timeouts"] > 0
    # (the random bot may time out too at 25 ms a move on a busy machine)
    assert rows["random"]["crashes"] == rows["random"]["hangs"] == 0
    crashes = [i for i in data["incidents"] if i["entrant"] == "crasher"]
    assert len(crashes) == 3
    for i in crashes:
        assert i["exit_code"] == 3 and "crash" in i["what"]
        assert "boom: bot exploded" in i["stderr_tail"]
    hangs = [i for i in data["incidents"] if i["entrant"] == "hanger"]
    assert all("hung (killed)" in i["what"] for i in hangs)
    # the game record's timeout flags are the source of the counts
    out = tmp_path / "out"
    for m in data["matches"]:
        rec = json.loads((out / m["record"]).read_text())
        seat = m["seating"].index("crasher")
        assert any(x.get("timeout") for x in rec["moves"] if x["seat"] == seat)


def test_wall_clock_limit_kills_the_bots_and_fails_the_match(tmp_path, referee, quiet_console):
    cfg = _cfg(tmp_path, {"move_ms": 120000, "match_wall_s": 2, "bot_grace_s": 0},
               [("random", RANDOM), ("hanger", HANG), ("hanger2", HANG)])
    cfg = parse({**json.loads(cfg.raw_json), "format": {"seating": "rotate", "rounds": 1}},
                base_dir=tmp_path)
    data = asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=quiet_console, progress=False, max_matches=1).run())
    assert data["status"]["failed"] == 1
    failed = [m for m in data["matches"] if m["status"] == "failed"]
    assert "wall-clock limit" in failed[0]["error"]
    assert any(i["what"] == ["match failed"] for i in data["incidents"])
    assert {i["entrant"] for i in data["incidents"] if i.get("entrant")} >= {"hanger"}


def test_a_dead_referee_stops_the_run_without_failing_matches(tmp_path, quiet_console,
                                                              monkeypatch):
    import sqlite3
    import threading

    import pytest
    from referee_tournament import play
    from referee_tournament.procs import LocalReferee
    from referee_tournament.runner import RunError

    monkeypatch.setattr(play, "REFEREE_DOWN_S", 1.0)
    ref = LocalReferee(tmp_path / "ref").start()
    cfg = _cfg(tmp_path, {"move_ms": 5000},
               [("a", RANDOM), ("b", RANDOM + " --give-up-after 3")])
    db = tmp_path / "out" / "tournament.sqlite"

    def kill_after_first_match():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                con = sqlite3.connect(db, timeout=5)
                n = con.execute("SELECT COUNT(*) FROM matches WHERE status='done'").fetchone()[0]
                con.close()
                if n >= 1:
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.05)
        ref.proc.kill()

    killer = threading.Thread(target=kill_after_first_match, daemon=True)
    killer.start()
    try:
        with pytest.raises(RunError, match="resume"):
            asyncio.run(Runner(cfg, address=ref.address, admin_token=ref.admin_token,
                               console=quiet_console, progress=False).run())
    finally:
        killer.join(10)
        ref.stop()
    con = sqlite3.connect(db)
    st = dict(con.execute("SELECT status, COUNT(*) FROM matches GROUP BY status"))
    con.close()
    assert st.get("done", 0) >= 1 and st.get("failed", 0) == 0 and st.get("running", 0) == 0
    assert st.get("pending", 0) >= 1


def _one_match_with(bot_script: str, name: str, tmp_path, referee, quiet_console) -> dict:
    """One match of the bot ``tests/tournament/bots/<bot_script>`` (entrant ``name``) against
    two random bots; the run's report data."""
    from pathlib import Path

    bot = Path(__file__).parent / "bots" / bot_script
    cfg = _cfg(tmp_path, {"move_ms": 5000},
               [(name, f"{{python}} {bot} {{address}} {{match}} {{token}}"),
                ("a", RANDOM), ("b", RANDOM)])
    data = asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=quiet_console, progress=False, max_matches=1).run())
    assert data["status"]["done"] == 1
    return data


def test_rejected_moves_are_counted_per_entrant(tmp_path, referee, quiet_console):
    data = _one_match_with("sloppy_bot.py", "sloppy", tmp_path, referee, quiet_console)
    rows = {e["name"]: e for e in data["leaderboard"]}
    assert rows["sloppy"]["rejected"] == 2
    assert rows["a"]["rejected"] == rows["b"]["rejected"] == 0
    inc = [i for i in data["incidents"] if i["entrant"] == "sloppy"]
    assert inc and "rejected=2" in inc[0]["what"] and "STALE_STATE" in inc[0]["stderr_tail"]


def test_a_refused_move_is_an_incident_of_its_entrant_with_the_referees_reason(
        tmp_path, referee, quiet_console):
    """Issue 20: the SDK sends the bot's illegal answer, the referee refuses it, and the
    tournament reports it per entrant with the referee's reason and the rule's message."""
    import html

    data = _one_match_with("wrong_first_bot.py", "wrong", tmp_path, referee, quiet_console)
    rows = {e["name"]: e for e in data["leaderboard"]}
    assert rows["wrong"]["rejected"] == 1 and rows["a"]["rejected"] == 0
    inc = [i for i in data["incidents"] if i["entrant"] == "wrong"]
    assert inc and "rejected=1" in inc[0]["what"]
    refusal = next(w for w in inc[0]["what"] if w.startswith("move rejected: "))
    assert refusal.startswith("move rejected: ILLEGAL_MOVE: ") and "bid" in refusal
    page = next((tmp_path / "out").glob("*.html")).read_text()
    assert html.escape(refusal) in page  # in the report's incidents table
