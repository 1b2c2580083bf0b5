"""Each game's board in a real browser at 1400x1000 (issue 20, item 4): the last move marked on
the board, Goa's lot on auction marked, Santa Maria legible (no text under 11 px, labelled
resources, a legend), a seat's private information drawn in that seat's view, and the renderers
still drawing when called without the frame context. The pages are static replays of the golden
records (tests/<game>/golden), opened as files: no referee needed. Screenshots of a mid-game board
are saved (REFEREE_WEB_SCREENSHOTS=docs copies them for the documentation)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from referee.core import registry
from referee.web import frames as F
from referee.web import render

from .browser import save_screenshot

TESTS = Path(__file__).parent.parent
NAMES = ["ann", "bob", "cy", "dan", "eve"]
RECORDS = {
    "goa": "goa/golden/goa-3p-202.json",
    "batavia": "batavia/golden/batavia-4p-202.json",
    "santa_maria": "santa_maria/golden/santa_maria-3p-advanced-33.json",
}
#: a frame of each record whose move visibly changes the board, and the screenshot's name
MOVES = {
    "goa": ("goa.token", "goa-last-move.png"),  # a numbered auction token (the flag is token 1)
    "batavia": ("batavia.merchant_moved", "web-batavia.png"),
    "santa_maria": ("santa_maria.ship", "web-santa-maria.png"),
}
#: rendered size (font size times the SVG's scale on screen) of the smallest text, in px
SMALLEST_TEXT = """() => {
  let least = Infinity, which = null;
  for (const t of document.querySelectorAll('#board svg text')) {
    if (!t.getBoundingClientRect().width) continue;
    const px = parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
    if (px < least) { least = px; which = t.textContent; }
  }
  return [least, which];
}"""


def record(game: str, path: str | None = None) -> dict:
    rec = json.loads((TESTS / (path or RECORDS[game])).read_text())
    rec["seat_names"] = NAMES[: rec["seats"]]
    return rec


def open_replay(page, tmp_path, game: str, path: str | None = None) -> list[dict]:
    """The static replay page of a golden record of the game; its frames (as the page has them)."""
    rec = record(game, path)
    html = tmp_path / f"{game}.html"
    html.write_text(render.static_replay_from_record(rec))
    page.goto(html.as_uri())
    page.wait_for_function("document.getElementById('board').dataset.version !== undefined")
    return F.frames_from_record(registry.get(game), rec)


def show(page, index: int) -> None:
    page.evaluate("(i) => RefereeViewer.show(i)", index)


def first_frame(frames: list[dict], kind: str, after: int = 0) -> int:
    return next(i for i, f in enumerate(frames) if i > after and any(
        e["kind"] == kind and "the flag" not in e["text"] for e in f["events"]))


@pytest.mark.parametrize("game", sorted(RECORDS))
def test_last_move_is_marked_on_the_board(page, tmp_path, game):
    frames = open_replay(page, tmp_path, game)
    kind, shot = MOVES[game]
    i = first_frame(frames, kind, after=len(frames) // 3)
    show(page, i)
    marks = page.locator("#board .last-move")
    assert marks.count() >= 1, f"no last-move mark after {kind}"
    mover = next(e["seat"] for e in frames[i]["events"] if e["kind"] == kind)
    colours = page.eval_on_selector_all(
        "#board .last-move rect:last-of-type", "els => els.map(e => e.getAttribute('stroke'))")
    seat_colour = page.evaluate("(s) => RefereeSVG.seatColor(s)", mover)
    assert seat_colour in colours, "the mark is drawn in the mover's colour"
    # the set-up frame has no previous frame: nothing is marked
    show(page, 0)
    assert page.locator("#board .last-move").count() == 0
    show(page, i)
    save_screenshot(page.locator("#board"), tmp_path, shot)
    assert not page.errors, page.errors


def test_goa_marks_the_lot_on_auction(page, tmp_path):
    """Goa, Auction phase: the auctioneer auctions the tile under the next numbered token (the
    flag first); the board frames that square."""
    frames = open_replay(page, tmp_path, "goa")
    i = first_frame(frames, "goa.bid", after=len(frames) // 2)
    show(page, i)
    lot = page.evaluate("RefereeViewer.views[RefereeViewer.index].auction.lot")
    frame = page.locator("#board .auction-lot")
    assert frame.count() == 1
    assert f"lot {lot}" in frame.locator("title").text_content()
    # the frame surrounds the square holding the token of that number
    box = frame.bounding_box()
    token = page.locator("#board .token", has_text=str(lot)).first.bounding_box()
    assert box["x"] <= token["x"] and token["x"] + token["width"] <= box["x"] + box["width"]
    assert box["y"] <= token["y"] and token["y"] + token["height"] <= box["y"] + box["height"]
    save_screenshot(page.locator("#board"), tmp_path, "web-goa.png")
    assert not page.errors, page.errors


@pytest.mark.parametrize("path", [RECORDS["santa_maria"], "santa_maria/golden/santa_maria-1p-solo-11.json",
                                  "santa_maria/golden/santa_maria-4p-shared-pick-44.json"])
def test_santa_maria_is_legible_at_1400_by_1000(page, tmp_path, path):
    frames = open_replay(page, tmp_path, "santa_maria", path)
    for i in (len(frames) // 3, 2 * len(frames) // 3, len(frames) - 1):
        show(page, i)
        least, which = page.evaluate(SMALLEST_TEXT)
        assert least >= 11, f"frame {i}: text {which!r} is drawn at {least:.1f} px"
    legend = page.locator("#board #legend")
    assert legend.count() == 1
    for word in ("wood", "wheat", "sugar", "gems", "gold", "coins", "points", "Religion action"):
        assert word in legend.inner_html()
    # each colony's resources are labelled with their names and counts
    labels = page.eval_on_selector_all("#board text.resource", "els => els.map(e => e.textContent)")
    assert any(t.startswith("wood ") for t in labels) and any(t.startswith("gems ") for t in labels)
    # cells carry their full description as a tooltip
    titles = page.eval_on_selector_all("#board g.cell > title", "els => els.map(e => e.textContent)")
    assert any("exchange" in t for t in titles)
    assert not page.errors, page.errors


def seat_view(game: str, moves: int, seat: int | None) -> dict:
    """The view of ``seat`` (None: spectator) after the record's first ``moves`` moves."""
    g = registry.get(game)
    rec = record(game)
    r = F.record_replayer(g, rec)
    r.extend(list(rec["moves"])[:moves])
    return F.view_json(g.view(r.match.state, seat))


