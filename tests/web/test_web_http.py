"""The web viewer over HTTP (no browser): match list, match pages, replays re-simulated from the
record, the live feed, and bad input (unknown id -> 404, malformed version -> 400)."""
from __future__ import annotations

import asyncio
import json
import random
import time

import httpx
import pytest
from google.protobuf import json_format

from referee.core import registry
from referee.core.match import Match
from referee.web import frames as F

GAMES = [("batavia", 3), ("goa", 2), ("santa_maria", 2)]


@pytest.mark.parametrize(("game", "seats"), GAMES)
def test_finished_match_replays_every_version_from_its_record(web, game, seats):
    mid, tokens = web.call(web.create(game=game, seats=seats, names=["ann", "bob", "cy"][:seats]))
    web.call(web.play(mid, tokens), timeout=120)
    listing = httpx.get(web.base + "/").text
    assert mid in listing and "finished" in listing and "ann" in listing
    page = httpx.get(web.base + f"/matches/{mid}")
    assert page.status_code == 200 and "/static/start.js" in page.text
    b = httpx.get(web.base + f"/api/matches/{mid}").json()
    assert b["match"]["state"] == "finished" and b["match"]["result"]["scores"]
    record = json.loads((web.data_dir / "records" / f"{mid}.json").read_text())
    assert [f["v"] for f in b["frames"]] == list(range(len(record["moves"]) + 1))
    # every frame is the spectator view of the re-simulated state at that version
    g = registry.get(game)
    m = Match.create(g, record["options"], record["seats"], int(record["seed"]))
    view = None
    for i, f in enumerate(b["frames"]):
        view = F.patch(view, f["d"])
        assert view == json_format.MessageToDict(  # what Watch sends a spectator
            g.view(m.state, None), preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True), f"frame {i}"
        if i < len(record["moves"]):
            e = record["moves"][i]
            msg = g.move_message()
            json_format.ParseDict(e["move"], msg)
            m.submit(e["seat"], g.move_from_proto(msg))
    assert any(f["events"] for f in b["frames"][1:])
    one = httpx.get(web.base + f"/api/matches/{mid}/views/2").json()
    assert one["view"] == F.view_at(b["frames"], 2)
    rec = httpx.get(web.base + f"/matches/{mid}/record.json")
    assert rec.status_code == 200 and rec.json()["moves"] == record["moves"]


def test_bad_input(web):
    mid, _ = web.call(web.create())
    for path in ("/matches/0123456789abcdef", "/matches/nope", "/matches/..%2f..%2fetc",
                 "/api/matches/0123456789abcdef", f"/api/matches/{mid}/views/99999"):
        r = httpx.get(web.base + path)
        assert r.status_code == 404, path
    assert "no such match" in httpx.get(web.base + "/matches/nope").text
    for path in (f"/matches/{mid}?v=abc", f"/matches/{mid}?v=-1", f"/matches/{mid}?v=1e3",
                 f"/api/matches/{mid}/views/x1", f"/api/matches/{mid}/views/-2"):
        r = httpx.get(web.base + path)
        assert r.status_code == 400, path
        assert "malformed version" in r.text
    # a running match's record is not published (it holds the seed: future cards and tiles)
    assert httpx.get(web.base + f"/matches/{mid}/record.json").status_code == 404
    assert httpx.get(web.base + f"/matches/{mid}?v=0").status_code == 200


def _read_sse(url: str, until: str, limit: int = 5000) -> list[dict]:
    msgs = []
    with httpx.stream("GET", url, timeout=60) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                msgs.append(json.loads(line[6:]))
                if msgs[-1]["type"] == until or len(msgs) >= limit:
                    break
    return msgs


def test_live_feed_follows_a_match_to_its_game_over(web):
    mid, tokens = web.call(web.create(seats=3))
    fut = web.background(web.play_slowly(mid, tokens, delay=0.002))
    msgs = _read_sse(web.base + f"/api/matches/{mid}/live", "game_over")
    fut.result(120)
    updates = [m for m in msgs if m["type"] == "update" and "view" in m]
    assert len(updates) >= 2 and msgs[-1]["type"] == "game_over"
    versions = [u["version"] for u in updates]
    assert versions == sorted(versions)
    assert any(m["events"] for m in msgs if m["type"] == "update")
    assert all(u["view"]["seat"] == -1 for u in updates)  # the spectator's view


