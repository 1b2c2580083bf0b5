"""The OpenSpiel Python game of every game (issue 21, item 5; issue 36, item 3;
docs/research/environments.md): OpenSpiel's own ``random_sim_test`` accepts it with
serialisation, its one chance node draws the match seed among ``SEEDS`` equally likely outcomes,
the same seed and actions give the same match, the games are registered on import, every
observation type is honoured or refused, and OpenSpiel's own ``ISMCTSBot`` plays whole matches
on the game's sampler."""
from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts
from open_spiel.python.observation import make_observation
from referee_research.envs.spiel import BEFORE_SEED, MAX_GAME_LENGTH, SEEDS, load

from referee.core import registry
from referee.sim.model import Simulation

GAMES = sorted(registry.games())
IIG = pyspiel.IIGObservationType
PRIVATE = pyspiel.PrivateInfoType


def _played(name: str, players: int | None = None, steps: int = 25, seed: int = 37):
    """A state ``steps`` random actions after seed ``seed``."""
    game = load(name, players)
    state = game.new_initial_state()
    state.apply_action(seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))
    return game, state


@pytest.mark.parametrize("name", GAMES)
def test_random_sim_test_accepts_it_with_serialisation(name):
    """OpenSpiel's own checks, serialising and deserialising the game and state along the way
    (``serialize=True``: pickled Python attributes, compared by ``str``)."""
    spec = registry.get(name).spec
    for players in (spec.min_seats,):  # Santa Maria: the solo game
        game = load(name, players)
        assert game.num_players() == players
        pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("name", GAMES)
def test_game_and_state_pickle_and_serialise_mid_game(name):
    """A state pickled (or serialised with pyspiel) mid-game continues exactly as the
    original: same observations, legal actions and returns to the end."""
    game, state = _played(name, steps=40)
    assert pickle.loads(pickle.dumps(game)) == game
    copies = [pickle.loads(pickle.dumps(state)),
              pyspiel.deserialize_game_and_state(
                  pyspiel.serialize_game_and_state(game, state))[1]]
    rng = np.random.default_rng(3)
    while not state.is_terminal():
        player = state.current_player()
        for copy in copies:
            assert copy.current_player() == player
            assert copy.legal_actions() == state.legal_actions()
            assert copy.observation_string(player) == state.observation_string(player)
        action = int(rng.choice(state.legal_actions()))
        for s in (state, *copies):
            s.apply_action(action)
    for copy in copies:
        assert copy.is_terminal() and copy.returns() == state.returns()
        assert copy.history() == state.history()
        # the public events the sampler reads came along, and went on alike
        assert copy.table.events() == state.table.events() and state.table.events()


def test_the_games_are_registered_on_import():
    """``import referee_research.envs.spiel`` is enough for ``pyspiel.load_game`` (a fresh
    interpreter: this one has long imported it)."""
    code = ("import pyspiel, referee_research.envs.spiel\n"
            f"for name in {GAMES!r}:\n"
            "    print(pyspiel.load_game('referee_' + name).num_players())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert len(out.stdout.split()) == len(GAMES)


@pytest.mark.parametrize("name", GAMES)
def test_the_chance_node_draws_the_seed(name):
    game = load(name)
    state = game.new_initial_state()
    assert state.is_chance_node()
    assert state.observation_string(0) == BEFORE_SEED
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


@pytest.mark.parametrize("name", GAMES)
def test_observation_types_are_honoured_or_refused(name):
    """The default observation is the player's own view (its text, its encoding); NONE is the
    spectator's view, ALL_PLAYERS every seat's; perfect recall and private-only information are
    refused, and the game type says it has no information state."""
    game, state = _played(name, 3 if name == "batavia" else 2)
    sim = state.table.sim
    enc = state.table.enc.observations
    players = game.num_players()
    assert not game.get_type().provides_information_state_string
    assert not game.get_type().provides_information_state_tensor
    assert game.get_type().provides_observation_string
    strings = [state.observation_string(p) for p in range(players)]
    assert strings == [state.table.text(p) for p in range(players)]
    assert all(strings) and len(set(strings)) == players, "each player's own view, described"
    for p in range(players):  # a seat's tensor: its observation as the environments make it
        assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32),
                              state.table.observe(p))

    public = make_observation(game, IIG(perfect_recall=False, public_info=True,
                                        private_info=PRIVATE.NONE))
    public.set_from(state, 0)
    assert np.array_equal(public.tensor, enc.encode(sim.view(None)))
    assert public.string_from(state, 1) == state.table.text(None)

    everyone = make_observation(game, IIG(perfect_recall=False, public_info=True,
                                          private_info=PRIVATE.ALL_PLAYERS))
    everyone.set_from(state, 0)
    assert everyone.tensor.shape == (players, state.table.observation_size)
    for p in range(players):
        assert np.array_equal(everyone.tensor[p], state.table.observe(p))
        assert strings[p] in everyone.string_from(state, 0)

    for refused in (IIG(perfect_recall=True),
                    IIG(perfect_recall=False, public_info=False,
                        private_info=PRIVATE.SINGLE_PLAYER)):
        with pytest.raises(ValueError, match="offers no"):
            make_observation(game, refused)
    with pytest.raises(ValueError, match="perfect-recall"):
        state.information_state_string(0)
    with pytest.raises(ValueError, match="perfect-recall"):
        state.information_state_tensor(0)


