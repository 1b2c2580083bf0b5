"""What the environments share: a match on the forward model seen through the game's encodings
(its actions; its observation planes where it declares them, else its View encoded), and the
reward a finished match gives each seat (docs/research/environments.md)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from referee.core.contract import Event, Result
from referee.core.planes import ObservationPlanes
from referee.core.text import describe_view
from referee.sim.model import Simulation
from referee.v1 import referee_pb2

from .encoding import MEMOISED, MODES, PLANES, REFLECTIVE, Encodings, encodings


def rank_reward(result: Result, seat: int) -> float:
    """+1 for first place, -1 for last, evenly between (equal ranks share); solo: +1 for a
    win, -1 otherwise."""
    n = len(result.ranks)
    if n == 1:
        return 1.0 if seat in result.winners else -1.0
    return 1.0 - 2.0 * (result.ranks[seat] - 1) / (n - 1)


def observation_mode(game: str, observations: str | None) -> str:
    """The observation mode asked for, checked: None is the game's planes where it declares
    them (``Game.observation_planes``), else its View encoded with memoised writes."""
    declared = encodings(game).game.observation_planes() is not None
    if observations is None:
        return PLANES if declared else MEMOISED
    if observations not in MODES:
        raise ValueError(f"observations {observations!r} is not one of {MODES}")
    if observations == PLANES and not declared:
        raise ValueError(f"observations {PLANES!r}: {game} declares no observation planes "
                         f"(use {MEMOISED!r} or {REFLECTIVE!r})")
    return observations


class Table:
    """One match on the forward model, with each decision's legal moves by action index.

    Per step it keeps the pending decision (:meth:`refresh`: its seat, its legal moves by
    index, the mask built on first use), so the environments' reads between two moves cost no
    second call into the rules."""

    def __init__(self, game: str, seats: int, options: Mapping[str, Any] | None = None,
                 observations: str | None = None):
        self.observations = observation_mode(game, observations)
        self.name = game
        self.seats = seats
        self.options = dict(options or {})
        self.enc: Encodings = encodings(game)
        self.planes: ObservationPlanes | None = None
        self._bind()
        self.sim: Simulation | None = None
        self.legal: dict[int, Any] = {}
        self._to_move: int | None = None
        self._mask: np.ndarray | None = None
        #: The public events so far, for the samplers (:meth:`events`), as a persistent list:
        #: (the log before, one move's events), so a copy of the table shares it at no cost
        #: (OpenSpiel's search copies states far more often than it reads their events).
        self.log: tuple[Any, tuple[Event, ...]] | None = None

    def _bind(self) -> None:
        """The per-process parts: the game's planes (when observed through them) and the
        observation's width."""
        if self.observations == PLANES:
            self.planes = self.enc.game.observation_planes()
            assert self.planes is not None
            self.observation_size = self.planes.planes.width
        else:
            self.planes = None
            self.observation_size = self.enc.observations.size

    def __deepcopy__(self, memo: dict[int, Any]) -> Table:
        """A copy playing on independently: the match cloned, the encodings shared."""
        other = Table.__new__(Table)  # not copy.copy: that would go through __getstate__
        other.__dict__.update(self.__dict__)
        if self.sim is not None:
            other.sim = self.sim.clone()
        other.legal = dict(self.legal)
        return other

    def __getstate__(self) -> dict[str, Any]:
        """Pickles without its encodings and planes (built once per game and process, from
        closures and caches): unpickling takes the unpickling process's own
        (:meth:`__setstate__`)."""
        state = dict(self.__dict__)
        del state["enc"], state["planes"]
        events = self.events()
        state["log"] = (None, tuple(events)) if events else None  # flat: no deep nesting
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.enc = encodings(self.name)
        self._bind()

    def reset(self, seed: int) -> None:
        self.sim = Simulation.new(self.name, self.seats, seed, self.options)
        self.log = None
        self.refresh()

    def refresh(self) -> None:
        """Index the pending decision's legal moves (after the match changed under the table)."""
        sim = self.sim
        assert sim is not None
        d = sim.game.decision(sim.state)
        if d is None:
            self.legal = {}
            self._to_move = None
        else:
            self.legal = self.enc.actions.legal(d.moves)
            self._to_move = d.seat
        self._mask = None  # built on first use, once per decision

    @property
    def to_move(self) -> int | None:
        return self._to_move

    def play(self, action: int) -> list[Event]:
        """Play the move of ``action`` for the seat to act (its public events); ValueError if it
        is not legal."""
        move = self.legal.get(int(action))
        if move is None:
            raise ValueError(f"action {action} is not legal now "
                             f"(legal: {sorted(self.legal)[:20]}...)")
        return self.play_move(move)

    def play_move(self, move: Any) -> list[Event]:
        """Play an engine move (one of the decision's, whether it has an index or not)."""
        sim = self.sim
        assert sim is not None
        if self._to_move is None:
            raise ValueError("the game is over")
        events = sim.game.apply(sim.state, self._to_move, move)
        if events:
            self.log = (self.log, tuple(events))
        self.refresh()
        return events

    def events(self) -> list[Event]:
        """The public events of the match so far, oldest first (what ``Join.events`` would
        deliver after the set-up)."""
        parts = []
        node = self.log
        while node is not None:
            node, events = node
            parts.append(events)
        return [event for events in reversed(parts) for event in events]

    def observe(self, seat: int) -> np.ndarray:
        """``seat``'s observation, ``observation_size`` float32s. ``"planes"``: the game's
        feature planes (``ObservationPlanes.encode``, written from the state, reading only what
        the seat may see). The View encodings (:class:`~.encoding.ObservationEncoding`):
        ``"memoised"`` from the bytes the referee would send the seat (``Game.view_bytes``,
        built from the game's cached fragments; it parses to exactly ``Game.view``),
        ``"reflective"`` the view message walked field by field as before issue 36 (the same
        vector, slower)."""
        sim = self.sim
        assert sim is not None
        planes = self.planes
        if planes is not None:
            out = np.zeros(self.observation_size, dtype=np.float32)
            planes.encode(sim.state, seat, out)  # type: ignore[arg-type]  # ndarray: a sequence
            return out
        if self.observations == REFLECTIVE:
            return self.enc.observations.encode(sim.view(seat), memo=False)
        return self.enc.observations.encode_bytes(sim.game.view_bytes(sim.state, seat))

    def text(self, seat: int | None) -> str:
        """``seat``'s view (None: a spectator's) as text (``referee.core.text.describe_view`` of
        the wire View the referee would send): the environments' "ansi" rendering."""
        assert self.sim is not None
        wire = referee_pb2.View()
        getattr(wire, self.name).CopyFrom(self.sim.view(seat))  # the wire convention
        return describe_view(wire)

    def mask(self, seat: int) -> np.ndarray:
        """The legal actions of ``seat`` (all zero when it is not its turn)."""
        if seat != self.to_move:
            return np.zeros(self.enc.actions.size, dtype=np.int8)
        if self._mask is None:
            self._mask = self.enc.actions.mask(self.legal)
        return self._mask.copy()  # a copy: the caller may write to it

    def rewards(self) -> list[float] | None:
        """Each seat's reward once the match is over, else None."""
        assert self.sim is not None
        if self._to_move is not None:  # a decision is pending: not over (Game.decision)
            return None
        result = self.sim.result()
        if result is None:
            return None
        return [rank_reward(result, s) for s in range(self.seats)]
