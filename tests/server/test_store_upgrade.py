"""Stores written by previous releases open with today's referee, which upgrades them by itself
(issue 37, item 4): the fixtures in tests/fixtures/stores/<release>/ were made by that release's
own referee (their README says how). Today's referee resumes their unfinished match, plays it to
a record that verifies, verifies their finished records, and records the schema version; a
store of a newer schema is refused with a clear message and left as it was."""
from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from referee.cli import main as cli_main
from referee.server.startup import StartupError
from referee.server.store.sqlite import SCHEMA_VERSION, SCHEMA_VERSION_SETTING

from .helpers import play_match

FIXTURES = Path(__file__).parent.parent / "fixtures" / "stores"
RELEASES = sorted(p.parent.name for p in FIXTURES.glob("*/sqlite"))


def _copy(release: str, dest: Path) -> dict:
    shutil.copytree(FIXTURES / release / "sqlite", dest)
    dest.chmod(0o700)
    return json.loads((FIXTURES / release / "matches.json").read_text())


def _version(db: Path) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT value FROM settings WHERE name=?",
                           (SCHEMA_VERSION_SETTING,)).fetchone()
    conn.close()
    return row[0] if row else None


@pytest.mark.parametrize("release", RELEASES)
def test_a_previous_release_store_upgrades_and_resumes(release, make_server, tmp_path, capsys):
    data = tmp_path / "data"
    fx = _copy(release, data)
    assert _version(data / "referee.sqlite3") is None  # the release wrote no version
    srv = make_server(data)
    assert _version(data / "referee.sqlite3") == str(SCHEMA_VERSION)
    rt = srv.service.matches[fx["running"]]
    assert len(rt.match.moves) == fx["running_moves"]
    logs = asyncio.run(play_match(srv.target, fx["running"], fx["running_tokens"], seed=3))
    assert all(log.game_over is not None for log in logs)
    assert cli_main(["replay", "verify", logs[0].game_over.record_path,
                     "--data-dir", str(data)]) == 0
    assert cli_main(["replay", "verify", str(data / "records" / f"{fx['finished']}.json"),
                     "--data-dir", str(data)]) == 0
    assert capsys.readouterr().out.count("replay: OK") == 2


def test_a_store_of_a_newer_schema_is_refused_unchanged(make_server, tmp_path):
    data = tmp_path / "data"
    _copy(RELEASES[-1], data)
    db = data / "referee.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO settings (name, value) VALUES (?, ?)",
                     (SCHEMA_VERSION_SETTING, str(SCHEMA_VERSION + 1)))
        conn.execute("ALTER TABLE moves RENAME COLUMN note TO comment")  # what a newer one did
    conn.close()
    before = list(sqlite3.connect(db).iterdump())
    with pytest.raises(StartupError, match=rf"schema version {SCHEMA_VERSION + 1}, written by a "
                                           r"newer referee"):
        make_server(data)
    # refused before a column was added (ADDED_COLUMNS would have put a second "note" back)
    assert list(sqlite3.connect(db).iterdump()) == before


PG_RELEASES = sorted(p.parent.name for p in FIXTURES.glob("*/postgresql.sql"))


@pytest.mark.parametrize("release", PG_RELEASES)
def test_a_previous_release_postgresql_store_upgrades_and_resumes(release, make_server,
                                                                 pg_server, tmp_path, capsys):
    """The same with a plain SQL dump of a PostgreSQL store that release wrote."""
    psycopg = pytest.importorskip("psycopg")
    url = pg_server.new_database()
    subprocess.run([str(pg_server.bin / "psql"), "-q", "-v", "ON_ERROR_STOP=1", "-d", url,
                    "-f", str(FIXTURES / release / "postgresql.sql")],
                   check=True, capture_output=True, text=True)
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / release / "postgresql", data)
    data.chmod(0o700)
    fx = json.loads((FIXTURES / release / "postgresql.json").read_text())
    srv = make_server(data, store_url=url)
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT value FROM settings WHERE name=%s",
                           (SCHEMA_VERSION_SETTING,)).fetchone()
    assert row == (str(SCHEMA_VERSION),)
    assert len(srv.service.matches[fx["running"]].match.moves) == fx["running_moves"]
    logs = asyncio.run(play_match(srv.target, fx["running"], fx["running_tokens"], seed=3))
    assert all(log.game_over is not None for log in logs)
    assert cli_main(["replay", "verify", logs[0].game_over.record_path,
                     "--data-dir", str(data)]) == 0
    assert cli_main(["replay", "verify", str(data / "records" / f"{fx['finished']}.json"),
                     "--data-dir", str(data)]) == 0
    assert capsys.readouterr().out.count("replay: OK") == 2
