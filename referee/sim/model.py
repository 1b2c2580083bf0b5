"""The forward model: one game state you can query, copy and play forward with the referee's own
rules and component sheet, without a referee (docs/research/forward-model.md).

A :class:`Simulation` wraps a game (from the registry, by name) and one full state. It starts
from the game's set-up (:meth:`Simulation.new`), or from what seats saw
(:meth:`Simulation.from_views`: the game's sampler draws the hidden parts), and offers
``decision`` / ``legal_moves`` / ``apply`` / ``clone`` / ``rollout`` / ``result``. Moves are
the engine's own move values (``legal_moves`` lists them); ``move_from_proto`` and
``move_to_proto`` map them to and from the game's protobuf ``Move``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from referee.core import registry
from referee.core.components import ComponentSheet
from referee.core.contract import Decision, Event, Game, Result
from referee.core.match import match_chance
from referee.core.rng import Rng

#: A rollout policy: given the simulation and its pending decision, the move to play.
Policy = Callable[["Simulation", Decision], Any]


class Simulation:
    """A game and one full state. Not thread-safe; clone it for each line of play."""

    __slots__ = ("components", "game", "options", "state")

    def __init__(self, game: Game, state: Any, options: Mapping[str, Any],
                 components: ComponentSheet):
        self.game = game
        self.state = state
        self.options = dict(options)
        self.components = components

    # ------------------------------------------------------------------ starting points
    @classmethod
    def new(cls, game: str | Game, seats: int, seed: int,
            options: Mapping[str, Any] | None = None,
            components: ComponentSheet | None = None) -> Simulation:
        """The game's set-up for ``seats`` seats, with the chance of a match on ``seed``."""
        g = registry.get(game) if isinstance(game, str) else game
        spec = g.spec
        if not spec.min_seats <= seats <= spec.max_seats:
            raise ValueError(f"{spec.name} is for {spec.min_seats} to {spec.max_seats} seats, "
                             f"not {seats}")
        parsed = spec.parse_options(options)
        sheet = components or g.default_components(parsed)
        state = g.setup(parsed, seats, match_chance(seed), sheet)
        return cls(g, state, parsed, sheet)

    @classmethod
    def from_views(cls, game: str | Game, views: Mapping[int, Message | bytes],
                   seat_count: int, rng: Rng | int,
                   history: Sequence[Event] = (),
                   options: Mapping[str, Any] | None = None,
                   components: ComponentSheet | None = None) -> Simulation:
        """A full state drawn by the game's sampler, consistent with what each seat in
        ``views`` saw (the game's View message, or its bytes as a Decision carries them):
        hidden parts are redrawn with ``rng``. See ``Game.sample_state``."""
        g = registry.get(game) if isinstance(game, str) else game
        parsed = g.spec.parse_options(options)
        sheet = components or g.default_components(parsed)
        parsed_views: dict[int, Message] = {}
        for seat, view in views.items():
            if isinstance(view, bytes | bytearray):
                msg = g.view_message()
                msg.ParseFromString(bytes(view))
                parsed_views[seat] = msg
            else:
                parsed_views[seat] = view
        r = Rng(rng) if isinstance(rng, int) else rng
        state = g.sample_state(parsed_views, history, r, parsed, seat_count, sheet)
        return cls(g, state, parsed, sheet)

    # ------------------------------------------------------------------ queries
    @property
    def seat_count(self) -> int:
        return self.game.seat_count(self.state)

    def decision(self) -> Decision | None:
        """The pending decision (seat, kind, every legal move), or None once the game is over."""
        return self.game.decision(self.state)

    def legal_moves(self) -> Sequence[Any]:
        d = self.game.decision(self.state)
        return () if d is None else d.moves

    def to_move(self) -> int | None:
        d = self.game.decision(self.state)
        return None if d is None else d.seat

    @property
    def over(self) -> bool:
        return self.game.result(self.state) is not None

    def result(self) -> Result | None:
        return self.game.result(self.state)

    def view(self, seat: int | None) -> Message:
        """What ``seat`` sees now (None: a spectator)."""
        return self.game.view(self.state, seat)

    def hash(self) -> str:
        return self.game.hash_state(self.state)

    # ------------------------------------------------------------------ play
    def apply(self, move: Any, seat: int | None = None) -> list[Event]:
        """Play ``move`` for the seat to act (or ``seat``); IllegalMove if it is not legal."""
        if seat is None:
            d = self.game.decision(self.state)
            if d is None:
                raise ValueError("the game is over")
            seat = d.seat
        return self.game.apply(self.state, seat, move)

    def clone(self) -> Simulation:
        """An independent copy (the game's ``clone``)."""
        return Simulation(self.game, self.game.clone(self.state), self.options, self.components)

    def rollout(self, rng: Rng | int, policy: Policy | None = None,
                max_moves: int = 1_000_000) -> Result:
        """Play to the end (in place: clone first to keep this state), each move chosen by
        ``policy`` or uniformly at random with ``rng``; the result."""
        r = Rng(rng) if isinstance(rng, int) else rng
        game, state = self.game, self.state
        for _ in range(max_moves):
            d = game.decision(state)
            if d is None:
                break
            move = policy(self, d) if policy else d.moves[r.below(len(d.moves))]
            game.apply(state, d.seat, move)
        result = game.result(state)
        if result is None:
            raise RuntimeError(f"no result after {max_moves} moves")
        return result

    # ------------------------------------------------------------------ boundary
    def move_from_proto(self, message: Message) -> Any:
        return self.game.move_from_proto(message)

    def move_to_proto(self, move: Any) -> Message:
        return self.game.move_to_proto(move)
