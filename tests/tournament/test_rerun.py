"""A failed run does not block its corrected rerun (issue 12): a results folder whose run has no
finished match (it stopped at once on a wrong game name, or every match failed) is started
afresh by a run of another schedule, its old database kept aside; a folder holding finished
matches of another schedule is still refused, with what to do instead."""
from __future__ import annotations

import asyncio
import io
import sqlite3

import pytest
from referee_tournament.config import parse
from referee_tournament.runner import RunError, Runner
from rich.console import Console

from .conftest import RANDOM


def _cfg(tmp_path, game="batavia", seed=1):
    return parse({
        "name": "rerun", "output": str(tmp_path / "out"), "seed": seed,
        "game": {"name": game, "seats": 3},
        "entrants": [{"name": n, "command": RANDOM} for n in ("a", "b", "c")],
        "format": {"type": "round_robin", "seating": "rotate", "rounds": 1},
        "time": {"move_ms": 5000},
    }, base_dir=tmp_path)


def _run(cfg, referee, console, **kw):
    return asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=console, progress=False, **kw).run())


def _fingerprint(db) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()[0]
    finally:
        con.close()


def test_a_run_without_finished_matches_does_not_block_the_corrected_rerun(tmp_path, referee):
    buf = io.StringIO()
    console = Console(file=buf, width=300)
    out = tmp_path / "out"
    wrong = _cfg(tmp_path, game="batavai")
    with pytest.raises(RunError, match="hosts no game 'batavai'"):
        _run(wrong, referee, console)
    assert (out / "tournament.sqlite").exists()  # the failed run left its folder behind

    right = _cfg(tmp_path)
    data = _run(right, referee, console, max_matches=1)
    assert data["status"]["done"] == 1
    (aside,) = out.glob("tournament.sqlite.*.bak")
    assert _fingerprint(aside) == wrong.schedule_fingerprint()
    assert _fingerprint(out / "tournament.sqlite") == right.schedule_fingerprint()
    said = [line for line in buf.getvalue().splitlines() if "starting afresh" in line]
    assert len(said) == 1 and aside.name in said[0]

    # now the folder holds a finished match: another schedule is refused, nothing is moved
    with pytest.raises(RunError, match=r"1 finished match\(es\).*--out DIR.*delete"):
        _run(_cfg(tmp_path, seed=2), referee, console, max_matches=1)
    assert list(out.glob("tournament.sqlite.*.bak")) == [aside]
    assert _fingerprint(out / "tournament.sqlite") == right.schedule_fingerprint()
    # and the same schedule still resumes
    data = _run(right, referee, console, max_matches=1)
    assert data["status"]["done"] == 2
