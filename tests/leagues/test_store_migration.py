"""A store written by a referee from before leagues opens in this one: its tables gain the
league columns, its bots keep their tokens and are no league's, its matches no league's."""
from __future__ import annotations

import asyncio
import sqlite3

import grpc

from referee.server.base.auth import token_hash
from referee.v1 import referee_pb2 as pb
from tests.sessions.helpers import RawSession

from .helpers import ADMIN, db_rows, md, stub_for

OLD_SCHEMA = """
CREATE TABLE matches (
    id TEXT PRIMARY KEY, game TEXT NOT NULL, options_json TEXT NOT NULL,
    seats INTEGER NOT NULL, seed TEXT NOT NULL, components_name TEXT NOT NULL,
    components_sha256 TEXT NOT NULL, time_policy_json TEXT NOT NULL,
    token_hashes_json TEXT NOT NULL, names_json TEXT NOT NULL, status TEXT NOT NULL,
    created_ms INTEGER NOT NULL, finished_ms INTEGER, forfeited INTEGER, result_json TEXT,
    rejected_json TEXT, abandoned_json TEXT, joined_json TEXT, reveal_policy TEXT,
    record_format TEXT);
CREATE TABLE bots (name TEXT PRIMARY KEY, token_hash TEXT NOT NULL, created_ms INTEGER NOT NULL);
INSERT INTO matches VALUES ('old', 'batavia', '{}', 3, '1', 'x', 'y', '{}', '[]', '[]',
    'finished', 1, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
"""


def test_an_old_store_gains_the_league_columns(make_server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    token = "ab" * 32
    con = sqlite3.connect(data / "referee.sqlite3")
    con.executescript(OLD_SCHEMA)
    con.execute("INSERT INTO bots VALUES ('veteran', ?, 1)", (token_hash(token),))
    con.commit()
    con.close()
    srv = make_server(data)
    cols = {r[1] for r in db_rows(srv, "PRAGMA table_info(matches)")}
    assert {"league", "unlisted", "seat_bots_json", "seat_versions_json"} <= cols
    assert db_rows(srv, "SELECT league, kind, status FROM bots") == [(None, 0, pb.BOT_ACTIVE)]
    assert srv.service.store.load_matches()[0].league == ""

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            s = RawSession(ch, token)
            assert (await s.hello()).bot_name == "veteran"
            s.close()
            resp = await stub_for(ch).CreateMatch(pb.CreateMatchRequest(
                game="batavia", seats=3, seat_bots=["veteran", "", ""]), metadata=md(ADMIN))
            assert resp.match_id

    asyncio.run(run())
