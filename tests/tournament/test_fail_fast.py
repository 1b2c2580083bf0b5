"""Fail fast and say why (issue 12): a bot whose process exits, or that never joins within the
join timeout, is given up on at once (AbandonSeat) instead of being played on a long clock; the
incident names the bot's real error line.

No time is asserted: the per-move clock (120 s) is longer than the match's wall-clock limit, so
a match that waited for a dead bot's clock would end "failed by the wall-clock limit", not
"done"."""
from __future__ import annotations

import asyncio

from referee_tournament.config import parse
from referee_tournament.play import error_line
from referee_tournament.runner import Runner

from .conftest import RANDOM

CRASH = ('{python} -c "import sys; print(\'loading weights\'); '
         'sys.exit(\'error: weights.bin not found\')" {address} {match} {token}')
HANG = '{python} -c "import time; time.sleep(600)" {address} {match} {token}'


def _run(tmp_path, referee, quiet_console, entrants, on_expiry, **time_cfg):
    cfg = parse({
        "name": "failfast", "output": str(tmp_path / "out"),
        "game": {"name": "batavia", "seats": 3},
        "entrants": [{"name": n, "command": c} for n, c in entrants],
        "format": {"type": "round_robin", "seating": "rotate", "rounds": 1},
        "time": {"move_ms": 120000, "on_expiry": on_expiry, "match_wall_s": 60,
                 "bot_grace_s": 0.5, **time_cfg},
    }, base_dir=tmp_path)
    return asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=quiet_console, progress=False, max_matches=1).run())


def test_a_crashed_bot_forfeits_at_once_and_its_error_is_shown(tmp_path, referee, quiet_console):
    data = _run(tmp_path, referee, quiet_console,
                [("random", RANDOM), ("crasher", CRASH), ("random2", RANDOM)], "forfeit")
    assert data["status"]["done"] == 1 and not data["status"].get("failed")
    crash = [i for i in data["incidents"] if i["entrant"] == "crasher"]
    assert crash and all(i["error"] == "error: weights.bin not found" for i in crash)
    assert any("forfeit" in i["what"] for i in crash)


def test_a_crashed_bot_is_played_by_the_policy_at_once(tmp_path, referee, quiet_console):
    data = _run(tmp_path, referee, quiet_console,
                [("random", RANDOM), ("crasher", CRASH), ("random2", RANDOM)], "random_legal")
    assert data["status"]["done"] == 1 and not data["status"].get("failed")
    (row,) = [e for e in data["leaderboard"] if e["name"] == "crasher"]
    assert row["timeouts"] > 0 and row["forfeits"] == 0


def test_a_trusted_bot_does_not_inherit_the_runners_admin_token(tmp_path, referee,
                                                                  quiet_console, monkeypatch):
    """A bot that is not sandboxed inherits the runner's environment (PATH, virtual
    environment), but never the referee's admin token the runner may hold: the bot reports what
    it sees as its error line."""
    monkeypatch.setenv("REFEREE_ADMIN_TOKEN", "runner-secret")
    monkeypatch.setenv("RUNNER_SETTING", "kept")
    tell = ('{python} -c "import os, sys; sys.exit(\'error: admin=%s setting=%s\' % '
            '(os.environ.get(\'REFEREE_ADMIN_TOKEN\'), os.environ.get(\'RUNNER_SETTING\')))" '
            '{address} {match} {token}')
    data = _run(tmp_path, referee, quiet_console,
                [("random", RANDOM), ("teller", tell), ("random2", RANDOM)], "forfeit")
    told = {i["error"] for i in data["incidents"] if i["entrant"] == "teller"}
    assert told == {"error: admin=None setting=kept"}


def test_a_bot_that_never_joins_is_given_up_on_after_the_join_timeout(tmp_path, referee,
                                                                       quiet_console):
    data = _run(tmp_path, referee, quiet_console,
                [("random", RANDOM), ("hanger", HANG), ("random2", RANDOM)], "forfeit",
                join_timeout_s=10)  # not 1: a loaded machine took longer to start the random
    # bots, which were then given up on first, and their forfeit ended the match
    assert data["status"]["done"] == 1 and not data["status"].get("failed")
    assert any("forfeit" in i["what"] for i in data["incidents"] if i["entrant"] == "hanger")


