"""The Goa component sheet's schema (every key and the shape of its value) and the consistency
checks across keys; ``Rules.from_sheet`` (catalog.py) compiles a checked sheet."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.core.components import ComponentSheet, SheetError, exactly, int_at_least, is_int

from .catalog import (
    BONANZA_KEYS,
    CARD_EFFECTS,
    COLONIES,
    COLONY_TILES,
    COLUMNS,
    EXPEDITION_CARDS,
    GRID_SQUARES,
    SPICES,
    TILE_TYPES,
)


def _int_list(length: int | None = None, lo: int = 0) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or not v or not all(is_int(x, lo) for x in v):
            return f"expected a list of integers >= {lo}"
        if length is not None and len(v) != length:
            return f"expected {length} integers"
        return None
    return check


def _spice_list(length: int) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or len(v) != length or any(s not in SPICES for s in v):
            return f"expected a list of {length} spice names ({', '.join(SPICES)})"
        return None
    return check


def _pair(v: Any) -> str | None:
    if isinstance(v, list) and len(v) == 2 and all(s in SPICES for s in v) and v[0] != v[1]:
        return None
    return "expected two different spice names"


def _exped_cell(v: Any) -> str | None:
    if isinstance(v, list) and len(v) == 2 and is_int(v[0], 0) and is_int(v[1], 1):
        return None
    return "expected [cards drawn, hand limit]"


def _keys(spec: dict[str, Any]) -> Callable[[Any], str | None]:
    """An object with exactly these keys; each value checked by an int lower bound or a list."""
    def check(v: Any) -> str | None:
        if not isinstance(v, dict) or set(v) != set(spec):
            return f"expected an object with keys {', '.join(sorted(spec))}"
        for k, want in spec.items():
            if isinstance(want, int) and not is_int(v[k], want):
                return f"{k}: expected an integer >= {want}"
            if callable(want):
                problem = want(v[k])
                if problem:
                    return f"{k}: {problem}"
        return None
    return check


def _colony(v: Any) -> str | None:
    return _keys({"colonists": 1, "fields": 1, "tiles": 1})(v)


def _card(v: Any) -> str | None:
    if not isinstance(v, dict) or v.get("effect") not in CARD_EFFECTS:
        return f"expected an object with an effect among {', '.join(CARD_EFFECTS)}"
    if not is_int(v.get("colonists"), 0) or not isinstance(v.get("symbol"), str):
        return "expected colonists (integer) and symbol (name)"
    if v["effect"] == "progress_ducats" and not is_int(v.get("price"), 0):
        return "a progress_ducats card needs its price"
    return None


def _tiles(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a list of tiles"
    for t in v:
        if not isinstance(t, dict) or t.get("type") not in TILE_TYPES:
            return f"bad tile {t!r}: type must be one of {', '.join(TILE_TYPES)}"
        if not isinstance(t.get("name"), str) or not is_int(t.get("count"), 1):
            return f"bad tile {t!r}: needs a name and a count >= 1"
        if t["type"] == "plantation" and (t.get("spice") not in SPICES or not is_int(t.get("fields"), 1)):
            return f"bad plantation {t!r}: needs a spice and fields"
        if t["type"] == "crop_rotation" and not is_int(t.get("fields"), 1):
            return f"bad tile {t!r}: needs fields"
    return None


def _bonanza(v: Any) -> str | None:
    if not isinstance(v, list):
        return "expected a list of bonus objects"
    for b in v:
        if not isinstance(b, dict) or not b or set(b) - set(BONANZA_KEYS) or not all(is_int(x) for x in b.values()):
            return f"bad Bonanza tile {b!r}: keys among {', '.join(BONANZA_KEYS)}"
    return None


def _symbols(v: Any) -> str | None:
    if isinstance(v, list) and v and all(isinstance(s, str) for s in v) and len(set(v)) == len(v):
        return None
    return "expected distinct symbol names"


SHEET_SCHEMA: dict[str, Any] = {
    "edition": lambda v: None if v in ("2012", "2004") else "expected \"2012\" or \"2004\"",
    "spices": exactly(list(SPICES)),
    "columns": exactly(list(COLUMNS)),
    "row_vp": _int_list(5),
    "colony_vp": _int_list(4),
    "expedition_symbols": _symbols,
    "expedition_set_vp": _int_list(),
    "card_effects": _keys({"ships": 0, "colonists": 0, "ducats": 0, "spices": 0, "sell_max": 0,
                           "sell_price": 0}),
    "start": _keys({"ships": 0, "colonists": 0, "first_ducats": 0, "other_ducats": 0,
                    "first_symbol": lambda s: None if isinstance(s, str) else "a symbol name"}),
    "tiles_removed": int_at_least(0),
    "max_plantations_removed": int_at_least(0),
    "scoring": _keys({"most_ducats_vp": 0, "single_plantation_vp": 0, "crop_rotation_vp": 0}),
    "limits": _keys({"plantations": 1, "extra_action_cards": 0, "expedition_cards": 1,
                     "rounds_per_phase": 1, "actions_per_round": 1, "keep_extra_action_cards": 0}),
    "progress_bonus": _keys({"first_to_rows": _int_list(lo=2), "cards": 0,
                             "all_markers_rows": _int_list(lo=2), "extra_action_cards": 0}),
    "tiles_A": _tiles,
    "tiles_B": _tiles,
    "bonanza": _bonanza,
}
for _col in COLUMNS:
    for _r in range(1, 6):
        SHEET_SCHEMA[f"yield.{_col}.{_r}"] = _exped_cell if _col == "expedition" else int_at_least(0)
    for _s in range(1, 5):
        SHEET_SCHEMA[f"cost.{_col}.{_s}"] = _spice_list(_s)
for _name in COLONIES:
    SHEET_SCHEMA[f"colony.{_name}"] = _colony
for _name in ("quilon", "madras"):
    for _k in range(1, 6):
        SHEET_SCHEMA[f"colony_tile.{_name}.{_k}"] = _pair
for _k in range(1, 31):
    SHEET_SCHEMA[f"card.{_k:02d}"] = _card


def check_consistency(sheet: ComponentSheet) -> None:
    v = sheet.values
    name = sheet.name
    symbols = v["expedition_symbols"]
    for k in range(1, EXPEDITION_CARDS + 1):
        if v[f"card.{k:02d}"]["symbol"] not in symbols:
            raise SheetError(f"{name}: card.{k:02d} has a symbol not in expedition_symbols")
    if v["start"]["first_symbol"] not in symbols:
        raise SheetError(f"{name}: start.first_symbol is not an Expedition symbol")
    for phase in ("A", "B"):
        total = sum(t["count"] for t in v[f"tiles_{phase}"])
        if total - v["tiles_removed"] < GRID_SQUARES:
            raise SheetError(f"{name}: {total} {phase} tiles leave fewer than {GRID_SQUARES} after set-up")
    for colony in ("quilon", "madras"):
        if v[f"colony.{colony}"]["tiles"] != COLONY_TILES[colony]:
            raise SheetError(f"{name}: colony.{colony} must have {COLONY_TILES[colony]} tiles (one colony_tile entry each)")
    if len(v["expedition_set_vp"]) < v["limits"]["expedition_cards"] // len(symbols):
        raise SheetError(f"{name}: expedition_set_vp must cover every set size")
