"""Hidden information: re-randomising everything a seat cannot see leaves its view byte-identical
(DESIGN, "Hidden information"). Hidden from seat s: other seats' hands (sizes are public), the draw
pile's order and content, face-down stall tiles, the RNG."""
from __future__ import annotations

import copy
import random

from referee.games.batavia import GAME
from referee.games.batavia import rules as R

from .helpers import new_state


def rerandomise(state: R.State, seat: int, rnd: random.Random) -> R.State:
    s = copy.deepcopy(state)
    # cards seat cannot see: other hands + draw pile; redeal them keeping every count public
    unseen = list(s.draw_pile)
    for o in range(s.n):
        if o != seat:
            unseen += [c for c in range(5) for _ in range(s.hands[o][c])]
    rnd.shuffle(unseen)
    for o in range(s.n):
        if o != seat:
            size = sum(s.hands[o])
            hand = [0] * 5
            for _ in range(size):
                hand[unseen.pop()] += 1
            s.hands[o] = hand
    s.draw_pile = unseen
    # face-down tiles: permute them among the face-down spaces
    hidden = [i for i in range(s.revealed, len(s.track)) if s.track[i] >= 0]
    tiles = [s.track[i] for i in hidden]
    rnd.shuffle(tiles)
    for i, t in zip(hidden, tiles):
        s.track[i] = t
    s.rng.state = rnd.getrandbits(64)
    return s


def states(n_games=60):
    for g in range(n_games):
        n = 3 + g % 3
        s = new_state(n, seed=500 + g, setup="face_down")
        rnd = random.Random(g)
        while (d := R.decision(s)) is not None:
            if rnd.random() < 0.08:
                yield s
            R.apply(s, d.seat, rnd.choice(d.moves))
        yield s


def test_views_do_not_leak_hidden_information():
    rnd = random.Random(1)
    checked = changed = 0
    for s in states():
        for seat in list(range(s.n)) + [None]:
            other = rerandomise(s, -1 if seat is None else seat, rnd)
            if GAME.hash_state(other) != GAME.hash_state(s):
                changed += 1
            a = GAME.view(s, seat).SerializeToString(deterministic=True)
            b = GAME.view(other, seat).SerializeToString(deterministic=True)
            assert a == b, f"seat {seat}'s view changed when hidden information changed"
            checked += 1
    assert checked > 1000 and changed > checked // 2, "the test must actually vary hidden state"


def test_views_hide_hands_but_show_sizes():
    """RULINGS 4: own hand shown; others' hand sizes and bills are public; spectators see no hand."""
    s = new_state(4, seed=3)
    v0 = GAME.view(s, 0)
    assert list(v0.my_hand.count) == s.hands[0]
    assert [p.hand_size for p in v0.players] == [10, 10, 10, 10]
    assert [p.bills for p in v0.players] == [15] * 4
    spectator = GAME.view(s, None)
    assert not spectator.HasField("my_hand") and spectator.seat == -1
    hidden = [st for st in spectator.stalls if st.state == 2]
    assert len(hidden) == 25 and all(st.company == 0 and st.good == 0 for st in hidden)
