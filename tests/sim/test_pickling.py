"""States, forward models, games and move tables pickle (issue 36, item 3): what subprocess
vector environments, checkpoints and OpenSpiel's serialisation need. A forward model pickled
mid-game, in a state whose pending decision the engine has memoised, plays on exactly as the
original, on the moves of its own decision lists; its game unpickles as the registered game and
its compiled rules as the process's own (the engines' caches key on them)."""
from __future__ import annotations

import pickle
import random

import pytest

from referee.core import registry
from referee.sim.model import Simulation

GAMES = sorted(registry.games())


@pytest.mark.parametrize("name", GAMES)
def test_a_forward_model_pickled_mid_game_plays_on_identically(name):
    spec = registry.get(name).spec
    for seats in range(spec.min_seats, spec.max_seats + 1):
        sim = Simulation.new(name, seats, 100 + seats)
        rnd = random.Random(seats)
        for _ in range(20 + 15 * seats):
            d = sim.decision()
            assert d is not None
            sim.apply(d.moves[rnd.randrange(len(d.moves))])
        sim.decision()  # the engine may memoise it in the state: it pickles too
        copy = pickle.loads(pickle.dumps(sim))
        assert copy.game is sim.game, "a game unpickles as the registered one"
        assert copy.state.rules is sim.state.rules, "and its rules as the process's own"
        assert copy.hash() == sim.hash()
        steps = 0
        while (d := sim.decision()) is not None:
            d_copy = copy.decision()
            assert d_copy is not None and d_copy.seat == d.seat and d_copy.moves == d.moves
            i = rnd.randrange(len(d.moves))
            sim.apply(d.moves[i])
            copy.apply(d_copy.moves[i])  # the copy's own move objects
            assert copy.hash() == sim.hash(), f"{name}: the copy left the original's game"
            steps += 1
        assert copy.result() == sim.result()
        for seat in range(seats):
            assert copy.view(seat) == sim.view(seat)
        assert steps > 0


@pytest.mark.parametrize("name", GAMES)
def test_the_move_table_pickles(name):
    """A game's move codec pickles as its table and maps the same moves both ways."""
    game = registry.get(name)
    codec = pickle.loads(pickle.dumps(game.move_codec))
    sim = Simulation.new(name, game.spec.max_seats, 7)
    rnd = random.Random(7)
    seen = 0
    while (d := sim.decision()) is not None and seen < 2000:
        for move in d.moves:
            message = game.move_to_proto(move)
            assert codec.to_proto(move) == message
            assert codec.from_proto(message) == move
            seen += 1
        sim.apply(d.moves[rnd.randrange(len(d.moves))])


@pytest.mark.parametrize("name", GAMES)
def test_pickled_at_any_decision_the_next_move_plays_alike(name):
    """Pickled at every decision of whole games (the decision memoised), the copy plays the
    chosen move of its own list to the same state: a move the rules compare by identity (a
    singleton such as Santa Maria's DECLINE) must unpickle as that very object."""
    spec = registry.get(name).spec
    for seed in range(3):
        sim = Simulation.new(name, max(spec.min_seats, 2), seed)
        rnd = random.Random(seed)
        while (d := sim.decision()) is not None:
            copy = pickle.loads(pickle.dumps(sim))
            d_copy = copy.decision()
            assert d_copy is not None
            i = rnd.randrange(len(d.moves))
            sim.apply(d.moves[i])
            copy.apply(d_copy.moves[i])
            assert copy.hash() == sim.hash(), f"{name}: {d.moves[i]!r} played apart"
