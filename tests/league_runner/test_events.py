"""Issue 35, item 4: an event inside a league. A Swiss among four remote reference bots (the
Python SDK's ``referee-bot session random``) scheduled in the league file a few seconds ahead;
the league runner is killed with SIGKILL mid-event and started again; the event ends with every
planned match played once, its page (Chromium), its JSON API and the league's report show it.
Bad ``[[events]]`` tables are refused with the key and the reason."""
from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
from referee_tournament.config import ConfigError
from referee_tournament.league.config import parse
from referee_tournament.league.events import new_event_problems
from referee_tournament.procs import LocalReferee

from ..tournament.conftest import cli_command
from .helpers import _wait, _web_port, remote_league, remote_league_toml, stop_all

LEAGUE = "evl"
BOTS = [f"r{i}" for i in range(4)]


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat().replace("+00:00", "Z")


def _event_rows(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT event_idx, idx, match_id, status, rated FROM matches"
                           " WHERE event='cup' ORDER BY event_idx").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def _event_status(db: Path) -> str:
    if not db.exists():
        return ""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = con.execute("SELECT status FROM events WHERE name='cup'").fetchone()
        return row[0] if row else ""
    except sqlite3.OperationalError:
        return ""
    finally:
        con.close()


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_a_swiss_inside_a_league_survives_kill_9(tmp_path):
    ref = LocalReferee(tmp_path / "ref", extra_args=("--http-port", "0")).start()
    procs: list[subprocess.Popen] = []
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    env["REFEREE_ADMIN_TOKEN"] = ref.admin_token  # the runner's own environment only
    toml = tmp_path / "league.toml"
    out = tmp_path / "run"
    db = out / "league.sqlite"
    try:
        base = f"http://127.0.0.1:{_web_port(ref.log_path)}"
        remote_league_toml(toml, LEAGUE, ref.address)
        with open(toml, "a") as f:
            f.write(textwrap.dedent(f"""
                [[events]]
                name = "cup"
                format = "swiss"
                start = "{_iso(time.time() + 4)}"
                entrants = "ready"
                rounds = 2
                rated = false
            """))
        remote_league(ref.address, ref.admin_token, LEAGUE, BOTS, env, procs)

        def serve() -> subprocess.Popen:
            p = subprocess.Popen([*cli_command(), "league", "serve", str(toml), "--out",
                                  str(out)], env=env, stdout=subprocess.DEVNULL,
                                 stderr=open(tmp_path / "serve.log", "a"),  # noqa: SIM115
                                 start_new_session=True)
            procs.append(p)
            return p

        first = serve()
        # the event has started and one of its matches is over: kill -9 mid-event
        _wait("an event match to end", lambda: any(r[3] == "done" for r in _event_rows(db)),
              timeout=180, proc=first)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        before = {r[0]: r[2] for r in _event_rows(db) if r[3] == "done"}
        assert _event_status(db) == "running"
        serve()
        _wait("the event to end", lambda: _event_status(db) == "done", timeout=300)
        rows = _event_rows(db)
        # a Swiss of 4 at tables of 2 over 2 rounds: 4 matches, each created once
        assert [r[0] for r in rows] == [0, 1, 2, 3], rows
        assert all(r[3] == "done" for r in rows), rows
        assert all(r[4] == 0 for r in rows)  # rated = false
        for eidx, mid in before.items():  # the matches over before the kill were kept as is
            assert {r[0]: r[2] for r in rows}[eidx] == mid

        def published() -> dict | None:
            code, doc = _get(f"{base}/api/leagues/{LEAGUE}/events/cup")
            return doc if code == 200 and doc["status"] == "done" else None
        ev = _wait("the event's results published", published, timeout=60)
        assert ev["format"] == "swiss" and ev["rated"] is False
        assert sorted(ev["entrants"]) == BOTS
        st = ev["summary"]["standings"]
        assert [s["place"] for s in st] == [1, 2, 3, 4]
        assert {"points", "buchholz", "direct"} <= set(st[0])
        assert sum(len(r["tables"]) for r in ev["summary"]["rounds"]) == 4
        assert {m["match_id"] for m in ev["matches"]} == {r[2] for r in rows}
        code, lst = _get(f"{base}/api/leagues/{LEAGUE}/events")
        assert code == 200 and [e["name"] for e in lst["events"]] == ["cup"]
        code, err = _get(f"{base}/api/leagues/{LEAGUE}/events/nope")
        assert code == 404 and err["reason"] == "NOT_FOUND"
        # unrated: no event match moved a rating (the league's own matches may have)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rated_ids = {m for (m,) in con.execute("SELECT DISTINCT match_id FROM history")}
        con.close()
        assert not rated_ids & {r[2] for r in rows}
        _page(base, tmp_path, ev)
        # the league's report carries the event
        got = subprocess.run([*cli_command(), "report", str(out)], capture_output=True,
                             text=True, env=env, timeout=120, check=False)
        assert got.returncode == 0, got.stderr
        results = json.loads((out / "results.json").read_text())
        assert results["events"][0]["name"] == "cup"
        html = (out / "index.html").read_text()
        assert "cup: Swiss standings" in html
        for m in results["events"][0]["matches"]:  # each round's link leads to its match row
            assert f'href="#m{m["league_idx"]}"' in html and f'id="m{m["league_idx"]}"' in html
    finally:
        stop_all(procs)
        ref.stop()


