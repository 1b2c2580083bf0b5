"""Batavia's hooks for the game-independent contract tests (tests/contract/test_game_contract.py):
the option sets random games cover, how to redraw what a seat cannot see, and the conservation
laws that hold after every move."""
from __future__ import annotations

import copy
import random

from referee.games.batavia import rules as R

OPTION_SETS = [
    {"setup": "face_down"},
    {"setup": "face_up"},
    {"setup": "face_down", "min_bid": "0", "pirates_repeat": "true"},
]


def rerandomise(state: R.State, seat: int | None, rnd: random.Random) -> R.State:
    """A copy with everything ``seat`` cannot see drawn anew (RULINGS 4): the other hands (same
    sizes, public) and the draw pile, the face-down stall tiles, the RNG. ``seat`` None is a
    spectator, who sees no hand at all."""
    s = copy.deepcopy(state)
    unseen = list(s.draw_pile)
    others = [o for o in range(s.n) if o != seat]
    for o in others:
        unseen += [c for c in range(R.N_COMPANIES) for _ in range(s.hands[o][c])]
    rnd.shuffle(unseen)
    for o in others:
        hand = [0] * R.N_COMPANIES
        for _ in range(sum(s.hands[o])):
            hand[unseen.pop()] += 1
        s.hands[o] = hand
    s.draw_pile = unseen
    hidden = [i for i in range(s.revealed, len(s.track)) if s.track[i] >= 0]
    tiles = [s.track[i] for i in hidden]
    rnd.shuffle(tiles)
    for i, t in zip(hidden, tiles):
        s.track[i] = t
    s.rng.state = rnd.getrandbits(64)
    return s


def check_invariants(s: R.State) -> None:
    """Ship cards, bills and crates are conserved; merchants never share a space and stand only
    on emptied, revealed spaces."""
    n = s.n
    cards = len(s.draw_pile) + sum(s.discards) + sum(s.lot)
    cards += sum(sum(h) for h in s.hands) + sum(sum(f) for f in s.face_up)
    assert cards == 110, "ship cards are conserved"
    assert sum(s.bills) == 15 * n and min(s.bills) >= 0, "bills are conserved"
    for seat in range(n):
        placed = sum(1 for o in s.crate_owner if o == seat)
        assert placed + s.crates_left[seat] == 12, "crates are conserved"
        assert min(s.hands[seat]) >= 0 and min(s.face_up[seat]) >= 0
    taken = sum(1 for t in s.track if t < 0)
    held = sum(len(t) for t in s.tiles) + (1 if s.pending_tile >= 0 else 0)
    assert held <= taken
    positions = [p for p in s.merchant if 0 < p < 36]
    assert len(positions) == len(set(positions)), "two merchants never share a space"
    for p in positions:
        assert s.track[p - 1] == -1
    assert s.revealed == 35 or all(p <= s.revealed - 5 for p in positions)
