"""Sub-decisions that move spice sacks one at a time: paying a Progress step, placing harvested or
bonus sacks (four kinds, differing in where sacks may go and whether the seat may stop), and
selling sacks with the Expedition card Sell."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from referee.core.contract import Decision, Event

from .catalog import COLUMNS, N_SPICES
from .moves import (
    DONE,
    PAY_SPICE,
    PLACE_SPICE,
    SELL_SPICE,
    TAKE_COLONIST,
    TAKE_SHIP,
    Done,
    Move,
    TakeColonist,
    TakeShip,
)
from .resources import advance_marker, place_spice, remove_spice
from .state import State, SubDecision
from .wording import column_name, count

if TYPE_CHECKING:
    from referee.v1 import goa_pb2 as pb

#: A count of sacks with no limit: the Expedition card Sell where the edition sets none (2004),
#: Extra harvest ("Fill up to 3 of your plantations and/or colonies": as many sacks as fit). The
#: View shows it as is.
UNLIMITED = 99


def spices_on_lands(lands: list, owed: list[int] | None) -> list:
    """One PaySpice per (land, spice) present on the seat's lands (only spices still owed)."""
    moves = []
    for li, land in enumerate(lands):
        seen = 0
        for s in land.spices:
            if s >= 0 and (owed is None or owed[s]) and not seen & (1 << s):
                seen |= 1 << s
                moves.append(PAY_SPICE[li][s])
    return moves


@dataclass(slots=True)
class ProgressPayment(SubDecision):
    """1. Progress: pay the step's spices one sack at a time, choosing the field each comes from;
    the marker moves down once all are paid."""

    column: int
    owed: list[int]  # sacks still owed, per spice
    NUMBER: ClassVar[int] = 1

    def decision(self, state: State) -> Decision:
        moves = spices_on_lands(state.lands[self.seat], self.owed)
        return Decision(self.seat, "goa.pay_spice", moves, "Pay the next spice: choose the field")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.column = self.column + 1  # type: ignore[assignment]  # protoc types enums as classes
        view.spices_owed.extend(s + 1 for s in range(N_SPICES) for _ in range(self.owed[s]))  # type: ignore[misc]  # enums as ints
        view.remaining = sum(self.owed)

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        remove_spice(state, p, move.land, move.spice)
        self.owed[move.spice] -= 1
        if any(self.owed):
            return []
        state.stack.pop()
        c = self.column
        advance_marker(state, p, c)
        return [Event("goa.progress", p, f"seat {p} moves down to row {state.rows[p][c] + 1} in {column_name(c)}",
                      {"column": COLUMNS[c], "row": state.rows[p][c] + 1})]


@dataclass(slots=True)
class SpicePlacement(SubDecision):
    """Spice sacks placed one at a time onto empty fields that take them. The kinds differ in
    where the sacks may go and whether the seat may stop early."""

    remaining: int
    land: int = -1  # only this land (-1: any)
    may_stop: bool = True
    ships_or_colonists: bool = False  # harvest-mix card: a ship or a colonist instead of a sack
    lands_chosen: list[int] = field(default_factory=list)
    NUMBER: ClassVar[int] = 3
    MODE: ClassVar[int] = -1
    MAX_LANDS: ClassVar[int] = 0  # 0: no limit on the number of lands

    def hash_form(self) -> tuple:
        return (self.NUMBER, self.seat, self.remaining, self.MODE, self.land, int(self.may_stop),
                int(self.ships_or_colonists), list(self.lands_chosen))

    def decision(self, state: State) -> Decision | None:
        remaining = self.remaining
        if remaining <= 0:
            return None
        only = self.land
        chosen = self.lands_chosen
        full = self.MAX_LANDS and len(chosen) >= self.MAX_LANDS
        moves: list[Move] = []
        for li, land in enumerate(state.lands[self.seat]):
            if only >= 0 and li != only:
                continue
            if full and li not in chosen:
                continue
            free = 0
            masks = land.takes
            for i, s in enumerate(land.spices):
                if s < 0:
                    free |= masks[i]
            if free:
                for s in range(N_SPICES):
                    if free & (1 << s):
                        moves.append(PLACE_SPICE[li][s])
        if self.ships_or_colonists:
            moves.append(TAKE_SHIP)
            moves.append(TAKE_COLONIST)
        if not moves:
            return None
        if self.may_stop:
            moves.append(DONE)
        return Decision(self.seat, "goa.place_spice", moves, f"Place spice sack(s): {remaining} left")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.remaining = min(self.remaining, UNLIMITED)
        view.lands_chosen.extend(self.lands_chosen)

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        t = type(move)
        if t is Done:
            state.stack.pop()
            return []
        self.remaining -= 1
        if t is TakeShip:
            state.ships[p] += 1
        elif t is TakeColonist:
            state.colonists[p] += 1
        else:
            place_spice(state, p, move.land, move.spice)
            if self.MAX_LANDS and move.land not in self.lands_chosen:
                self.lands_chosen.append(move.land)
        return []


@dataclass(slots=True)
class HarvestSacks(SpicePlacement):
    """2. Harvest: up to the sacks shown, where they fit; what does not fit stays (RULINGS 7)."""

    MODE: ClassVar[int] = 0


@dataclass(slots=True)
class BonusSacks(SpicePlacement):
    """Sacks from an Expedition card, the red Spice tile or a Resupply: placed where they fit."""

    MODE: ClassVar[int] = 1


@dataclass(slots=True)
class FillLand(SpicePlacement):
    """A new colony or Crop rotation is filled at once with spices of choice (RULINGS 10)."""

    MODE: ClassVar[int] = 2


@dataclass(slots=True)
class ExtraHarvest(SpicePlacement):
    """Extra harvest: 'Fill up to 3 of your plantations and/or colonies'."""

    MODE: ClassVar[int] = 3
    MAX_LANDS: ClassVar[int] = 3  # "Fill up to 3 of your plantations and/or colonies"


@dataclass(slots=True)
class SpiceSale(SubDecision):
    """Expedition card Sell: sacks sold one at a time for the card's price (2012: at most 4)."""

    remaining: int
    NUMBER: ClassVar[int] = 4

    def decision(self, state: State) -> Decision | None:
        moves: list[Move] = []
        for li, land in enumerate(state.lands[self.seat]):
            seen = 0
            for s in land.spices:
                if s >= 0 and not seen & (1 << s):
                    seen |= 1 << s
                    moves.append(SELL_SPICE[li][s])
        if not moves or self.remaining <= 0:
            return None
        moves.append(DONE)
        return Decision(self.seat, "goa.sell_spice", moves,
                        f"Sell a spice sack for {state.rules.sell_price} ducats, or stop")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.remaining = min(self.remaining, UNLIMITED)

    def play(self, state: State, move: Any) -> list[Event]:
        if type(move) is Done:
            state.stack.pop()
            return []
        p = self.seat
        remove_spice(state, p, move.land, move.spice)
        price = state.rules.sell_price
        state.ducats[p] += price
        self.remaining -= 1
        return [Event("goa.sell_spice", p, f"seat {p} sells a spice sack for {count(price, 'ducat')}",
                      {"ducats": price})]
