"""``decision(state)`` is a pure query (the game contract: only ``apply`` changes a state).
Everything the phase machine does between two choices (pushing the next action turn, a lot taken
free, phase B laid out, the final scoring) happens at the end of ``apply``; the state it leaves is
settled, and asking for the decision reads it without touching it. Checked with the game's state
hash and with core hashing's digest of every field (sub-decisions and lands as dataclasses)."""
from __future__ import annotations

import copy
import random

import pytest

from referee.core import hashing
from tests.goa.helpers import GAME, new_game

CASES = [
    (2, {}),
    (3, {"edition": "2004"}),
    (4, {"quick_starter": True, "bonanza": True}),
    (3, {"hand_limit": "always", "colony_card_timing": "before"}),
]


@pytest.mark.parametrize("seats,options", CASES, ids=[str(o) for _, o in CASES])
def test_decision_leaves_the_state_hash_unchanged(seats, options):
    for seed in range(6):
        state = new_game(seats, seed, **options)
        rnd = random.Random(seed)
        steps = 0
        while True:
            before = GAME.hash_state(state), hashing.digest(state)
            d = GAME.decision(state)
            again = GAME.decision(state)
            after = GAME.hash_state(state), hashing.digest(state)
            assert after == before, f"decision() changed the state at step {steps}"
            if d is None:
                assert again is None
                break
            assert (again.seat, again.kind, list(again.moves)) == (d.seat, d.kind, list(d.moves))
            GAME.apply(state, d.seat, d.moves[rnd.randrange(len(d.moves))])
            steps += 1
        assert steps > 200


def test_a_copy_asks_the_same_decision_as_the_original():
    """The pending decision depends on the state alone: a deep copy answers the same."""
    state = new_game(3, 9)
    rnd = random.Random(9)
    for _ in range(150):
        d = GAME.decision(state)
        twin = copy.deepcopy(state)
        other = GAME.decision(twin)
        assert (other.seat, other.kind, list(other.moves)) == (d.seat, d.kind, list(d.moves))
        assert GAME.hash_state(twin) == GAME.hash_state(state)
        GAME.apply(state, d.seat, rnd.choice(d.moves))