def _page(base: str, tmp_path: Path, ev: dict) -> None:
    """The event's page in Chromium: rounds with links to each match, standings."""
    from ..web.browser import skip_reason

    if skip_reason():
        pytest.skip(skip_reason())
    from playwright.sync_api import sync_playwright

    from ..web.browser import ARGS, CHROMIUM

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/leagues/{LEAGUE}/events/cup")
            page.locator("#event-standings tbody tr").first.wait_for()
            assert page.locator("#event-standings tbody tr").count() == 4
            links = page.locator("#rounds a")
            assert links.count() == 4
            hrefs = {links.nth(i).get_attribute("href") for i in range(4)}
            assert hrefs == {f"/matches/{m['match_id']}" for m in ev["matches"]}
            page.screenshot(path=str(tmp_path / "league-event.png"), full_page=True)
            page.goto(f"{base}/leagues/{LEAGUE}")
            page.get_by_role("link", name="cup").wait_for()
            assert not errors, errors
        finally:
            browser.close()


# ---------------------------------------------------------------------- bad input

BASE = """
[league]
name = "x"
[[games]]
name = "goa"
seats = 3
"""


def _parse(event: str) -> None:
    import tomllib

    soon = _iso(time.time() + 86400)  # a start the file may give (within the year)
    parse(tomllib.loads(BASE + "[[events]]\n" + textwrap.dedent(event).replace("{soon}",
                                                                             soon)))


@pytest.mark.parametrize(("event", "key", "words"), [
    ('name = "e"\nformat = "ladderz"\nstart = {soon}', "events[0].format",
     "expected one of swiss, knockout, arena, round_robin"),
    ('name = "e"\nformat = "swiss"\nstart = 2999-01-01T00:00:00Z', "events[0].start",
     "more than a year ahead"),
    ('name = "e"\nformat = "swiss"\nstart = 2030-01-01T00:00:00', "events[0].start",
     "offset"),
    ('name = "e"\nformat = "swiss"\nstart = "soon"', "events[0].start", "RFC 3339"),
    ('name = "e"\nformat = "swiss"\nstart = {soon}\nentrants = "top"\ntop = 2',
     "events[0].top", "top >= 3"),
    ('name = "e"\nformat = "arena"\nstart = {soon}', "events[0].duration_s",
     "duration"),
    ('name = "e"\nformat = "swiss"\nstart = {soon}\nadvance = 2',
     "events[0].advance", "only a knockout"),
    ('name = "e"\nformat = "swiss"\nstart = {soon}\ngame = "chess"',
     "events[0].game", "not one of the league's games"),
])
def test_bad_events_are_refused_with_their_key(event, key, words):
    with pytest.raises(ConfigError) as exc:
        _parse(event)
    assert exc.value.key == key, exc.value
    assert words in str(exc.value)


def test_a_new_event_may_not_start_in_the_past_a_stored_one_resumes():
    import tomllib

    cfg = parse(tomllib.loads(BASE + '[[events]]\nname = "e"\nformat = "knockout"\n'
                              'start = 2020-01-01T00:00:00Z\n'))
    assert cfg.events[0].start_unix < time.time()
    problems = new_event_problems(cfg.events, set())
    assert problems and "events.e.start: in the past" in problems[0]
    assert new_event_problems(cfg.events, {"e"}) == []  # stored: it resumes


