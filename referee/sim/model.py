"""The forward model: one game state you can query, copy and play forward with the referee's own
rules and component sheet, without a referee (docs/research/forward-model.md).

A :class:`Simulation` wraps a game (from the registry, by name) and one full state. It starts
from the game's set-up (:meth:`Simulation.new`), from what seats saw
(:meth:`Simulation.from_views`: the game's sampler draws the hidden parts), or from a record at
move N (:meth:`Simulation.from_record`, hidden parts redrawn or not), and offers
``decision`` / ``legal_moves`` / ``apply`` / ``clone`` / ``rollout`` / ``result``. Moves are
the engine's own move values (``legal_moves`` lists them); ``move_from_proto`` and
``move_to_proto`` map them to and from the game's protobuf ``Move``.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from referee.core import registry
from referee.core.components import ComponentSheet
from referee.core.contract import Decision, Event, Game, Result
from referee.core.match import ReplayError, match_chance, start_doc, start_state
from referee.core.rng import Rng

#: A rollout policy: given the simulation and its pending decision, the move to play.
Policy = Callable[["Simulation", Decision], Any]
#: Longest playout before it is taken for a loop (no game here passes a few thousand moves).
MAX_MOVES = 1_000_000


def uniform(rng: Rng | Any) -> Callable[[Decision], Any]:
    """A chooser that picks uniformly among a decision's legal moves with ``rng``: a
    ``referee.core.rng.Rng`` (its ``below``) or a ``random.Random`` (its ``randrange``)."""
    draw: Callable[[int], int] = rng.below if isinstance(rng, Rng) else rng.randrange
    return lambda d: d.moves[draw(len(d.moves))]


def playout(game: Game, state: Any, choose: Callable[[Decision], Any],
            max_moves: int = MAX_MOVES,
            watch: Callable[[Decision], None] | None = None) -> int:
    """Play ``state`` (in place) to the end of the game: at each decision ``watch`` (if any)
    sees it, then ``choose`` gives the move (``uniform(rng)`` for random play). Returns the
    number of moves played; RuntimeError after ``max_moves`` without an end. The one loop the
    forward model's rollouts, the generated docs, ``bench`` and the tests share."""
    for n in range(max_moves):
        d = game.decision(state)
        if d is None:
            return n
        if watch is not None:
            watch(d)
        game.apply(state, d.seat, choose(d))
    if game.decision(state) is None:
        return max_moves
    raise RuntimeError(f"a {game.spec.name} game passed {max_moves} moves without an end")


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

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | str, move: int,
                    redraw: Rng | int | None = None,
                    components: ComponentSheet | None = None) -> Simulation:
        """Where a recorded match stood after ``move`` moves (0: its set-up), the record
        (a dict, or its JSON text) replayed with every state hash checked; with ``redraw`` (an
        Rng or a seed), what no seat could see there is drawn anew by the game's sampler from
        every seat's view, as ``CreateMatchRequest.start`` with ``redraw_hidden`` does.
        ReplayError for a record that does not replay or has no such move, or a match over
        by then."""
        rec = json.loads(record) if isinstance(record, str) else record
        if not isinstance(rec, Mapping):
            raise ReplayError("a record is a JSON object")
        g = registry.get(str(rec.get("game")))
        doc = start_doc(rec, move, redraw is not None)
        parsed = g.spec.parse_options(rec.get("options") or {})
        sheet = components or g.default_components(parsed)
        r = Rng(redraw) if isinstance(redraw, int) else (redraw or Rng(0))
        state, _history = start_state(g, doc, sheet, r)
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
                max_moves: int = MAX_MOVES) -> Result:
        """Play to the end (in place: clone first to keep this state), each move chosen by
        ``policy`` or uniformly at random with ``rng``; the result."""
        r = Rng(rng) if isinstance(rng, int) else rng
        choose = (lambda d: policy(self, d)) if policy else uniform(r)
        playout(self.game, self.state, choose, max_moves)
        result = self.game.result(self.state)
        if result is None:  # pragma: no cover - playout ends only at the game's end
            raise RuntimeError(f"no result after {max_moves} moves")
        return result

    # ------------------------------------------------------------------ boundary
    def move_from_proto(self, message: Message) -> Any:
        return self.game.move_from_proto(message)

    def move_to_proto(self, move: Any) -> Message:
        return self.game.move_to_proto(move)
