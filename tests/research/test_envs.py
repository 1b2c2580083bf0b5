"""The environments of every game pass their libraries' own checks (issue 21, item 5;
docs/research/environments.md): PettingZoo's ``api_test`` and ``seed_test`` for the AEC
environment, Gymnasium's ``check_env`` for the single-seat one (against random and against the
game's greedy bot), OpenSpiel's ``random_sim_test`` for the OpenSpiel game. Plus what those
checks cannot know: a finished match pays the rank rewards of its result, and the same seed
gives the same match."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test
from referee_research.envs import aec, single
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


@pytest.mark.parametrize("opponents", ["random", "greedy"])
@pytest.mark.parametrize("name", GAMES)
def test_gymnasium_single_seat(name, opponents):
    env = single(name, SEATS[name], seat=1, opponents=opponents)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=5)
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