def test_top_n_larger_than_the_field_cancels_with_the_reason(tmp_path):
    """At its start an event of the top 5 in a league whose standings hold 3 bots is cancelled
    with the reason (published with the event), no match created."""
    import tomllib
    from types import SimpleNamespace

    from referee_tournament.ladder import Rating
    from referee_tournament.league.serve import LeagueRunner

    from referee.v1 import referee_pb2 as pb

    cfg = parse(tomllib.loads(BASE + '[[events]]\nname = "e"\nformat = "swiss"\n'
                              f'start = "{_iso(time.time() + 30)}"\n'
                              'entrants = "top"\ntop = 5\n'))
    runner = LeagueRunner(cfg, "t", out=tmp_path)
    try:
        runner._store_events()
        for n in ("a", "b", "c"):
            runner.ratings[n] = Rating(n, 25.0, 8.0)
        bots = [SimpleNamespace(name=n, status=pb.BOT_ACTIVE, kind=pb.BOT_KIND_REMOTE,
                                connected=True, current_version=0, versions=[])
                for n in ("a", "b", "c")]
        runner.store.db.execute("UPDATE events SET spec=json_set(spec, '$.start_unix', 0)")
        assert runner._drive_events(bots) == set()  # type: ignore[arg-type]
        (ev,) = runner._events_json()
        assert ev["status"] == "cancelled"
        assert ev["error"] == "top 5 asked, but the standings hold 3 active rated bot(s)"
        assert ev["matches"] == [] and not runner.tasks
    finally:
        runner.store.close()
        runner.logf.close()


def test_a_knockout_of_the_top_four(tmp_path):
    """``entrants = "top"``: the four best of the standings (rated by the league's own matches
    before the start) play a knockout of best-of-2 tables; its matches are rated like any league
    match (the default)."""
    ref = LocalReferee(tmp_path / "ref", extra_args=("--http-port", "0")).start()
    procs: list[subprocess.Popen] = []
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    env["REFEREE_ADMIN_TOKEN"] = ref.admin_token
    toml = tmp_path / "league.toml"
    out = tmp_path / "run"
    db = out / "league.sqlite"
    try:
        base = f"http://127.0.0.1:{_web_port(ref.log_path)}"
        remote_league_toml(toml, LEAGUE, ref.address)
        bots = [*BOTS, "r4"]
        with open(toml, "a") as f:
            f.write(textwrap.dedent(f"""
                [[events]]
                name = "cup"
                format = "knockout"
                start = "{_iso(time.time() + 20)}"
                entrants = "top"
                top = 4
                best_of = 2
            """))
        remote_league(ref.address, ref.admin_token, LEAGUE, bots, env, procs)
        serve = subprocess.Popen([*cli_command(), "league", "serve", str(toml), "--out",
                                  str(out)], env=env, stdout=subprocess.DEVNULL,
                                 stderr=open(tmp_path / "serve.log", "a"),  # noqa: SIM115
                                 start_new_session=True)
        procs.append(serve)
        _wait("the knockout to end", lambda: _event_status(db) in ("done", "cancelled"),
              timeout=300, proc=serve)
        _wait("the event's end published", lambda: _get(
            f"{base}/api/leagues/{LEAGUE}/events/cup")[1].get("status") in ("done", "cancelled"),
              timeout=60)
        _, ev = _get(f"{base}/api/leagues/{LEAGUE}/events/cup")
        assert ev["status"] == "done", ev.get("error")
        assert len(ev["entrants"]) == 4 and set(ev["entrants"]) < set(bots)
        rows = _event_rows(db)
        assert len(rows) == 6 and all(r[3] == "done" for r in rows)  # 2 semis + final, x2
        assert all(r[4] == 1 for r in rows)  # rated (the default)
        br = ev["summary"]["bracket"]
        assert len(br) == 2 and len(br[1]["tables"]) == 1
        assert [s["place"] for s in ev["summary"]["standings"]] == [1, 2, 3, 4]
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rated_ids = {m for (m,) in con.execute("SELECT DISTINCT match_id FROM history")}
        con.close()
        assert {r[2] for r in rows} <= rated_ids
        _bracket_page(base, tmp_path, ev)
    finally:
        stop_all(procs)
        ref.stop()


def _bracket_page(base: str, tmp_path: Path, ev: dict) -> None:
    """The knockout's page in Chromium: three tables in two rounds, a link to each match."""
    from ..web.browser import skip_reason

    if skip_reason():
        pytest.skip(skip_reason())
    from playwright.sync_api import sync_playwright

    from ..web.browser import ARGS, CHROMIUM

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 800})
            page.goto(f"{base}/leagues/{LEAGUE}/events/cup")
            page.locator("#bracket .table-box").first.wait_for()
            assert page.locator("#bracket .table-box").count() == 3
            assert page.locator("#bracket a").count() == 6
            assert page.locator("#event-standings tbody tr").count() == 4
            page.screenshot(path=str(tmp_path / "league-knockout.png"), full_page=True)
        finally:
            browser.close()
