"""The SQLite store: WAL, group commit, round trip of matches and moves."""
from __future__ import annotations

import asyncio
import sqlite3
import threading

from referee.server.store.sqlite import MatchRow, MoveRow, SqliteStore


def test_group_commit_round_trip(tmp_path):
    store = SqliteStore(tmp_path, "full")
    store.start()

    async def run():
        await store.insert_match(MatchRow(
            id="m1", game="batavia", options={"setup": "face_up"}, seats=3, seed=2**62,
            components_name="s", components_sha256="0" * 64, time_policy={"move_ms": 5},
            token_hashes=["a" * 64] * 3, names=["x", "y", "z"], status="running",
            created_ms=1, finished_ms=None, forfeited=None, result=None))
        # many writes queued at once (as from concurrent matches) share commits
        futs = [store.insert_move("m1", MoveRow(n, n % 3, n - 1, {"bid": {"amount": n}},
                                                "f" * 64, n, n == 5, "DEFAULT_MOVE" if n == 5
                                                else None)) for n in range(1, 201)]
        await asyncio.gather(*futs)
        await store.finish_match("m1", status="finished", finished_ms=9, forfeited=None,
                                 result={"scores": [1, 2, 3]},
                                 record_path=tmp_path / "records" / "m1.json",
                                 record={"match_id": "m1"})

    asyncio.run(run())
    store.close()
    assert store.ops == 202 and store.batches < store.ops
    (row,) = store.load_matches()
    assert row.seed == 2**62 and row.options == {"setup": "face_up"} and row.status == "finished"
    assert row.result == {"scores": [1, 2, 3]} and row.finished_ms == 9
    moves = store.load_moves("m1")
    assert [m.n for m in moves] == list(range(1, 201))
    assert moves[4].timeout and moves[4].policy == "DEFAULT_MOVE" and not moves[3].timeout
    assert (tmp_path / "records" / "m1.json").exists()
    conn = sqlite3.connect(tmp_path / "referee.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_matches_of_an_older_store_resume_with_the_chance_they_were_played_with(tmp_path):
    """A store written before keyed chance has no record_format column: its running matches
    drew chance as referee-record/1, and are rebuilt so (every stored hash checked), with their
    RANDOM_LEGAL timeout stream where live play left it."""
    from referee.core import registry
    from referee.core.match import LEGACY_RECORD_FORMAT, RECORD_FORMAT, Match
    from referee.server.play.records import move_row, replay_log

    game = registry.get("goa")
    live = Match.create(game, {}, 3, 77, record_format=LEGACY_RECORD_FORMAT)
    for n in range(30):
        d = live.decision()
        assert d is not None
        timeout = n % 4 == 0
        move = live.timeout_move("RANDOM_LEGAL") if timeout else d.moves[0]
        live.submit(d.seat, move, live.version, timeout=timeout,
                    policy="RANDOM_LEGAL" if timeout else None)
    store = SqliteStore(tmp_path)
    store.start()

    async def run():
        for mid, fmt in (("old", LEGACY_RECORD_FORMAT), ("new", RECORD_FORMAT)):
            await store.insert_match(MatchRow(
                id=mid, game="goa", options=live.options, seats=3, seed=77,
                components_name=live.components.name,
                components_sha256=live.components.sha256, time_policy={}, token_hashes=[],
                names=["x", "y", "z"], status="running", created_ms=1, finished_ms=None,
                forfeited=None, result=None, record_format=fmt))
        for e in live.moves:
            await store.insert_move("old", move_row(e))

    asyncio.run(run())
    store.close()
    conn = sqlite3.connect(tmp_path / "referee.sqlite3")
    with conn:
        conn.execute("UPDATE matches SET record_format=NULL WHERE id='old'")  # an older store
    conn.close()
    rows = {r.id: r for r in SqliteStore(tmp_path).load_matches()}
    assert rows["new"].record_format == RECORD_FORMAT
    assert rows["old"].record_format == LEGACY_RECORD_FORMAT
    m = replay_log(game, rows["old"], SqliteStore(tmp_path).load_moves("old"), live.components)
    assert m.record_format == LEGACY_RECORD_FORMAT
    assert game.hash_state(m.state) == game.hash_state(live.state)
    assert m.timeout_move("RANDOM_LEGAL") == live.timeout_move("RANDOM_LEGAL")


def test_normal_durability_group_commits_on_the_event_loop(tmp_path):
    """--durability normal commits on the loop thread: every write queued during one loop turn
    shares one transaction, committed (visible to another connection) before any of their
    futures is resolved; --durability full keeps the writer thread (its fsync must not block
    the loop)."""
    store = SqliteStore(tmp_path)
    store.start()
    threads: list[str] = []

    async def run():
        await store.insert_match(MatchRow(
            id="m1", game="batavia", options={}, seats=2, seed=1, components_name="s",
            components_sha256="0" * 64, time_policy={}, token_hashes=["a" * 64] * 2,
            names=["x", "y"], status="running", created_ms=1, finished_ms=None,
            forfeited=None, result=None))
        batches = store.batches
        futs = [store.insert_move("m1", MoveRow(n, n % 2, n - 1, {}, "f" * 64, 0, False, None))
                for n in range(1, 51)]
        futs.append(store.write(lambda c: threads.append(threading.current_thread().name)))
        await futs[0]
        # resolved means committed: another connection sees the whole batch
        other = sqlite3.connect(tmp_path / "referee.sqlite3")
        assert other.execute("SELECT COUNT(*) FROM moves").fetchone()[0] == 50
        other.close()
        await asyncio.gather(*futs)
        assert store.batches == batches + 1  # one loop turn, one commit
        return threading.current_thread().name

    loop_thread = asyncio.run(run())
    store.close()
    assert threads == [loop_thread]
    assert not [t for t in threading.enumerate() if t.name == "referee-store"]

    full = SqliteStore(tmp_path / "full", "full")
    full.start()

    async def on_full():
        await full.write(lambda c: threads.append(threading.current_thread().name))
    asyncio.run(on_full())
    full.close()
    assert threads[-1] == "referee-store"
