"""`referee-bot play`: the local dev loop in one line (issue 12, item 5).

Each test runs the real command as a user would: it starts its own referee process, plays one
match with the bot processes, and prints the result, the record and a replay page."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
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
    (["--game", "goa", "--vs", "random", "--me", "human", "--no-web"],
     "--me human plays in the browser: drop --no-web"),
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
    time policy forfeits the seat (--keep-going: the match plays on), and `play` exits 1 naming
    the referee's reason and rule."""
    (tmp_path / "bid999.py").write_text(BID_999_BOT)
    done = play(tmp_path, "--game", "batavia", "--me", "python bid999.py {seed}", "--vs",
                "random", "--vs", "random", "--seed", "4", "--workdir", "w", "--no-web",
                "--move-ms", "300", "--on-expiry", "forfeit", "--keep-going", timeout=120)
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


EMPTY_BOT = """\
import os

from referee_client import Bot, run_bot

from referee.v1 import referee_pb2


class Empty(Bot):
    def choose(self, decision):
        return referee_pb2.Move()


run_bot(Empty(), os.environ["REFEREE_ADDRESS"], os.environ["REFEREE_MATCH"],
        os.environ["REFEREE_TOKEN"])
"""

#: answers one illegal move, then nothing (no SDK: its log never says it stopped answering)
SILENT_BOT = """\
import os
import time

import grpc

from referee.v1 import batavia_pb2, referee_pb2, referee_pb2_grpc

channel = grpc.insecure_channel(os.environ["REFEREE_ADDRESS"])
stub = referee_pb2_grpc.RefereeStub(channel)
token = (("authorization", "Bearer " + os.environ["REFEREE_TOKEN"]),)
decision = None
while decision is None:
    try:
        decision = stub.GetLegalMoves(referee_pb2.GetLegalMovesRequest(
            match_id=os.environ["REFEREE_MATCH"]), metadata=token)
    except grpc.RpcError:
        time.sleep(0.2)
        continue
    if not decision.legal_moves:
        decision = None
        time.sleep(0.2)
bid = referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999)))
try:
    stub.SubmitMove(referee_pb2.SubmitMoveRequest(
        match_id=os.environ["REFEREE_MATCH"], state_version=decision.state_version, move=bid),
        metadata=token)
except grpc.RpcError:
    pass  # refused (the unary call's error status): the bot says nothing and waits
time.sleep(600)
"""


@pytest.mark.parametrize(("bot", "game", "reason"), [
    (EMPTY_BOT, "goa", "move rejected: MALFORMED: "),
    (BID_999_BOT, "batavia", "move rejected: ILLEGAL_MOVE: "),
])
def test_a_bot_that_gives_up_on_refused_answers_stops_play_within_seconds(tmp_path, bot, game,
                                                                         reason):
    """Issue 33 item 3: a bot answering empty (or illegal) moves kept `play` running past 5
    minutes, the time policy waiting out the move clock at every decision the SDK no longer
    answered. Now `play` stops at the first decision its bot gives up on, exit 1, naming the
    referee's reason and rule text. The move clock here is 10 minutes: only stopping at once
    ends this test in time."""
    (tmp_path / "refused.py").write_text(bot)
    done = play(tmp_path, "--game", game, "--me", "python refused.py {seed}", "--vs", "random",
                "--vs", "random", "--seed", "4", "--workdir", "w", "--no-web",
                "--move-ms", "600000", timeout=90)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "stopped: your bot gave up on a decision" in out, out
    refused = next(line for line in out.splitlines() if line.startswith("  refused: "))
    assert reason in refused and len(refused) > len("  refused: ") + len(reason) + 5, refused
    assert "--keep-going" in out
    assert not any(line.startswith("  #") for line in out.splitlines())  # no result: stopped


def test_a_bot_that_falls_silent_after_a_refusal_stops_play_too(tmp_path):
    """A bot without an SDK, whose log never says it gave up: the referee's count of refused
    answers and a decision left unanswered for seconds after it stop `play` all the same."""
    (tmp_path / "silent.py").write_text(SILENT_BOT)
    done = play(tmp_path, "--game", "batavia", "--me", "python silent.py {seed}", "--vs",
                "random", "--vs", "random", "--seed", "4", "--workdir", "w", "--no-web",
                "--move-ms", "600000", timeout=90)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "stopped: your bot gave up on a decision: it has not answered for" in done.stdout
    assert "the referee refused 1 answer(s) of seat 0" in done.stdout


