"""The viewer in a real browser (Playwright + system Chromium): the match list, a live match
followed to its GameOver, a replay scrubbed back and forth with the board changing with the
version, for each game; board screenshots are saved in the test's output directory."""
from __future__ import annotations

import pytest

from .browser import save_screenshot, wait_until

GAMES = [("batavia", 4, 0.004), ("goa", 3, 0.002), ("santa_maria", 3, 0.004)]


def board(page) -> str:
    return page.inner_html("#board")


@pytest.mark.parametrize(("game", "seats", "delay"), GAMES)
def test_watch_live_then_replay(web, page, tmp_path, game, seats, delay):
    names = ["ann", "bob", "cy", "dan"][:seats]
    mid, tokens = web.call(web.create(game=game, seats=seats, seed=11, names=names))
    # the match list shows it live; follow its link
    page.goto(web.base + "/")
    row = page.locator(f'tr[data-id="{mid}"]')
    assert row.locator(".state").inner_text() == "running"
    assert "ann" in row.inner_text()
    row.locator("a").click()
    page.wait_for_url(f"**/matches/{mid}")
    page.wait_for_selector("#live-badge:not([hidden])")
    wait_until(page, "document.getElementById('board').dataset.version === '0'")
    assert "<svg" in board(page)
    # the bots play; the page follows until the GameOver
    web.background(web.play_slowly(mid, tokens, delay=delay))
    wait_until(page, "Number(document.getElementById('board').dataset.version) > 0")
    wait_until(page, "document.getElementById('state').textContent === 'finished'",
                           timeout=90_000)
    assert page.evaluate("RefereeViewer.liveUpdates") >= 2, "no live update reached the page"
    assert page.locator("#live-badge").is_hidden()
    scores = page.locator("#scores tr")
    assert scores.count() == seats
    last = int(page.get_attribute("#board", "data-version"))
    assert last > 20
    save_screenshot(page.locator("#board"), tmp_path, f"{game}-board.png")
    # scrub: first, next x3, previous, last, slider
    page.click("#first")
    assert page.get_attribute("#board", "data-version") == "0"
    seen = {board(page)}
    for want in (1, 2, 3):
        page.click("#next")
        assert page.get_attribute("#board", "data-version") == str(want)
        seen.add(board(page))
    page.click("#prev")
    assert page.get_attribute("#board", "data-version") == "2"
    page.click("#last")
    assert page.get_attribute("#board", "data-version") == str(last)
    seen.add(board(page))
    page.evaluate("""(i) => { const s = document.getElementById('slider');
        s.value = String(i); s.dispatchEvent(new Event('input')); }""", last // 2)
    assert page.get_attribute("#board", "data-version") == str(last // 2)
    seen.add(board(page))
    assert len(seen) >= 4, "the drawn board must change with the version"
    assert page.locator("#move-events li").count() >= 1
    # play runs forward by itself
    page.click("#first")
    page.click("#play")
    wait_until(page, "Number(document.getElementById('board').dataset.version) >= 2")
    page.click("#play")
    # a version in the address opens the replay there
    page.goto(web.base + f"/matches/{mid}?v=5")
    wait_until(page, "document.getElementById('board').dataset.version === '5'")
    assert not page.errors, page.errors


def test_error_pages(web, page):
    r = page.goto(web.base + "/matches/0123456789abcdef")
    assert r.status == 404 and "no such match" in page.inner_text("#error-detail")
    mid, _ = web.call(web.create())
    r = page.goto(web.base + f"/matches/{mid}?v=last")
    assert r.status == 400 and "malformed version" in page.inner_text("#error-detail")
    assert not page.errors, page.errors
