"""`referee backup` / `referee restore` while matches run (issue 37, item 4), on both stores: a
backup taken mid-match restores into a fresh data directory (and, for PostgreSQL, a fresh
database) on which a new referee resumes every match the backup holds at the move the backup
caught it, plays it to a record that verifies, and the manifest says what it holds."""
from __future__ import annotations

import asyncio
import json
import random
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import grpc
import pytest

from referee.cli import main as cli_main
from referee.server.store import backup as bk
from referee.server.store.sqlite import SCHEMA_VERSION
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md, play_match


async def _moves(srv, stub, mid, tokens, n, rnd):
    for _ in range(n):
        seat = srv.service.matches[mid].decision.seat
        d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                     metadata=md(tokens[seat]))
        r = await stub.SubmitMove(pb.SubmitMoveRequest(
            match_id=mid, state_version=d.state_version, move=rnd.choice(list(d.legal_moves))),
            metadata=md(tokens[seat]))
        assert r.accepted


def _store_args(url: str, tmp_path: Path) -> list[str]:
    """The store for the CLI as an operator gives it: in a file, never on the command line."""
    if not url:
        return []
    f = tmp_path / f"store-{abs(hash(url))}.url"
    f.write_text(url)
    f.chmod(0o600)
    return ["--store-file", str(f)]


def test_backup_mid_match_restores_and_resumes(make_server, store_url, tmp_path, capsys,
                                               request):
    data = tmp_path / "data"
    srv = make_server(data, store_url=store_url)

    async def before():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            paused, paused_tokens = await create(stub, seats=3, seed=11)
            await _moves(srv, stub, paused, paused_tokens, 12, random.Random(1))
            done, done_tokens = await create(stub, seats=3, seed=12)
            busy, busy_tokens = await create(stub, seats=3, seed=13)
        await play_match(srv.target, done, done_tokens, seed=2)
        return (paused, paused_tokens), done, (busy, busy_tokens)

    (paused, paused_tokens), done, (busy, busy_tokens) = asyncio.run(before())
    dest = tmp_path / "backup"

    async def backup_while_playing():
        # one match plays on its streams while the backup runs beside it
        play = asyncio.create_task(play_match(srv.target, busy, busy_tokens, seed=3))
        await asyncio.sleep(0.05)
        rc = await asyncio.to_thread(cli_main, ["backup", str(dest), "--data-dir", str(data),
                                                *_store_args(store_url, tmp_path)])
        await play
        return rc

    assert asyncio.run(backup_while_playing()) == 0
    out = capsys.readouterr()
    assert f"backed up into {dest}" in out.out and "store:" in out.err

    async def after():  # the original referee plays on: nothing of this is in the backup
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            await _moves(srv, stub, paused, paused_tokens, 5, random.Random(7))

    asyncio.run(after())
    original = {mid: list(srv.service.matches[mid].match.moves)
                for mid in (paused,) if mid in srv.service.matches}
    srv.stop()

    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["format"] == bk.FORMAT
    assert manifest["store"] == ("postgresql" if store_url else "sqlite")
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert f"records/{done}.json" in manifest["files"]
    assert "record-signing.key" in manifest["files"]
    assert (bk.DUMP_FILE if store_url else bk.DB_FILE) in manifest["files"]

    fresh = tmp_path / "restored"
    new_url = request.getfixturevalue("pg_server").new_database() if store_url else ""
    assert cli_main(["restore", str(dest), "--data-dir", str(fresh),
                     *_store_args(new_url, tmp_path)]) == 0
    assert f"restored into {fresh}" in capsys.readouterr().out

    srv2 = make_server(fresh, store_url=new_url)
    rt = srv2.service.matches[paused]
    # resumed at the backup's point: the 12 moves acknowledged before it, none of the 5 after
    assert len(rt.match.moves) == 12
    assert rt.match.moves == original[paused][:12]
    resumed = [paused] + ([busy] if busy in srv2.service.matches else [])

    async def finish():
        return [await play_match(srv2.target, mid, tokens, seed=5)
                for mid, tokens in ((paused, paused_tokens), (busy, busy_tokens))
                if mid in resumed]

    for logs in asyncio.run(finish()):
        assert all(log.game_over is not None for log in logs)
        path = logs[0].game_over.record_path
        assert cli_main(["replay", "verify", path, "--data-dir", str(fresh)]) == 0
    # the match finished before the backup: its record came back and verifies with the key
    assert cli_main(["replay", "verify", str(fresh / "records" / f"{done}.json"),
                     "--data-dir", str(fresh)]) == 0


