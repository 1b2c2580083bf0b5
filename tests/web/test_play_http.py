"""The play page's calls over HTTP (issue 33 item 1; no browser): a seat's state is exactly what
GetView gives that seat, a move goes through SubmitMove's checks, and bad input is refused with
the documented JSON error and its reason, changing nothing. The browser tests are in
test_play_browser.py."""
from __future__ import annotations

import json
import random

import grpc
import httpx
import pytest
from google.protobuf import json_format

from referee.core import registry
from referee.core.match import Match
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from referee.web.play import seat_json
from tests.contract.hooks import for_game
from tests.server.helpers import md


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def seat_state(web, mid: str, token: str) -> dict:
    r = httpx.get(f"{web.base}/api/play/{mid}", headers=auth(token))
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store"
    return r.json()


async def grpc_view(web, mid: str, token: str) -> pb.GetViewResponse:
    async with grpc.aio.insecure_channel(web.target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        return await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(token))


def test_the_seat_state_is_what_getview_gives_that_seat(web):
    mid, tokens = web.call(web.create(game="batavia", seats=3, names=["ann", "bob", "cy"],
                                      policy=pb.TimePolicy(move_ms=60_000, bank_ms=90_000)))
    for seat, token in enumerate(tokens):
        got = seat_state(web, mid, token)
        # and every seat's public clock, as Watch sends it
        assert got["clock"]["move_ms"] == 60_000 and got["clock"]["bank_left_ms"] == [90_000] * 3
        want = web.call(grpc_view(web, mid, token))
        assert got["seat"] == seat and got["version"] == want.state_version
        assert got["view"] == json_format.MessageToDict(
            want.view.batavia, preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True)
        if want.HasField("decision"):
            assert [m["move"] for m in got["decision"]["moves"]] == [
                json_format.MessageToDict(m, preserving_proto_field_name=True,
                                          always_print_fields_with_no_presence=True)
                for m in want.decision.legal_moves]
            assert got["decision"]["version"] == want.decision.state_version
            assert all(m["id"] and m["text"] for m in got["decision"]["moves"])
        else:
            assert got["decision"] is None
    # the token is in no answer, and the page's address carries none
    page = httpx.get(f"{web.base}/play/{mid}")
    assert page.status_code == 200 and "/static/play.js" in page.text
    assert not any(t in page.text for t in tokens)


def test_a_move_is_played_and_bad_input_changes_nothing(web):
    mid, tokens = web.call(web.create(game="batavia", seats=3, names=["ann", "bob", "cy"]))
    _, other_tokens = web.call(web.create(game="batavia", seats=3))
    seat = next(s for s, t in enumerate(tokens) if seat_state(web, mid, t)["decision"])
    token = tokens[seat]
    before = seat_state(web, mid, token)
    d = before["decision"]
    url = f"{web.base}/api/play/{mid}/move"
    legal = d["moves"][0]["move"]

    def refused(body, headers, status, reason):
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        r = httpx.post(url, content=data, headers={**headers, "Content-Type": "application/json"})
        assert r.status_code == status, (body, r.text)
        out = r.json()
        assert out["reason"] == reason and out["status"] == status and out["error"], out
        now = seat_state(web, mid, token)
        assert {**now, "now_ms": 0} == {**before, "now_ms": 0}, "a refused call changed the match"
        return out

    ok = {"move": legal, "version": d["version"]}
    refused(ok, {}, 401, "UNAUTHENTICATED")
    refused(ok, auth("not-a-token"), 401, "UNAUTHENTICATED")
    refused(ok, auth(other_tokens[0]), 403, "PERMISSION_DENIED")
    refused(b"{not json", auth(token), 400, "MALFORMED")
    refused(b"\xff\xfe", auth(token), 400, "MALFORMED")
    refused([1, 2], auth(token), 400, "MALFORMED")
    refused({**ok, "extra": 1}, auth(token), 400, "MALFORMED")
    out = refused({"move": "bid", "version": d["version"]}, auth(token), 400, "MALFORMED")
    assert "a JSON object" in out["error"]
    refused({"move": {"batavia": {"fly": {}}}, "version": d["version"]}, auth(token), 400,
            "MALFORMED")
    refused({"move": {"goa": {"pass": {}}}, "version": d["version"]}, auth(token), 400,
            "WRONG_GAME")
    refused({"move": legal, "version": True}, auth(token), 400, "MALFORMED")
    refused({"move": legal, "version": d["version"] + 5}, auth(token), 409, "STALE_STATE")
    illegal = refused({"move": {"batavia": {"bid": {"amount": 999}}}, "version": d["version"]},
                      auth(token), 409, "ILLEGAL_MOVE")
    assert "bid" in illegal["error"].lower()
    # the other seat is not to move
    refused({"move": legal, "version": d["version"]}, auth(tokens[(seat + 1) % 3]), 409,
            "NOT_YOUR_TURN")
    # and the legal one is played
    r = httpx.post(url, json={**ok, "note": "my first move", "request_id": "r1"},
                   headers=auth(token))
    assert r.status_code == 200, r.text
    assert r.json()["accepted"] is True
    after = seat_state(web, mid, token)
    assert after["version"] > before["version"]
    assert web.service.matches[mid].match.moves[-1].note == "my first move"