@pytest.mark.parametrize("name", GAMES)
def test_resample_from_infostate_keeps_what_the_player_saw(name):
    """The resampled state shows the player the same view (so the same observation) with the
    same player to act, and redraws what the player cannot see."""
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    redrawn = total = 0
    for seed in (5, 6):
        _, state = _played(name, 2 if name != "batavia" else 3, steps=30, seed=seed)
        state = state.clone()  # a copy shares the events it read up to here
        for p in range(state.num_players()):
            other = state.resample_from_infostate(p, sampler)
            assert other.current_player() == state.current_player()
            assert other.observation_string(p) == state.observation_string(p)
            assert other.legal_actions() == state.legal_actions() or \
                p != state.current_player()
            redrawn += other.table.sim.hash() != state.table.sim.hash()
            total += 1
    assert redrawn > total / 2, f"{name}: the sampler redrew nothing ({redrawn}/{total})"


class _Uniform(mcts.Evaluator):
    """No rollouts: the tests check that OpenSpiel's search runs on the game, not its play."""

    def evaluate(self, state):
        return np.zeros(state.num_players())

    def prior(self, state):
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


@pytest.mark.parametrize("name", GAMES)
def test_openspiels_ismcts_bot_plays_a_whole_match(name):
    """OpenSpiel's ``ISMCTSBot`` on the observation strings: each of its simulations starts
    from ``resample_from_infostate`` and checks the sample's key is the real state's."""
    game = load(name, 2 if name != "batavia" else 3)
    bot = ismcts.ISMCTSBot(game, _Uniform(), 2.0, max_simulations=3,
                           random_state=np.random.RandomState(1), use_observation_string=True)
    state = game.new_initial_state()
    state.apply_action(11)
    rng = np.random.default_rng(2)
    decisions = 0
    while not state.is_terminal():
        if state.current_player() == 0:
            action = int(bot.step(state))
            assert action in state.legal_actions()
            decisions += 1
        else:
            action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
    assert decisions > 10 and max(state.returns()) == 1.0


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


def test_openspiels_rl_environment_plays_on_the_observation_tensor():
    """``rl_environment`` takes the observation tensor, the game offering no information state,
    and plays a match to its rank rewards."""
    from open_spiel.python import rl_environment

    env = rl_environment.Environment(
        "referee_batavia", chance_event_sampler=rl_environment.ChanceEventSampler(seed=0),
        players=3)
    assert env.observation_spec()["info_state"] == (load("batavia", 3).observation_tensor_size(),)
    rng = np.random.default_rng(0)
    step = env.reset()
    while not step.last():
        player = step.observations["current_player"]
        step = env.step([int(rng.choice(step.observations["legal_actions"][player]))])
    assert max(step.rewards) == 1.0 and len(step.rewards) == 3
