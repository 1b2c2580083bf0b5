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


def test_a_bot_that_never_joins_is_given_up_on_after_the_join_timeout(tmp_path, referee,
                                                                       quiet_console):
    data = _run(tmp_path, referee, quiet_console,
                [("random", RANDOM), ("hanger", HANG), ("random2", RANDOM)], "forfeit",
                join_timeout_s=1)
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
