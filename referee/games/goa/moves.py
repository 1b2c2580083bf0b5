"""Goa's engine moves: small immutable values, one class per kind of choice, proto-free.
Moves without a parameter are singletons; parameterised ones are interned (built once, looked up
in tables), so listing legal moves allocates nothing.

Indices: spices 0..4 (ginger, pepper, cinnamon, nutmeg, clove); development columns 0..4
(ships, harvest, taxes, expedition, colonists); colonies 0..3 (Quilon, Cochin, Madras, Calicut);
board cells are ``(row + 1) * 7 + (col + 1)`` with row, col in -1..5 (-1 and 5 are the edge
spaces around the 5x5 grid); a land is an index into the seat's list of plantations and colonies;
cards and tiles are ids into the component sheet's catalogs."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .catalog import BOARD_CELLS, MAX_SEATS, N_COLONIES, N_COLUMNS, N_RESOURCES, N_SPICES


# ---- set-up (variant Quick starter)
@dataclass(frozen=True, slots=True)
class QuickDucats:
    pass


@dataclass(frozen=True, slots=True)
class QuickAdvance:
    first: int
    second: int


# ---- 1. place auction tokens
@dataclass(frozen=True, slots=True)
class PlaceFlag:
    cell: int


@dataclass(frozen=True, slots=True)
class PlaceToken:
    cell: int


# ---- 2. tile auctions
@dataclass(frozen=True, slots=True)
class Bid:
    amount: int


@dataclass(frozen=True, slots=True)
class Pass:
    pass


@dataclass(frozen=True, slots=True)
class KeepLot:
    pass


# ---- 3. player actions: the action itself
@dataclass(frozen=True, slots=True)
class Progress:
    column: int
    card: int  # -1, or a progress-modifier Expedition card played with it


@dataclass(frozen=True, slots=True)
class BuildShips:
    pass


@dataclass(frozen=True, slots=True)
class Harvest:
    card: int  # -1, or the harvest-mix Expedition card played with it


@dataclass(frozen=True, slots=True)
class Taxes:
    pass


@dataclass(frozen=True, slots=True)
class Expedition:
    pass


@dataclass(frozen=True, slots=True)
class FoundColony:
    colony: int
    card: int = -1  # option colony_card_timing=before: a colony_extra card played with it


@dataclass(frozen=True, slots=True)
class Espionage:
    opponent: int


@dataclass(frozen=True, slots=True)
class PlayCard:
    card: int


@dataclass(frozen=True, slots=True)
class UseTile:
    tile: int


@dataclass(frozen=True, slots=True)
class EndTurn:
    pass


# ---- sub-decisions
@dataclass(frozen=True, slots=True)
class PaySpice:
    land: int
    spice: int


@dataclass(frozen=True, slots=True)
class PlaceSpice:
    land: int
    spice: int


@dataclass(frozen=True, slots=True)
class SellSpice:
    land: int
    spice: int


@dataclass(frozen=True, slots=True)
class TakeShip:
    pass


@dataclass(frozen=True, slots=True)
class TakeColonist:
    pass


@dataclass(frozen=True, slots=True)
class Done:
    pass


@dataclass(frozen=True, slots=True)
class RevealMore:
    card: int


@dataclass(frozen=True, slots=True)
class Recruit:
    pass


@dataclass(frozen=True, slots=True)
class Decline:
    pass


@dataclass(frozen=True, slots=True)
class ChooseColonyTile:
    tile: int


@dataclass(frozen=True, slots=True)
class Draw:
    count: int


@dataclass(frozen=True, slots=True)
class DiscardCard:
    card: int


@dataclass(frozen=True, slots=True)
class ChooseColumn:
    column: int


@dataclass(frozen=True, slots=True)
class ChooseResource:
    kind: int  # catalog.RESOURCES: 0 ships, 1 colonists, 2 spices


@dataclass(frozen=True, slots=True)
class DiscardPlantation:
    land: int


@dataclass(frozen=True, slots=True)
class TakeFavor:
    tile: int


@dataclass(frozen=True, slots=True)
class SwapTake:
    cell: int


# ---- end of round: Extra action cards
@dataclass(frozen=True, slots=True)
class PlayExtraAction:
    pass


@dataclass(frozen=True, slots=True)
class PassExtraAction:
    pass


Move = (
    QuickDucats | QuickAdvance | PlaceFlag | PlaceToken | Bid | Pass | KeepLot | Progress
    | BuildShips | Harvest | Taxes | Expedition | FoundColony | Espionage | PlayCard | UseTile
    | EndTurn | PaySpice | PlaceSpice | SellSpice | TakeShip | TakeColonist | Done | RevealMore
    | Recruit | Decline | ChooseColonyTile | Draw | DiscardCard | ChooseColumn | ChooseResource
    | DiscardPlantation | TakeFavor | SwapTake | PlayExtraAction | PassExtraAction
)

QUICK_DUCATS = QuickDucats()
PASS = Pass()
KEEP_LOT = KeepLot()
BUILD_SHIPS = BuildShips()
TAXES = Taxes()
EXPEDITION = Expedition()
END_TURN = EndTurn()
TAKE_SHIP = TakeShip()
TAKE_COLONIST = TakeColonist()
DONE = Done()
RECRUIT = Recruit()
DECLINE = Decline()
PLAY_EXTRA = PlayExtraAction()
PASS_EXTRA = PassExtraAction()

QUICK_ADVANCE = {(a, b): QuickAdvance(a, b) for a in range(N_COLUMNS) for b in range(a + 1, N_COLUMNS)}
PLACE_FLAG = tuple(PlaceFlag(c) for c in range(BOARD_CELLS))
PLACE_TOKEN = tuple(PlaceToken(c) for c in range(BOARD_CELLS))
SWAP_TAKE = tuple(SwapTake(c) for c in range(BOARD_CELLS))
FOUND_COLONY = tuple(FoundColony(c) for c in range(N_COLONIES))
ESPIONAGE = tuple(Espionage(s) for s in range(MAX_SEATS))
CHOOSE_COLUMN = tuple(ChooseColumn(c) for c in range(N_COLUMNS))
CHOOSE_RESOURCE = tuple(ChooseResource(k) for k in range(N_RESOURCES))
#: How many lands a seat's moves may name: an engine bound, not a rule (more than a seat can
#: hold: the sheet's plantation limit, 4, plus the 4 colonies); the codec rejects a larger index.
MAX_LANDS = 12
PAY_SPICE = tuple(tuple(PaySpice(land, s) for s in range(N_SPICES)) for land in range(MAX_LANDS))
PLACE_SPICE = tuple(tuple(PlaceSpice(land, s) for s in range(N_SPICES)) for land in range(MAX_LANDS))
SELL_SPICE = tuple(tuple(SellSpice(land, s) for s in range(N_SPICES)) for land in range(MAX_LANDS))
DISCARD_PLANTATION = tuple(DiscardPlantation(land) for land in range(MAX_LANDS))
#: Draw counts interned ahead (a cache size, not a rule: larger counts are built when asked)
DRAW = tuple(Draw(k) for k in range(8))



def quick_advance(first: int, second: int) -> QuickAdvance:
    """The listed pairs (first < second) are interned; any other pair a client sends is built."""
    return QUICK_ADVANCE.get((first, second)) or QuickAdvance(first, second)


def pay_spice(land: int, spice: int) -> PaySpice:
    return PAY_SPICE[land][spice]


def place_spice(land: int, spice: int) -> PlaceSpice:
    return PLACE_SPICE[land][spice]


def sell_spice(land: int, spice: int) -> SellSpice:
    return SELL_SPICE[land][spice]


# Parameterised moves are interned, in bounded caches: move_from_proto builds them from what a
# client sends, and an unbounded cache would keep every made-up move forever.
_interned = lru_cache(maxsize=1 << 12)


@_interned
def bid(amount: int) -> Bid:
    return Bid(amount)


@_interned
def progress(column: int, card: int) -> Progress:
    return Progress(column, card)


@_interned
def harvest(card: int) -> Harvest:
    return Harvest(card)


@_interned
def found_colony(colony: int, card: int) -> FoundColony:
    return FOUND_COLONY[colony] if card < 0 else FoundColony(colony, card)


@_interned
def play_card(card: int) -> PlayCard:
    return PlayCard(card)


@_interned
def use_tile(tile: int) -> UseTile:
    return UseTile(tile)


@_interned
def reveal_more(card: int) -> RevealMore:
    return RevealMore(card)


@_interned
def discard_card(card: int) -> DiscardCard:
    return DiscardCard(card)


@_interned
def choose_colony_tile(tile: int) -> ChooseColonyTile:
    return ChooseColonyTile(tile)


@_interned
def take_favor(tile: int) -> TakeFavor:
    return TakeFavor(tile)


@_interned
def draw(count: int) -> Draw:
    return DRAW[count] if count < len(DRAW) else Draw(count)
