"""`referee-tournament check FILE` fails fast and says why (issue 12): the game, seats and
options are checked against the games the referee hosts, and every entrant is smoke-started the
way a run starts it (per match, persistent) on a throwaway match; exit 0 all good, 1 an entrant
failed (with its real error line), 2 a bad file, game or option."""
from __future__ import annotations

import asyncio

import pytest
from referee_tournament.config import parse
from referee_tournament.registry import game_problems, list_games

from .conftest import GREEDY, RANDOM, run_cli, write_toml

CRASH = ('{python} -c "import sys; print(\'loading weights\'); '
         'sys.exit(\'error: weights.bin not found\')" {address} {match} {token}')
HANG = ('{python} -c "import time; print(\'warming up\', flush=True); time.sleep(600)" '
        '{address} {match} {token}')
SESSION = ("referee-bot session random --address {address} "
           "--capacity {capacity} --log-level warning")
DEAD_SESSION = "sh -c 'echo fatal: no model >&2; exit 3' {address} {bot_token}"


def _cfg(game="batavia", seats=3, **options):
    return parse({"game": {"name": game, "seats": seats, "options": options},
                  "entrants": [{"name": "a", "command": RANDOM},
                               {"name": "b", "command": RANDOM}]})


@pytest.fixture(scope="module")
def games(referee):
    return asyncio.run(list_games(referee.address))


def test_the_file_is_checked_against_the_hosted_games(games):
    assert game_problems(_cfg(), games) == []
    assert game_problems(_cfg(setup="face_up", min_bid=1, pirates_repeat=True,
                              max_rounds=1000), games) == []
    assert game_problems(_cfg(pirates_repeat="on"), games) == []  # as the referee reads it
    (p,) = game_problems(_cfg(game="batavai"), games)
    assert p.startswith("game.name:") and "'batavai'" in p
    assert "batavia, goa, santa_maria" in p  # what it does host
    (p,) = game_problems(_cfg(seats=2), games)
    assert p.startswith("game.seats:") and "3-5 seats, not 2" in p
    (p,) = game_problems(_cfg(nope=1), games)
    assert p.startswith("game.options.nope:")
    assert "max_rounds, min_bid, pirates_repeat, setup" in p
    (p,) = game_problems(_cfg(setup="face_sideways"), games)
    assert p.startswith("game.options.setup:") and "face_down, face_up" in p
    (p,) = game_problems(_cfg(max_rounds=0), games)
    assert p.startswith("game.options.max_rounds:") and "from 1 to 1000, not 0" in p
    (p,) = game_problems(_cfg(max_rounds=2.5), games)
    assert "takes an integer from 1 to 1000, not '2.5'" in p
    (p,) = game_problems(_cfg(pirates_repeat="maybe"), games)
    assert p.startswith("game.options.pirates_repeat:") and "true or false" in p
    assert len(game_problems(_cfg(seats=9, nope=1, setup="x"), games)) == 3  # all at once


def _file(tmp_path, entrants, game="batavia", options=""):
    head = (f'name = "chk"\noutput = "{tmp_path / "out"}"\n[game]\nname = "{game}"\n'
            f"seats = 3\n{options}")
    lines = [head]
    for name, command, extra in entrants:
        lines.append(f"[[entrants]]\nname = \"{name}\"\ncommand = '''{command}'''\n{extra}")
    return write_toml(tmp_path / "t.toml", "\n".join(lines))


def _rows(stdout: str) -> dict[str, str]:
    """The smoke table's first line per entrant."""
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) >= 4 and cells[2] in ("OK", "FAIL"):
            rows[cells[0]] = cells[2]
    return rows


def test_a_bad_option_exits_2_naming_it(tmp_path, referee):
    toml = _file(tmp_path, [("a", RANDOM, ""), ("b", RANDOM, "")],
                 options='[game.options]\nsetup = "face_sideways"\n')
    done = run_cli("check", str(toml), "--address", referee.address, "--admin-token",
                   referee.admin_token)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "game.options.setup" in done.stderr and "face_down, face_up" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()  # check writes no results