def test_error_line_finds_what_went_wrong():
    tb = ("starting\nTraceback (most recent call last):\n  File \"bot.py\", line 1\n"
          "    import numpy\nModuleNotFoundError: No module named 'numpy'\n")
    assert error_line(tb) == "ModuleNotFoundError: No module named 'numpy'"
    assert error_line("hi\nError: Cannot find module 'grpc'\n    at x\n") == \
        "Error: Cannot find module 'grpc'"
    assert error_line("panic: runtime error: index out of range\n") .startswith("panic")
    assert error_line("just\nlast line\n") == "last line"
    assert error_line("") == ""


# ---------------------------------------------------------------- a dead bot fails the run

def _row(idx, seating, seats, status="done"):
    from referee_tournament.store import Row

    n = len(seating)
    return Row(idx=idx, round=0, group="g", table=tuple(sorted(seating)), seating=seating,
               seed=1, status=status, attempts=1, match_id=f"m{idx}", referee=None, seconds=1.0,
               scores=[1] * n, ranks=list(range(1, n + 1)), outcome={"seats": seats},
               record_path=None, error=None, finished=1.0)


def _seat(seat, entrant, moves=5, timeouts=0, **kw):
    return {"seat": seat, "entrant": entrant, "exit_code": kw.get("exit_code"),
            "crashed": kw.get("crashed", False), "hung": False, "start_error": None,
            "timeouts": timeouts, "moves": moves, "rejected": 0,
            "forfeited": kw.get("forfeited", False), "abandoned": kw.get("abandoned", ""),
            "error": kw.get("error", "")}


def test_an_entrant_is_marked_only_when_it_played_none_of_its_matches():
    from referee_tournament import report

    rows = [
        _row(0, ("good", "flaky", "dead", "ghost"), [
            _seat(0, "good"), _seat(1, "flaky", crashed=True, exit_code=1, error="boom"),
            _seat(2, "dead", moves=0, crashed=True, exit_code=1, forfeited=True,
                  error="error: weights.bin not found"),
            _seat(3, "ghost", moves=4, timeouts=4)]),  # a persistent seat nobody played
        _row(1, ("good", "flaky", "dead", "ghost"), [
            _seat(0, "good"), _seat(1, "flaky"),
            _seat(2, "dead", moves=3, timeouts=3, abandoned="exited", exit_code=0),
            _seat(3, "ghost", moves=0, abandoned="never joined")]),
    ]
    data = report.compute(rows, ["good", "flaky", "dead", "ghost"])
    board = {e["name"]: e for e in data["leaderboard"]}
    assert {n for n, e in board.items() if e["crashed_in_every_match"]} == {"dead", "ghost"}
    assert board["dead"]["note"] == "crashed in every match" and "note" not in board["flaky"]
    dead = {d["entrant"]: d for d in data["crashed_in_every_match"]}
    assert set(dead) == {"dead", "ghost"}
    assert dead["dead"]["error"] == "error: weights.bin not found" and dead["dead"]["seats"] == 2
    assert any("never joined" in i["what"] for i in data["incidents"] if i["entrant"] == "ghost")


def test_a_tournament_of_a_bot_that_exits_at_once_exits_1_and_marks_it(tmp_path, referee):
    import json

    from .conftest import run_cli, write_toml

    out = tmp_path / "out"
    cfg = write_toml(tmp_path / "t.toml", f"""
        name = "dead-bot"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "random"
        command = "{RANDOM}"
        [[entrants]]
        name = "crasher"
        command = '''{CRASH}'''
        [[entrants]]
        name = "random2"
        command = "{RANDOM}"
        [format]
        seating = "rotate"
        [time]
        move_ms = 120000
        on_expiry = "forfeit"
        """)
    done = run_cli("run", str(cfg), "--no-progress", "--address", referee.address,
                   "--admin-token", referee.admin_token, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "crasher crashed in every match" in done.stderr
    assert "error: weights.bin not found" in done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == {"done": 3}  # every match ended (crasher forfeited at once)
    board = {e["name"]: e for e in results["leaderboard"]}
    assert board["crasher"]["note"] == "crashed in every match"
    assert not board["random"]["crashed_in_every_match"]
    assert [d["entrant"] for d in results["crashed_in_every_match"]] == ["crasher"]
    assert "crasher (crashed in every match)" in (out / "leaderboard.txt").read_text()
