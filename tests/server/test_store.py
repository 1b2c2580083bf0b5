"""The SQLite store: WAL, group commit, round trip of matches and moves."""
from __future__ import annotations

import asyncio
import sqlite3

import pytest

from referee.server.store import MatchRow, MoveRow, Store


def test_group_commit_round_trip(tmp_path):
    store = Store(tmp_path, "full")
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


def test_a_failed_commit_is_reported_not_acknowledged(tmp_path):
    store = Store(tmp_path)
    store.start()

    async def run():
        await store.insert_move("m", MoveRow(1, 0, 0, {}, "h", 0, False, None))
        with pytest.raises(RuntimeError, match="store commit failed"):
            await store.insert_move("m", MoveRow(1, 0, 0, {}, "h", 0, False, None))  # dup key
        # in one group with good writes, only the bad one fails
        futs = [store.insert_move("m", MoveRow(n, 0, 0, {}, "h", 0, False, None))
                for n in (2, 1, 3)]
        got = await asyncio.gather(*futs, return_exceptions=True)
        assert got[0] is None and isinstance(got[1], RuntimeError) and got[2] is None

    asyncio.run(run())
    store.close()
    assert [m.n for m in store.load_moves("m")] == [1, 2, 3]
    with pytest.raises(ValueError):
        Store(tmp_path, "sometimes")
