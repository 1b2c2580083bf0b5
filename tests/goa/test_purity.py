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
from referee.games.goa.rules import PHASE_DECISIONS
from referee.games.goa.state import AUCTION, EXTRA, PLACE, QUICK
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


@pytest.mark.parametrize("seats,options", CASES, ids=[str(o) for _, o in CASES])
def test_the_pending_object_reads_its_decision_without_changing_the_state(seats, options):
    """Whatever is pending, a sub-decision on the stack or, with the stack empty, the phase's own
    decision (``PHASE_DECISIONS``), asking it again answers the kept decision and leaves the
    state's hash alone; every phase with a choice of its own is met."""
    phases = set()
    for seed in range(2):
        state = new_game(seats, seed, **options)
        rnd = random.Random(seed)
        while (d := GAME.decision(state)) is not None:
            before = GAME.hash_state(state), hashing.digest(state)
            if state.stack:
                asked = state.stack[-1].decision(state)
            else:
                phases.add(state.phase)
                asked = PHASE_DECISIONS[state.phase].decision(state)
            assert (GAME.hash_state(state), hashing.digest(state)) == before
            assert asked is not None
            assert (asked.seat, asked.kind, list(asked.moves)) == (d.seat, d.kind, list(d.moves))
            GAME.apply(state, d.seat, d.moves[rnd.randrange(len(d.moves))])
    expected = {PLACE, AUCTION, EXTRA} | ({QUICK} if options.get("quick_starter") else set())
    assert expected <= phases
