"""The viewer a person can follow (issue 20, items 2 to 4), in Chromium, for each game: player
names in the log (with the seat number where two share a name), the public clocks live, a
seat's notes live to the holder of its token and to nobody else, the result hidden until the
end of the replay, the replay from a seat's view and the final reveal once the match is over,
and no console error or failed request on any of these pages."""
from __future__ import annotations

import threading
import time

import httpx
import pytest

from referee.v1 import referee_pb2 as pb

from .browser import save_screenshot, wait_until

GAMES = [("batavia", 3), ("goa", 3), ("santa_maria", 3)]
NAMES = ["ann", "bob", "ann"]  # two seats share a name: the log says which


def watch_errors(pg) -> list[str]:
    """Every console error, page error and failed request of ``pg``."""
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    pg.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return errors


def log_texts(pg, selector="#log li") -> list[str]:
    return pg.eval_on_selector_all(selector, "els => els.map(e => e.textContent)")


@pytest.mark.parametrize(("game", "seats"), GAMES)
def test_names_clocks_notes_live_then_seat_views_and_reveal(web, browser, page, tmp_path,
                                                            game, seats):
    policy = pb.TimePolicy(move_ms=60_000, bank_ms=30_000)
    mid, tokens = web.call(web.create(game=game, seats=seats, seed=23, names=NAMES,
                                      policy=policy))
    spectator = page
    spectator_errors = watch_errors(spectator)
    owner_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    owner = owner_ctx.new_page()
    owner_errors = watch_errors(owner)
    go_on = threading.Event()  # the bots stop at version 30 until the live checks are done
    try:
        spectator.goto(f"{web.base}/matches/{mid}")
        # the token travels in the fragment (never sent to the server) and leaves the address
        owner.goto(f"{web.base}/matches/{mid}#token={tokens[1]}")
        for pg in (spectator, owner):
            wait_until(pg, "document.getElementById('board').dataset.version === '0'")
        assert "#token" not in owner.url and tokens[1] not in owner.url
        web.background(web.play_slowly(mid, tokens, delay=0.005, notes=True,
                                       hold=(30, go_on)))

        # live: clocks for every seat, the one to act counting down
        wait_until(spectator, "document.querySelector('.seat-clock.running') !== null")
        clocks = log_texts(spectator, ".seats .seat-clock")
        assert len(clocks) == seats and all("bank" in c for c in clocks), clocks
        assert any("left" in c for c in clocks), clocks
        # live: seat 1's notes on the owner's page only
        wait_until(owner, "document.querySelectorAll('#log li.note').length >= 2")
        notes = log_texts(owner, "#log li.note")
        assert all("zq-note-1-" in n and "bob's note" in n for n in notes), notes
        assert "bob" in owner.inner_text("#notes-status")
        wait_until(owner, "document.getElementById('board').dataset.version === '30'")
        wait_until(spectator, "document.getElementById('board').dataset.version === '30'")
        # every note of seat 1 so far, none missed
        bobs = sum(e.seat == 1 for e in web.service.matches[mid].match.moves)
        wait_until(owner, f"document.querySelectorAll('#log li.note').length === {bobs}")
        save_screenshot(owner.locator("main"), tmp_path, f"viewer-{game}-live.png")
        # each note sits beside its move: the log stays in version order
        order = owner.eval_on_selector_all("#log li", "els => els.map(e => Number(e.dataset.v))")
        assert order == sorted(order)
        assert spectator.locator("#log li.note").count() == 0
        assert "zq-note" not in spectator.content()
        assert spectator.locator("#view-as-box").is_hidden()  # no seat view while live
        # names in the log: "seat N" of the engines' texts reads as the seat's name
        texts = log_texts(spectator)
        assert any("bob" in t for t in texts), texts[:10]
        assert any("ann (seat 0)" in t or "ann (seat 2)" in t for t in texts), texts[:10]
        assert not any("seat 1 " in t for t in texts), texts[:10]
        assert spectator.get_attribute("#state", "class") == "state running"
        go_on.set()

        wait_until(spectator, "document.getElementById('state').textContent === 'finished'",
                   timeout=120_000)
        wait_until(owner, "document.getElementById('state').textContent === 'finished'")
        last = int(spectator.get_attribute("#board", "data-version"))
        # at the end: the result, names and the scoring per category
        assert spectator.locator("#result").is_visible()
        assert spectator.locator("#scores tr").count() == seats
        assert spectator.locator("#breakdown tr[data-key='total']").count() == 1
        assert "bob" in spectator.inner_text("#result")
        save_screenshot(spectator.locator("main"), tmp_path, f"viewer-{game}-end.png")
        # the replay hides the result until its end
        spectator.click("#first")
        assert spectator.locator("#result").is_hidden()
        assert spectator.locator("#log li:not([hidden])").count() == 0  # no later move shown
        spectator.click("#next")
        spectator.click("#next")
        shown = log_texts(spectator, "#log li:not([hidden])")
        assert 0 < len(shown) < len(log_texts(spectator))
        spectator.uncheck("#hide-result")
        assert spectator.locator("#result").is_visible()
        spectator.check("#hide-result")
        assert spectator.locator("#result").is_hidden()
        spectator.click("#last")
        assert spectator.locator("#result").is_visible()
        # every seat's notes are public now, beside their moves
        assert spectator.locator("#log li.note").count() >= last // 2

        # the replay from seat 0's view, then the reveal of every seat's final view
        assert spectator.locator("#view-as-box").is_visible()
        spectator.select_option("#view-as", "0")
        wait_until(spectator, "document.getElementById('board').dataset.viewer === '0'")
        assert "seat=0" in spectator.url
        assert spectator.evaluate(
            "JSON.stringify(RefereeViewer.views[RefereeViewer.views.length - 1])") != ""
        spectator.select_option("#view-as", "reveal")
        wait_until(spectator, "document.querySelectorAll('#reveal .reveal-seat').length === "
                              f"{seats}")
        assert spectator.locator("#reveal").is_visible()
        spectator.click("#first")
        assert spectator.locator("#reveal").is_hidden()  # only at the end
        spectator.select_option("#view-as", "")
        wait_until(spectator, "document.getElementById('board').dataset.viewer === 'spectator'")
        # playback speed: the fastest setting runs the replay forward by itself
        spectator.select_option("#speed", "40")
        spectator.click("#first")
        spectator.click("#play")
        wait_until(spectator, "Number(document.getElementById('board').dataset.version) >= 10")
        spectator.click("#play")
        # the same page opened on a seat's view from its address
        spectator.goto(f"{web.base}/matches/{mid}?seat=2&v=4")
        wait_until(spectator, "document.getElementById('board').dataset.viewer === '2' && "
                              "document.getElementById('board').dataset.version === '4'")
        spectator.goto(f"{web.base}/")
        time.sleep(0.2)
    finally:
        go_on.set()
        owner_ctx.close()
    assert not spectator_errors, spectator_errors
    assert not owner_errors, owner_errors


