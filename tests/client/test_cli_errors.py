"""What a new user meets first on the command line (issue 12, item 6): a bot started where no
referee answers says it cannot reach it (not that a connection was lost), `referee-bot`
sub-commands report usage errors with their own usage line, every flag has help (tests/test_cli_help.py), and
`create-match` takes the match's time policy."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..tournament.test_node_bot import NODE_DIR, node_bot  # noqa: F401 - the fixture
from .conftest import ROOT, bot_env

CLI = [sys.executable, "-m", "referee_tools.bot_cli"]  # referee-bot
UINT32 = "expected a whole number from 0 to 4294967295"


def referee_bot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=ROOT, env=env or bot_env(), capture_output=True,
                          text=True, timeout=120, check=False)


def closed_address() -> str:
    """A 127.0.0.1 address nothing listens on (a port just bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"


# ------------------------------------------------------------------ nobody answers

def assert_cannot_reach(done: subprocess.CompletedProcess, address: str) -> None:
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert any(f"cannot reach the referee at {address}: " in line for line in lines), done.stderr
    assert "Connection refused" in done.stderr or "ECONNREFUSED" in done.stderr, done.stderr
    # the last line, with which it exits, says so too
    assert f"cannot reach the referee at {address}: " in lines[-1], done.stderr
    assert "connection lost" not in done.stderr and "session lost" not in done.stderr


@pytest.mark.parametrize("command", [
    ["random", "--match", "m", "--token", "t"],
    ["session", "random", "--bot-token", "t"],
])
def test_a_python_bot_where_nothing_listens_cannot_reach_the_referee(command):
    address = closed_address()
    done = referee_bot(*command, "--address", address, "--give-up-after", "0.5")
    assert_cannot_reach(done, address)


@pytest.mark.parametrize("command", [
    ["bot.js", "--match", "m", "--token=t"],
    ["session_bot.js"],
])
def test_a_node_bot_where_nothing_listens_cannot_reach_the_referee(node_bot, command):  # noqa: F811
    address = closed_address()
    done = subprocess.run([node_bot, *command, "--address", address, "--give-up-after", "0.5"],
                          cwd=NODE_DIR, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "REFEREE_BOT_TOKEN": "t"})
    assert_cannot_reach(done, address)


def wait_for(path: Path, text: str, proc: subprocess.Popen, within_s: float = 60) -> str:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        log = path.read_text(errors="replace")
        if text in log:
            return log
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} in the bot's log:\n{path.read_text(errors='replace')}")


