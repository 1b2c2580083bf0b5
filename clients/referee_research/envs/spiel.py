"""Each game as an OpenSpiel Python game (docs/research/environments.md).

Importing this module registers every game of the registry with pyspiel as ``referee_<game>``
(``referee_batavia``, ``referee_goa``, ``referee_santa_maria``), so ``pyspiel.load_game(
"referee_batavia", {"players": 3, "setup": "face_up"})`` works at once; :func:`load` is the same
with keyword options. The game's options are the game parameters, besides ``players``; an enum
option whose choices are numbers is an int parameter (``referee_goa(edition=2004)``: OpenSpiel
reads digits in a game string as a number).

Chance: the engines draw every chance event from keyed streams of one match seed, so the game
has a single chance node, at the start, which picks the seed among ``SEEDS`` equally likely
outcomes (outcome ``k`` is seed ``k``); every state after it is deterministic given the
players' actions. Actions are the :class:`~.encoding.ActionEncoding` indices; the returns are the
rank rewards (+1 first ... -1 last).

What a player observes is its **view**, what the referee sends that seat. The observation types
OpenSpiel asks for (``pyspiel.IIGObservationType``) are honoured or refused, never answered with
something else (:class:`ViewObserver`): without perfect recall, a player's own view
(``SINGLE_PLAYER``), the spectator's view (``NONE``: the public part) or every seat's view
(``ALL_PLAYERS``); the strings are the views as text (``referee.core.text.describe_view``), the
tensors the views encoded: a seat's as the environments encode it (the game's feature planes
where it declares them, ``Game.observation_planes``), the spectator's as its View encoded
(planes are written for a seat). Perfect recall (an information state) and private information without
the public part are refused with ValueError: a view is not split into public and private parts,
and the samplers draw a position from what a seat sees now and the public events, not from the
history of its past private observations, so an information state could not be resampled. The
game type says so (``provides_information_state_string`` / ``_tensor`` are False), and
``information_state_string`` / ``information_state_tensor`` raise. OpenSpiel's ``ISMCTSBot``
plays on the observation strings (``use_observation_string=True``), with
:meth:`RefereeSpielState.resample_from_infostate` drawing determinizations with the game's own
sampler.

Games and states pickle (``pickle``, ``pyspiel.serialize_game_and_state``): a game as its name
and parameters, a state as its Python attributes (the forward model, which pickles as the
engine's plain-data state with its game named, not copied).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

from referee.core import registry
from referee.core.contract import Information
from referee.core.rng import Rng
from referee.sim.model import Simulation

from .common import Table
from .encoding import encodings

#: Equally likely match seeds at the initial chance node.
SEEDS = 1024
#: OpenSpiel wants a bound on a game's length: the game's own (``GameSpec.max_decisions``, plus
#: the seed's chance node) where it declares one, else this (the longest random games make about
#: 600 decisions).
MAX_GAME_LENGTH = 20_000
#: The observation string of every player before the seed is drawn (nothing is on the table).
BEFORE_SEED = "before the seed is drawn"


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


def _numbered(game: str) -> set[str]:
    """The game's enum options whose choices are all numbers (Goa's ``edition``: "2012",
    "2004"). OpenSpiel reads a parameter of digits in a game string as an int, so these are int
    parameters there, turned back into the choice's text for the game."""
    return {o.name for o in registry.get(game).spec.options
            if o.kind == "enum" and all(str(c).isdigit() for c in o.choices)}


def _game_type(game: str) -> pyspiel.GameType:
    spec = registry.get(game).spec
    params: dict[str, Any] = {"players": max(spec.min_seats, min(2, spec.max_seats))}
    numbered = _numbered(game)
    for option in spec.options:
        params[option.name] = int(option.default) if option.name in numbered else option.default
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
        # no perfect recall: see the module docstring and ViewObserver
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
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
        numbered = _numbered(self.game_name)
        self.options = {name: str(value) if name in numbered else value
                        for name, default in defaults.items() if name != "players"
                        for value in (params.get(name, default),)}
        self.players = players
        enc = encodings(self.game_name)
        info = pyspiel.GameInfo(
            num_distinct_actions=enc.actions.size, max_chance_outcomes=SEEDS,
            # the returns are rank rewards, not scores (GameSpec.min_score / max_score)
            num_players=players, min_utility=-1.0, max_utility=1.0,
            max_game_length=max_game_length(self.game_name, self.options, players))
        super().__init__(game_type, info, params)

    def new_initial_state(self) -> RefereeSpielState:
        return RefereeSpielState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> ViewObserver:
        return ViewObserver(self, iig_obs_type, params)


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

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> RefereeSpielState:
        """A state drawn by the game's sampler (``Game.sample_state``, its SAMPLING.md) from what
        ``player_id`` sees now and the public events so far, its hidden parts (other hands,
        face-down tiles, deck orders, the future of chance) redrawn: the player's view, hence
        its observation, and the player to act are those of this state. ``probability_sampler``
        (OpenSpiel's, a callable giving a number in [0, 1)) seeds the draw. The copy keeps this
        state's ``history()``, whose first action (the seed) no longer made its hidden parts."""
        out: RefereeSpielState = self.clone()
        if not self.seeded:
            return out  # nothing is on the table yet: every seed is consistent with it
        sim = self.table.sim
        assert sim is not None
        seed = int(probability_sampler() * 2**53)
        out.table.sim = Simulation.from_views(
            sim.game, {player_id: sim.view(player_id)}, sim.seat_count, Rng(seed),
            self.table.events(), sim.options, sim.components)
        out.table.refresh()
        return out

    def __str__(self) -> str:
        if not self.seeded:
            return BEFORE_SEED
        assert self.table.sim is not None
        return f"{self.table.name}, state {self.table.sim.hash()[:16]}"