def test_restore_refuses_a_used_data_dir_and_a_damaged_backup(make_server, tmp_path, capsys):
    data = tmp_path / "data"
    srv = make_server(data)
    dest = tmp_path / "backup"
    assert cli_main(["backup", str(dest), "--data-dir", str(data), "--quiet"]) == 0
    capsys.readouterr()
    # the running referee's own directory: refused, nothing touched
    before = (data / "referee.sqlite3").stat().st_mtime_ns
    assert cli_main(["restore", str(dest), "--data-dir", str(data)]) == 1
    assert "already holds a referee's data" in capsys.readouterr().err
    assert (data / "referee.sqlite3").stat().st_mtime_ns == before
    srv.stop()
    # a backup into a directory that is not empty: refused
    assert cli_main(["backup", str(dest), "--data-dir", str(data)]) == 1
    assert "not an empty directory" in capsys.readouterr().err
    # a missing data directory
    assert cli_main(["backup", str(tmp_path / "b2"), "--data-dir", str(tmp_path / "nope")]) == 1
    assert "is not a directory" in capsys.readouterr().err
    # a damaged file: the checksum catches it, nothing is restored
    with sqlite3.connect(dest / "referee.sqlite3") as conn:
        conn.execute("INSERT INTO settings (name, value) VALUES ('x', 'y')")
    conn.close()
    assert cli_main(["restore", str(dest), "--data-dir", str(tmp_path / "fresh")]) == 1
    assert "does not match its checksum" in capsys.readouterr().err
    assert not (tmp_path / "fresh").exists()


def test_a_wrong_dsn_is_one_clear_line(tmp_path, capsys, pg_server):
    (tmp_path / "data").mkdir()
    url = pg_server.url("no_such_database")
    assert cli_main(["backup", str(tmp_path / "b"), "--data-dir", str(tmp_path / "data"),
                     *_store_args(url, tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("referee backup: the PostgreSQL store cannot be read:")
    assert "no_such_database" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("url", ["postgresql://u:secret@localhost/db"])
def test_a_password_on_the_command_line_is_refused(url, tmp_path, capsys):
    assert cli_main(["backup", str(tmp_path / "b"), "--store", url]) == 1
    err = capsys.readouterr().err
    assert "password" in err and "secret" not in err


def test_only_the_records_of_matches_finished_in_the_copy_are_kept(tmp_path, capsys):
    """A record written after the store was copied (its match ended during the backup) is left
    out: restored, the match resumes from the copy instead of having two endings."""
    fixture = Path(__file__).parent.parent / "fixtures" / "stores" / "0.1.0"
    data = tmp_path / "data"
    shutil.copytree(fixture / "sqlite", data)
    fx = json.loads((fixture / "matches.json").read_text())
    (data / "records" / f"{fx['running']}.json").write_text("{}")
    assert cli_main(["backup", str(tmp_path / "b"), "--data-dir", str(data), "--quiet"]) == 0
    files = json.loads((tmp_path / "b" / "manifest.json").read_text())["files"]
    assert f"records/{fx['finished']}.json" in files
    assert f"records/{fx['running']}.json" not in files
    assert "bot-seats.key" in files and "record-signing.key" in files


def test_the_sqlite_copy_is_one_snapshot_and_never_blocks_the_writer(tmp_path, monkeypatch):
    """Commits of another connection between the copy's steps go through (the writer is not
    blocked) and are not in the copy (it is the store at one instant, not restarted by them)."""
    src, dst = tmp_path / "s.sqlite3", tmp_path / "d.sqlite3"
    w = sqlite3.connect(src, isolation_level=None)
    w.execute("PRAGMA journal_mode=WAL")
    w.execute("CREATE TABLE t (x BLOB)")
    w.executemany("INSERT INTO t VALUES (randomblob(1000))", [()] * 2000)
    monkeypatch.setattr(bk, "STEP_PAGES", 50)
    written = []

    def progress(_: str) -> None:  # between steps: the referee commits a move
        if len(written) < 30:  # bounded: a copy restarted by each commit would never end
            w.execute("INSERT INTO t VALUES (randomblob(1000))")
            written.append(1)

    bk._sqlite_snapshot(src, dst, progress)
    assert len(written) > 2
    assert w.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 2000 + len(written)
    with closing(sqlite3.connect(dst)) as copy:
        assert copy.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 2000
    w.close()
