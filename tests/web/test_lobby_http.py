"""The lobby's pages and JSON calls (issue 33, item 6; referee/web/lobby.py): a seek opened,
joined through its invitation once (a second use refused with its reason), tokens only in JSON
bodies and only to their holders, bad input answered with the documented JSON error."""
from __future__ import annotations

import httpx


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _enter(web, name: str) -> str:
    r = httpx.post(web.base + "/api/lobby/enter", json={"name": name})
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    assert r.json()["name"] == name
    return r.json()["lobby_token"]


def test_a_seek_opened_and_joined_through_its_invitation_over_http(web):
    page = httpx.get(web.base + "/lobby")
    assert page.status_code == 200 and 'id="seek-form"' in page.text
    assert "/static/lobby.js" in page.text
    listing = httpx.get(web.base + "/api/lobby").json()
    assert listing["seeks"] == [] and listing["bots"] == []
    assert {"goa", "batavia"} <= {g["name"] for g in listing["games"]}
    assert "blitz" in listing["presets"]
    host, friend, late = (_enter(web, n) for n in ("host", "friend", "late"))
    opened = httpx.post(web.base + "/api/lobby/seeks", headers=_bearer(host),
                        json={"game": "goa", "seats": 2, "preset": "5+3"})
    assert opened.status_code == 200, opened.text
    doc = opened.json()
    seek, secret = doc["seek"], doc["invitation"]
    assert seek["state"] == "SEEK_OPEN" and seek["time_policy"]["increment_ms"] == 3000
    public = httpx.get(web.base + "/api/lobby").text
    assert seek["seek_id"] in public and secret not in public and host not in public
    assert "seat_tokens" not in httpx.get(
        web.base + f"/api/lobby/seeks/{seek['seek_id']}").json()
    assert httpx.get(web.base + "/lobby/join").status_code == 200
    joined = httpx.post(web.base + "/api/lobby/join", headers=_bearer(friend),
                        json={"invitation": secret, "name": "Bea"}).json()
    assert joined["seek"]["state"] == "SEEK_FILLED" and len(joined["seat_tokens"]) == 1
    again = httpx.post(web.base + "/api/lobby/join", headers=_bearer(late),
                       json={"invitation": secret})
    assert again.status_code == 403
    assert again.json() == {"error": again.json()["error"], "status": 403,
                            "reason": "BAD_INVITATION"}
    mine = httpx.get(web.base + f"/api/lobby/seeks/{seek['seek_id']}?wait_ms=10",
                     headers=_bearer(host)).json()
    assert mine["seek"]["match_id"] == joined["seek"]["match_id"]
    assert len(mine["seat_tokens"]) == 1
    assert mine["seat_tokens"][0]["token"] != joined["seat_tokens"][0]["token"]
    # the match is an ordinary one: the viewer lists it, with the seat names taken
    matches = httpx.get(web.base + "/api/matches").json()["matches"]
    assert [m["id"] for m in matches] == [mine["seek"]["match_id"]]


def test_lobby_calls_refuse_bad_input_with_the_json_error(web):
    me = _enter(web, "me")
    cases = [
        ("/api/lobby/seeks", {}, {"game": "goa"}, 401, "UNAUTHENTICATED"),
        ("/api/lobby/seeks", _bearer("x" * 64), {"game": "goa"}, 401, "UNAUTHENTICATED"),
        ("/api/lobby/seeks", _bearer(me), {"game": "goa", "colour": "red"}, 400, "MALFORMED"),
        ("/api/lobby/seeks", _bearer(me), {"game": "goa", "rated": "yes"}, 400, "MALFORMED"),
        ("/api/lobby/seeks", _bearer(me), {"game": "goa", "preset": "999+1"}, 400,
         "MALFORMED"),
        ("/api/lobby/seeks", _bearer(me), {"game": "goa", "seats": 9}, 400, "MALFORMED"),
        ("/api/lobby/challenge", _bearer(me), {"bot": "nobody", "game": "goa"}, 404,
         "NOT_FOUND"),
        ("/api/lobby/join", _bearer(me), {"seek_id": "s0"}, 404, "NOT_FOUND"),
        ("/api/lobby/seeks/s0/cancel", _bearer(me), {}, 404, "NOT_FOUND"),
        ("/api/lobby/enter", {}, {"name": "a\u0000b"}, 400, "MALFORMED"),
    ]
    for path, headers, body, status, reason in cases:
        r = httpx.post(web.base + path, headers=headers, json=body)
        assert (r.status_code, r.json()["reason"]) == (status, reason), (path, body, r.text)
    r = httpx.get(web.base + "/api/lobby/seeks/s0?wait_ms=99999")
    assert r.status_code == 400 and r.json()["reason"] == "MALFORMED"
