"""Full matches over Play streams, records and `referee replay verify`."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc

from referee.cli import main as cli_main
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, play_match


def test_full_match_over_play_streams_then_replay_verify(server, tmp_path, capsys):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=4, seed=12345, names=["a", "b", "c", "d"])
        logs = await play_match(server.target, mid, tokens, seed=1)
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid))  # over: no token
        return mid, logs, rec

    mid, logs, rec = asyncio.run(run())
    assert rec.complete
    record = json.loads(rec.record_json)
    assert record["match_id"] == mid and record["seat_names"] == ["a", "b", "c", "d"]
    assert record["seed"] == "12345" and record["finished_unix_ms"] >= record["created_unix_ms"]
    n = len(record["moves"])
    assert n > 10
    for log in logs:
        assert log.game_over is not None and log.game_over.match_id == mid
        assert all(r.accepted for r in log.results), [r for r in log.results if not r.accepted]
        assert log.events, "every seat sees the match events"
    assert sum(len(log.results) for log in logs) == n
    assert sum(log.decisions for log in logs) == n
    path = logs[0].game_over.record_path
    assert path.endswith(f"records/{mid}.json")
    assert json.loads(Path(path).read_text())["moves"] == record["moves"]

    assert cli_main(["replay", "verify", path]) == 0
    assert f"OK {n} moves" in capsys.readouterr().out

    tampered = json.loads(Path(path).read_text())
    tampered["moves"][n // 2]["state_hash"] = "0" * 64
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tampered))
    assert cli_main(["replay", "verify", str(bad)]) == 1
    assert f"move {n // 2 + 1}" in capsys.readouterr().out