def test_a_good_file_passes_and_no_smoke_starts_nothing(tmp_path, referee):
    toml = _file(tmp_path, [("random", RANDOM, ""), ("greedy", GREEDY, "")])
    done = run_cli("check", str(toml), "--address", referee.address, "--admin-token",
                   referee.admin_token, "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _rows(done.stdout) == {"random": "OK", "greedy": "OK"}
    assert "all 2 entrant(s) joined" in done.stderr

    toml = _file(tmp_path, [("random", RANDOM, ""), ("crasher", CRASH, "")])
    done = run_cli("check", str(toml), "--address", referee.address, "--no-smoke")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _rows(done.stdout) == {} and "smoke" not in done.stderr


def test_smoke_start_needs_the_running_referees_admin_token(tmp_path, referee, monkeypatch):
    toml = _file(tmp_path, [("random", RANDOM, ""), ("greedy", GREEDY, "")])
    monkeypatch.delenv("REFEREE_ADMIN_TOKEN", raising=False)
    done = run_cli("check", str(toml), "--address", referee.address)
    assert done.returncode == 2 and "--admin-token" in done.stderr, done.stderr


def test_every_entrant_is_smoke_started_and_failures_show_their_error(tmp_path):
    # a private referee (no --address), as a run starts one
    toml = _file(tmp_path, [
        ("random", RANDOM, ""), ("crasher", CRASH, ""), ("hanger", HANG, ""),
        ("missing", "no-such-bot-xyz {address} {match} {token}", ""),
        ("session", SESSION, "persistent = true\n"),
        ("dead-session", DEAD_SESSION, "persistent = true\n"),
    ])
    done = run_cli("check", str(toml), "--join-timeout", "3", "--no-progress", timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _rows(done.stdout) == {"random": "OK", "crasher": "FAIL", "hanger": "FAIL",
                                  "missing": "FAIL", "session": "OK", "dead-session": "FAIL"}
    err = done.stderr
    assert "crasher: exited (code 1) before its first move: error: weights.bin not found" in err
    assert "hanger: did not join within 3s; its last words: warming up" in err
    assert "missing: cannot start 'no-such-bot-xyz'" in err
    assert "dead-session: exited (code 3) before its first move: fatal: no model" in err
    assert "4 entrant(s) failed to start" in err


def test_a_bot_for_another_game_fails_its_smoke_start(tmp_path, referee):
    toml = _file(tmp_path, [("random", RANDOM, ""), ("greedy", GREEDY, "")], game="goa")
    done = run_cli("check", str(toml), "--address", referee.address, "--admin-token",
                   referee.admin_token, "--no-progress")
    assert done.returncode == 1, done.stdout + done.stderr
    assert _rows(done.stdout) == {"random": "OK", "greedy": "FAIL"}
    assert "greedy-batavia plays batavia only" in done.stderr


def test_an_error_line_is_shown_as_printed_not_as_markup():
    from referee_tournament.check import Smoke, smoke_table
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(smoke_table([Smoke("x", "per match", False, "OSError: [Errno 2] [/b] gone")]))
    assert "OSError: [Errno 2] [/b] gone" in console.export_text()


def test_a_sandboxed_entrant_is_smoke_started_in_its_sandbox(tmp_path, referee):
    from referee_tournament.sandbox import unavailable_reason

    sandboxed = ("{python} -m referee_client.cli random --address {address} --match {match} "
                 "--token={token} --log-level warning")
    toml = _file(tmp_path, [("random", RANDOM, ""), ("caged", sandboxed, "sandbox = true\n")],
                 options=f'[run]\nunix_socket = "{referee.unix_socket}"\n')
    done = run_cli("check", str(toml), "--address", referee.address, "--admin-token",
                   referee.admin_token, "--no-progress", timeout=300)
    reason = unavailable_reason()
    if reason:  # as a run would: it cannot be started here, and check says why
        assert done.returncode == 1, done.stdout + done.stderr
        assert _rows(done.stdout) == {"random": "OK", "caged": "FAIL"}
        assert "caged: cannot start" in done.stderr and reason in done.stderr
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert _rows(done.stdout) == {"random": "OK", "caged": "OK"}
