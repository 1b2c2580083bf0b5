"""Santa Maria's engine moves: small immutable values, one class per kind of choice, interned so
listing legal moves allocates nothing and a listed move is found by identity.

Conventions: a cell is ``row * 6 + col`` (0-based; row = blue die value - 1, col = white die value
- 1); a payment ``pay`` is a 5-tuple of resources handed in (wood, wheat, sugar, gem, gold);
resources are indices 0..4 in that order; die colours WHITE = 1, BLUE = 2; lines ROW = 1, COL = 2.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Self


class _Value:
    """Moves are immutable and interned: copying one returns the same object, and unpickling one
    returns the interned move (the rules compare some by identity: ``move is DECLINE``)."""

    __slots__ = ()

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_revive, (type(self), *(getattr(self, f.name) for f in fields(self))))  # type: ignore[arg-type]


WHITE, BLUE = 1, 2
ROW, COL = 1, 2
Pay = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class ChooseBoard(_Value):
    board: int  # index of the A-side colony board


@dataclass(frozen=True, slots=True)
class DraftLot(_Value):
    lot: int


@dataclass(frozen=True, slots=True)
class Expand(_Value):
    slot: int
    pay: Pay


@dataclass(frozen=True, slots=True)
class PlaceTile(_Value):
    cell: int  # where the tile's cell 0 lands
    rotation: int  # clockwise quarter-turns


@dataclass(frozen=True, slots=True)
class ActivateBuilding(_Value):
    cell: int


@dataclass(frozen=True, slots=True)
class UseDie(_Value):
    color: int
    face: int
    line: int
    target: int  # 1..6
    botany: int  # resource handed in for Botany, or -1


@dataclass(frozen=True, slots=True)
class Retreat(_Value):
    space: int


@dataclass(frozen=True, slots=True)
class Sell(_Value):
    resource: int


@dataclass(frozen=True, slots=True)
class Buy(_Value):
    resource: int


@dataclass(frozen=True, slots=True)
class MoveDie(_Value):
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class EndTurn(_Value):
    pass


@dataclass(frozen=True, slots=True)
class Exchange(_Value):
    option: int
    pay: Pay


@dataclass(frozen=True, slots=True)
class Ship(_Value):
    slot: int
    pay: Pay


@dataclass(frozen=True, slots=True)
class ShiftShip(_Value):
    dock: int


@dataclass(frozen=True, slots=True)
class Religion(_Value):
    extra: bool
    pay: Pay


@dataclass(frozen=True, slots=True)
class RecruitMonk(_Value):
    space: int


@dataclass(frozen=True, slots=True)
class PlaceDie(_Value):
    cell: int


@dataclass(frozen=True, slots=True)
class PlaceRoad(_Value):
    cell: int


@dataclass(frozen=True, slots=True)
class RecoverCoins(_Value):
    cell: int


@dataclass(frozen=True, slots=True)
class Decline(_Value):
    pass


Move = (
    ChooseBoard | DraftLot | Expand | PlaceTile | ActivateBuilding | UseDie | Retreat | Sell | Buy | MoveDie
    | EndTurn | Exchange | Ship | ShiftShip | Religion | RecruitMonk | PlaceDie | PlaceRoad
    | RecoverCoins | Decline
)

END_TURN = EndTurn()
DECLINE = Decline()
NO_PAY: Pay = (0, 0, 0, 0, 0)

# Bounded: move_from_proto builds moves from what a client sends, and an unbounded cache would
# keep every distinct made-up move forever (a memory leak any bot could drive).
intern = lru_cache(maxsize=1 << 14)
choose_board = intern(ChooseBoard)
draft_lot = intern(DraftLot)
expand = intern(Expand)
place_tile = intern(PlaceTile)
activate_building = intern(ActivateBuilding)
use_die = intern(UseDie)
retreat = intern(Retreat)
sell = intern(Sell)
buy = intern(Buy)
move_die = intern(MoveDie)
exchange = intern(Exchange)
ship = intern(Ship)
shift_ship = intern(ShiftShip)
religion = intern(Religion)
recruit_monk = intern(RecruitMonk)
place_die = intern(PlaceDie)
place_road = intern(PlaceRoad)
recover_coins = intern(RecoverCoins)

# lru_cache copies the class's names onto its wrapper, and pickle looks a function up by its
# qualified name: under ``ChooseBoard`` it would find the class, not ``choose_board``, and refuse
# to pickle the move table. Each interner takes the name it is bound to here.
# The interner of each class, and the singletons, for unpickling (_Value.__reduce__).
_MAKERS: dict[type, Any] = {EndTurn: lambda: END_TURN, Decline: lambda: DECLINE}
for _name, _value in list(globals().items()):
    if hasattr(_value, "cache_info") and isinstance(getattr(_value, "__wrapped__", None), type):
        _value.__qualname__ = _value.__name__ = _name
        _MAKERS[_value.__wrapped__] = _value
del _name, _value


def _revive(cls: type, *values: Any) -> Any:
    """The interned move of class ``cls`` with these field values (what unpickling builds)."""
    return _MAKERS[cls](*values)
