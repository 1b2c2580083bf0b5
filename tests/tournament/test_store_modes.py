"""The runners' own SQLite files are their user's alone (issue 31, item 6): a tournament's
and a ladder's schedule holds the seeds of matches not yet played, a league's store the seat
tokens of running ones. Created 0600 (with their -wal and -shm files), tightened when an
older runner left them readable."""
from __future__ import annotations

import os
import sqlite3
import stat

import pytest
from referee_tournament.ladder import LadderStore
from referee_tournament.league.store import LeagueStore
from referee_tournament.store import Store

STORES = {"tournament": Store, "ladder": LadderStore, "league": LeagueStore}


def _loose(folder) -> dict[str, str]:
    return {p.name: f"{stat.S_IMODE(p.stat().st_mode):04o}" for p in folder.iterdir()
            if stat.S_IMODE(p.stat().st_mode) & 0o077}


@pytest.mark.parametrize("kind", sorted(STORES))
def test_a_new_runner_store_is_private(tmp_path, kind):
    """Issue 31 item 6: created 0600, its -wal and -shm files too, whatever the umask."""
    old = os.umask(0o022)
    try:
        store = STORES[kind](tmp_path / "db.sqlite")
        store.db.execute("CREATE TABLE IF NOT EXISTS probe (x)")
        store.db.execute("INSERT INTO probe VALUES (1)")
        assert {p.name for p in tmp_path.iterdir()} >= {"db.sqlite", "db.sqlite-wal"}
        assert _loose(tmp_path) == {}
        store.close()
    finally:
        os.umask(old)


@pytest.mark.parametrize("kind", sorted(STORES))
def test_a_readable_runner_store_from_before_is_tightened(tmp_path, kind):
    """Issue 31 item 6: a store file an older runner left 0644 is 0600 once opened."""
    path = tmp_path / "db.sqlite"
    sqlite3.connect(path).close()
    os.chmod(path, 0o644)
    STORES[kind](path).close()
    assert _loose(tmp_path) == {}
