"""`referee-bot play`: the local dev loop in one line (issue 12, item 5).

Each test runs the real command as a user would: it starts its own referee process, plays one
match with the bot processes, and prints the result, the record and a replay page."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MYBOT = ROOT / "examples" / "bots" / "mybot.py"


def play(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "referee_tools.bot_cli", "play", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=timeout, check=False,
    )


def test_plays_a_match_and_prints_result_record_and_replay(tmp_path):
    done = play(tmp_path, "--game", "batavia", "--me", f"python {MYBOT}", "--vs", "greedy",
                "--vs", "random", "--seed", "5", "--workdir", "w")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "batavia, 3 seats, seed 5" in out
    assert "watch live: http://127.0.0.1:" in out
    ranks = [line for line in out.splitlines() if line.startswith("  #")]
    assert len(ranks) == 3 and any(" me " in line for line in ranks)
    assert any("greedy-batavia" in line for line in ranks)  # `greedy` is the game's greedy bot
    record_line = next(line for line in out.splitlines() if line.startswith("record: "))
    record = json.loads((tmp_path / record_line.split(": ", 1)[1]).read_text())
    assert record["game"] == "batavia" and str(record["seed"]) == "5" and record["result"]
    # every move of seat 0 was the bot's own, none made by the time policy
    assert not [m for m in record["moves"] if m.get("seat") == 0 and m.get("timeout")]
    replay_line = next(line for line in out.splitlines() if line.startswith("replay: "))
    assert (tmp_path / replay_line.split(": ", 1)[1]).read_text().startswith("<!")


def test_placeholders_and_environment_reach_the_bot(tmp_path):
    # With a placeholder nothing is appended: mybot.py reads $REFEREE_ADDRESS, $REFEREE_MATCH
    # and $REFEREE_TOKEN from its environment.
    done = play(tmp_path, "--game", "goa", "--me", f"python {MYBOT} --seed {{seed}}",
                "--vs", "random", "--seed", "2", "--seat", "1", "--workdir", "w", "--no-web")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "seat 1  me" in done.stdout and "watch live" not in done.stdout


def test_a_crashing_bot_fails_fast_with_its_error_line(tmp_path):
    (tmp_path / "bad.py").write_text("import no_such_module_for_the_test\n")
    done = play(tmp_path, "--game", "batavia", "--me", "python bad.py", "--vs", "random",
                "--vs", "random", "--seed", "3", "--workdir", "w",
                "--move-ms", "600000")  # only giving up at once can finish this match
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ModuleNotFoundError: No module named 'no_such_module_for_the_test'" in done.stdout
    assert "your bot crashed" in done.stdout
    assert any(line.startswith("  #") for line in done.stdout.splitlines())  # the match ended


@pytest.mark.parametrize(("args", "message"), [
    (["--game", "goa", "--vs", "greedy-batavia"],
     "greedy-batavia plays batavia only, not goa (for goa use greedy-goa)"),
    (["--game", "goa", "--vs", "random", "--option", "bogus=1"], "unknown option(s) 'bogus'"),
    (["--game", "goa", "--vs", "random", "--option", "edition=2099"],
     "option 'edition' takes one of 2012, 2004"),
    (["--game", "chess", "--vs", "random"], "unknown game 'chess'"),
    (["--game", "batavia", "--vs", "random"], "batavia is for 3 to 5 seats, not 2"),
    (["--game", "goa", "--vs", "random", "--seat", "2"], "--seat 2: there are 2 seats"),
    (["--game", "goa"], "give at least one opponent with --vs"),
])
def test_bad_usage_exits_2_with_one_clear_line_and_leaves_nothing(tmp_path, args, message):
    done = play(tmp_path, "--me", f"python {MYBOT}", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs" / "play").iterdir())


def test_a_missing_program_is_named(tmp_path):
    done = play(tmp_path, "--game", "goa", "--me", "no-such-bot-program --x", "--vs", "random")
    assert done.returncode == 2
    assert "--me: command 'no-such-bot-program' not found" in done.stderr


BID_999_BOT = '''\
"""Answers a bid of 999 ducats every time, whatever the decision (issue 20)."""
import os

from referee_client import Bot, run_bot

from referee.v1 import batavia_pb2, referee_pb2


class Bid999(Bot):
    def choose(self, decision):
        self.note("all in")
        return referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999)))


run_bot(Bid999(), os.environ["REFEREE_ADDRESS"], os.environ["REFEREE_MATCH"],
        os.environ["REFEREE_TOKEN"])
'''


def test_a_bot_whose_moves_are_refused_exits_1_with_the_refused_move_incident(tmp_path):
    """Issue 20: a bot answering `bid 999` every time used to exit 0 (the SDK played the first
    legal move for it). Now the referee refuses each answer; after the SDK's bounded re-asks the
    time policy forfeits the seat, and `play` exits 1 naming the referee's reason and rule."""
    (tmp_path / "bid999.py").write_text(BID_999_BOT)
    done = play(tmp_path, "--game", "batavia", "--me", "python bid999.py {seed}", "--vs",
                "random", "--vs", "random", "--seed", "4", "--workdir", "w", "--no-web",
                "--move-ms", "300", "--on-expiry", "forfeit", timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "incident: the referee refused 3 move(s) of your bot" in out, out
    first = next(line for line in out.splitlines() if line.startswith("  first: "))
    assert "move rejected: ILLEGAL_MOVE: " in first, first  # the referee's reason...
    assert len(first) > len("  first: move rejected: ILLEGAL_MOVE: ") + 5  # ...and its message
    me = next(line for line in out.splitlines() if line.startswith("  #") and " me " in line)
    assert "3 move(s) refused by the referee" in me and "forfeited" in me
    assert "your bot did not play every move itself" in out


def test_without_a_terminal_play_does_not_wait_and_says_what_keeps_the_viewer(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "referee_tools.bot_cli", "play", "--game", "goa", "--me",
         f"python {MYBOT}", "--vs", "random", "--seed", "3", "--workdir", "w"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "--keep-open keeps it up" in done.stdout


def test_from_a_terminal_play_keeps_its_viewer_open_until_enter(tmp_path):
    """Issue 20, item 5: the link `play` prints works after the match, until the user presses
    Enter (stdin a terminal, here a pseudo-terminal)."""
    import os
    import pty
    import re
    import urllib.request

    from .conftest import read_until

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee_tools.bot_cli", "play", "--game", "goa", "--me",
         f"python {MYBOT}", "--vs", "random", "--seed", "3", "--workdir", "w"],
        cwd=tmp_path, stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    os.close(follower)
    try:
        text = read_until(proc, "press Enter", 240)
        link = re.search(r"http://127\.0\.0\.1:\d+/matches/\w+", text)
        assert link, text
        with urllib.request.urlopen(link.group(0), timeout=30) as page:  # the viewer is up
            assert page.status == 200 and "<html" in page.read().decode().lower()
        assert proc.poll() is None
        os.write(leader, b"\n")
        assert proc.wait(60) == 0, text
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
