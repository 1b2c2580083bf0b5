"""A long-running referee forgets finished matches (``--keep-finished``) without losing them:
the store and the record file answer for them afterwards. Refused-move counts survive a restart.
"""
from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path

import grpc

from referee.server.store.sqlite import SqliteStore
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md, play_match, reason_of


def _wait_until(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


async def _expect_over(coro_fn):
    try:
        await coro_fn()
    except grpc.aio.AioRpcError as err:
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err
        assert reason_of(err) == "MATCH_OVER", err
        return err.details()
    raise AssertionError("expected MATCH_OVER")


def test_finished_matches_leave_memory_and_stay_reachable(make_server):
    srv = make_server(keep_finished_s=0.0)

    async def create_all():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return [await create(stub, seats=3, seed=s) for s in (3, 4, 5)]

    matches = asyncio.run(create_all())
    assert len(srv.service.matches) == 3
    for i, (mid, tokens) in enumerate(matches):
        logs = asyncio.run(play_match(srv.target, mid, tokens, seed=i))
        assert all(log.game_over is not None for log in logs)
    # memory holds neither the finished matches nor their tokens
    assert _wait_until(lambda: not srv.service.matches), srv.service.matches
    assert not srv.service.registry.tokens

    mid, tokens = matches[0]
    record_file = json.loads((srv.data_dir / "records" / f"{mid}.json").read_text())

    async def after():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid))
            assert rec.complete and json.loads(rec.record_json) == record_file
            details = await _expect_over(lambda: stub.GetView(
                pb.GetViewRequest(match_id=mid), metadata=md(tokens[1])))
            assert "GetRecord" in details

            async def join():
                async def reqs():
                    yield pb.ClientMessage(join=pb.Join(match_id=mid))
                async for _ in stub.Play(reqs(), metadata=md(tokens[0])):
                    pass

            await _expect_over(join)

            async def watch():
                async for _ in stub.Watch(pb.WatchRequest(match_id=mid)):
                    pass

            await _expect_over(watch)
            # a match the referee never had is still NOT_FOUND, and a made-up id is not a path
            for bogus in ("0123456789abcdef", "../referee.sqlite3", ""):
                try:
                    await stub.GetRecord(pb.GetRecordRequest(match_id=bogus))
                except grpc.aio.AioRpcError as err:
                    assert err.code() == grpc.StatusCode.NOT_FOUND, (bogus, err)
                else:
                    raise AssertionError(bogus)

    asyncio.run(after())


def test_a_finished_match_stays_in_memory_for_keep_finished(make_server):
    srv = make_server(keep_finished_s=300.0)

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=8)
        await play_match(srv.target, mid, tokens, seed=1)
        return mid, tokens

    mid, tokens = asyncio.run(run())
    time.sleep(0.2)
    assert mid in srv.service.matches  # a late seat still gets its GameOver message
    # ... but the held match no longer carries its move history: the record file does
    assert srv.service.matches[mid].match.moves == []
    on_disk = json.loads((srv.data_dir / "records" / f"{mid}.json").read_text())
    assert len(on_disk["moves"]) > 50

    async def late():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            resp = await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[2]))
            assert resp.HasField("game_over")
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid))  # no token needed
            assert rec.complete and json.loads(rec.record_json) == on_disk

    asyncio.run(late())


def test_refused_move_counts_survive_a_restart(make_server, tmp_path):
    data = tmp_path / "data"
    srv = make_server(data)

    async def first():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=12)
            rt = srv.service.matches[mid]
            seat = rt.decision.seat
            other = (seat + 1) % 3
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                         metadata=md(tokens[seat]))
            # two refusals: out of turn (seat `other`), then a stale version (seat `seat`)
            for tok, version in ((tokens[other], d.state_version),
                                 (tokens[seat], d.state_version + 5)):
                try:
                    await stub.SubmitMove(pb.SubmitMoveRequest(
                        match_id=mid, state_version=version, move=d.legal_moves[0]),
                        metadata=md(tok))
                except grpc.aio.AioRpcError as err:
                    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
                else:
                    raise AssertionError("accepted a refused move")
            # the next accepted move carries the counts to the store
            r = await stub.SubmitMove(pb.SubmitMoveRequest(
                match_id=mid, state_version=d.state_version, move=d.legal_moves[0]),
                metadata=md(tokens[seat]))
            assert r.accepted
            expected = [0, 0, 0]
            expected[seat] += 1
            expected[other] += 1
            return mid, tokens, expected

    mid, tokens, expected = asyncio.run(first())
    conn = sqlite3.connect(data / "referee.sqlite3")
    stored = conn.execute("SELECT rejected_json FROM matches WHERE id=?", (mid,)).fetchone()[0]
    conn.close()
    assert json.loads(stored) == expected
    srv.stop()
    srv.start()
    assert srv.service.matches[mid].rejections == expected
    logs = asyncio.run(play_match(srv.target, mid, tokens, seed=3))
    record = json.loads(Path(logs[0].game_over.record_path).read_text())
    assert record["rejected_moves"] == expected


def test_an_older_store_gains_the_new_column(tmp_path):
    conn = sqlite3.connect(tmp_path / "referee.sqlite3")
    conn.execute(
        "CREATE TABLE matches (id TEXT PRIMARY KEY, game TEXT NOT NULL, options_json TEXT NOT "
        "NULL, seats INTEGER NOT NULL, seed TEXT NOT NULL, components_name TEXT NOT NULL, "
        "components_sha256 TEXT NOT NULL, time_policy_json TEXT NOT NULL, token_hashes_json "
        "TEXT NOT NULL, names_json TEXT NOT NULL, status TEXT NOT NULL, created_ms INTEGER NOT "
        "NULL, finished_ms INTEGER, forfeited INTEGER, result_json TEXT)")
    conn.execute("INSERT INTO matches VALUES ('m1','batavia','{}',3,'1','s','h','{}','[]',"
                 "'[]','finished',1,2,NULL,NULL)")
    conn.commit()
    conn.close()
    store = SqliteStore(tmp_path)
    try:
        rows = store.load_matches()
        assert [(r.id, r.rejected) for r in rows] == [("m1", None)]
        assert store.match_status("m1") == "finished"
        assert store.match_status("nope") is None
    finally:
        store.close()
