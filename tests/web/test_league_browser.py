"""The league pages in Chromium (issue 19, item 3): the league page with its standings, updated
live; a bot page with its rating history and a failed version's error line; the organizer page
acting on bots and the league; the registration page showing the bot token once. Screenshots go
to the test's tmp_path (and REFEREE_WEB_SCREENSHOTS, e.g. docs/)."""
from __future__ import annotations

import json

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.leagues.helpers import standings_doc
from tests.server.conftest import ADMIN
from tests.server.helpers import md

from .browser import save_screenshot, wait_until
from .league_fixture import CRASH_LINE, build_sync


def _publish(web, doc):
    async def run():
        async with grpc.aio.insecure_channel(web.target) as ch:
            await referee_pb2_grpc.RefereeStub(ch).PublishStandings(pb.PublishStandingsRequest(
                league="spring", standings_json=json.dumps(doc)), metadata=md(ADMIN))
    web.call(run())


def test_league_page_shows_standings_and_follows_them_live(web, page, tmp_path):
    lg = build_sync(web)
    page.goto(web.base + "/leagues/spring")
    rows = page.locator("#standings tbody tr")
    assert rows.count() == 3
    assert rows.nth(0).locator("td").nth(1).inner_text() == "alpha"
    assert "crashes" in rows.nth(1).inner_text()
    assert page.locator("#league-state .state").inner_text() == "running"
    assert page.locator("#recent tbody tr").count() == 2  # the unlisted match is not shown
    assert lg.unlisted not in page.content()
    save_screenshot(page.locator("main"), tmp_path, "league.png")
    # a new publication and a pause show without a reload
    doc = standings_doc("spring", bots=("gamma", "alpha", "beta"))
    _publish(web, doc)

    async def pause():
        async with grpc.aio.insecure_channel(web.target) as ch:
            await referee_pb2_grpc.RefereeStub(ch).SetLeagueState(pb.SetLeagueStateRequest(
                name="spring", state=pb.LEAGUE_PAUSED, reason="server maintenance"),
                metadata=md(ADMIN))
    web.call(pause())
    wait_until(page, "document.querySelector('#standings tbody tr td:nth-child(2)')"
                     ".textContent === 'gamma'", 20_000)
    wait_until(page, "document.querySelector('#league-state .state').textContent === 'paused'")
    assert "server maintenance" in page.locator("#league-state").inner_text()
    assert not page.errors, page.errors


def test_bot_page_shows_history_versions_incidents_and_matches(web, page, tmp_path):
    lg = build_sync(web)
    page.goto(web.base + "/bots/gamma")
    versions = page.locator("#versions tbody tr")
    assert versions.count() == 2
    failed = versions.nth(0)
    assert "failed" in failed.inner_text() and CRASH_LINE in failed.inner_text()
    assert "(plays)" in versions.nth(1).inner_text()
    assert page.locator("svg.history polyline").count() == 1
    assert page.locator("svg.history circle").count() == 12
    assert CRASH_LINE in page.locator("#incidents").inner_text()
    assert page.locator("#h2h tbody tr").count() == 1
    links = page.locator("#recent tbody a")
    assert links.count() == 2 and "replay" in links.nth(0).inner_text()
    assert {links.nth(i).get_attribute("href") for i in range(2)} == {
        f"/matches/{m}" for m in lg.finished}
    save_screenshot(page.locator("main"), tmp_path, "bot-page.png")
    assert not page.errors, page.errors


def test_upload_form_sends_the_token_as_a_header_and_shows_the_result(web, page, tmp_path):
    lg = build_sync(web)
    page.goto(web.base + "/bots/alpha")
    page.locator("#upload summary").click()
    form = page.locator("#upload-form")
    bot_file = tmp_path / "mybot.py"
    bot_file.write_text("print('hi')\n")
    requests = []
    page.on("request", lambda r: requests.append(r))
    form.locator("input[name=token]").fill(lg.tokens["alpha"])
    form.locator("input[name=file]").set_input_files(str(bot_file))
    form.locator("button[type=submit]").click()
    wait_until(page, "document.getElementById('upload-result').className === 'ok'")
    assert "Version 3 uploaded" in page.locator("#upload-result").inner_text()
    up = next(r for r in requests if r.url.endswith("/upload"))
    assert lg.tokens["alpha"] not in up.url
    assert up.headers["authorization"] == f"Bearer {lg.tokens['alpha']}"
    # another bot's token is refused, and so is a hostile archive
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"\x1f\x8b not really")
    form.locator("input[name=token]").fill(lg.tokens["gamma"])
    form.locator("button[type=submit]").click()
    wait_until(page, "document.getElementById('upload-result').className === 'error'")
    assert "another bot" in page.locator("#upload-result").inner_text()
    form.locator("input[name=token]").fill(lg.tokens["alpha"])
    form.locator("input[name=file]").set_input_files(str(bad))
    form.locator("button[type=submit]").click()
    wait_until(page, "document.getElementById('upload-result').textContent"
                     ".includes('BAD_ARCHIVE')")
    save_screenshot(page.locator("#upload"), tmp_path, "upload-refused.png")
    assert not page.errors, page.errors