class ViewObserver:
    """What a player observes, for one ``pyspiel.IIGObservationType`` (None: the default, the
    player's own view). See the module docstring for which types are honoured."""

    def __init__(self, game: RefereeSpielGame, iig_obs_type: Any = None, params: Any = None):
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        private = pyspiel.PrivateInfoType.SINGLE_PLAYER
        if iig_obs_type is not None:
            if iig_obs_type.perfect_recall:
                raise ValueError(
                    f"{short_name(game.game_name)} offers no perfect-recall observation "
                    "(information state): its samplers draw from a seat's view and the public "
                    "events, not from the seat's past private observations; use the observation "
                    "(perfect_recall=False), e.g. ISMCTSBot(..., use_observation_string=True)")
            if not iig_obs_type.public_info:
                raise ValueError(
                    f"{short_name(game.game_name)} offers no private-only observation: a view "
                    "is not split into public and private parts (ask with public_info=True)")
            private = iig_obs_type.private_info
        #: whose views: "player" (the observing player's), "public" (a spectator's), "all"
        self.scope = {pyspiel.PrivateInfoType.SINGLE_PLAYER: "player",
                      pyspiel.PrivateInfoType.NONE: "public",
                      pyspiel.PrivateInfoType.ALL_PLAYERS: "all"}[private]
        self.encoding = encodings(game.game_name).observations
        #: a seat's observation as the environments make it (the game's planes where it
        #: declares them, else its View encoded); the spectator's (``"public"``) is always its
        #: View encoded: planes are written for a seat
        self.planes = encodings(game.game_name).game.observation_planes()
        size = (self.encoding.size if self.scope == "public" or self.planes is None
                else self.planes.planes.width)
        shape = (game.players, size) if self.scope == "all" else (size,)
        self.tensor = np.zeros(shape, np.float32)
        self.dict = {"views" if self.scope == "all" else "view": self.tensor}

    def _seats(self, state: RefereeSpielState, player: int) -> list[int | None]:
        if self.scope == "player":
            return [player]
        if self.scope == "public":
            return [None]
        return list(range(state.table.seats))

    def set_from(self, state: RefereeSpielState, player: int) -> None:
        if not state.seeded:
            self.tensor.fill(0)
            return
        if self.scope == "player":  # the hot path: the Table's own encoding
            self.tensor[:] = state.table.observe(player)
            return
        assert state.table.sim is not None
        if self.scope == "public":
            self.tensor[:] = self.encoding.encode(state.table.sim.view(None))
            return
        self.tensor[:] = np.stack([state.table.observe(seat) for seat in range(state.table.seats)])

    def string_from(self, state: RefereeSpielState, player: int) -> str:
        if not state.seeded:
            return BEFORE_SEED
        seats = self._seats(state, player)
        if self.scope != "all":
            return state.table.text(seats[0])
        return "\n".join(f"seat {seat}:\n{state.table.text(seat)}" for seat in seats)


def _class_name(game: str) -> str:
    return f"Referee{game.title().replace('_', '')}Game"


def register(game: str) -> str:
    """Register ``game`` with pyspiel (once; importing this module registers every game); its
    short name. Its game class is a module attribute (``RefereeBataviaGame``), so games and
    states pickle."""
    name = short_name(game)
    if _class_name(game) not in globals():
        cls = type(_class_name(game), (RefereeSpielGame,),
                   {"game_name": game, "__module__": __name__})
        globals()[cls.__name__] = cls
        pyspiel.register_game(_game_type(game), cls)
    return name


def load(game: str, players: int | None = None, **options: Any) -> pyspiel.Game:
    """The OpenSpiel game of ``game`` for ``players`` players, with these game options."""
    numbered = _numbered(game)
    params: dict[str, Any] = {name: int(value) if name in numbered else value
                              for name, value in options.items()}
    if players is not None:
        params["players"] = players
    return pyspiel.load_game(register(game), params)


for _game in sorted(registry.games()):
    register(_game)
