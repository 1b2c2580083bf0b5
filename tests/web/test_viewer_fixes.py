"""The viewer as a new user finds it (issue 33, item 4), in Chromium: a replay scrubbed back
shows no later move's note; a finished match opened with "hide the result until the end"
ticked starts at its set-up, the result out of sight; the league and bot pages show the rating
(mu - 3 sigma) apart from the skill estimate mu and its own interval, each labelled; the match
list labels its result column and each score; a ready bot version's check message is not drawn
as an error."""
from __future__ import annotations

import re

import grpc
import httpx

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN
from tests.server.helpers import md

from .browser import save_screenshot, wait_until
from .league_fixture import CRASH_LINE, build_sync

#: the log entries a person can see (an element hidden by the page has no layout box)
SEEN = """(sel) => [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length)
    .map((e) => Number(e.dataset.v))"""
NUMBER = r"(-?\d+(?:\.\d+)?)"


def test_a_finished_replay_opens_at_its_set_up_and_hides_later_notes(web, page, tmp_path):
    mid, tokens = web.call(web.create(game="goa", seats=3, seed=41, names=["ann", "bob", "cy"]))
    web.call(web.play_slowly(mid, tokens, delay=0, notes=True), timeout=180)
    page.goto(f"{web.base}/matches/{mid}")
    wait_until(page, "document.getElementById('board').dataset.version !== ''")
    # "hide the result until the end" is ticked: the replay starts at its set-up (it opened on
    # its last move, the result shown)
    assert page.is_checked("#hide-result")
    assert page.get_attribute("#board", "data-version") == "0"
    assert page.locator("#result").is_hidden()
    assert page.locator("#log li.note").count() > 0  # the notes are public: in the log...
    assert page.evaluate(SEEN, "#log li") == []  # ...and none shows before its move
    for _ in range(6):
        page.click("#next")
    version = int(page.get_attribute("#board", "data-version"))
    seen = page.evaluate(SEEN, "#log li")
    assert seen and max(seen) <= version, (seen, version)
    every_note = page.eval_on_selector_all("#log li.note", "els => els.map(e => +e.dataset.v)")
    assert page.evaluate(SEEN, "#log li.note") == [v for v in every_note if v <= version]
    save_screenshot(page.locator("main"), tmp_path, "viewer-replay-start.png")
    page.click("#last")
    assert page.locator("#result").is_visible()
    assert len(page.evaluate(SEEN, "#log li.note")) == page.locator("#log li.note").count()
    # unticked, the whole log shows wherever the replay is
    page.uncheck("#hide-result")
    page.click("#first")
    assert len(page.evaluate(SEEN, "#log li")) == page.locator("#log li").count()
    assert not page.errors, page.errors


def _ready_with_message(web, bot: str, version: int, message: str) -> None:
    async def run():
        async with grpc.aio.insecure_channel(web.target) as ch:
            await referee_pb2_grpc.RefereeStub(ch).SetBotStatus(pb.SetBotStatusRequest(
                bot=bot, version=version, version_status=pb.VERSION_READY, message=message),
                metadata=md(ADMIN))
    web.call(run())


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(NUMBER, text)]


def test_league_bot_and_list_pages_label_what_they_show(web, page, tmp_path):
    lg = build_sync(web)
    _ready_with_message(web, "alpha", 1, "smoke check passed")
    page.goto(web.base + "/leagues/spring")
    heads = page.eval_on_selector_all("#standings th", "els => els.map(e => e.textContent)")
    assert "rating μ−3σ" in heads and "skill μ (μ ± 2σ)" in heads, heads
    rows = page.locator("#standings tbody tr")
    assert rows.count() == 3
    drawn = []
    for i in range(rows.count()):
        rating = float(rows.nth(i).locator("td.rating").inner_text())
        mu, lo, hi = _numbers(rows.nth(i).locator("td.interval").inner_text())
        # the interval belongs to the number beside it; the rating lies below the skill
        assert lo <= mu <= hi and rating <= mu, (rating, mu, lo, hi)
        drawn.append(rows.nth(i).inner_text())
    # league.js redraws the same table from the JSON API
    page.evaluate("""(name) => fetch('/api/leagues/' + name + '/standings')
        .then((r) => r.json()).then((d) => window.RefereeStandings(d))""", "spring")
    assert [rows.nth(i).inner_text() for i in range(rows.count())] == drawn
    save_screenshot(page.locator("main"), tmp_path, "league.png")

    page.goto(web.base + "/bots/alpha")
    skill = page.locator(".skill").inner_text()
    mu, lo, hi = _numbers(skill.replace("μ ± 2σ", ""))
    assert lo <= mu <= hi, skill
    assert "rating (μ−3σ)" in page.locator(".rating").inner_text()
    # a ready version's "smoke check passed" is a plain note, not an error line
    ready = page.locator("#versions tr.v-ready")
    assert "smoke check passed" in ready.inner_text()
    assert ready.locator(".error-line").count() == 0
    assert ready.locator(".check-message").is_visible()
    save_screenshot(page.locator("main"), tmp_path, "bot-page.png")
    page.goto(web.base + "/bots/gamma")  # a failed version's message stays an error line
    assert CRASH_LINE in page.locator("#versions tr.v-failed .error-line").inner_text()

    page.goto(web.base + "/")
    heads = page.eval_on_selector_all("#matches th", "els => els.map(e => e.textContent)")
    assert "result: winner, scores" in heads, heads
    row = page.locator(f'tr[data-id="{lg.finished[0]}"]')
    scores = row.locator(".scores .score")
    assert scores.count() == 3
    record = httpx.get(f"{web.base}/api/matches/{lg.finished[0]}").json()["match"]
    for seat, name in enumerate(["alpha", "beta", "gamma"]):
        assert scores.nth(seat).inner_text() == f"{name} {record['result']['scores'][seat]}"
    save_screenshot(page.locator("main"), tmp_path, "match-list.png")
    assert not page.errors, page.errors
