"""Every starter kit (clients/typescript, go, cpp) and both existing bots (Python `referee-bot
random`, clients/node) pass `referee-bot conformance` on every game the referee hosts: join,
legal moves, a refused move, a referee restart, the deadline, exit on GameOver.

Toolchains come from tests/kits/toolchains.py: installed when missing and running as root,
else the kit's test is skipped with the reason."""
from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from referee_tools.conformance import CHECKS, Options, bot_argv, print_table, run_checks

from . import toolchains
from .toolchains import KITS

LANGUAGES = toolchains.ROOT / "examples" / "tournaments" / "languages.toml"
MOVE_MS = 30_000
GAMES = sorted(p.name for p in (toolchains.ROOT / "referee" / "games").iterdir()
               if (p / "__init__.py").exists())


def table(rows, command) -> str:
    out = io.StringIO()
    print_table(rows, command, file=out)
    return out.getvalue()


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_passes_conformance(kit, tmp_path):
    command = KITS[kit]()
    # A generous limit: the deadline row must not turn a loaded test machine into a failure
    # (the stubborn bot below shows the row fails when the time policy moves for a bot).
    rows = asyncio.run(run_checks(Options(command=command, games=[], move_ms=MOVE_MS,
                                          workdir=tmp_path)))
    assert sorted({r.game for r in rows}) == GAMES, table(rows, command)
    assert [r.check for r in rows] == list(CHECKS) * len(GAMES), table(rows, command)
    assert all(r.ok for r in rows), table(rows, command)


def test_conformance_catches_a_bot_that_ignores_refusals_and_lingers(tmp_path):
    """The checklist can fail: a bot that never re-answers a refused decision and does not exit
    after GameOver fails exactly those rows (and the deadline: the time policy moved for it)."""
    command = [sys.executable, str(Path(__file__).with_name("stubborn_bot.py"))]
    rows = asyncio.run(run_checks(Options(
        command=command, games=["santa_maria"], move_ms=1000, exit_grace_s=2, workdir=tmp_path,
    )))
    result = {r.check: r.ok for r in rows}
    assert result == {
        "join": True, "legal moves": True, "rejected move": False, "restart": True,
        "deadline": False, "exit": False,
    }, table(rows, command)


def test_bot_argv_appends_flags_or_fills_placeholders():
    # no token on the command line (any process can read it): the bot has $REFEREE_TOKEN
    assert bot_argv(["bot"], "h:1", "m", "-t", 0, 5) == [
        "bot", "--address", "h:1", "--match", "m"]
    assert bot_argv(["bot", "{address}", "--token={token}", "{seat}", "{seed}"],
                    "h:1", "m", "t", 2, 5) == ["bot", "h:1", "--token=t", "2", "5"]


def _script(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def test_cli_prints_the_table_and_exits_zero_when_every_row_passes(tmp_path):
    proc = subprocess.run(
        [_script("referee-bot"), "conformance", "--game", "santa_maria", "--move-ms",
         str(MOVE_MS), "--workdir",
         str(tmp_path), "--", *KITS["python"]()],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rejected move" in proc.stdout and "FAIL" not in proc.stdout
    assert "6 of 6 checks passed" in proc.stdout


def test_the_five_language_tournament_plays_cleanly(tmp_path):
    """examples/tournaments/languages.toml: one table of all five bots, every match finished
    with no timeout, crash, hang or refused move."""
    for build in KITS.values():  # skips when a toolchain cannot be installed
        build()
    out = tmp_path / "run"
    proc = subprocess.run(
        [_script("referee-tournament"), "run", str(LANGUAGES), "--out", str(out),
         "--no-progress"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    board = json.loads((out / "results.json").read_text())["leaderboard"]
    assert sorted(e["name"] for e in board) == sorted(["python", "node", "typescript", "go", "cpp"])
    for entrant in board:
        assert entrant["matches"] == 5, entrant
        assert entrant["timeouts"] == entrant["crashes"] == entrant["hangs"] == 0, entrant
        assert entrant["rejected"] == 0, entrant


def test_a_missing_toolchain_is_skipped_with_the_reason_when_not_root(monkeypatch):
    monkeypatch.setattr(toolchains, "_missing", lambda name: ["golang-go"])
    monkeypatch.setattr(toolchains.debian.os, "geteuid", lambda: 1000)
    with pytest.raises(pytest.skip.Exception) as info:
        toolchains.ensure("go")
    assert "not root" in str(info.value)
    assert "apt-get install golang-go" in str(info.value)
