"""A finished match's hidden information stays embargoed while a match on the same seed is
unfinished on this referee (duplicate matches of a tournament share their seed: the first
one's replay would show the second one's face-down setup in advance). Meanwhile spectators get
only what a live match shows them and a clear reason; the admin token still reads the record;
once every same-seed match is over, the replay and the record are public as before."""
from __future__ import annotations

import json

import grpc
import httpx
import pytest

from referee.server.play.create import REVEAL_POLICIES
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN
from tests.server.helpers import md, reason_of

SEED = 424242


async def _record(target: str, match_id: str, token: str | None = None):
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        return await stub.GetRecord(pb.GetRecordRequest(match_id=match_id),
                                    metadata=md(token) if token else None)


async def _watch(target: str, match_id: str) -> list[str]:
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        return [m.WhichOneof("msg") async for m in
                stub.Watch(pb.WatchRequest(match_id=match_id), timeout=10)]


async def _create(target: str, seed: int, policy: int = 0):
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        resp = await stub.CreateMatch(pb.CreateMatchRequest(
            game="batavia", seats=3, seed=seed, reveal_policy=policy), metadata=md(ADMIN))
    return resp.match_id, [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]


def _refused(web, coro) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        web.call(coro)
    return info.value


def test_a_finished_match_is_embargoed_while_its_seed_is_still_played(web):
    first, tokens = web.call(web.create(seats=3, seed=SEED))
    second, second_tokens = web.call(web.create(seats=3, seed=SEED))
    web.call(web.play(first, tokens), timeout=120)
    assert web.service.matches[first].game_over is not None
    assert web.service.matches[second].game_over is None

    # gRPC: GetRecord and Watch say why, and until when; the admin token still reads it
    err = _refused(web, _record(web.target, first))
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason_of(err) == "EMBARGOED" and second in err.details()
    for token in tokens:  # a seat of the finished match may sit in the other one
        assert reason_of(_refused(web, _record(web.target, first, token))) == "EMBARGOED"
    err = _refused(web, _watch(web.target, first))
    assert reason_of(err) == "EMBARGOED"
    full = web.call(_record(web.target, first, ADMIN))
    assert full.complete and json.loads(full.record_json)["seed"] == str(SEED)

    # web: no replay frame, no view, no record; the page says so
    bundle = httpx.get(f"{web.base}/api/matches/{first}").json()
    assert bundle["frames"] == [] and bundle["match"]["embargo"]["until"] == [second]
    for path in (f"/api/matches/{first}/views/0", f"/matches/{first}/record.json",
                 f"/api/matches/{first}?seat=0", f"/api/matches/{first}?seat=reveal"):
        r = httpx.get(web.base + path)
        assert r.status_code == 403 and "embargo" in r.text.lower()
    page = httpx.get(f"{web.base}/matches/{first}").text
    assert "embargo" in page.lower() and "record.json" not in page
    for body in (bundle, page):
        assert str(SEED) not in json.dumps(body)

    # still embargoed once memory has let the finished match go (the store answers)
    async def evict():
        web.service.registry.evict(web.service.matches[first])
    web.call(evict())
    assert reason_of(_refused(web, _record(web.target, first))) == "EMBARGOED"
    assert httpx.get(f"{web.base}/matches/{first}/record.json").status_code == 403

    # the other match ends: both are public
    web.call(web.play(second, second_tokens), timeout=120)
    for mid in (first, second):
        rec = web.call(_record(web.target, mid))
        assert rec.complete and json.loads(rec.record_json)["seed"] == str(SEED)
        assert httpx.get(f"{web.base}/matches/{mid}/record.json").status_code == 200
        bundle = httpx.get(f"{web.base}/api/matches/{mid}").json()
        assert len(bundle["frames"]) > 1 and bundle["match"]["embargo"] is None
        assert httpx.get(f"{web.base}/api/matches/{mid}/views/1").status_code == 200
        assert len(httpx.get(f"{web.base}/api/matches/{mid}?seat=1").json()["frames"]) > 1
    assert web.call(_watch(web.target, second))[-1] == "game_over"


def test_other_seeds_and_reveal_policy_none_are_public_at_once(web):
    # a different seed (or another game) does not hold a record back
    done, tokens = web.call(web.create(seats=3, seed=SEED))
    web.call(web.create(seats=3, seed=SEED + 1))
    web.call(web.create(game="goa", seats=3, seed=SEED))
    web.call(web.play(done, tokens), timeout=120)
    assert web.call(_record(web.target, done)).complete
    assert web.call(_watch(web.target, done))[-1] == "game_over"
    # the organizer's choice: NONE reveals at once even while a same-seed match runs
    open_, tokens = web.call(_create(web.target, SEED + 7, pb.REVEAL_POLICY_NONE))
    web.call(_create(web.target, SEED + 7))
    web.call(web.play(open_, tokens), timeout=120)
    assert web.call(_record(web.target, open_)).complete
    assert httpx.get(f"{web.base}/matches/{open_}/record.json").status_code == 200


def test_the_default_policy_is_safe():
    # unset is UNSPECIFIED (0), which the referee reads as SAFE, as 0.1.0's SAFE = 0 was
    assert pb.CreateMatchRequest().reveal_policy == pb.REVEAL_POLICY_UNSPECIFIED == 0
    assert REVEAL_POLICIES[pb.REVEAL_POLICY_UNSPECIFIED] == REVEAL_POLICIES[
        pb.REVEAL_POLICY_SAFE] == "safe"


def test_an_unknown_reveal_policy_is_refused(web):
    err = _refused(web, _create(web.target, SEED, 5))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and reason_of(err) == "MALFORMED"
    assert "reveal_policy" in err.details()
