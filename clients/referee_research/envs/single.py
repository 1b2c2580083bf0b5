"""A Gymnasium single-agent environment per game: one seat learns, reference bots play the
others (docs/research/environments.md).

The opponents are the SDK's bots driven in-process: each gets the ``referee.v1.Decision`` the
referee would send its seat (its own view, every legal move as a protobuf ``Move``) and answers
with one of those moves, exactly as over the wire. ``"random"`` is a uniformly random legal move,
``"greedy"`` the game's greedy reference bot (``referee_client.bots.GREEDY_FOR_GAME``), any other
name one of ``referee_client.bots.BOTS``.

The observation is the learner's ``{"observation", "action_mask"}`` (as in the AEC environment);
``info["action_mask"]`` repeats the mask. The reward is 0 until the match ends, then the
learner's rank reward (+1 first ... -1 last). An action that is not legal ends the episode at
once with reward -1 and ``info["illegal"] = True`` (learners should sample with the mask:
``env.action_space.sample(mask=obs["action_mask"])``). ``render_mode="ansi"``: ``render()`` is
the learner's view as text; ``"human"`` prints it.

Importing ``referee_research.envs`` registers one Gymnasium id per game, ``referee/<Game>-v0``
(``referee/Batavia-v0``, ``referee/SantaMaria-v0``), and one per other edition of a game with an
``edition`` option (``referee/Goa2004-v0``): :func:`gym_ids`, ``gym.make(id, seats=3,
opponents="greedy")``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from referee_client.bot import Bot
from referee_client.bots import BOTS, GREEDY_FOR_GAME

from referee.core import registry
from referee.v1 import referee_pb2

from .aec import RENDER_MODES, observation_space, show
from .common import Table

#: The reward of an illegal action (the episode ends).
ILLEGAL_REWARD = -1.0


def make_bot(game: str, name: str, seed: int | None) -> Bot | None:
    """The SDK bot called ``name`` ("greedy": the game's own greedy bot); None for "random",
    which the environment plays itself (the same choice as the SDK's random bot, faster)."""
    if name == "random":
        return None
    key = GREEDY_FOR_GAME[game] if name == "greedy" else name
    if key not in BOTS:
        raise ValueError(f"unknown bot {name!r}; try random, greedy or one of {sorted(BOTS)}")
    return BOTS[key](seed)


class SingleSeatEnv(gym.Env):
    """One seat of one game against reference bots (see the module docstring)."""

    # on the class: gymnasium.make reads an entry point's render modes before making it
    metadata = {"render_modes": list(RENDER_MODES)}  # noqa: RUF012 - Env declares it so

    def __init__(self, game: str, seats: int | None = None, seat: int = 0,
                 opponents: str | Sequence[str] = "random",
                 options: Mapping[str, Any] | None = None, render_mode: str | None = None,
                 preset: Mapping[str, Any] | None = None, observations: str | None = None):
        """``preset``: options a registered id fixes (``referee/Goa2004-v0``: the 2004
        edition), under ``options``; ``observations``: as :func:`.aec.raw_env`'s."""
        spec = registry.get(game).spec
        if render_mode not in (None, *RENDER_MODES):
            raise ValueError(f"render_mode {render_mode!r} is not one of {RENDER_MODES}")
        options = {**(preset or {}), **(options or {})}
        if seats is None:
            seats = max(spec.min_seats, min(2, spec.max_seats))
        if not 0 <= seat < seats:
            raise ValueError(f"seat {seat} is not one of the {seats} seats")
        names = [opponents] * (seats - 1) if isinstance(opponents, str) else list(opponents)
        if len(names) != seats - 1:
            raise ValueError(f"{seats - 1} opponents needed, {len(names)} given")
        others = [s for s in range(seats) if s != seat]
        self.opponent_names = dict(zip(others, names))
        for name in names:
            make_bot(game, name, 0)  # fail now on an unknown name
        self.game = game
        self.seat = seat
        self.table = Table(game, seats, options, observations)
        self.render_mode = render_mode
        enc = self.table.enc
        self.observation_space = observation_space(self.table.observation_size, enc.actions.size)
        self.action_space = spaces.Discrete(enc.actions.size)
        self._bots: dict[int, Bot | None] = {}

    # ------------------------------------------------------------------ the others
    def _opponent_move(self, seat: int) -> Any:
        sim = self.table.sim
        assert sim is not None
        d = sim.decision()
        assert d is not None
        bot = self._bots[seat]
        if bot is None:
            return d.moves[int(self.np_random.integers(len(d.moves)))]
        game = sim.game
        name = game.spec.name
        decision = referee_pb2.Decision(seat=seat, kind=d.kind, prompt=d.prompt)
        getattr(decision.view, name).CopyFrom(sim.view(seat))  # the wire convention
        for m in d.moves:
            getattr(decision.legal_moves.add(), name).CopyFrom(game.move_to_proto(m))
        legal = list(decision.legal_moves)
        chosen = bot.choose(decision)
        try:
            return d.moves[legal.index(chosen)]
        except ValueError:
            raise RuntimeError(f"bot {self.opponent_names[seat]} answered a move that is not "
                               "in the legal list") from None

    def _play_others(self) -> None:
        table = self.table
        while (to_move := table.to_move) is not None and to_move != self.seat:
            table.play_move(self._opponent_move(to_move))

    # ------------------------------------------------------------------ gym API
    def _obs(self) -> dict[str, np.ndarray]:
        observation = self.table.observe(self.seat)
        return {"observation": observation, "action_mask": self.table.mask(self.seat)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        self._bots = {s: make_bot(self.game, name, int(rng.integers(2**62)))
                      for s, name in self.opponent_names.items()}
        self.table.reset(int(rng.integers(2**62)))
        self._play_others()
        obs = self._obs()
        return obs, {"action_mask": obs["action_mask"]}

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                         dict[str, Any]]:
        table = self.table
        if table.to_move is None:
            raise RuntimeError("the match is over: call reset()")
        if int(action) not in table.legal:
            obs = self._obs()
            return obs, ILLEGAL_REWARD, True, False, {"action_mask": obs["action_mask"],
                                                      "illegal": True}
        table.play(int(action))
        self._play_others()
        obs = self._obs()
        rewards = table.rewards()
        reward = 0.0 if rewards is None else rewards[self.seat]
        info: dict[str, Any] = {"action_mask": obs["action_mask"]}
        if rewards is not None and table.sim is not None:
            info["result"] = table.sim.result()
        return obs, reward, rewards is not None, False, info

    def render(self) -> str | None:
        if self.render_mode is None or self.table.sim is None:
            return None
        return show(self.table.text(self.seat), self.render_mode)


#: The option whose choices get an id each (besides the game's default).
EDITION = "edition"


def gym_ids() -> dict[str, tuple[str, dict[str, Any]]]:
    """Gymnasium id -> (game, the options it fixes), for every game of the registry: the game
    with its default options, and each other choice of an ``edition`` option."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in sorted(registry.games()):
        spec = registry.get(name).spec
        camel = "".join(part.title() for part in name.split("_"))
        out[f"referee/{camel}-v0"] = (name, {})
        for option in spec.options:
            if option.name == EDITION and option.kind == "enum":
                for choice in option.choices:
                    if choice != option.default:
                        out[f"referee/{camel}{choice}-v0"] = (name, {EDITION: choice})
    return out


def register_gym_ids() -> list[str]:
    """Register :func:`gym_ids` with Gymnasium (again: a no-op); the ids."""
    ids = gym_ids()
    for env_id, (game, preset) in ids.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=f"{__name__}:SingleSeatEnv",
                         kwargs={"game": game, "preset": preset})
    return list(ids)
