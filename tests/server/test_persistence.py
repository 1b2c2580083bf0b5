"""Persistence: the SQLite log, restart-resume with the same tokens, records on disk."""
from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path

import grpc

from referee.cli import main as cli_main
from referee.core import registry
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md, play_match

GAME = registry.get("batavia")


async def unary_random_moves(srv, stub, mid, tokens, n, rnd):
    for _ in range(n):
        seat = srv.service.matches[mid].decision.seat
        d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                     metadata=md(tokens[seat]))
        r = await stub.SubmitMove(pb.SubmitMoveRequest(
            match_id=mid, state_version=d.state_version, move=rnd.choice(list(d.legal_moves))),
            metadata=md(tokens[seat]))
        assert r.accepted


def test_restart_resumes_unfinished_matches(make_server, tmp_path, capsys):
    data = tmp_path / "data"
    srv = make_server(data)

    async def first_half():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=31337, names=["x", "y", "z"])
            await unary_random_moves(srv, stub, mid, tokens, 25, random.Random(4))
            done_mid, done_tokens = await create(stub, seats=3, seed=1)
        await play_match(srv.target, done_mid, done_tokens, seed=9)
        return mid, tokens, done_mid

    mid, tokens, done_mid = asyncio.run(first_half())
    rt = srv.service.matches[mid]
    before = (rt.match.version, GAME.hash_state(rt.match.state), len(rt.match.moves))
    assert before[2] == 25
    # every acknowledged move is in the database
    conn = sqlite3.connect(data / "referee.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT COUNT(*) FROM moves WHERE match_id=?", (mid,)).fetchone()[0] == 25
    conn.close()
    srv.stop()

    srv.start()  # same data dir, new port
    rt2 = srv.service.matches[mid]
    assert rt2 is not rt
    assert (rt2.match.version, GAME.hash_state(rt2.match.state), len(rt2.match.moves)) == before
    assert rt2.names == ["x", "y", "z"]

    async def second_half():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            # the finished match's record is still served, to anyone
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=done_mid))
            assert rec.complete and json.loads(rec.record_json)["match_id"] == done_mid
        logs = await play_match(srv.target, mid, tokens, seed=5)
        return logs

    logs = asyncio.run(second_half())
    acting = [log for log in logs if log.decisions]
    assert acting, "the pending decision is pushed again after reconnecting"
    assert all(log.game_over is not None for log in logs)
    path = logs[0].game_over.record_path
    record = json.loads(Path(path).read_text())
    assert record["seed"] == "31337" and len(record["moves"]) > 25
    assert cli_main(["replay", "verify", path]) == 0
    assert "OK" in capsys.readouterr().out


def test_a_tampered_log_takes_only_its_match_offline(make_server, tmp_path):
    """Resume replays each log with core's replay, which checks every state hash: a log that
    disagrees leaves its match unavailable (MATCH_OVER with the reason) and the others resumed."""
    data = tmp_path / "data"
    srv = make_server(data)

    async def setup():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            bad, bad_tokens = await create(stub, seats=3, seed=3)
            await unary_random_moves(srv, stub, bad, bad_tokens, 6, random.Random(1))
            good, good_tokens = await create(stub, seats=3, seed=4)
            await unary_random_moves(srv, stub, good, good_tokens, 6, random.Random(2))
        return bad, bad_tokens, good

    bad, bad_tokens, good = asyncio.run(setup())
    good_version = srv.service.matches[good].match.version
    srv.stop()
    conn = sqlite3.connect(data / "referee.sqlite3")
    conn.execute("UPDATE moves SET state_hash='0' WHERE match_id=? AND n=4", (bad,))
    conn.commit()
    conn.close()

    srv.start()
    assert bad not in srv.service.matches
    assert srv.service.matches[good].match.version == good_version

    async def refused():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            try:
                await stub.GetView(pb.GetViewRequest(match_id=bad), metadata=md(bad_tokens[0]))
            except grpc.aio.AioRpcError as err:
                return err
        return None

    err = asyncio.run(refused())
    assert err is not None and err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "move 4: state hash differs" in err.details()


def test_the_match_runtime_does_not_import_the_service():
    """Issue 10: a live match gets a small context, not a back-pointer to RefereeService."""
    import ast

    from referee.server.play import runtime
    tree = ast.parse(Path(runtime.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "service" not in imported and "referee.server.front.service" not in imported
    assert "service" not in runtime.MatchRuntime.__init__.__code__.co_varnames


def test_a_store_of_the_previous_schema_gains_abandoned_json_in_place(tmp_path):
    """A data dir written before abandonments were stored (matches has rejected_json, not
    abandoned_json) opens as before, its rows intact, and then stores abandoned seats."""
    from referee.server.store.sqlite import SqliteStore

    conn = sqlite3.connect(tmp_path / "referee.sqlite3")
    conn.execute(
        "CREATE TABLE matches (id TEXT PRIMARY KEY, game TEXT NOT NULL, options_json TEXT NOT "
        "NULL, seats INTEGER NOT NULL, seed TEXT NOT NULL, components_name TEXT NOT NULL, "
        "components_sha256 TEXT NOT NULL, time_policy_json TEXT NOT NULL, token_hashes_json "
        "TEXT NOT NULL, names_json TEXT NOT NULL, status TEXT NOT NULL, created_ms INTEGER NOT "
        "NULL, finished_ms INTEGER, forfeited INTEGER, result_json TEXT, rejected_json TEXT)")
    conn.execute("INSERT INTO matches VALUES ('m1','batavia','{}',3,'1','s','h','{}','[]',"
                 "'[]','running',1,NULL,NULL,NULL,'[0,1,0]')")
    conn.commit()
    conn.close()
    store = SqliteStore(tmp_path)
    store.start()
    try:
        [row] = store.load_matches()
        assert (row.id, row.rejected, row.abandoned) == ("m1", [0, 1, 0], None)

        async def write():
            await store.set_abandoned("m1", {2: "bot exited (code 1)", 0: "never joined"})
        asyncio.run(write())
        [row] = store.load_matches()
        assert row.abandoned == {0: "never joined", 2: "bot exited (code 1)"}
        assert row.rejected == [0, 1, 0]
    finally:
        store.close()
