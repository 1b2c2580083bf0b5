"""The one adapter base every game builds on (docs/ARCHITECTURE.md, "Games").

A game is a rules engine (a module of pure functions over a plain-data state, given a frozen
``Rules`` compiled from a component sheet) plus a thin :class:`~referee.core.contract.Game`
adapter. What the adapter does is the same for every game and lives here once:

* the default component sheet of each variant, loaded and validated once, then cached;
* ``load_components`` / ``parse_components``: the generic sheet shape, the game's schema (one
  checker per value) and the game's cross-value checks (``check_sheet``), all raising
  :class:`~referee.core.components.SheetError` naming the sheet and the faulty value;
* ``rules_for``: the sheet compiled into the engine's ``Rules`` once per sheet content;
* the forwarding of ``setup`` / ``decision`` / ``apply`` / ``default_move`` to the engine and of
  ``view`` to the game's view builder; ``hash_state`` and ``seat_count`` for plain-data states;
* ``move_to_proto`` / ``move_from_proto`` through the game's move table
  (:class:`~referee.core.codec.MoveCodec`).

A game subclasses :class:`SheetGame`, names its ``spec``, ``sheet_schema``, ``default_sheets``,
``engine``, ``views`` and ``move_codec``, and writes only what is its own: ``result`` and the
table of its protobuf moves.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

from google.protobuf.message import Message

from . import hashing, registry
from .codec import MoveCodec
from .components import ComponentSheet, SheetError, derived, load_sheet_file, parse_sheet
from .contract import Decision, Event, Game, M, S
from .rng import Chance

Check = Callable[[Any], "str | None"]


class SheetGame(Game[S, M]):
    """A :class:`Game` whose rules engine reads a compiled component sheet. Subclasses set:

    ``sheet_schema``: value name -> checker (value -> error text or None);
    ``default_sheets``: variant -> path of the default sheet ("" for a game with one sheet);
    ``engine``: the rules module, with ``setup(options, seat_count, rng, rules) -> (state,
    events)``, ``decision``, ``apply``, ``default_move`` and a ``Rules`` class with
    ``from_sheet``;
    ``views``: the view module, with ``build_view(state, seat)``;
    ``move_codec``: the table of the game's protobuf moves (referee/core/codec.py).
    """

    sheet_schema: ClassVar[Mapping[str, Check]]
    default_sheets: ClassVar[Mapping[str, Path]]
    # Not ClassVar: mypy takes a module set in a class body (every game's ``engine = rules``)
    # for an instance variable, and would refuse it as overriding a ClassVar.
    engine: ModuleType
    views: ModuleType
    move_codec: ClassVar[MoveCodec[Any]]

    def __init__(self) -> None:
        self._defaults: dict[str, ComponentSheet] = {}
        # The two calls of the hot loop go straight to the engine: one Python call per decision
        # and per move instead of two. The methods below say the same for readers and subclasses.
        if type(self).decision is SheetGame.decision:
            self.decision = self.engine.decision  # type: ignore[method-assign]
        if type(self).apply is SheetGame.apply:
            self.apply = self.engine.apply  # type: ignore[method-assign]
        # and so do the two calls of every move on the wire, to the codec
        if type(self).move_to_proto is SheetGame.move_to_proto:
            self.move_to_proto = self.move_codec.to_proto  # type: ignore[method-assign]
        if type(self).move_from_proto is SheetGame.move_from_proto:
            self.move_from_proto = self.move_codec.from_proto  # type: ignore[method-assign]

    def __reduce__(self) -> tuple[Any, ...]:
        """A game is stateless: it pickles as its name, and unpickles as the process's registered
        game of that name (its caches and move table shared), so a pickled state, forward model
        or research environment carries no copy of its game. A game outside the registry
        pickles as a new instance of its class."""
        name = self.spec.name
        if registry.games().get(name) is self:
            return (registry.get, (name,))
        return (type(self), ())

    # ---- component sheets
    def check_sheet(self, sheet: ComponentSheet) -> None:
        """Cross-value checks the per-value schema cannot make; raise SheetError. Default: none."""

    def _checked(self, sheet: ComponentSheet) -> ComponentSheet:
        try:
            self.check_sheet(sheet)
        except SheetError:
            raise
        except ValueError as exc:  # a checker's own ValueError still names the sheet
            raise SheetError(f"{sheet.name}: {exc}") from None
        return sheet

    def load_components(self, path: str) -> ComponentSheet:
        return self._checked(load_sheet_file(path, game=self.spec.name, required=self.sheet_schema))

    def parse_components(self, document: Mapping[str, Any]) -> ComponentSheet:
        return self._checked(parse_sheet(document, game=self.spec.name, required=self.sheet_schema))

    def default_components(self, options: Mapping[str, Any]) -> ComponentSheet:
        return self._default_of(self.sheet_variant(options))

    def component_sheets(self) -> dict[str, ComponentSheet]:
        return {variant: self._default_of(variant) for variant in self.default_sheets}

    def _default_of(self, variant: str) -> ComponentSheet:
        """The default sheet of a variant, loaded and checked on first use."""
        sheet = self._defaults.get(variant)
        if sheet is None:
            sheet = self._defaults[variant] = self.load_components(str(self.default_sheets[variant]))
        return sheet

    def rules_for(self, sheet: ComponentSheet) -> Any:
        """The engine's frozen ``Rules`` for this sheet, compiled once per sheet content."""
        return derived(sheet, self.engine.Rules.from_sheet)

    # ---- the rules, forwarded to the engine
    def check_setup(self, options: Mapping[str, Any], rules: Any) -> None:
        """Refuse option combinations the sheet cannot play (raise BadOptions). Default: none."""

    def setup(self, options: Mapping[str, Any], seat_count: int, rng: Chance,
              components: ComponentSheet) -> S:
        options = self.spec.parse_options(options)
        rules = self.rules_for(components)
        self.check_setup(options, rules)
        state, _ = self.engine.setup(options, seat_count, rng, rules)
        return state

    def decision(self, state: S) -> Decision[M] | None:
        return self.engine.decision(state)

    def apply(self, state: S, seat: int, move: M) -> list[Event]:
        return self.engine.apply(state, seat, move)

    def default_move(self, state: S, decision: Decision[M]) -> M:
        return self.engine.default_move(state, decision)

    def view(self, state: S, seat: int | None) -> Message:
        return self.views.build_view(state, seat)

    # ---- the wire, through the game's move table
    def move_to_proto(self, move: M) -> Message:
        return self.move_codec.to_proto(move)

    def move_from_proto(self, message: Message) -> M:
        move: M = self.move_codec.from_proto(message)
        return move

    def hash_state(self, state: S) -> str:
        return hashing.digest(state)

    def seat_count(self, state: S) -> int:
        return state.n  # type: ignore[attr-defined]
