"""Replays from any seat's view, the final reveal and the bots' notes (issue 20, items 2 and 3):
public once the match's record is (over and not embargoed), refused before with a clear 403;
a seat's own notes, live, only to the holder of its token (Authorization: Bearer)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from google.protobuf import json_format

from referee.core import registry
from referee.core.match import Match
from referee.web import frames as F

from .conftest import note_text


def _bundle(web, mid, seat=None):
    q = "" if seat is None else f"?seat={seat}"
    return httpx.get(f"{web.base}/api/matches/{mid}{q}", timeout=30)


def _finished(web, game="batavia", seats=3, seed=61):
    mid, tokens = web.call(web.create(game=game, seats=seats, seed=seed))
    web.call(web.play_slowly(mid, tokens, delay=0, notes=True), timeout=120)
    assert web.service.matches[mid].game_over is not None
    record = json.loads(Path(web.service.records_dir / f"{mid}.json").read_text())
    return mid, tokens, record


def _views_by_version(record, seat):
    """What ``seat`` saw at each state version, re-simulated here from the record."""
    game = registry.get(record["game"])
    m = Match.create(game, record["options"], record["seats"], int(record["seed"]))
    out = [F.view_json(game.view(m.state, seat))]
    for e in record["moves"]:
        msg = game.move_message()
        json_format.ParseDict(e["move"], msg)
        m.submit(e["seat"], game.move_from_proto(msg))
        out.append(F.view_json(game.view(m.state, seat)))
    return out


def test_a_finished_replay_follows_any_seat_and_ends_on_the_reveal(web):
    mid, _tokens, record = _finished(web)
    spectator = _bundle(web, mid).json()
    assert spectator["match"].get("viewer_seat") is None
    n = len(record["moves"])
    for seat in range(3):
        r = _bundle(web, mid, seat)
        assert r.status_code == 200, r.text
        b = r.json()
        assert b["match"]["viewer_seat"] == seat and len(b["frames"]) == n + 1
        want = _views_by_version(record, seat)
        for k in (0, 1, n // 2, n):
            assert F.view_at(b["frames"], k) == json.loads(json.dumps(want[k])), (seat, k)
        # a seat sees more than a spectator (its own hand, money, face-down tiles)
        assert any(F.view_at(b["frames"], k) != F.view_at(spectator["frames"], k)
                   for k in (1, n // 2, n))
    rev = _bundle(web, mid, "reveal").json()
    assert rev["match"]["viewer_seat"] == "reveal"
    assert [r["seat"] for r in rev["reveal"]] == [0, 1, 2]
    for s in range(3):
        assert rev["reveal"][s]["view"] == json.loads(
            json.dumps(_views_by_version(record, s)[-1]))
    # the page opens on a seat's view from its address
    assert httpx.get(f"{web.base}/matches/{mid}?seat=1").status_code == 200


def test_notes_are_in_the_public_replay_beside_their_moves(web):
    mid, _tokens, record = _finished(web, seed=62)
    noted = {e["n"]: e["note"] for e in record["moves"] if e.get("note")}
    assert len(noted) == len(record["moves"])  # the bots noted every move
    for seat in (None, 0, "reveal"):
        frames = _bundle(web, mid, seat).json()["frames"]
        got = {k: f["note"] for k, f in enumerate(frames) if f.get("note")}
        assert got == noted
    e = record["moves"][4]
    assert e["note"] == note_text(e["seat"], e["version_before"])


@pytest.mark.parametrize(("query", "status"), [("x", 400), ("-1", 400), ("3", 404),
                                                ("99999", 400)])
def test_a_bad_seat_is_refused(web, query, status):
    mid, _ = web.call(web.create(seats=3))
    assert httpx.get(f"{web.base}/api/matches/{mid}?seat={query}").status_code == status


def test_notes_need_the_seats_own_token(web):
    mid, tokens = web.call(web.create(seats=3, seed=63))
    _other, other_tokens = web.call(web.create(seats=3, seed=64))
    web.background(web.play_slowly(mid, tokens, delay=0.03, notes=True))
    rt = web.service.matches[mid]
    for _ in range(500):  # some moves of every seat, still running
        if rt.match.version >= 20:
            break
        time.sleep(0.02)
    url = f"{web.base}/api/matches/{mid}/notes"
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Bearer nope"}).status_code == 403
    r = httpx.get(url, headers={"Authorization": f"Bearer {other_tokens[0]}"})
    assert r.status_code == 403
    # a token in the address is not a token
    assert httpx.get(url + f"?token={tokens[0]}").status_code == 401
    for seat, token in enumerate(tokens):
        r = httpx.get(url, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
        body = r.json()
        assert body["seat"] == seat and body["notes"]
        assert all(n["note"] == note_text(seat, n["v"] - 1) for n in body["notes"])
        later = httpx.get(url + f"?since={body['notes'][0]['n']}",
                          headers={"Authorization": f"Bearer {token}"}).json()
        assert later["notes"][: len(body["notes"]) - 1] == body["notes"][1:]
    assert rt.game_over is None, "the notes were asked for while the match was live"
