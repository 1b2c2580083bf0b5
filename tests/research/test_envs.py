"""The environments of every game pass their libraries' own checks (issue 21, item 5; issue 36,
item 3; docs/research/environments.md): PettingZoo's ``api_test``, ``seed_test`` and
``render_test`` for the AEC environment, alone and from the ``env()`` factory with PettingZoo's
standard wrappers, Gymnasium's ``check_env`` (render modes included) on every registered id
(against random and against the game's greedy bot); OpenSpiel's in test_spiel.py. Plus what
those checks cannot know: a finished match pays the rank rewards of its result, the same seed
gives the same match, and every environment pickled mid-episode plays on exactly as the
original."""
from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test
from referee_research.envs import aec, env, gym_ids, single
from referee_research.envs.common import rank_reward

from referee.core import registry
from referee.sim.model import Simulation

GAMES = sorted(registry.games())
#: a seat count per game that is not its smallest where it can be, plus Santa Maria's solo game
SEATS = {name: min(registry.get(name).spec.min_seats + 1, registry.get(name).spec.max_seats)
         for name in GAMES}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # the checkers' advice on Dict observation spaces
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize("name", GAMES)
def test_pettingzoo_api_and_seed(name):
    api_test(aec(name, SEATS[name], seed=1), num_cycles=200)
    seed_test(lambda: aec(name, SEATS[name], seed=2), num_cycles=150)


@pytest.mark.parametrize("name", GAMES)
def test_pettingzoo_factory_with_the_standard_wrappers(name):
    """``env()`` wraps as PettingZoo's own environments do; the wrapped environment passes the
    same checks, renders the spectator's view as text, and ends the episode on an illegal
    action with -1 for the agent that played it."""
    api_test(env(name, SEATS[name], seed=1), num_cycles=100)
    seed_test(lambda: env(name, SEATS[name], seed=2), num_cycles=60)
    render_test(lambda render_mode=None: env(name, SEATS[name], seed=3,
                                              render_mode=render_mode))
    wrapped = env(name, SEATS[name], seed=4, render_mode="ansi")
    wrapped.reset(seed=1)
    assert wrapped.render() == wrapped.unwrapped.table.text(None)
    agent = wrapped.agent_selection
    obs, *_ = wrapped.last()
    wrapped.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(wrapped.terminations.values())
    assert wrapped.rewards[agent] == -1.0
    with pytest.raises(AssertionError):  # AssertOutOfBoundsWrapper
        again = env(name, SEATS[name], seed=4)
        again.reset(seed=1)
        again.step(again.action_space(again.agent_selection).n)
    with pytest.raises(ValueError, match="render_mode"):
        env(name, SEATS[name], render_mode="rgb_array")


@pytest.mark.parametrize("name", GAMES)
def test_aec_match_pays_the_rank_rewards(name):
    env = aec(name, SEATS[name], seed=4)
    env.reset(seed=9)
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        mask = obs["action_mask"]
        assert mask.any()
        # only the agent to act has legal actions
        for seat, other in enumerate(env.possible_agents):
            if other != agent:
                assert not env.table.mask(seat).any()
        env.step(int(rng.choice(np.flatnonzero(mask))))
    result = env.table.sim.result()
    assert result is not None
    assert [totals[a] for a in env.possible_agents] == [
        rank_reward(result, s) for s in range(SEATS[name])]
    # reset(seed) starts the match the seed names, whatever the environment's own seed
    again = aec(name, SEATS[name], seed=123)
    again.reset(seed=9)
    first = Simulation.new(name, SEATS[name], int(np.random.default_rng(9).integers(2**62)))
    assert again.table.sim.hash() == first.hash()


