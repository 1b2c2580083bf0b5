"""Every starter kit (clients/typescript, go, cpp) and both existing bots (Python `referee-bot
random`, clients/node) pass `referee-bot conformance` on every game the referee hosts: join,
legal moves, a refused move, a referee restart, the deadline, exit on GameOver.

Toolchains come from tests/kits/toolchains.py: installed when missing and running as root,
else the kit's test is skipped with the reason."""
from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path

import pytest
from referee_client.conformance import CHECKS, Options, bot_argv, print_table, run_checks

from . import toolchains
from .toolchains import KITS

GAMES = sorted(p.name for p in (toolchains.ROOT / "referee" / "games").iterdir()
               if (p / "__init__.py").exists())


def table(rows, command) -> str:
    out = io.StringIO()
    print_table(rows, command, file=out)
    return out.getvalue()


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_passes_conformance(kit, tmp_path):
    command = KITS[kit]()
    rows = asyncio.run(run_checks(Options(command=command, games=[], workdir=tmp_path)))
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
    assert bot_argv(["bot"], "h:1", "m", "-t", 0, 5) == [
        "bot", "--address", "h:1", "--match", "m", "--token=-t"]
    assert bot_argv(["bot", "{address}", "--token={token}", "{seat}", "{seed}"],
                    "h:1", "m", "t", 2, 5) == ["bot", "h:1", "--token=t", "2", "5"]
