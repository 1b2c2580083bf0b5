"""The OpenSpiel Python game of every game (issue 21, item 5; docs/research/environments.md):
OpenSpiel's own ``random_sim_test`` accepts it, its one chance node draws the match seed among
``SEEDS`` equally likely outcomes, and the same seed and actions give the same match."""
from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from referee_research.envs.spiel import MAX_GAME_LENGTH, SEEDS, load

from referee.core import registry
from referee.sim.model import Simulation

GAMES = sorted(registry.games())


@pytest.mark.parametrize("name", GAMES)
def test_random_sim_test_accepts_it(name):
    spec = registry.get(name).spec
    for players in (spec.min_seats,):  # Santa Maria: the solo game
        game = load(name, players)
        assert game.num_players() == players
        pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("name", GAMES)
def test_the_chance_node_draws_the_seed(name):
    game = load(name)
    state = game.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(SEEDS))
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    state.apply_action(37)
    assert not state.is_chance_node()
    assert state.table.sim.hash() == Simulation.new(name, game.num_players(), 37).hash()
    # play on at random; a clone replays to the same end, the observation is the player's view
    rng = np.random.default_rng(1)
    clone = state.clone()
    actions = []
    while not state.is_terminal():
        player = state.current_player()
        assert player >= 0 and not state.is_chance_node()
        tensor = np.asarray(state.observation_tensor(player), dtype=np.float32)
        assert np.array_equal(tensor, state.table.observe(player))
        action = int(rng.choice(state.legal_actions()))
        actions.append(action)
        state.apply_action(action)
    for action in actions:
        clone.apply_action(action)
    assert clone.is_terminal() and clone.returns() == state.returns()
    assert max(state.returns()) == 1.0


def test_game_parameters_are_the_options():
    game = load("batavia", 4, setup="face_up")
    state = game.new_initial_state()
    state.apply_action(0)
    assert state.table.options["setup"] == "face_up"
    assert state.table.sim.options["setup"] == "face_up"
    assert pyspiel.load_game("referee_batavia", {"players": 5}).num_players() == 5


@pytest.mark.parametrize("name", GAMES)
def test_the_game_type_and_length_are_the_games_own(name):
    """The information type and the bound on a match's length come from the game's GameSpec
    (the declared decisions plus the seed's chance node), where it declares one."""
    spec = registry.get(name).spec
    game = load(name, spec.max_seats)
    information = pyspiel.GameType.Information
    assert game.get_type().information == {
        "perfect": information.PERFECT_INFORMATION,
        "imperfect": information.IMPERFECT_INFORMATION}[spec.information]
    expected = MAX_GAME_LENGTH if spec.max_decisions is None else (
        spec.max_decisions(spec.parse_options({}), spec.max_seats) + 1)
    assert game.max_game_length() == expected
