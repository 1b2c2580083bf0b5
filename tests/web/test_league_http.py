"""The league JSON API and the match list's filters and pages over HTTP (issue 19, item 3):
documented shapes, refusals with their status and reason, unlisted matches kept out."""
from __future__ import annotations

import httpx

from referee.v1 import referee_pb2 as pb
from tests.leagues.archives import good_tar_gz
from tests.server.conftest import ADMIN

from .league_fixture import CRASH_LINE, build_sync


def test_match_list_filters_pages_and_leaves_unlisted_matches_out(web):
    lg = build_sync(web)
    web.call(web.create(seed=3))  # a match of no league
    everything = httpx.get(web.base + "/api/matches").json()
    ids = [m["id"] for m in everything["matches"]]
    assert lg.unlisted not in ids and len(ids) == 3
    assert everything["next"] is None and everything["previous"] is None
    league = httpx.get(web.base + "/api/matches?league=spring").json()["matches"]
    assert sorted(m["id"] for m in league) == sorted(lg.finished)
    assert all(m["league"] == "spring" and m["bots"] == ["alpha", "beta", "gamma"]
               and m["bot_versions"] == [1, 0, 1] for m in league)
    assert [m["id"] for m in httpx.get(web.base + "/api/matches?bot=beta").json()["matches"]] \
        == [m["id"] for m in league]
    assert httpx.get(web.base + "/api/matches?game=goa").json()["matches"] == []
    # pages of one, forwards then back
    seen, cursor = [], None
    while True:
        page = httpx.get(web.base + "/api/matches?limit=1"
                         + (f"&cursor={cursor}" if cursor else "")).json()
        seen += [m["id"] for m in page["matches"]]
        if page["next"] is None:
            break
        cursor = page["next"]
    assert seen == ids
    back = httpx.get(web.base + f"/api/matches?limit=1&before={page['previous']}").json()
    assert [m["id"] for m in back["matches"]] == ids[1:2]
    for bad in ("limit=0", "limit=201", "limit=x", "cursor=zz", "before=1-XYZ", "game=" + "g" * 65):
        r = httpx.get(web.base + "/api/matches?" + bad)
        assert r.status_code == 400 and r.json()["status"] == 400, bad
    # the HTML list: filters and pages too
    html = httpx.get(web.base + "/?league=spring&limit=1").text
    assert html.count('<tr data-id=') == 1 and 'id="next"' in html and lg.unlisted not in html
    assert httpx.get(web.base + "/?limit=999").status_code == 400


def test_league_and_bot_json(web):
    lg = build_sync(web)
    leagues = httpx.get(web.base + "/api/leagues").json()["leagues"]
    assert [x["name"] for x in leagues] == ["spring"]
    league = httpx.get(web.base + "/api/leagues/spring").json()
    assert (league["state"], league["registration"], league["bots"]) == (
        "running", "invite", ["alpha", "beta", "gamma"])
    st = httpx.get(web.base + "/api/leagues/spring/standings").json()
    assert [e["bot"] for e in st["standings"]["entries"]] == ["alpha", "gamma", "beta"]
    assert st["published_unix_ms"] > 0 and st["state"] == "running"
    gamma = httpx.get(web.base + "/api/bots/gamma").json()
    assert (gamma["kind"], gamma["rank"], gamma["current_version"]) == ("hosted", 2, 1)
    assert [(v["version"], v["status"]) for v in gamma["versions"]] == [(2, "failed"),
                                                                        (1, "ready")]
    assert gamma["versions"][0]["message"] == CRASH_LINE
    assert gamma["standing"]["recent_incidents"][0]["message"] == CRASH_LINE
    assert [h["opponent"] for h in gamma["head_to_head"]] == ["alpha"]
    for path in ("/api/leagues/nope", "/api/leagues/nope/standings", "/api/bots/nope"):
        r = httpx.get(web.base + path)
        assert (r.status_code, r.json()["reason"]) == (404, "NOT_FOUND"), path
    for path in ("/leagues/nope", "/bots/nope", "/leagues/nope/register", "/leagues/nope/admin"):
        assert httpx.get(web.base + path).status_code == 404, path
    assert lg.tokens


