"""A PettingZoo AEC environment per game, on the forward model (docs/research/environments.md).

``env("batavia", seats=3)`` is the environment with PettingZoo's standard wrappers, as its own
environments are made (:func:`env`); ``raw_env`` / ``aec`` the environment alone. One match at a time: agents ``seat_0`` ... ``seat_{n-1}``, the
one to act is the seat the rules say (not a fixed rotation: auctions and sub-decisions change
who decides). Each agent observes ``{"observation": its view encoded (the game's feature planes
where it declares them, :func:`raw_env`), "action_mask": its legal
actions}``; a seat that is not to act has an all-zero mask. The only rewards come when the match
ends: +1 for first place, -1 for last, evenly between (:func:`~.common.rank_reward`).
``render_mode="ansi"``: ``render()`` is the spectator's view as text (no seat's secrets);
``"human"`` prints it.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .common import Table

#: What ``render()`` offers: "ansi" returns a view as text, "human" prints it.
RENDER_MODES = ("ansi", "human")


def show(text: str, render_mode: str) -> str | None:
    """``render()``'s answer: the text ("ansi"), or None once printed ("human")."""
    if render_mode == "human":
        print(text)
        return None
    return text


def observation_space(size: int, actions: int) -> spaces.Dict:
    return spaces.Dict({
        "observation": spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32),
        "action_mask": spaces.Box(0, 1, shape=(actions,), dtype=np.int8),
    })


class RefereeAEC(AECEnv):
    """One game as a PettingZoo AEC environment (see the module docstring)."""

    def __init__(self, game: str, seats: int, options: Mapping[str, Any] | None = None,
                 seed: int | None = None, render_mode: str | None = None,
                 observations: str | None = None):
        super().__init__()
        self.table = Table(game, seats, options, observations)
        self.metadata = {"render_modes": list(RENDER_MODES), "name": f"{game}_v0",
                         "is_parallelizable": False}
        if render_mode not in (None, *RENDER_MODES):
            raise ValueError(f"render_mode {render_mode!r} is not one of {RENDER_MODES}")
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{s}" for s in range(seats)]
        self._seat_of = {agent: s for s, agent in enumerate(self.possible_agents)}
        enc = self.table.enc
        space = observation_space(self.table.observation_size, enc.actions.size)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: spaces.Discrete(enc.actions.size) for a in self.possible_agents}
        self._seeds = np.random.default_rng(seed)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _agent(self, seat: int) -> str:
        return self.possible_agents[seat]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new match: on ``seed`` if given, else on the next draw of the environment's seed."""
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
        self.table.reset(int(self._seeds.integers(2**62)))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        to_move = self.table.to_move
        self.agent_selection = self._agent(0 if to_move is None else to_move)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat_of[agent]
        observation = self.table.observe(seat)
        return {"observation": observation, "action_mask": self.table.mask(seat)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        assert action is not None
        self.table.play(int(action))
        rewards = self.table.rewards()
        if rewards is None:
            to_move = self.table.to_move
            assert to_move is not None
            self.agent_selection = self._agent(to_move)
        else:
            for a, r in zip(self.agents, rewards):
                self.rewards[a] = r
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None or self.table.sim is None:
            return None
        return show(self.table.text(None), self.render_mode)

    def close(self) -> None:
        pass


def raw_env(game: str, seats: int | None = None, options: Mapping[str, Any] | None = None,
            seed: int | None = None, render_mode: str | None = None,
            observations: str | None = None) -> RefereeAEC:
    """The PettingZoo AEC environment of ``game`` for ``seats`` seats (default: the fewest the
    game takes, at least 2 where it can), with the game's ``options``; ``seed`` seeds the match
    seeds that ``reset()`` draws. ``observations``: None (the default) observes through the
    game's feature planes where it declares them (``"planes"``, ``Game.observation_planes``),
    else through its View encoded (``"memoised"``); ``"memoised"`` and ``"reflective"`` (the
    walk of before issue 36: the same vectors, slower) ask for the View encoding in any game
    (:mod:`.encoding`)."""
    from referee.core import registry
    spec = registry.get(game).spec
    if seats is None:
        seats = max(spec.min_seats, min(2, spec.max_seats))
    return RefereeAEC(game, seats, options, seed, render_mode, observations)


#: The environment alone, under the name the factories' users know too.
aec = raw_env

#: The reward of an illegal action in :func:`env` (PettingZoo's TerminateIllegalWrapper: the
#: episode ends, the other agents get 0).
ILLEGAL_REWARD = -1.0


def env(game: str, seats: int | None = None, options: Mapping[str, Any] | None = None,
        seed: int | None = None, render_mode: str | None = None,
        observations: str | None = None) -> AECEnv:
    """:func:`raw_env` with the wrappers PettingZoo's own classic environments apply: an illegal
    action ends the episode with ``ILLEGAL_REWARD`` for its agent (``TerminateIllegalWrapper``;
    the raw environment raises ValueError instead), an action outside the space fails an
    assertion (``AssertOutOfBoundsWrapper``), and calls out of order are refused
    (``OrderEnforcingWrapper``)."""
    wrapped: AECEnv = raw_env(game, seats, options, seed, render_mode, observations)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=ILLEGAL_REWARD)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