def test_a_connection_that_was_up_and_dropped_is_lost_not_unreachable(referee_server, tmp_path):
    created = referee_bot("create-match", "--address", referee_server.address, "--game",
                          "batavia", "--seats", "3", "--admin-token", referee_server.admin_token)
    assert created.returncode == 0, created.stderr
    match = json.loads(created.stdout)
    log = tmp_path / "bot.log"
    with open(log, "wb") as out:
        bot = subprocess.Popen(
            [*CLI, "random", "--address", referee_server.address, "--match", match["match_id"],
             f"--token={match['seats'][0]['token']}"],
            cwd=ROOT, env=bot_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(log, "joined", bot)
        referee_server.kill()
        text = wait_for(log, "connection lost; reconnecting", bot)
    finally:
        bot.terminate()
        bot.wait(30)
    assert "cannot reach" not in text


# ------------------------------------------------------------------ create-match time policy

def test_create_match_sends_the_time_policy_flags_and_leaves_the_rest_to_the_referee(
        referee_server):
    from referee_client import AdminClient

    def policy(*flags: str) -> dict:
        done = referee_bot("create-match", "--address", referee_server.address, "--game",
                           "batavia", "--seats", "3", *flags,
                           env={**bot_env(), "REFEREE_ADMIN_TOKEN": referee_server.admin_token})
        assert done.returncode == 0, done.stderr
        match_id = json.loads(done.stdout)["match_id"]
        with AdminClient(referee_server.address, referee_server.admin_token) as admin:
            return json.loads(admin.record(match_id).record_json)["time_policy"]

    # the referee fills in its default join time (referee serve --join-ms) and records it
    start = {"join_ms": 30_000, "first_move_ms": 0, "increment_ms": 0}
    assert policy("--move-ms", "1234", "--bank-ms", "5000", "--grace-ms", "250", "--strikes",
                  "2", "--on-expiry", "forfeit") == {
        "move_ms": 1234, "bank_ms": 5000, "grace_ms": 250, "strikes": 2, "on_expiry": "FORFEIT",
        **start}
    assert policy("--on-expiry", "default_move")["on_expiry"] == "DEFAULT_MOVE"
    assert policy("--move-ms", "700") == {
        "move_ms": 700, "bank_ms": 0, "grace_ms": 0, "strikes": 0, "on_expiry": "RANDOM_LEGAL",
        **start}
    assert policy() == {"move_ms": 0, "bank_ms": 0, "grace_ms": 0, "strikes": 0,
                        "on_expiry": "ON_EXPIRY_UNSPECIFIED", **start}
    # a clock people know (issue 33), which the other flags adjust
    assert policy("--clock", "5+3", "--grace-ms", "300") == {
        "move_ms": 0, "bank_ms": 300_000, "grace_ms": 300, "strikes": 0,
        "on_expiry": "RANDOM_LEGAL", **start, "increment_ms": 3_000}


def assert_usage_error(done: subprocess.CompletedProcess, command: str, message: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"usage: referee-bot {command} "), done.stderr
    assert f"referee-bot {command}: error: {message}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("flags", "message"), [
    (["--on-expiry", "never"], "argument --on-expiry: invalid choice: 'never'"),
    (["--move-ms", "-5"], f"argument --move-ms: {UINT32}, got '-5'"),
    (["--strikes", "many"], f"argument --strikes: {UINT32}, got 'many'"),
    (["--clock", "5+999"], "argument --clock: unknown clock '5+999'"),
])
def test_a_bad_time_policy_flag_is_a_create_match_usage_error(flags, message):
    done = referee_bot("create-match", "--seats", "3", "--admin-token", "a", *flags)
    assert_usage_error(done, "create-match", message)


# ------------------------------------------------------------------ usage errors, help

@pytest.mark.parametrize(("args", "message"), [
    (["create-match", "--seats", "3"], "no admin token: pass --admin-token"),
    (["create-match", "--seats", "3", "--admin-token", "a", "--option", "setup"],
     "argument --option: expected NAME=VALUE, got 'setup'"),
    (["play", "--game", "goa", "--me", "python mybot.py", "--vs", "random", "--option", "x"],
     "argument --option: expected NAME=VALUE, got 'x'"),
    (["play", "--game", "goa", "--me", "python mybot.py"], "give at least one opponent"),
    (["random", "--match", "m"], "no seat token: pass --token"),
    (["conformance", "--game", "goa"], "give the bot command after --"),
    (["session", "random", "--bot-token", "b", "--capacity", "0"],
     "argument --capacity: expected 1 to 256, got 0"),
    (["session", "random"], "no bot token: pass --bot-token"),
    (["register-bot", "--name", "alice"], "no admin token: pass --admin-token"),
])
def test_errors_found_after_parsing_show_the_sub_command_usage(args, message):
    env = {k: v for k, v in bot_env().items()
           if k not in ("REFEREE_TOKEN", "REFEREE_ADMIN_TOKEN", "REFEREE_BOT_TOKEN")}
    assert_usage_error(referee_bot(*args, env=env), args[0], message)


def test_the_help_of_create_match_lists_the_time_policy_flags():
    done = referee_bot("create-match", "--help")
    assert done.returncode == 0
    for flag in ("--move-ms", "--bank-ms", "--grace-ms", "--strikes",
                 "--on-expiry {default_move,random_legal,forfeit}"):
        assert flag in done.stdout