def test_registration_page_shows_the_token_once(web, page, tmp_path):
    lg = build_sync(web)
    page.goto(web.base + "/leagues/spring/register")
    form = page.locator("#register-form")
    form.locator("input[name=name]").fill("delta")
    form.locator("input[name=owner]").fill("Dee")
    form.locator("input[value=hosted]").check()
    form.locator("input[name=invite_code]").fill("not-a-code")
    form.locator("button[type=submit]").click()
    wait_until(page, "document.getElementById('register-error').textContent !== ''")
    assert "BAD_INVITE" in page.locator("#register-error").inner_text()
    form.locator("input[name=invite_code]").fill(lg.invite)
    form.locator("button[type=submit]").click()
    wait_until(page, "!document.getElementById('token-box').hidden")
    token = page.locator("#bot-token").inner_text()
    assert len(token) == 64
    assert "only this once" in page.locator("#token-box").inner_text()
    save_screenshot(page.locator("main"), tmp_path, "register-token.png")
    # the token works (a Session), and is shown nowhere else
    assert web.service.sessions.bots.get(
        __import__("referee.server.base.auth", fromlist=["token_hash"]).token_hash(token)) == "delta"
    page.goto(web.base + "/bots/delta")
    assert token not in page.content()
    page.goto(web.base + "/leagues/spring/register")
    assert token not in page.content()
    assert not page.errors, page.errors


def test_organizer_page_acts_on_bots_and_the_league(web, page, tmp_path):
    build_sync(web)
    page.goto(web.base + "/leagues/spring/admin")
    login = page.locator("#admin-login")
    login.locator("input[name=token]").fill("wrong-token")
    login.locator("button[type=submit]").click()
    wait_until(page, "document.getElementById('admin-error').textContent !== ''")
    assert "PERMISSION_DENIED" in page.locator("#admin-error").inner_text()
    login.locator("input[name=token]").fill(ADMIN)
    login.locator("button[type=submit]").click()
    wait_until(page, "!document.getElementById('admin-panel').hidden")
    # the token is in this tab's sessionStorage only, never in the address or a cookie
    assert page.evaluate("sessionStorage.getItem('referee-admin-token')") == ADMIN
    assert ADMIN not in page.url and not page.context.cookies()
    assert "versions waiting" in page.locator("#health").inner_text()
    page.locator("#admin-bots tr[data-bot=beta] button[data-status=disabled]").click()
    wait_until(page, "document.querySelector('#admin-bots tr[data-bot=beta] .state')"
                     ".textContent === 'disabled'")
    assert web.service.leagues.bots["beta"].status == pb.BOT_DISABLED
    page.locator("#state-reason").fill("lunch break")
    page.locator("button[data-state=paused]").click()
    wait_until(page, "document.querySelector('#admin-state .state').textContent === 'paused'")
    assert web.service.leagues.leagues["spring"].reason == "lunch break"
    page.locator("#invite-create").click()
    wait_until(page, "!document.getElementById('invite-box').hidden")
    code = page.locator("#invite-code").inner_text()
    assert len(code) == 32
    save_screenshot(page.locator("main"), tmp_path, "league-admin.png")
    page.once("dialog", lambda d: d.accept())
    page.locator("#admin-bots tr[data-bot=gamma] button[data-status=removed]").click()
    wait_until(page, "document.querySelector('#admin-bots tr[data-bot=gamma] .state')"
                     ".textContent === 'removed'")
    # a removed bot is gone from the public pages
    page.goto(web.base + "/leagues/spring")
    assert page.locator("#standings tbody tr[data-bot=gamma]").count() == 0
    assert page.goto(web.base + "/bots/gamma").status == 404
    assert not page.errors, page.errors


def test_league_page_shows_new_challenges_without_a_reload(web, page, tmp_path):
    """The Challenges section follows the runner's publications as the standings do: a first
    challenge result appears (drawn by the page's own template) without a reload."""
    lg = build_sync(web)
    page.goto(web.base + "/leagues/spring")
    assert page.locator("#challenges").count() == 0
    page.evaluate("window.__sameDocument = true")
    doc = standings_doc("spring", bots=("alpha", "gamma", "beta"))
    doc["challenges"] = {
        "rated": True, "matches": 1,
        "pool": {"rating": -1.25, "mu": 24.5, "sigma": 8.3, "matches": 1},
        "by_entrant": [{"bot": "alpha", "matches": 1, "wins": 1, "losses": 0, "draws": 0}],
        "recent": [{"match": lg.finished[0], "game": "batavia",
                    "finished_unix_ms": 1_790_000_000_000, "entrants": {"alpha": "win"},
                    "rated": True}]}
    _publish(web, doc)
    wait_until(page, "document.querySelector('#challenge-results tr[data-bot=\"alpha\"]')"
                     " !== null", 20_000)
    row = page.locator('#challenge-results tr[data-bot="alpha"] td')
    assert [row.nth(i).inner_text() for i in range(5)] == ["alpha", "1", "1", "0", "0"]
    assert page.locator("#challenges").get_attribute("data-rated") == "yes"
    assert "-1.25" in page.locator("#challengers-pool").inner_text()
    recent = page.locator("#challenge-matches tbody tr")
    assert recent.count() == 1 and lg.finished[0] in recent.inner_text()
    assert recent.locator("td.time").inner_text().startswith("2026-")  # local time drawn
    assert page.evaluate("window.__sameDocument") is True, "the page was reloaded"
    save_screenshot(page.locator("main"), tmp_path, "league-challenges.png")
    assert not page.errors, page.errors