def test_many_viewers_opening_and_closing_leave_nothing_behind(web):
    mid, tokens = web.call(web.create(seats=3))
    rt = web.service.matches[mid]
    hub = web.server.web.hub

    async def tasks():
        return len(asyncio.all_tasks())

    async def task_names():  # what is left, should the count not come down (a leak's name)
        return sorted(getattr(t.get_coro(), "__qualname__", repr(t)) for t in asyncio.all_tasks())

    base_tasks = web.call(tasks())

    async def viewers(n):
        async with httpx.AsyncClient(base_url=web.base, timeout=10) as c:
            async def one():
                async with c.stream("GET", f"/api/matches/{mid}/live") as r:
                    async for line in r.aiter_lines():
                        if line.startswith("data: "):
                            return json.loads(line[6:])
            return await asyncio.gather(*(one() for _ in range(n)))

    for _ in range(3):
        got = web.call(viewers(40), timeout=60)  # (not asyncio.run: Playwright may own this thread's loop)
        assert all(m["type"] == "update" for m in got)  # each got the current view at once
    # the browsers are gone: no feed, no spectator stream, no task remains (a leak never drains;
    # on a loaded machine closing 120 connections can take seconds, so wait up to 30 s)
    for _ in range(600):
        if not hub.feeds and not rt.streams.watchers and web.call(tasks()) <= base_tasks:
            break
        time.sleep(0.05)
    assert hub.feeds == {} and hub.viewer_count == 0
    assert rt.streams.watchers == []
    assert web.call(tasks()) <= base_tasks, web.call(task_names())
    # and the match still plays normally
    web.call(web.play(mid, tokens), timeout=120)
    assert httpx.get(web.base + f"/api/matches/{mid}").json()["match"]["state"] == "finished"


def test_match_list_json_and_store_only_matches(web, tmp_path):
    mid, tokens = web.call(web.create(names=["ann", "bob", "cy"]))
    web.call(web.play(mid, tokens), timeout=120)
    # forget it from memory (as --keep-finished does): the store and record file answer
    web.service.registry.evict(web.service.matches[mid])
    assert mid not in web.service.matches
    lst = httpx.get(web.base + "/api/matches").json()["matches"]
    row = next(m for m in lst if m["id"] == mid)
    assert row["state"] == "finished" and row["names"] == ["ann", "bob", "cy"]
    assert row["result"]["winner_names"]
    b = httpx.get(web.base + f"/api/matches/{mid}").json()
    assert len(b["frames"]) > 10


@pytest.mark.parametrize("seed", range(30))
def test_patches_rebuild_every_view(seed):
    rnd = random.Random(seed)

    def value(depth=0):
        k = rnd.random()
        if depth > 3 or k < 0.4:
            return rnd.choice([0, 1, "a", None, True, 2.5])
        if k < 0.7:
            return [value(depth + 1) for _ in range(rnd.randrange(4))]
        return {rnd.choice("abcde"): value(depth + 1) for _ in range(rnd.randrange(4))}

    prev = value()
    for _ in range(10):
        cur = value() if rnd.random() < 0.3 else _mutate(prev, rnd)
        assert F.patch(prev, F.diff(prev, cur)) == cur
        prev = cur


def _mutate(v, rnd):
    if isinstance(v, dict):
        out = dict(v)
        if out and rnd.random() < 0.5:
            out.pop(rnd.choice(list(out)))
        out[rnd.choice("abcdef")] = rnd.choice([1, [1, 2], {"x": 1}])
        return out
    if isinstance(v, list):
        out = [_mutate(x, rnd) if rnd.random() < 0.3 else x for x in v]
        return out[: rnd.randrange(len(out) + 1)] + ([7] if rnd.random() < 0.5 else [])
    return rnd.choice([3, "z", [v]])
