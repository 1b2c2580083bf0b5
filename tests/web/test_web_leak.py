"""A web page never shows what a spectator may not see.

The pages draw only what referee.web.frames.public_view returns (replays) and the spectator
updates of the Watch stream (live). Re-randomising everything a spectator cannot see (hands, deck
order, face-down tiles, secret ducats, face-down ships, the RNG; the games' own leak-test
helpers) must leave that JSON identical. And no page or API answer about a running match carries
its seed (which decides every future card and tile), its seed commitment's salt or a seat
token."""
from __future__ import annotations

import json
import random
import time

import httpx
import pytest

from referee.core import registry
from referee.core.match import Match
from referee.web import frames as F
from tests.contract.hooks import for_game

SPECTATOR = {
    # each game's own hidden-information hook (tests/<game>/hooks.py), for a spectator
    "batavia": (lambda s, rnd: for_game("batavia").rerandomise(s, None, rnd), 4,
                {"setup": "face_down"}),
    "goa": (lambda s, rnd: for_game("goa").rerandomise(s, -1, rnd), 3, {}),
    "santa_maria": (lambda s, rnd: for_game("santa_maria").rerandomise(s, None, rnd), 3, {}),
}


@pytest.mark.parametrize("game_name", sorted(SPECTATOR))
def test_web_views_ignore_hidden_information(game_name):
    rerandomise, seats, options = SPECTATOR[game_name]
    game = registry.get(game_name)
    checked = changed = 0
    for seed in range(2):
        m = Match.create(game, options, seats, 900 + seed)
        rnd = random.Random(seed)
        step = 0
        while (d := m.decision()) is not None:
            if step % 17 == 0:
                want = json.dumps(F.public_view(game, m.state), sort_keys=True)
                for _ in range(2):
                    other = rerandomise(m.state, rnd)
                    changed += game.hash_state(other) != game.hash_state(m.state)
                    got = json.dumps(F.public_view(game, other), sort_keys=True)
                    assert got == want, f"the web view of {game_name} shows hidden information"
                    checked += 1
            m.submit(d.seat, rnd.choice(d.moves))
            step += 1
    assert checked > 12 and changed > checked // 2, "the test must actually vary hidden state"


def test_pages_of_a_running_match_carry_no_seed_or_token(web):
    seed = 987654321987654
    mid, tokens = web.call(web.create(seats=3, seed=seed))
    web.background(web.play_slowly(mid, tokens, delay=0.05))
    rt = web.service.matches[mid]
    for _ in range(400):  # some moves, still running
        if rt.match.version >= 5:
            break
        time.sleep(0.02)
    bodies = [httpx.get(web.base + p).text for p in (
        "/", "/api/matches", f"/matches/{mid}", f"/api/matches/{mid}",
        f"/api/matches/{mid}/views/3")]
    with httpx.stream("GET", web.base + f"/api/matches/{mid}/live", timeout=10) as r:
        for line in r.iter_lines():
            if line.startswith("data: "):
                bodies.append(line)
                break
    assert json.loads(bodies[3])["match"]["state"] == "running"
    salt = rt.seed_salt  # the seed commitment's (issue 31 item 7): secret until the end too
    assert len(salt) == 64
    for body in bodies:
        assert str(seed) not in body and salt not in body
        for t in tokens:
            assert t not in body


def test_a_running_match_shows_no_note_and_no_seat_view(web):
    """While the match is live: no page, API answer or live feed carries a bot's note or a
    seat's view; ``?seat=`` and the reveal are refused (403), the notes need a seat token."""
    mid, tokens = web.call(web.create(seats=3, seed=5151))
    web.background(web.play_slowly(mid, tokens, delay=0.05, notes=True))
    rt = web.service.matches[mid]
    for _ in range(400):
        if rt.match.version >= 6:
            break
        time.sleep(0.02)
    assert any(e.note for e in rt.match.moves), "the bots must have noted their moves"
    bodies = [httpx.get(web.base + p).text for p in (
        "/", "/api/matches", f"/matches/{mid}", f"/api/matches/{mid}",
        f"/api/matches/{mid}/views/3", f"/matches/{mid}?seat=1")]
    for q in ("0", "2", "reveal"):
        r = httpx.get(f"{web.base}/api/matches/{mid}?seat={q}")
        assert r.status_code == 403 and "over" in r.json()["error"]
        bodies.append(r.text)
    r = httpx.get(f"{web.base}/api/matches/{mid}/notes")
    assert r.status_code == 401
    bodies.append(r.text)
    with httpx.stream("GET", web.base + f"/api/matches/{mid}/live", timeout=10) as r:
        seen = 0
        for line in r.iter_lines():
            if line.startswith("data: "):
                bodies.append(line)
                seen += 1
                if seen >= 3:
                    break
    for body in bodies:
        assert "zq-note-" not in body and "hums at" not in body


def test_league_pages_and_api_carry_no_token_invite_or_hidden_value(web):
    """Every league page and JSON answer, while a league match is live: no bot token, admin
    token, invite code, hash of any of them, seat token, or the live match's seed."""
    from referee.server.base.auth import token_hash
    from tests.server.conftest import ADMIN

    from .league_fixture import build_sync

    lg = build_sync(web, running=True)
    assert lg.running is not None
    mid, seat_tokens = lg.running
    web.background(web.play_slowly(mid, seat_tokens, delay=0.05))
    secrets_ = [*lg.tokens.values(), lg.invite, ADMIN, *seat_tokens]
    secrets_ += [token_hash(s) for s in secrets_]
    paths = ["/", "/?league=spring", "/?bot=alpha", "/leagues", "/leagues/spring",
             "/leagues/spring/register", "/leagues/spring/admin", "/bots/alpha", "/bots/beta",
             "/bots/gamma", "/api/leagues", "/api/leagues/spring",
             "/api/leagues/spring/standings", "/api/bots/alpha", "/api/bots/beta",
             "/api/bots/gamma", "/api/matches", "/api/matches?league=spring",
             "/api/matches?bot=beta&limit=1", f"/matches/{mid}", f"/api/matches/{mid}"]
    rt = web.service.matches[mid]
    for _ in range(400):
        if rt.match.version >= 3:
            break
        time.sleep(0.02)
    bodies = [httpx.get(web.base + p).text for p in paths]
    assert json.loads(bodies[paths.index(f"/api/matches/{mid}")])["match"]["state"] == "running"
    for path, body in zip(paths, bodies, strict=True):
        assert "987654321987" not in body, path
        for s in secrets_:
            assert s not in body, path