@pytest.mark.parametrize(("game_name", "seats", "options"), [
    ("batavia", 3, {"setup": "face_down"}), ("goa", 3, {}), ("goa", 2, {"edition": "2004"}),
    ("santa_maria", 3, {})])
def test_the_seat_state_ignores_what_the_seat_cannot_see(game_name, seats, options):
    """Everything the seat may not see (other hands, piles, face-down tiles, the others'
    ducats or ships, the RNG) drawn anew leaves the page's JSON of that seat the same."""
    game = registry.get(game_name)
    hook = for_game(game_name)
    wire_field = game.spec.name
    meta = {"id": "m", "game": game_name, "names": [f"p{i}" for i in range(seats)],
            "state": "running"}

    def page_json(state, seat: int, version: int) -> str:
        d = game.decision(state)
        reply = pb.GetViewResponse(state_version=version)
        getattr(reply.view, wire_field).CopyFrom(game.view(state, seat))
        if d is not None and d.seat == seat:
            reply.decision.seat = seat
            reply.decision.kind = d.kind
            reply.decision.prompt = d.prompt
            for mv in d.moves:
                getattr(reply.decision.legal_moves.add(), wire_field).CopyFrom(
                    game.move_to_proto(mv))
        out = seat_json(meta, reply)
        out.pop("now_ms")
        return json.dumps(out, sort_keys=True)

    m = Match.create(game, options, seats, 4242)
    rnd = random.Random(1)
    checked = changed = step = 0
    while (d := m.decision()) is not None and step < 400:
        if step % 13 == 0:
            for seat in range(seats):
                want = page_json(m.state, seat, m.version)
                other = hook.rerandomise(m.state, seat, rnd)
                changed += game.hash_state(other) != game.hash_state(m.state)
                assert page_json(other, seat, m.version) == want, \
                    f"{game_name}: the play page of seat {seat} shows what it may not see"
                checked += 1
        m.submit(d.seat, rnd.choice(d.moves))
        step += 1
    assert checked > 20 and changed > checked // 2, "the test must vary hidden state"


def test_the_seat_calls_are_rate_limited_like_the_seats_grpc_calls(tmp_path):
    """One budget per seat token (as its gRPC calls), per client address for unknown tokens:
    a flood gets 429 with the reason, and the seat's other calls share the same bucket. The
    bucket refills once in 1,000 s, so however slowly a loaded machine sends the 12 calls, the
    budget of 5 runs out."""
    from .conftest import WebHandle

    h = WebHandle(tmp_path / "data", http_port=0, rate=0.001, burst=5.0)
    h.start()
    try:
        mid, tokens = h.call(h.create(game="batavia", seats=3))
        codes = [httpx.get(f"{h.base}/api/play/{mid}", headers=auth(tokens[0])).status_code
                 for _ in range(12)]
        assert codes[0] == 200 and codes[-1] == 429, codes
        r = httpx.get(f"{h.base}/api/play/{mid}", headers=auth(tokens[0]))
        assert r.status_code == 429 and r.json()["reason"] == "RESOURCE_EXHAUSTED"
        # the same token's gRPC call is in the same bucket
        with pytest.raises(grpc.aio.AioRpcError) as err:
            h.call(grpc_view(h, mid, tokens[0]))
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        # made-up tokens are charged to the client's address
        made_up = [httpx.get(f"{h.base}/api/play/{mid}", headers=auth(f"x{i}")).status_code
                   for i in range(12)]
        assert made_up[-1] == 429, made_up
    finally:
        h.close()


def test_a_move_sent_while_the_referee_drains_gets_503_draining_and_changes_nothing(web):
    """SIGTERM's drain (RefereeServer.drain) holds every match's lock until the process stops:
    a move from the play page must not wait on it (it did, until the page gave up) but be
    refused at once, as SubmitMove is, with 503, the documented JSON error, the reason DRAINING
    and Retry-After (play.js says the referee is restarting and sends it again), and nothing
    played. The page can still read its seat meanwhile."""
    mid, tokens = web.call(web.create(game="batavia", seats=3))
    seat = next(s for s, t in enumerate(tokens) if seat_state(web, mid, t)["decision"])
    before = seat_state(web, mid, tokens[seat])
    d = before["decision"]
    web.call(web.server.drain())
    r = httpx.post(f"{web.base}/api/play/{mid}/move", headers=auth(tokens[seat]), timeout=10,
                   json={"move": d["moves"][0]["move"], "version": d["version"],
                         "request_id": "during-drain"})
    assert r.status_code == 503, r.text
    assert int(r.headers["retry-after"]) > 0
    assert r.headers["cache-control"] == "no-store"
    out = r.json()
    assert out["status"] == 503 and out["reason"] == "DRAINING" and out["error"], out
    assert web.service.store.load_moves(mid) == []
    assert {**seat_state(web, mid, tokens[seat]), "now_ms": 0} == {**before, "now_ms": 0}
