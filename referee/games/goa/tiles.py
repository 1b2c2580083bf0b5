""""Description of the tiles": what a tile does when a seat obtains it (auction, Swap, Favor;
plantations and the 4-plantation limit; Bonanza), when it is used in an action turn (red tiles
once per round, blue tiles once), and the sub-decisions tiles open (Duty, Vice-king,
Ships-or-colonists and Resupply, Favor, Swap, discarding a plantation)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from referee.core.contract import Decision, Event

from .board import GRID_CELLS, grid_index
from .catalog import (
    ALL_SPICES,
    COLUMNS,
    GRID_SQUARES,
    LAST_ROW,
    N_COLUMNS,
    RED_TILES,
    RESOURCE_COLONISTS,
    RESOURCE_SHIPS,
    RESOURCE_SPICES,
    RESOURCES,
    TILE_COLONISTS,
    TILE_CROP_ROTATION,
    TILE_DUTY,
    TILE_ESPIONAGE,
    TILE_EXPEDITIONS,
    TILE_EXTRA_ACTIONS,
    TILE_EXTRA_HARVEST,
    TILE_FAVOR,
    TILE_FOREMAN,
    TILE_MISSION,
    TILE_PLANTATION,
    TILE_RED_COLONIST,
    TILE_RED_DUCATS,
    TILE_RED_EXPEDITION,
    TILE_RED_SHIP,
    TILE_RED_SPICE,
    TILE_RESUPPLY,
    TILE_SETTLEMENT,
    TILE_SHIPS,
    TILE_SHIPS_OR_COLONISTS,
    TILE_SWAP,
    TILE_VICE_KING,
)
from .moves import CHOOSE_COLUMN, CHOOSE_RESOURCE, DISCARD_PLANTATION, SWAP_TAKE, take_favor
from .resources import advance_marker, draw_cards, gain_cards, gain_extra, remove_spice
from .spices import UNLIMITED, BonusSacks, ExtraHarvest, FillLand, spices_on_lands
from .state import Land, State, SubDecision, has_empty_field, plantation_count, spice_counts
from .wording import column_name, count

if TYPE_CHECKING:
    from referee.v1 import goa_pb2 as pb


def add_plantation(state: State, p: int, t: int) -> None:
    """Plantation tile: onto a free plantation space, its fields filled with its spice (Crop
    rotation: the spice of choice). With 4 plantations one is discarded first (its sacks too); a
    discarded single plantation stays face down for 1 VP."""
    if plantation_count(state, p) >= state.rules.plantation_limit:
        state.stack.append(PlantationDiscard(p, t))
        return
    tl = state.rules.tiles[t]
    if tl.type == TILE_CROP_ROTATION:
        state.lands[p].append(Land(False, t, [ALL_SPICES] * tl.fields, [-1] * tl.fields))
        state.stack.append(FillLand(p, tl.fields, land=len(state.lands[p]) - 1, may_stop=False))
    else:
        state.lands[p].append(Land(False, t, [1 << tl.spice] * tl.fields, [tl.spice] * tl.fields))


#: Tiles their owner keeps in the play area (scored at the end, or used later).
KEPT_TILES = frozenset((TILE_FOREMAN, TILE_MISSION, TILE_SWAP, TILE_ESPIONAGE, TILE_EXTRA_HARVEST,
                        TILE_RESUPPLY, TILE_VICE_KING, TILE_DUTY))


def gain_tile(state: State, p: int, t: int) -> None:
    """Description of the tiles: what a tile does when a seat obtains it (auction, Swap, Favor)."""
    r = state.rules
    tl = r.tiles[t]
    k = tl.type
    if k in (TILE_PLANTATION, TILE_CROP_ROTATION):
        add_plantation(state, p, t)
    elif k in KEPT_TILES or k in RED_TILES:
        state.kept[p].append(t)
    else:
        state.tile_discard.append(t)
        if k == TILE_SHIPS:
            state.ships[p] += tl.n
        elif k == TILE_COLONISTS:
            state.colonists[p] += tl.n
        elif k == TILE_SHIPS_OR_COLONISTS:
            state.stack.append(ResourceChoice(p, tl.n, False))
        elif k == TILE_FAVOR:
            if state.box:
                state.stack.append(FavorChoice(p))
        elif k == TILE_SETTLEMENT:
            state.ships[p] += 1
            state.colonists[p] += 1
            gain_extra(state, p, 1)
        elif k == TILE_EXTRA_ACTIONS:
            gain_extra(state, p, tl.n)
        elif k == TILE_EXPEDITIONS:
            gain_cards(state, p, tl.n)


def take_bonanza(state: State, p: int, gi: int) -> None:
    """Bonanza variant: the face-down tile under a corner goes with the tile above it."""
    b = state.bonanza[gi]
    if b < 0:
        return
    state.bonanza[gi] = -1
    ships, colonists, ducats, extra, cards = state.rules.bonanza[b]
    state.ships[p] += ships
    state.colonists[p] += colonists
    state.ducats[p] += ducats
    gain_extra(state, p, extra)
    gain_cards(state, p, cards)


def tile_usable(state: State, p: int, t: int, used: list[int]) -> bool:
    k = state.rules.tiles[t].type
    if k in RED_TILES:
        if t in used:
            return False
        return k != TILE_RED_SPICE or has_empty_field(state, p)
    if k == TILE_EXTRA_HARVEST:
        return has_empty_field(state, p)
    if k == TILE_RESUPPLY:
        return True
    if k == TILE_VICE_KING:
        return min(state.rows[p]) < LAST_ROW
    if k == TILE_DUTY:  # "return 6 spice sacks": the tile's n
        return sum(spice_counts(state, p)) >= state.rules.tiles[t].n
    if k == TILE_SWAP:
        return any(g >= 0 for g in state.grid)
    return False


@dataclass(slots=True)
class DutyPayment(SubDecision):
    """Duty: return 6 spice sacks of any kind; the tile then goes face down to its owner."""

    remaining: int
    tile: int
    NUMBER: ClassVar[int] = 2

    def decision(self, state: State) -> Decision:
        moves = spices_on_lands(state.lands[self.seat], None)
        return Decision(self.seat, "goa.duty", moves, f"Duty: return {self.remaining} more spice sack(s)")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.remaining = min(self.remaining, UNLIMITED)

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        remove_spice(state, p, move.land, move.spice)
        self.remaining -= 1
        if self.remaining:
            return []
        state.stack.pop()
        duty = self.tile
        state.kept[p].remove(duty)
        state.duty_face_down[p].append(duty)
        vp = state.rules.tiles[duty].vp
        return [Event("goa.duty", p, f"seat {p} fulfils a Duty ({vp} VP)", {"tile": duty})]


@dataclass(slots=True)
class MarkerChoice(SubDecision):
    """A Progress marker moves down one row for free: the seat names the column."""

    NUMBER: ClassVar[int] = 8
    MODE: ClassVar[int] = -1

    def hash_form(self) -> tuple:
        return (self.NUMBER, self.seat, self.MODE)

    def columns(self, rows: list[int]) -> list[int]:
        return [c for c in range(N_COLUMNS) if rows[c] < LAST_ROW]

    def decision(self, state: State) -> Decision | None:
        cols = self.columns(state.rows[self.seat])
        if not cols:
            return None
        return Decision(self.seat, "goa.column", [CHOOSE_COLUMN[c] for c in cols],
                        "Choose the column whose marker moves down one row")

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        state.stack.pop()
        advance_marker(state, p, move.column)
        return [Event("goa.progress", p, f"seat {p} moves down to row {state.rows[p][move.column] + 1} in {column_name(move.column)}",
                      {"column": COLUMNS[move.column]})]


@dataclass(slots=True)
class ViceKingChoice(MarkerChoice):
    """Vice-king: 'move your least advanced Progress marker'; with several, the seat chooses."""

    MODE: ClassVar[int] = 0

    def columns(self, rows: list[int]) -> list[int]:
        low = min(rows)
        return [c for c in range(N_COLUMNS) if rows[c] == low and low < LAST_ROW]


@dataclass(slots=True)
class PaidProgressChoice(MarkerChoice):
    """Expedition card 'pay its price in ducats to move one marker one row': any column."""

    MODE: ClassVar[int] = 1


@dataclass(slots=True)
class ResourceChoice(SubDecision):
    """Ships-or-colonists tile (ships or colonists) and Resupply (ships, colonists or spices):
    the whole amount in one kind."""

    amount: int
    spices_allowed: bool
    NUMBER: ClassVar[int] = 9

    def decision(self, state: State) -> Decision | None:
        if self.amount <= 0:
            return None
        moves = [CHOOSE_RESOURCE[RESOURCE_SHIPS], CHOOSE_RESOURCE[RESOURCE_COLONISTS]]
        if self.spices_allowed:
            moves.append(CHOOSE_RESOURCE[RESOURCE_SPICES])
        return Decision(self.seat, "goa.resource", moves, f"Take {self.amount} ships, colonists or spices")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.remaining = self.amount

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        state.stack.pop()
        amount = self.amount
        if move.kind == RESOURCE_SHIPS:
            state.ships[p] += amount
        elif move.kind == RESOURCE_COLONISTS:
            state.colonists[p] += amount
        else:
            state.stack.append(BonusSacks(p, amount))
        return [Event("goa.resource", p,
                      f"seat {p} takes {count(amount, ('ship', 'colonist', 'spice')[move.kind])}",
                      {"resource": RESOURCES[move.kind], "amount": amount})]


@dataclass(slots=True)
class PlantationDiscard(SubDecision):
    """A 5th plantation: 'you must first discard 1 plantation, and any spice sacks still on it';
    a single plantation is kept face down (1 VP)."""

    tile: int  # the new plantation, placed once one is discarded
    NUMBER: ClassVar[int] = 10

    def decision(self, state: State) -> Decision:
        moves = [DISCARD_PLANTATION[li] for li, land in enumerate(state.lands[self.seat]) if not land.colony]
        return Decision(self.seat, "goa.discard_plantation", moves,
                        f"Discard one of your {state.rules.plantation_limit} plantations for the new one")

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        state.stack.pop()
        land = state.lands[p].pop(move.land)
        tl = state.rules.tiles[land.tile]
        if tl.type == TILE_PLANTATION and tl.fields == 1:
            state.singles_down[p] += 1
        else:
            state.tile_discard.append(land.tile)
        add_plantation(state, p, self.tile)
        return [Event("goa.plantation_discarded", p, f"seat {p} discards {tl.name}")]


@dataclass(slots=True)
class FavorChoice(SubDecision):
    """Favor: take one of the tiles returned to the box at set-up."""

    NUMBER: ClassVar[int] = 11

    def decision(self, state: State) -> Decision | None:
        if not state.box:
            return None
        return Decision(self.seat, "goa.favor", [take_favor(t) for t in sorted(state.box)],
                        "Favor: take a tile from the box")

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        state.stack.pop()
        state.box.remove(move.tile)
        gain_tile(state, p, move.tile)
        return [Event("goa.favor", p, f"seat {p} takes {state.rules.tiles[move.tile].name} from the box",
                      {"tile": move.tile})]


@dataclass(slots=True)
class SwapChoice(SubDecision):
    """Swap: take a tile from the board, leaving the Swap tile in its place."""

    tile: int  # the Swap tile
    NUMBER: ClassVar[int] = 12

    def decision(self, state: State) -> Decision:
        moves = [SWAP_TAKE[GRID_CELLS[g]] for g in range(GRID_SQUARES) if state.grid[g] >= 0]
        return Decision(self.seat, "goa.swap", moves, "Swap: take a tile from the board")

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        state.stack.pop()
        gi = grid_index(move.cell)
        taken = state.grid[gi]
        state.grid[gi] = self.tile
        gain_tile(state, p, taken)
        take_bonanza(state, p, gi)
        return [Event("goa.swap", p, f"seat {p} swaps a plantation for {state.rules.tiles[taken].name}", {"tile": taken})]


def use_tile_effect(state: State, p: int, t: int) -> list[Event]:
    """Red tiles: once per round. Blue tiles: once, then discarded; Duty is kept by its owner,
    face down, once its sacks are paid (EN Duty: 'flip this tile face down until the final
    scoring'; 2004 FR: 'retourne alors la tuile face cachée et la conserve')."""
    r = state.rules
    tl = r.tiles[t]
    k = tl.type
    used = [Event("goa.tile_used", p, f"seat {p} uses {tl.name}", {"tile": t})]
    if k in RED_TILES:
        state.red_used[p].append(t)
        if k == TILE_RED_SHIP:
            state.ships[p] += tl.n
        elif k == TILE_RED_COLONIST:
            state.colonists[p] += tl.n
        elif k == TILE_RED_DUCATS:
            state.ducats[p] += tl.n
        elif k == TILE_RED_EXPEDITION:
            gain_cards(state, p, tl.n)
        elif k == TILE_RED_SPICE:
            state.stack.append(BonusSacks(p, tl.n))
        return used
    if k == TILE_DUTY:  # stays in kept until the sacks are paid, then goes face down
        state.stack.append(DutyPayment(p, tl.n, t))
        return used
    state.kept[p].remove(t)
    if k == TILE_EXTRA_HARVEST:
        state.tile_discard.append(t)
        state.stack.append(ExtraHarvest(p, UNLIMITED))
    elif k == TILE_RESUPPLY:
        state.tile_discard.append(t)
        cards = draw_cards(state, tl.n)
        state.discard.extend(cards)
        total = sum(r.cards[c].colonists for c in cards)
        state.stack.append(ResourceChoice(p, total, True))
        return [Event("goa.tile_used", p, f"seat {p} uses Resupply: {total}", {"tile": t, "revealed": cards})]
    elif k == TILE_VICE_KING:
        state.tile_discard.append(t)
        state.stack.append(ViceKingChoice(p))
    elif k == TILE_SWAP:
        state.stack.append(SwapChoice(p, t))
    return used