TOKEN_BOT = """\
import hashlib
import os
import runpy
import sys

with open("seen-token.txt", "w") as f:
    f.write(hashlib.sha256(os.environ["REFEREE_TOKEN"].encode()).hexdigest())
with open("seen-address.txt", "w") as f:
    f.write(os.environ["REFEREE_ADDRESS"])
sys.argv = [sys.argv[1]] + sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_delay_ms_holds_every_answer_back_and_prints_the_link_to_the_own_seat(tmp_path):
    """Issue 33 item 2: with --delay-ms the bots reach the referee through the proxy that holds
    their answers back (tests/client/test_delay_proxy.py), and the move clock is lengthened by
    as much; `play` prints the page of the author's own seat, read-only (`&watch=1`), its
    token the one the bot was given."""
    import hashlib
    import re
    from urllib.parse import parse_qs

    (tmp_path / "tokenbot.py").write_text(TOKEN_BOT)
    done = play(tmp_path, "--game", "goa", "--me", f"python tokenbot.py {MYBOT}", "--vs",
                "random", "--seed", "3", "--workdir", "w", "--delay-ms", "40",
                "--no-open", timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    link = re.search(r"your bot's seat live \(its view and notes\): "
                     r"(http://127\.0\.0\.1:\d+/play/(\w+))#(\S+)", out)
    assert link, out
    fragment = parse_qs(link.group(3))
    assert fragment["watch"] == ["1"]
    token = fragment["token"][0]
    assert hashlib.sha256(token.encode()).hexdigest() == (tmp_path / "seen-token.txt").read_text()
    record_line = next(line for line in out.splitlines() if line.startswith("record: "))
    record = json.loads((tmp_path / record_line.split(": ", 1)[1]).read_text())
    assert record["match_id"] == link.group(2)
    assert record["time_policy"]["move_ms"] == 10_000 + 40
    referee = re.search(r"referee (127\.0\.0\.1:\d+)", out)
    assert referee, out
    bot_address = (tmp_path / "seen-address.txt").read_text()
    assert bot_address.startswith("127.0.0.1:") and bot_address != referee.group(1)


def _processes_holding(secret: str) -> list[str]:
    """The processes of this machine (that this user may read) with ``secret`` on their
    command line or in their environment."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        for part in ("cmdline", "environ"):
            try:
                data = (proc / part).read_bytes()
            except OSError:
                continue
            if secret.encode() in data:
                found.append(f"{proc.name} {part}: {data[:200]!r}")
    return found


BROWSER_SCRIPT = """#!/bin/sh
printf '%s\\n' "$@" > "{out}"
"""


def test_me_human_prints_and_opens_the_seat_page_and_waits_for_the_end(tmp_path):
    """Issue 33 item 3: `--me human` starts no process for the person's seat, prints the play
    page of that seat (the token in the fragment) and opens it through a private file (the
    browser's command line holds no token); the token is on no command line and in no
    environment; the match has no move clock; `play` waits for the end (here the seat is played
    through the protocol with the printed token, as the page does) and prints the result."""
    import re
    import signal
    import threading
    import urllib.request
    from urllib.parse import parse_qs

    from referee_client import run_bot
    from referee_client.bots import BOTS

    from .conftest import read_until

    browser = tmp_path / "browser.sh"
    browser.write_text(BROWSER_SCRIPT.format(out=tmp_path / "browser-args.txt"))
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": str(browser)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee_tools.bot_cli", "play", "--game", "goa", "--me",
         "human", "--vs", "greedy", "--seed", "3", "--workdir", "w", "--open"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=env)
    try:
        text = read_until(proc, "playing...", 120)
        assert "time policy: no move clock" in text, text
        assert "seat 0  you" in text
        page = re.search(r"your seat's page \(play here\): (http://127\.0\.0\.1:(\d+)/play/"
                         r"([0-9a-f]+))#(\S+)", text)
        assert page, text
        base, mid = f"http://127.0.0.1:{page.group(2)}", page.group(3)
        fragment = parse_qs(page.group(4))
        assert set(fragment) == {"token"}  # a seat to play, not to watch
        token = fragment["token"][0]
        # the token is seat 0's: the referee's notes API names the seat of the bearer
        request = urllib.request.Request(f"{base}/api/matches/{mid}/notes",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.loads(answer.read())["seat"] == 0
        assert _processes_holding(token) == []
        # the browser was given a private file that sends it on, not the address
        deadline = time.monotonic() + 30
        while not (tmp_path / "browser-args.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        args = (tmp_path / "browser-args.txt").read_text()
        assert token not in args and args.startswith("file://"), args
        opened = Path(args.strip().removeprefix("file://"))
        assert oct(opened.stat().st_mode & 0o777) == "0o600"
        assert json.dumps(page.group(0).split(": ", 1)[1]) in opened.read_text()
        # play the seat (as the page would) to the end: play prints the result and exits 0
        done = threading.Thread(target=run_bot, daemon=True, args=(
            BOTS["random"](None), f"127.0.0.1:{_grpc_port(text)}", mid, token))
        done.start()
        rest = read_until(proc, "bot logs:", 240)
        assert re.search(r"  #\d seat 0 you ", rest), rest
        assert proc.wait(60) == 0
        assert not opened.exists()  # removed at the end
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _grpc_port(text: str) -> str:
    import re

    found = re.search(r"referee 127\.0\.0\.1:(\d+)", text)
    assert found, text
    return found.group(1)
