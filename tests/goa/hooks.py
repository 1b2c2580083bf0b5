"""Goa's hooks for the game-independent contract tests (tests/contract/test_game_contract.py):
the option sets random games cover, how to redraw what a seat cannot see, and the conservation
laws that hold after every move."""
from __future__ import annotations

import copy
import random

from referee.core.rng import Streams
from referee.games.goa.cards import HandLimitDiscard
from referee.games.goa.catalog import TILE_MISSION
from referee.games.goa.state import OVER, State, hand_limit

OPTION_SETS = [
    {},
    {"edition": "2004"},
    {"quick_starter": True},
    {"bonanza": True},
    {"edition": "2004", "quick_starter": True},
    {"edition": "2004", "colony_card_timing": "before", "hand_limit": "always"},
    {"hand_limit": "always", "bonanza": True},
]


def check_invariants(state: State) -> None:
    n = state.n
    for s in range(n):
        assert state.ducats[s] >= 0
        assert state.ships[s] >= 0
        assert state.colonists[s] >= 0
        assert state.extra_cards[s] >= 0
        assert all(0 <= r <= 4 for r in state.rows[s])
        assert sum(1 for land in state.lands[s] if not land.colony) <= 4
        for land in state.lands[s]:
            for mask, spice in zip(land.takes, land.spices):
                assert spice == -1 or mask & (1 << spice)
    assert state.extra_supply >= 0
    assert state.extra_supply + sum(state.extra_cards) == state.rules.extra_cards
    if state.options.get("hand_limit") == "always" and not (
            state.stack and isinstance(state.stack[-1], HandLimitDiscard)):
        for s in range(n):
            assert len(state.hands[s]) <= hand_limit(state, s)
    cards = sorted(state.deck + state.discard + [c for h in state.hands for c in h])
    assert cards == list(range(30)), "every Expedition card is somewhere, once"


def rerandomise(state: State, seat: int | None, rnd: random.Random) -> State:
    """Everything ``seat`` cannot see, drawn anew: the other hands (same sizes) and the deck
    order, the others' ducats, the face-down Bonanza tiles, the RNG. ``seat`` None (or -1) is a
    spectator, who sees no hand at all. Once the game is over the final scoring shows every
    seat's ducats and Mission tiles: those stay."""
    s2 = copy.deepcopy(state)
    others = [p for p in range(s2.n) if p != seat]
    pool = list(s2.deck) + [c for p in others for c in s2.hands[p]]
    rnd.shuffle(pool)
    for p in others:
        k = len(s2.hands[p])
        s2.hands[p] = pool[:k]
        pool = pool[k:]
    s2.deck = pool
    over = s2.phase == OVER
    for p in others:
        if not over:
            s2.ducats[p] = rnd.randrange(0, 60)
    face_down = [g for g in range(25) if s2.bonanza[g] >= 0]
    if face_down:
        unused = [b for b in range(len(s2.rules.bonanza)) if b not in s2.bonanza]
        choices = [s2.bonanza[g] for g in face_down] + unused
        rnd.shuffle(choices)
        for g, b in zip(face_down, choices):
            s2.bonanza[g] = b
    rnd.shuffle(s2.stacks["B"])
    # others' Mission tiles lie face down: re-deal them among the Mission tiles nobody sees
    mission = [t for t in range(len(s2.rules.tiles)) if s2.rules.tiles[t].type == TILE_MISSION]
    held = [] if over else [(p, i) for p in others for i, t in enumerate(s2.kept[p]) if t in mission]
    unseen = [t for t in s2.stacks["B"] if t in mission]
    pool = [s2.kept[p][i] for p, i in held] + unseen
    rnd.shuffle(pool)
    for p, i in held:
        s2.kept[p][i] = pool.pop()
    b_slots = [k for k, t in enumerate(s2.stacks["B"]) if t in mission]
    for k in b_slots:
        s2.stacks["B"][k] = pool.pop()
    if s2.edition == "2004":  # the tiles returned to the box unseen
        s2.box = [rnd.randrange(len(s2.rules.tiles)) for _ in s2.box]
    s2.rng = Streams.from_root(rnd.getrandbits(64))
    return s2
