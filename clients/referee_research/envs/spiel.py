"""Each game as an OpenSpiel Python game (docs/research/environments.md).

``load("batavia", players=3)`` registers ``referee_batavia`` with pyspiel (once) and loads it;
``pyspiel.load_game("referee_batavia", {"players": 3, "setup": "face_up"})`` works after
:func:`register`. The game's options are the game parameters, besides ``players``.

Chance: the engines draw every chance event from keyed streams of one match seed, so the game
has a single chance node, at the start, which picks the seed among ``SEEDS`` equally likely
outcomes (outcome ``k`` is seed ``k``); every state after it is deterministic given the
players' actions. Actions are the :class:`~.encoding.ActionEncoding` indices, the observation
tensor the :class:`~.encoding.ObservationEncoding` of the player's view; the returns are the
rank rewards (+1 first ... -1 last). No information-state tensor is offered (it would be the
whole history of a player's observations).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

from referee.core import registry
from referee.core.contract import Information

from .common import Table

#: Equally likely match seeds at the initial chance node.
SEEDS = 1024
#: OpenSpiel wants a bound on a game's length: the game's own (``GameSpec.max_decisions``, plus
#: the seed's chance node) where it declares one, else this (the longest random games make about
#: 600 decisions).
MAX_GAME_LENGTH = 20_000


def max_game_length(game: str, options: Mapping[str, Any], players: int) -> int:
    """The declared bound on a match's decisions, plus the chance node that draws the seed."""
    spec = registry.get(game).spec
    if spec.max_decisions is None:
        return MAX_GAME_LENGTH
    return spec.max_decisions(spec.parse_options(options), players) + 1


_INFORMATION = {
    Information.PERFECT: pyspiel.GameType.Information.PERFECT_INFORMATION,
    Information.IMPERFECT: pyspiel.GameType.Information.IMPERFECT_INFORMATION,
}


def short_name(game: str) -> str:
    return f"referee_{game}"


def _game_type(game: str) -> pyspiel.GameType:
    spec = registry.get(game).spec
    params: dict[str, Any] = {"players": max(spec.min_seats, min(2, spec.max_seats))}
    for option in spec.options:
        params[option.name] = option.default
    return pyspiel.GameType(
        short_name=short_name(game),
        long_name=f"{spec.title} (boardgame-referee)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        # whatever the game's own chance mode (GameSpec.chance), here chance is one explicit
        # node, the seed
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=_INFORMATION[spec.information],
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.max_seats,
        min_num_players=spec.min_seats,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=False,
        provides_observation_tensor=True,
        parameter_specification=params,
    )


class RefereeSpielGame(pyspiel.Game):
    """One of the referee's games for OpenSpiel (see the module docstring)."""

    game_name: str = ""  # set on each registered subclass

    def __init__(self, params: Mapping[str, Any] | None = None):
        params = dict(params or {})
        game_type = _game_type(self.game_name)
        defaults = game_type.parameter_specification
        players = int(params.get("players", defaults["players"]))
        self.options = {name: params.get(name, default) for name, default in defaults.items()
                        if name != "players"}
        self.players = players
        self.table = Table(self.game_name, players, self.options)  # its encodings
        enc = self.table.enc
        info = pyspiel.GameInfo(
            num_distinct_actions=enc.actions.size, max_chance_outcomes=SEEDS,
            # the returns are rank rewards, not scores (GameSpec.min_score / max_score)
            num_players=players, min_utility=-1.0, max_utility=1.0,
            max_game_length=max_game_length(self.game_name, self.options, players))
        super().__init__(game_type, info, params)

    def new_initial_state(self) -> RefereeSpielState:
        return RefereeSpielState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> ViewObserver:
        return ViewObserver(self, params)


class RefereeSpielState(pyspiel.State):
    """A match: before the seed is drawn, a chance node; then the rules' decisions."""

    def __init__(self, game: RefereeSpielGame):
        super().__init__(game)
        self.table = Table(game.game_name, game.players, game.options)
        self.seeded = False

    def current_player(self) -> int:
        if not self.seeded:
            return int(pyspiel.PlayerId.CHANCE)
        to_move = self.table.to_move
        return int(pyspiel.PlayerId.TERMINAL) if to_move is None else to_move

    def _legal_actions(self, player: int) -> list[int]:
        if player != self.table.to_move:
            return []
        return sorted(self.table.legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(k, 1.0 / SEEDS) for k in range(SEEDS)]

    def _apply_action(self, action: int) -> None:
        if not self.seeded:
            self.table.reset(int(action))
            self.seeded = True
        else:
            self.table.play(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"seed {action}"
        move = self.table.legal.get(int(action))
        return repr(move) if move is not None else self.table.enc.actions.describe(int(action))

    def is_terminal(self) -> bool:
        return self.seeded and self.table.to_move is None

    def returns(self) -> list[float]:
        rewards = self.table.rewards() if self.seeded else None
        return [0.0] * self.table.seats if rewards is None else rewards

    def __str__(self) -> str:
        if not self.seeded:
            return "before the seed is drawn"
        assert self.table.sim is not None
        return f"{self.table.name}, state {self.table.sim.hash()[:16]}"


class ViewObserver:
    """The observation tensor of a player: its view, encoded (zeros before the seed)."""

    def __init__(self, game: RefereeSpielGame, params: Any):
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        self.tensor = np.zeros(game.table.enc.observations.size, np.float32)
        self.dict = {"view": self.tensor}

    def set_from(self, state: RefereeSpielState, player: int) -> None:
        if not state.seeded:
            self.tensor.fill(0)
            return
        self.tensor[:] = state.table.observe(player)

    def string_from(self, state: RefereeSpielState, player: int) -> str:
        return ""


_REGISTERED: set[str] = set()


def register(game: str) -> str:
    """Register ``game`` with pyspiel (once); its short name."""
    name = short_name(game)
    if game not in _REGISTERED:
        cls = type(f"Referee{game.title().replace('_', '')}Game", (RefereeSpielGame,),
                   {"game_name": game})
        pyspiel.register_game(_game_type(game), cls)
        _REGISTERED.add(game)
    return name


def load(game: str, players: int | None = None, **options: Any) -> pyspiel.Game:
    """The OpenSpiel game of ``game`` for ``players`` players, with these game options."""
    params: dict[str, Any] = dict(options)
    if players is not None:
        params["players"] = players
    return pyspiel.load_game(register(game), params)