def test_every_game_and_edition_has_a_gymnasium_id():
    ids = gym_ids()
    assert {game for game, _ in ids.values()} == set(GAMES)
    assert ids["referee/Goa-v0"] == ("goa", {})
    assert ids["referee/Goa2004-v0"] == ("goa", {"edition": "2004"})
    assert ids["referee/SantaMaria-v0"] == ("santa_maria", {})
    for env_id in ids:
        assert env_id in gym.registry


@pytest.mark.parametrize("opponents", ["random", "greedy"])
@pytest.mark.parametrize("env_id", sorted(gym_ids()))
def test_gymnasium_single_seat(env_id, opponents):
    """``check_env`` on the registered id, its render modes included ("ansi": the learner's
    view as text); the id's options (an edition) are the match's, under the caller's own."""
    name, preset = gym_ids()[env_id]
    made = gym.make(env_id, seats=SEATS[name], seat=1, opponents=opponents, render_mode="ansi",
                    options={"quick_starter": True} if name == "goa" else None)
    env = made.unwrapped
    check_env(env)
    assert env.table.options == {**preset, **({"quick_starter": True} if name == "goa" else {})}
    obs, info = env.reset(seed=5)
    assert env.render() == env.table.text(1)
    for key, value in preset.items():
        assert env.table.sim.options[key] == value
    assert np.array_equal(info["action_mask"], obs["action_mask"])
    done = False
    total = 0.0
    while not done:
        obs, reward, done, truncated, info = env.step(
            env.action_space.sample(mask=obs["action_mask"]))
        assert not truncated and "illegal" not in info
        total += reward
    assert total == rank_reward(info["result"], 1)


def test_gymnasium_illegal_action_ends_the_episode():
    env = single("batavia", 3)
    obs, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal"]


def test_single_seat_refuses_a_bad_set_up():
    with pytest.raises(ValueError, match="opponents"):
        single("batavia", 3, opponents=["random"])
    with pytest.raises(ValueError, match="unknown bot"):
        single("batavia", 3, opponents="nobody")
    with pytest.raises(ValueError, match="seat"):
        single("batavia", 3, seat=3)


def _first_legal(obs) -> int:
    return int(np.flatnonzero(obs["action_mask"])[-1])


@pytest.mark.parametrize("name", GAMES)
def test_environments_pickle_mid_episode(name):
    """Each environment pickled mid-episode (what a subprocess vector environment or a
    checkpoint does) plays on exactly as the original: same observations, rewards and end."""
    # PettingZoo, through the factory's wrappers
    original = env(name, SEATS[name], seed=6)
    original.reset(seed=2)
    for _ in range(25):
        obs, *_ = original.last()
        original.step(_first_legal(obs))
    copy = pickle.loads(pickle.dumps(original))
    for _ in range(400):
        a, b = original.last(), copy.last()
        assert original.agent_selection == copy.agent_selection
        assert np.array_equal(a[0]["observation"], b[0]["observation"])
        assert np.array_equal(a[0]["action_mask"], b[0]["action_mask"])
        assert a[1:4] == b[1:4]
        if a[2] or a[3]:
            break
        original.step(_first_legal(a[0]))
        copy.step(_first_legal(b[0]))
    # Gymnasium, as gym.make builds it (with its checking wrappers)
    genv = gym.make(gym_ids_of(name), seats=SEATS[name], opponents="greedy")
    obs, _ = genv.reset(seed=3)
    for _ in range(10):
        obs, *_ = genv.step(_first_legal(obs))
    gcopy = pickle.loads(pickle.dumps(genv))
    obs_copy = obs
    for _ in range(400):
        step, step_copy = genv.step(_first_legal(obs)), gcopy.step(_first_legal(obs_copy))
        obs, obs_copy = step[0], step_copy[0]
        assert np.array_equal(obs["observation"], obs_copy["observation"])
        assert step[1:4] == step_copy[1:4]
        if step[2]:
            break


def gym_ids_of(name: str) -> str:
    """The id of ``name`` with its default options."""
    return next(i for i, (game, preset) in gym_ids().items() if game == name and not preset)
