"""A person plays a seat in the browser (issue 33 item 1), driven by Playwright in Debian's
Chromium: whole matches of every game and edition against the reference bots, played by
clicking on the board only (the lit targets, the chooser near the click, the confirmation),
one by the keyboard only (the list of legal moves); each ends with a record that `referee
replay verify` accepts. The seat token never appears in a request line (every request the
browser made is recorded) nor in the referee's log. One referee and one browser serve the
module. The HTTP-level checks are in test_play_http.py."""
from __future__ import annotations

import json
import random
import time

import httpx
import pytest
from referee_client import play
from referee_client.bots import BOTS, GREEDY_FOR_GAME

from referee import cli
from referee.server.base import logs
from referee.v1 import referee_pb2 as pb

from .browser import save_screenshot
from .conftest import WebHandle

#: (game, edition options, seats, the person's seat): 2 to 5 seats across the runs
CLICK_RUNS = [
    ("batavia", {}, 3, 1),
    ("goa", {}, 2, 0),
    ("goa", {"edition": "2004"}, 4, 2),
    ("santa_maria", {}, 2, 1),
    # the set-up drafts, picked on the drafted lot or colony board
    ("santa_maria", {"setup": "advanced"}, 3, 2),
    ("santa_maria", {"colony_boards": "pick"}, 3, 0),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    h = WebHandle(tmp_path_factory.mktemp("play") / "data", http_port=0)
    h.start()
    yield h
    h.close()


def open_seat(browser, server, mid, token, width=1400, height=1000, watch=False):
    """A fresh browser context on the seat's play page, recording every request's URL and
    headers (the test looks for the token in them)."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.errors = []
    page.requests = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text)
            if "Content Security Policy" in m.text else None)
    page.on("request", lambda r: page.requests.append((r.url, r.headers.get("referer", ""))))
    page.set_default_timeout(30_000)
    page.goto(f"{server.base}/play/{mid}#token={token}" + ("&watch=1" if watch else ""))
    return ctx, page


def start_bots(server, mid, tokens, human, game):
    for seat, token in enumerate(tokens):
        if seat != human:
            server.background(play(BOTS[GREEDY_FOR_GAME[game]](seat), server.target, mid, token))


STATE_JS = """() => {
  const P = window.RefereePlay && window.RefereePlay.page;
  const d = P && P.data;
  const ch = document.getElementById('chooser');
  return {ready: !!d, over: !!(d && d.game_over), busy: !!(P && (P.busy || P.pending)),
          v: d ? d.version : -1, deciding: !!(d && d.decision),
          kind: d && d.decision ? d.decision.kind : '',
          lit: document.querySelectorAll('#board [data-hit].lit').length,
          chooser: !ch.hidden, refusal: !document.getElementById('refusal').hidden,
          refusal_text: document.getElementById('refusal').textContent,
          off: Number(document.getElementById('board').dataset.offBoard || 0),
          moves: d && d.decision ? d.decision.moves.length : 0};
}"""


def settle(page, before_v, timeout=30.0):
    """Wait until the page shows a new state version, a chooser, a refusal or the end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = page.evaluate(STATE_JS)
        if s["over"] or s["chooser"] or s["refusal"] or (
                not s["busy"] and s["ready"] and s["v"] != before_v and
                (not s["deciding"] or s["lit"] or s["moves"])):
            return s
        page.wait_for_timeout(30)
    raise TimeoutError(f"the page did not move on from version {before_v}: {s}")


def click_through(page, rng, max_actions=4000) -> dict:
    """Play the seat to the end by clicking on the board only: a lit target, then a choice in
    the chooser near it, then the confirmation. Returns counts by decision kind."""
    kinds: dict[str, int] = {}
    s = settle(page, -2)
    for _ in range(max_actions):
        if s["over"]:
            return kinds
        assert not s["refusal"], f"a move was refused: {s['refusal_text']}"
        if s["chooser"]:
            buttons = page.locator("#chooser-list button")
            buttons.nth(rng.randrange(buttons.count())).click()
        elif s["deciding"]:
            assert s["lit"], f"nothing lit on the board for a {s['kind']} decision"
            assert not s["off"], f"moves of a {s['kind']} decision not on the board: " + \
                str(page.evaluate("window.RefereePlay.page.offBoard.map((m) => m.move)"))
            kinds[s["kind"]] = kinds.get(s["kind"], 0) + 1
            # any lit place; the seat's end-of-turn and let-it-go-by markers less often, so
            # that a match meets more kinds of decision
            keys = page.eval_on_selector_all("#board [data-hit].lit", "els => els.map(e => e.dataset.hit)")
            assert not [k for k in keys if k.startswith(CATCH_ALL)], keys
            pick = [i for i, k in enumerate(keys) if not k.startswith(("end:", "pass:"))]
            i = rng.choice(pick) if pick and rng.random() < 0.85 else rng.randrange(len(keys))
            page.locator("#board [data-hit].lit").nth(i).click()
        else:
            page.wait_for_timeout(30)
            s = page.evaluate(STATE_JS)
            continue
        s = settle(page, s["v"])
    raise AssertionError("the match did not end")


def verified(server, mid) -> None:
    path = server.data_dir / "records" / f"{mid}.json"
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cli.main(["replay", "verify", str(path)]) == 0


def no_token_sent(page, token) -> None:
    assert page.requests, "the recorder saw no request"
    for url, referer in page.requests:
        assert token not in url and token not in referer, url
    assert token not in page.url  # and the address bar no longer holds it


@pytest.mark.parametrize(("game", "options", "seats", "human"), CLICK_RUNS,
                         ids=["batavia-3", "goa2012-2", "goa2004-4", "santa_maria-2",
                              "santa_maria-advanced-3", "santa_maria-pick-3"])
def test_a_whole_match_played_by_clicking_on_the_board(server, browser, game, options, seats,
                                                        human, tmp_path, capfd):
    logs.configure("debug")  # the referee's log is looked at for the token too
    try:
        mid, tokens = server.call(server.create(
            game=game, seats=seats, seed=11 + seats, options=options,
            names=["ann", "bob", "cy", "dee", "eve"][:seats]))
        ctx, page = open_seat(browser, server, mid, tokens[human])
        try:
            start_bots(server, mid, tokens, human, game)
            kinds = click_through(page, random.Random(seats))
            rt = server.service.matches.get(mid)
            assert kinds, "the person made no move"
            assert rt is None or rt.rejections[human] == 0
            verified(server, mid)
            page.locator("#result").wait_for()
            no_token_sent(page, tokens[human])
            assert not page.errors, page.errors
        finally:
            ctx.close()
    finally:
        logs.configure("warning")
        out, err = capfd.readouterr()
        assert mid in out + err, "the referee's log was not captured"
        assert tokens[human] not in out + err, "the seat token is in the referee's log"
    print(f"{game} {options}: {kinds}")


def test_a_whole_match_played_with_the_keyboard_only(server, browser):
    """The list of legal moves: Tab to a move, Enter; a confirmation takes Enter too."""
    mid, tokens = server.call(server.create(game="batavia", seats=5, seed=5))
    human = 0
    ctx, page = open_seat(browser, server, mid, tokens[human])
    rng = random.Random(5)
    try:
        start_bots(server, mid, tokens, human, "batavia")
        s = settle(page, -2)
        for _ in range(3000):
            if s["over"]:
                break
            assert not s["refusal"], s["refusal_text"]
            if s["chooser"]:  # the confirmation has the focus
                assert page.evaluate("document.activeElement.closest('#chooser') !== null")
                page.keyboard.press("Enter")
            elif s["deciding"]:
                page.evaluate("document.activeElement && document.activeElement.blur()")
                want = rng.randrange(page.locator("#move-list button.move").count())
                seen = -1
                for _ in range(400):
                    page.keyboard.press("Tab")
                    if page.evaluate("document.activeElement.matches('button.move')"):
                        seen += 1
                        if seen == want:
                            break
                assert seen == want, "the move list cannot be reached with Tab"
                page.keyboard.press("Enter")
            else:
                page.wait_for_timeout(30)
                s = page.evaluate(STATE_JS)
                continue
            s = settle(page, s["v"])
        assert s["over"]
        verified(server, mid)
        no_token_sent(page, tokens[human])
        assert not page.errors, page.errors
    finally:
        ctx.close()


def test_a_reload_and_a_lost_network_keep_the_seat(server, browser):
    mid, tokens = server.call(server.create(game="batavia", seats=3, seed=3))
    human = server.service.matches[mid].decision.seat
    ctx, page = open_seat(browser, server, mid, tokens[human])
    try:
        s = settle(page, -2)
        assert s["ready"]
        page.reload()  # the token is gone from the address: the tab's sessionStorage keeps it
        s = settle(page, -2)
        assert s["ready"] and "#token" not in page.url
        # a refused move: its reason on the page, nothing changed
        # (the stale version is written into the request on its way out: changing the page's
        # data instead raced its 5 s poll, which could read the decision again before the click)
        def stale(route):
            body = json.loads(route.request.post_data)
            body["version"] += 7
            route.continue_(post_data=json.dumps(body))

        page.route("**/api/play/*/move", stale)
        page.locator("#move-list button.move").last.click()  # a bid: no confirmation
        page.locator("#refusal").wait_for()
        page.unroute("**/api/play/*/move")
        assert "STALE_STATE" in page.locator("#refusal").text_content()
        assert server.service.matches[mid].match.version == s["v"]
        ctx.set_offline(True)
        page.wait_for_timeout(300)
        ctx.set_offline(False)
        page.evaluate("window.RefereePlay.page.refresh()")
        s = settle(page, -2)
        assert s["ready"]
        no_token_sent(page, tokens[human])
    finally:
        ctx.close()
    # a tab without the token asks for it, and sends nothing without it
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(f"{server.base}/play/{mid}")
        page.locator("#token-form").wait_for()
        assert page.evaluate("window.RefereePlay.page.data") is None
    finally:
        ctx.close()


def test_a_move_refused_by_a_draining_referee_is_sent_again(server, browser):
    """A move answered 503 / DRAINING (the referee stops for a restart; test_play_http.py pins
    that answer) was not played: the page says the referee is restarting, waits Retry-After
    and sends the same move again, which is then played; no refusal is shown."""
    mid, tokens = server.call(server.create(game="batavia", seats=3, seed=4))
    human = server.service.matches[mid].decision.seat
    ctx, page = open_seat(browser, server, mid, tokens[human])
    try:
        s = settle(page, -2)
        v0 = s["v"]
        sent: list[dict] = []

        def draining_once(route):
            sent.append(json.loads(route.request.post_data))
            if len(sent) > 1:
                route.continue_()
                return
            route.fulfill(status=503, headers={"Retry-After": "1", "Cache-Control": "no-store"},
                          content_type="application/json", body=json.dumps({
                              "error": "the referee is draining (stopping); call again",
                              "status": 503, "reason": "DRAINING"}))

        page.route("**/api/play/*/move", draining_once)
        page.locator("#move-list button.move").last.click()  # a bid: no confirmation
        page.locator("#net", has_text="the referee is restarting, retrying").wait_for()
        s = settle(page, s["v"])
        page.unroute("**/api/play/*/move")
        assert len(sent) == 2 and sent[0] == sent[1], sent  # the same move, id and version
        assert not s["refusal"], s["refusal_text"]
        assert server.service.matches[mid].match.version > v0
        assert page.locator("#net").is_hidden()
    finally:
        ctx.close()


@pytest.mark.parametrize(("game", "options", "seats"), [
    ("batavia", {}, 3), ("goa", {}, 2), ("goa", {"edition": "2004"}, 3),
    ("santa_maria", {}, 2)])
def test_screenshots_of_the_play_page(server, browser, tmp_path, game, options, seats):
    """The docs' pictures (docs/play-*.png: run with REFEREE_WEB_SCREENSHOTS=docs), desktop and
    a 390-pixel phone: the seat to move with its targets lit, as the window first shows it."""
    mid, tokens = server.call(server.create(
        game=game, seats=seats, seed=21, options=options, names=["ann", "bob", "cy"][:seats],
        policy=pb.TimePolicy(move_ms=600_000, bank_ms=1_200_000)))
    for token in tokens:  # every seat has shown up: the clocks run
        httpx.get(f"{server.base}/api/play/{mid}", headers={"Authorization": f"Bearer {token}"})
    rt = server.service.matches[mid]
    human = rt.decision.seat
    name = game.replace("_", "-") + ("-2004" if options else "")
    for width, height, suffix in ((1400, 1000, "desktop"), (390, 844, "phone")):
        ctx, page = open_seat(browser, server, mid, tokens[human], width, height)
        try:
            s = settle(page, -2)
            assert s["deciding"] and s["lit"]
            # each lit place is a button a screen reader names by its moves
            assert page.locator("#board svg").get_attribute("role") == "group"
            assert page.get_by_role("button").filter(has=page.locator(".lit-frame")).count() \
                == s["lit"]
            page.locator(".seat-clock.running").wait_for()  # the seat to act counts down
            assert "left" in page.locator(".seat-clock.running").text_content()
            page.wait_for_timeout(200)
            save_screenshot(page, tmp_path, f"play-{name}-{suffix}.png")
        finally:
            ctx.close()


def test_watch_shows_the_seats_view_and_notes_read_only(server, browser):
    """`#token=...&watch=1`: a program plays the seat; the page shows its view and its own
    notes live, lights nothing and offers no move."""
    mid, tokens = server.call(server.create(game="batavia", seats=3, seed=9))
    ctx, page = open_seat(browser, server, mid, tokens[0], watch=True)
    try:
        server.background(server.play_slowly(mid, tokens, delay=0.02, notes=True))
        page.locator("#notes li").first.wait_for()
        assert "zq-note-0-" in page.locator("#notes").text_content()
        assert "zq-note-1-" not in page.locator("#notes").text_content()  # its own only
        s = page.evaluate(STATE_JS)
        assert s["lit"] == 0 and page.locator("#moves").is_hidden()
        assert page.url.endswith("#watch=1")
        no_token_sent(page, tokens[0])
    finally:
        ctx.close()


#: every game, edition and variant whose decisions bring moves of their own
COVER = [
    ("batavia", {}, 3), ("batavia", {"setup": "face_up"}, 5),
    ("goa", {}, 2), ("goa", {"quick_starter": "true", "bonanza": "true"}, 4),
    ("goa", {"edition": "2004"}, 3), ("goa", {"edition": "2004", "quick_starter": "true"}, 2),
    ("santa_maria", {}, 2), ("santa_maria", {"setup": "advanced", "colony_boards": "pick"}, 3),
    ("santa_maria", {"shared_blue_dice": "true"}, 1), ("santa_maria", {}, 4),
    ("santa_maria", {"colony_boards": "pick"}, 4),
]

#: the catch-all places the boards used to send moves to when they had no place of their own:
#: the seat's name bar (end the turn, decline, the drafts, the quick starter's ducats), the
#: whole row of a seat's resources (Santa Maria's exchange) and Goa's whole supplies line (ships,
#: colonists, extra actions). No board draws them as places now.
CATCH_ALL = ("me:", "resources:", "stats:")

COVER_JS = """([game, states, catchAll]) => {
  const div = document.createElement('div');
  div.className = 'board play-board';
  document.body.appendChild(div);
  const out = [];
  const vague = (k) => catchAll.some((p) => String(k).startsWith(p));
  for (const data of states) {
    div.innerHTML = window.RefereeBoards[game](data.view, {names: data.names}, {viewer_seat: data.seat});
    const keys = new Set([...div.querySelectorAll('[data-hit]')].map((e) => e.dataset.hit));
    for (const k of keys) if (vague(k)) out.push([data.decision.kind, 'a catch-all place drawn', k]);
    for (const m of data.decision.moves) {
      const inner = m.move[game];
      const kind = Object.keys(inner)[0];
      const key = window.RefereePlay.hits[game](kind, inner[kind] || {}, data.view, data.seat);
      if (key === null || !keys.has(key) || vague(key)) out.push([data.decision.kind, kind, key]);
    }
  }
  div.remove();
  return out;
}"""


def test_every_legal_move_has_its_place_on_the_board(server, browser):
    """Beyond the decisions the played matches meet: every decision of random matches of every
    game, edition and variant (2 to 5 seats, and Santa Maria's solo), as the seat's page gets
    it, has each of its legal moves at the exact place the board draws for it: the end of a
    turn on the seat's own marker, a draft pick on the drafted lot or board, an exchange on its
    building; never a catch-all place (CATCH_ALL)."""
    from referee.core import registry
    from referee.core.match import Match
    from referee.web.play import seat_json

    mid, _ = server.call(server.create(game="batavia", seats=3))
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(f"{server.base}/play/{mid}")  # the page's scripts, without a seat
    try:
        for game_name, options, seats in COVER:
            game = registry.get(game_name)
            for script in ("goa.js", "batavia.js", "santa_maria.js"):
                page.add_script_tag(url=f"/static/{script}")
            meta = {"id": "m", "game": game_name, "names": [f"p{i}" for i in range(seats)],
                    "state": "running"}
            rnd = random.Random(seats)
            states, kinds, seen = [], set(), set()
            for seed in range(2):
                m = Match.create(game, options, seats, seed)
                step = 0
                while (d := m.decision()) is not None:
                    step += 1
                    # every new mix of moves, and a sample of the rest
                    mix = (d.kind, frozenset(type(mv).__name__ for mv in d.moves))
                    if mix in seen and step % 12:
                        m.submit(d.seat, rnd.choice(d.moves))
                        continue
                    seen.add(mix)
                    reply = pb.GetViewResponse(state_version=m.version)
                    getattr(reply.view, game_name).CopyFrom(game.view(m.state, d.seat))
                    reply.decision.seat, reply.decision.kind = d.seat, d.kind
                    for mv in d.moves:
                        getattr(reply.decision.legal_moves.add(), game_name).CopyFrom(
                            game.move_to_proto(mv))
                    states.append(seat_json(meta, reply))
                    kinds.add(d.kind)
                    m.submit(d.seat, rnd.choice(d.moves))
            missing: set[tuple] = set()
            for i in range(0, len(states), 200):
                missing |= {tuple(x) for x in page.evaluate(COVER_JS, [game_name, states[i:i + 200], list(CATCH_ALL)])}
            assert not missing, f"{game_name} {options}: moves with no place: {sorted(missing)[:10]}"
            print(game_name, options, len(states), "decisions:", sorted(kinds))
    finally:
        ctx.close()
