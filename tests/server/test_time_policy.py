"""Time policy: DEFAULT_MOVE, RANDOM_LEGAL, FORFEIT, strikes, bank; the clock of a
disconnected seat keeps running; timeouts are recorded and replay."""
from __future__ import annotations

import asyncio
import json
import time

import grpc
import pytest
from google.protobuf import json_format

from referee.cli import main as cli_main
from referee.core import registry
from referee.core.match import Match
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, play_seat, reason_of

GAME = registry.get("batavia")


def wait_for(pred, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.01)
    raise AssertionError("condition not reached")


async def record_of(srv, mid):
    async with grpc.aio.insecure_channel(srv.target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid), metadata=md(ADMIN))
        return json.loads(rec.record_json)


def new_match(srv, policy):
    """A match whose clocks start at once (join_ms 1): these tests time seats nobody plays
    (test_fair_clock tests the wait for the seats to join)."""
    if not policy.join_ms:
        policy.join_ms = 1

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            return await create(referee_pb2_grpc.RefereeStub(ch), seats=3, seed=77, policy=policy)
    return asyncio.run(run())


@pytest.mark.parametrize("mode", ["DEFAULT_MOVE", "RANDOM_LEGAL"])
def test_timeout_plays_the_policy_move(server, mode, capsys):
    policy = pb.TimePolicy(move_ms=40, grace_ms=10, on_expiry=pb.OnExpiry.Value(mode))
    mid, _tokens = new_match(server, policy)
    rt = server.service.matches[mid]
    wait_for(lambda: len(rt.match.moves) >= 3)  # nobody connected: the clock still runs
    record = asyncio.run(record_of(server, mid))
    ref = Match.create(GAME, record["options"], 3, 77)
    for e in record["moves"][:3]:
        assert e["timeout"] is True and e["policy"] == mode
        assert e["elapsed_ms"] >= 40
        expected = ref.timeout_move(mode)
        assert e["move"] == json_format.MessageToDict(GAME.move_to_proto(expected))
        ref.submit(e["seat"], expected, e["version_before"], timeout=True, policy=mode)
        assert ref.moves[-1].state_hash == e["state_hash"]


def test_forfeit_ends_the_match_and_later_moves_are_match_over(server):
    # a second for the watcher to join before the forfeit, whose event it must see (at 30 ms a
    # busy machine let the forfeit happen first)
    policy = pb.TimePolicy(move_ms=1000, on_expiry=pb.FORFEIT)
    mid, tokens = new_match(server, policy)
    rt = server.service.matches[mid]
    first = rt.decision.seat
    watcher = (first + 1) % 3

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            log = await asyncio.wait_for(
                play_seat(stub, mid, tokens[watcher], None, react=False), 5)
            assert log.game_over is not None
            me = [s for s in log.game_over.seats if s.forfeited]
            assert [s.seat for s in me] == [first] and first not in log.game_over.winners
            assert any(e.kind == "referee.forfeit" and e.timeout for e in log.events)
            state = rt.match.state
            move = GAME.default_move(state, GAME.decision(state))
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await stub.SubmitMove(pb.SubmitMoveRequest(
                    match_id=mid, state_version=rt.match.version,
                    move=pb.Move(batavia=GAME.move_to_proto(move))),
                    metadata=md(tokens[first]))
            assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert reason_of(ei.value) == "MATCH_OVER"
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid))  # over: public
            return json.loads(rec.record_json)

    record = asyncio.run(run())
    assert record["forfeited"] == first and record["moves"] == []
    assert rt.game_over is not None


def test_strikes_then_forfeit(server, tmp_path, capsys):
    policy = pb.TimePolicy(move_ms=20, strikes=1, on_expiry=pb.DEFAULT_MOVE)
    mid, _tokens = new_match(server, policy)
    rt = server.service.matches[mid]
    wait_for(lambda: rt.game_over is not None)
    record = asyncio.run(record_of(server, mid))
    loser = record["forfeited"]
    assert loser is not None
    assert [e["seat"] for e in record["moves"]].count(loser) == 1  # one strike tolerated
    assert all(e["timeout"] and e["policy"] == "DEFAULT_MOVE" for e in record["moves"])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record))
    # a signed record: checked with the data directory's key
    assert cli_main(["replay", "verify", str(path), "--data-dir", str(server.data_dir)]) == 0


def test_bank_absorbs_a_slow_move(server):
    """A move slower than move_ms is not a timeout while the bank lasts, and it is paid from the
    bank. The bank is a minute, so how busy the machine is cannot decide the outcome."""
    policy = pb.TimePolicy(move_ms=30, bank_ms=60_000, on_expiry=pb.FORFEIT)
    mid, tokens = new_match(server, policy)
    rt = server.service.matches[mid]
    seat = rt.decision.seat

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                         metadata=md(tokens[seat]))
            assert d.deadline_unix_ms > time.time() * 1000 + 1000  # the bank counts in it
            await asyncio.sleep(0.15)
            r = await stub.SubmitMove(pb.SubmitMoveRequest(
                match_id=mid, state_version=d.state_version, move=d.legal_moves[0]),
                metadata=md(tokens[seat]))
            assert r.accepted

    asyncio.run(run())
    e = rt.match.moves[0]
    assert not e.timeout and e.elapsed_ms >= 150
    assert 0 < rt.clock.bank_left[seat] <= 60_000 - (150 - 30)


def test_random_legal_timeouts_stay_deterministic_across_a_restart(make_server, tmp_path):
    data = tmp_path / "data"
    srv = make_server(data)
    policy = pb.TimePolicy(move_ms=30, on_expiry=pb.RANDOM_LEGAL)
    mid, _tokens = new_match(srv, policy)
    wait_for(lambda: len(srv.service.matches[mid].match.moves) >= 2)
    srv.stop()
    srv.start()
    wait_for(lambda: len(srv.service.matches[mid].match.moves) >= 5)
    record = asyncio.run(record_of(srv, mid))
    ref = Match.create(GAME, record["options"], 3, 77)
    for e in record["moves"][:5]:
        expected = ref.timeout_move("RANDOM_LEGAL")
        assert e["move"] == json_format.MessageToDict(GAME.move_to_proto(expected)), e["n"]
        ref.submit(e["seat"], expected, e["version_before"], timeout=True, policy="RANDOM_LEGAL")
