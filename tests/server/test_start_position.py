"""CreateMatchRequest.start over gRPC (issue 21, item 6): a match that starts where a recorded
match stood after N moves plays on, its record verifies from scratch (``referee replay
verify``), a restarted referee resumes it, and a start the referee cannot use (not JSON, a
tampered or foreign record, a move beyond its end, another seat count or options, a redraw
without a sampler) is refused with INVALID_ARGUMENT / MALFORMED and creates nothing."""
from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import grpc
import pytest

from referee.cli import main as cli_main
from referee.core import registry
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from ..sim.records import played
from .conftest import ADMIN
from .helpers import md, play_match, reason_of

GAME = registry.get("batavia")


def source_record(seed: int = 3) -> dict:
    return played("batavia", 3, seed)


def request(record: dict | str, move: int, seats: int = 3, redraw: bool = False,
            options: dict | None = None) -> pb.CreateMatchRequest:
    text = record if isinstance(record, str) else json.dumps(record)
    return pb.CreateMatchRequest(
        game="batavia", seats=seats, seed=77, options=options or {},
        start=pb.StartPosition(record_json=text, move=move, redraw_hidden=redraw))


async def _create(target: str, req: pb.CreateMatchRequest):
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        resp = await stub.CreateMatch(req, metadata=md(ADMIN))
        return resp.match_id, [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]


def test_a_started_match_plays_on_verifies_and_resumes(make_server, tmp_path, capsys):
    data = tmp_path / "data"
    srv = make_server(data)
    source = source_record()
    n = 35
    mid, tokens = asyncio.run(_create(srv.target, request(source, n)))
    rt = srv.service.matches[mid]
    assert GAME.hash_state(rt.match.state) == source["moves"][n - 1]["state_hash"]
    assert rt.match.version == 0 and not rt.match.moves  # a match of its own from there
    srv.stop()
    srv.start()  # a restarted referee rebuilds it from the stored start and move log
    assert GAME.hash_state(srv.service.matches[mid].match.state) == \
        source["moves"][n - 1]["state_hash"]
    logs = asyncio.run(play_match(srv.target, mid, tokens, seed=2))
    path = logs[0].game_over.record_path
    record = json.loads(Path(path).read_text())
    assert record["start"]["move"] == n and record["start"]["redraw_hidden"] is False
    assert record["seed"] == "77" and record["moves"]
    assert cli_main(["replay", "verify", path]) == 0
    assert "OK" in capsys.readouterr().out


@pytest.mark.parametrize(("change", "why"), [
    (lambda r: "{not json", "not JSON"),
    (lambda r: {**r, "moves": [{**r["moves"][0], "state_hash": "ab" * 32}, *r["moves"][1:]]},
     "state hash differs"),
    (lambda r: {**r, "game": "goa"}, "not 'batavia'"),
    (lambda r: {**r, "format": "referee-record/9"}, "record"),
    (lambda r: {**r, "moves": r["moves"][:5]}, "cannot start after move 10"),
    (lambda r: [1, 2], "JSON object"),
])
def test_a_bad_start_is_refused_and_creates_nothing(server, change, why):
    source = source_record(4)
    req = request(change(copy.deepcopy(source)), 10)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        asyncio.run(_create(server.target, req))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason_of(err.value) == "MALFORMED"
    assert why in err.value.details()
    assert not server.service.matches


@pytest.mark.parametrize(("req_of", "why"), [
    (lambda r: request(r, 10, seats=4), "for 3 seats, not 4"),
    (lambda r: request(r, 10, options={"setup": "face_up"}), "other options"),
    (lambda r: request(r, len(r["moves"])), "over after move"),
])
def test_a_start_for_another_match_is_refused(server, req_of, why):
    with pytest.raises(grpc.aio.AioRpcError) as err:
        asyncio.run(_create(server.target, req_of(source_record(5))))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason_of(err.value) == "MALFORMED" and why in err.value.details()
    assert not server.service.matches


def test_a_redraw_without_a_sampler_is_refused(server, monkeypatch):
    def no_sampler(*args, **kwargs):
        raise NotImplementedError

    monkeypatch.setattr(GAME, "sample_state", no_sampler)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        asyncio.run(_create(server.target, request(source_record(6), 10, redraw=True)))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no sampler" in err.value.details() and not server.service.matches