def draw(page, game: str, view: dict) -> str:
    """The board of ``view`` drawn by the page's renderer with no frame context (as the viewer
    of an older page calls it); the drawn SVG."""
    return page.evaluate("([g, v]) => { const svg = RefereeBoards[g](v, RefereeViewer.meta);"
                         " document.getElementById('board').innerHTML = svg; return svg; }", [game, view])


def test_goa_seat_view_shows_that_seats_ducats_and_hand(page, tmp_path):
    """Goa: ducats are kept hidden (Preparation); a seat's own view holds its ducats and hand."""
    open_replay(page, tmp_path, "goa")
    mine = seat_view("goa", 60, 1)
    svg = draw(page, "goa", mine)
    ducats = page.eval_on_selector_all("#board text.ducats", "els => els.map(e => e.textContent)")
    assert ducats.count("ducats ?") == 2 and f"ducats {mine['my_ducats']}" in ducats
    assert "Hand:" in svg
    spectator = draw(page, "goa", seat_view("goa", 60, None))
    assert "Hand:" not in spectator and spectator.count("ducats ?") == 3
    assert not page.errors, page.errors


def test_batavia_seat_view_shows_that_seats_hand(page, tmp_path):
    open_replay(page, tmp_path, "batavia")
    mine = seat_view("batavia", 40, 2)
    draw(page, "batavia", mine)
    text = page.inner_text("#board")
    held = [f"{n} {c}" for n, c in zip(mine["my_hand"]["count"], ["EN", "DK", "FR", "NL", "SE"]) if n]
    assert held and all(h in text for h in held)
    assert len(re.findall(r"hand \d+: ", text)) == 1  # that seat's hand only
    draw(page, "batavia", seat_view("batavia", 40, None))
    assert not re.search(r"hand \d+: ", page.inner_text("#board"))
    assert not page.errors, page.errors


def test_santa_maria_seat_view_shows_that_seats_ships(page, tmp_path):
    """Navire: a taken ship lies face down in its owner's port; its owner knows its points."""
    frames = open_replay(page, tmp_path, "santa_maria")
    i = first_frame(frames, "santa_maria.ship")
    owner = next(e["seat"] for e in frames[i]["events"] if e["kind"] == "santa_maria.ship")
    draw(page, "santa_maria", seat_view("santa_maria", i, owner))
    assert page.locator("#board text.own-ships").count() == 1
    draw(page, "santa_maria", seat_view("santa_maria", i, None))
    assert page.locator("#board text.own-ships").count() == 0
    assert not page.errors, page.errors