def test_a_seat_view_is_refused_while_live_and_a_wrong_token_sees_nothing(web, page):
    mid, tokens = web.call(web.create(seats=3, seed=29))
    _other, other_tokens = web.call(web.create(seats=3, seed=30))
    web.background(web.play_slowly(mid, tokens, delay=0.05, notes=True))
    r = page.goto(f"{web.base}/api/matches/{mid}?seat=0")
    assert r.status == 403 and "over" in page.inner_text("body")
    # another match's token: refused, and no note shows
    page.goto(f"{web.base}/matches/{mid}#token={other_tokens[1]}")
    wait_until(page, "document.getElementById('notes-status').textContent !== ''")
    assert "not a seat token" in page.inner_text("#notes-status")
    assert page.locator("#log li.note").count() == 0
    assert httpx.get(f"{web.base}/api/matches/{mid}?seat=reveal").status_code == 403


def test_log_numbers_from_100_up_are_not_clipped(web, page):
    """The log's numbers stay inside its box up to 9999 (they were cut off from 100)."""
    mid, tokens = web.call(web.create(game="goa", seats=3, seed=31))
    web.call(web.play(mid, tokens), timeout=120)
    page.goto(f"{web.base}/matches/{mid}")
    wait_until(page, "document.querySelectorAll('#log li').length > 100")
    page.click("#last")  # a finished match opens at its set-up, the log's entries hidden
    room, need = page.evaluate("""() => {
        const log = document.getElementById('log');
        const li = log.querySelector('li:not(.note)');
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = getComputedStyle(li).font;
        return [li.getBoundingClientRect().left - log.getBoundingClientRect().left,
                ctx.measureText('9999. ').width];
    }""")
    assert room >= need, (room, need)
