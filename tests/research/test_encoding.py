"""The action and observation encodings of every game (issue 21, item 5;
docs/research/environments.md):

* a move of an enumerated kind has one index in every state, and a decision's legal moves get
  distinct indices, at least one of them, none past the space, nearly all in the stable block;
* the observation is built from the seat's view only: redrawing everything the seat may not see
  (the leak-test hook ``rerandomise``, as in tests/contract) leaves it unchanged, while the
  redraw does change the full state;
* the observation tells views apart: two different views of a sample never share one vector.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from referee_research.envs.encoding import ActionEncoding, ObservationEncoding, encodings

from referee.core import registry
from referee.sim.model import Simulation
from tests.contract import hooks
from tests.research.helpers import positions

GAMES = sorted(registry.games())


@pytest.mark.parametrize("name", GAMES)
def test_legal_moves_get_distinct_stable_indices(name):
    enc = encodings(name).actions
    again = ActionEncoding(registry.get(name))  # built anew: the same enumeration
    assert again.moves == enc.moves and again.size == enc.size
    dropped = overflowed = total = 0
    for sim in positions(name, 400, 3, every=1):
        d = sim.decision()
        if d is None:
            continue
        legal = enc.legal(d.moves)
        assert legal, f"{name}: a decision with no legal action ({d.kind})"
        assert all(0 <= i < enc.size for i in legal)
        assert len(set(map(id, legal.values()))) == len(legal)
        for i, move in legal.items():
            if i < enc.stable:
                assert enc.moves[i] == move and enc.index[move] == i
        dropped += len(d.moves) - len(legal)
        overflowed += sum(i >= enc.stable for i in legal)
        total += len(d.moves)
        mask = enc.mask(legal)
        assert mask.sum() == len(legal)
    assert dropped == 0, f"{name}: {dropped} legal moves past the overflow cap"
    # the enumeration covers what play reaches: the overflow slots are for rare values
    assert overflowed <= total / 100, f"{name}: {overflowed} of {total} moves in the overflow"


@pytest.mark.parametrize("name", GAMES)
def test_observation_reads_the_seats_view_only(name):
    rerandomise = hooks.require(name, "rerandomise")
    enc = encodings(name).observations
    rnd = random.Random(5)
    changed = 0
    total = 0
    for sim in positions(name, 60, 17):
        if sim.over:  # the final scoring reveals what it reveals at the table
            continue
        for seat in range(sim.seat_count):
            other = Simulation(sim.game, rerandomise(sim.state, seat, rnd), sim.options,
                               sim.components)
            mine = enc.encode(sim.view(seat))
            theirs = enc.encode(other.view(seat))
            assert np.array_equal(mine, theirs), (
                f"{name}: seat {seat}'s observation changed with what it cannot see")
            total += 1
            changed += other.hash() != sim.hash()
    assert changed > total * 0.5, f"{name}: the hook redrew nothing ({changed}/{total})"


@pytest.mark.parametrize("name", GAMES)
def test_observation_tells_views_apart(name):
    enc = ObservationEncoding(registry.get(name))
    assert enc.size == len(enc.names)
    seen: dict[bytes, bytes] = {}
    for sim in positions(name, 150, 29, every=3):
        seat = sim.to_move() if sim.to_move() is not None else 0
        view = sim.view(seat)
        vector = enc.encode(view)
        assert vector.shape == (enc.size,) and vector.dtype == np.float32
        key = vector.tobytes()
        data = view.SerializeToString(deterministic=True)
        assert seen.setdefault(key, data) == data, f"{name}: two views, one observation"
    assert len(seen) > 100