def test_register_upload_and_admin_endpoints(web):
    lg = build_sync(web)
    reg = web.base + "/api/leagues/spring/register"
    r = httpx.post(reg, json={"name": "delta", "kind": "remote"})
    assert (r.status_code, r.json()["reason"]) == (403, "BAD_INVITE")
    r = httpx.post(reg, json={"name": "alpha", "invite_code": lg.invite})
    assert (r.status_code, r.json()["reason"]) == (409, "ALREADY_EXISTS")
    for body in ({"name": "x", "kind": "robot"}, {"name": 5}, [1]):
        assert httpx.post(reg, json=body).status_code == 400
    assert httpx.post(reg, content=b"{" * 20_000).status_code == 400
    r = httpx.post(reg, json={"name": "delta", "kind": "hosted", "invite_code": lg.invite,
                              "owner": "Dee"})
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    token = r.json()["bot_token"]
    bot = web.service.leagues.bots["delta"]
    assert (bot.kind, bot.owner) == (pb.BOT_KIND_HOSTED, "Dee")

    up = web.base + "/api/bots/delta/upload"
    data = good_tar_gz()
    assert httpx.post(up, content=data).status_code == 401
    r = httpx.post(up, content=data, headers={"authorization": f"Bearer {lg.tokens['alpha']}",
                                              "x-filename": "b.tar.gz"})
    assert (r.status_code, r.json()["reason"]) == (403, "PERMISSION_DENIED")
    r = httpx.post(web.base + "/api/bots/beta/upload", content=data, headers={
        "authorization": f"Bearer {lg.tokens['beta']}", "x-filename": "b.tar.gz"})
    assert (r.status_code, r.json()["reason"]) == (409, "NOT_HOSTED")
    auth = {"authorization": f"Bearer {token}"}
    r = httpx.post(up, content=b"junk", headers={**auth, "x-filename": "b.zip"})
    assert (r.status_code, r.json()["reason"]) == (400, "BAD_ARCHIVE")
    assert web.service.leagues.bots["delta"].versions == []
    r = httpx.post(up, content=data, headers={**auth, "x-filename": "b.tar.gz"})
    assert r.status_code == 200 and r.json()["version"] == 1

    adm = web.base + "/api/leagues/spring/admin"
    assert httpx.get(adm).status_code == 401
    assert httpx.get(adm, headers={"authorization": f"Bearer {token}"}).status_code == 403
    admin = {"authorization": f"Bearer {ADMIN}"}
    health = httpx.get(adm, headers=admin).json()
    assert health["versions_pending"] == 2 and len(health["bots"]) == 4  # alpha 2, delta 1
    r = httpx.post(adm + "/bots/delta", json={"status": "disabled"},
                   headers={"authorization": f"Bearer {token}"})
    assert r.status_code == 403
    assert httpx.post(adm + "/bots/delta", json={"status": "gone"}, headers=admin) \
        .status_code == 400
    assert httpx.post(adm + "/bots/nobody", json={"status": "active"}, headers=admin) \
        .status_code == 404
    r = httpx.post(adm + "/bots/delta", json={"status": "removed"}, headers=admin)
    assert r.status_code == 200 and r.json()["status"] == "removed"
    # removed: its token uploads nothing more
    assert httpx.post(up, content=data, headers={**auth, "x-filename": "b.tar.gz"}) \
        .status_code == 401
    assert httpx.post(adm + "/state", json={"state": "stopped"}, headers=admin).json()[
        "state"] == "stopped"
    r = httpx.post(adm + "/invites", json={"uses": 1}, headers=admin)
    assert (r.status_code, r.json()["reason"]) == (409, "LEAGUE_STOPPED")
    r = httpx.post(reg, json={"name": "epsilon", "invite_code": lg.invite})
    assert (r.status_code, r.json()["reason"]) == (409, "LEAGUE_STOPPED")
