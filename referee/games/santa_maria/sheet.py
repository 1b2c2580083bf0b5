"""The Santa Maria component sheet: schema (checked at load) and compilation into ``Rules``.

Every value of the sheet is one fact with its provenance (docs/ARCHITECTURE.md, "Component
data"). The shape
of every value is checked here, so an organizer's verified sheet (``--components FILE``) with a
typo is refused with the name of the faulty value instead of failing mid-game.

Cells (colony boards, development tiles, town halls, the road tile) share one format::

    {"terrain": "farm|forest|mountain|city|road|town_hall",
     "effects": [EFFECT, ...],      # buildings only (any terrain but road); applied in order
     "colonists": 0,                # colonists printed on the cell (roads)
     "end_points": 0}               # purple-framed points, scored at the end of the game

    EFFECT = {"kind": "produce", "gain": GOODS}
           | {"kind": "exchange", "options": [{"pay": RESOURCES, "gain": GOODS}, ...]}
           | {"kind": "ship"} | {"kind": "conquistador"} | {"kind": "religion"}

GOODS has keys among wood, wheat, sugar, gem, gold, coins, points (positive integers).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.core.components import (
    ComponentSheet,
    SheetError,
    exactly,
    int_at_least,
    int_list,
    is_int,
)

#: "Le terme "Colonie" utilisé dans la règle se réfère à la grille de 6x6 de votre plateau
#: Colonie" (Santa Maria, French rules, "La partie peut commencer", notes); a die's face names a row (blue) or a
#: column (white): "(C) Activer une rangée/colonne".
GRID_SIDE = 6
#: "4 tuiles Navire face visible" beside the board, one per Dock; a port has the same 4 Docks
#: (Santa Maria, French rules, "Transport maritime")
N_DOCKS = 4

RESOURCES = ("wood", "wheat", "sugar", "gem", "gold")
GOODS_KEYS = RESOURCES + ("coins", "points")
TERRAINS = ("road", "farm", "forest", "mountain", "city", "town_hall")
EFFECT_KINDS = ("produce", "exchange", "ship", "conquistador", "religion")
SCHOLARS = (
    "astronomy", "taxation", "botany", "philosophy", "mathematics",
    "construction", "industrialization", "basic_economy", "advanced_economy", "logistics",
)
BISHOPS = (
    "square", "ships_in_one_dock", "cities_to_town_hall", "colonists_to_town_hall",
    "largest_area", "diversity",
)
RETREAT_ACTIONS = ("coins", "religion", "conquistador", "ship", "road")
DOCK_BONUSES = ("coins", "religion", "conquistador", "points")
ACHIEVEMENTS = ("communism", "capitalism", "theocracy", "capracracy", "democracy", "utopia")

Check = Callable[[Any], "str | None"]


def goods_problem(v: Any, keys: tuple[str, ...] = GOODS_KEYS) -> str | None:
    if not isinstance(v, dict):
        return "goods must be an object"
    for k, n in v.items():
        if k not in keys:
            return f"unknown good {k!r} (expected one of {', '.join(keys)})"
        if not is_int(n, 1):
            return f"amount of {k} must be a positive integer"
    return None


def goods(keys: tuple[str, ...] = GOODS_KEYS) -> Check:
    return lambda v: goods_problem(v, keys)


def effect_problem(e: Any) -> str | None:
    if not isinstance(e, dict) or e.get("kind") not in EFFECT_KINDS:
        return f"effect {e!r}: kind must be one of {', '.join(EFFECT_KINDS)}"
    kind = e["kind"]
    allowed = {"produce": {"kind", "gain"}, "exchange": {"kind", "options"}}.get(kind, {"kind"})
    if set(e) - allowed:
        return f"effect {kind}: unexpected key(s) {sorted(set(e) - allowed)}"
    if kind == "produce":
        p = goods_problem(e.get("gain"))
        if p or not e.get("gain"):
            return f"produce effect: {p or 'empty gain'}"
    if kind == "exchange":
        opts = e.get("options")
        if not isinstance(opts, list) or not opts:
            return "exchange effect: needs a non-empty 'options' list"
        for o in opts:
            if not isinstance(o, dict) or set(o) != {"pay", "gain"}:
                return "exchange option: expected {pay, gain}"
            p = goods_problem(o["pay"], RESOURCES) or goods_problem(o["gain"])
            if p or not o["pay"] or not o["gain"]:
                return f"exchange option: {p or 'pay and gain must not be empty'}"
    return None


def cell_problem(c: Any) -> str | None:
    if not isinstance(c, dict):
        return f"cell {c!r} must be an object"
    if set(c) - {"terrain", "effects", "colonists", "end_points"}:
        return f"cell: unexpected key(s) {sorted(set(c) - {'terrain', 'effects', 'colonists', 'end_points'})}"
    if c.get("terrain") not in TERRAINS:
        return f"cell terrain must be one of {', '.join(TERRAINS)}, not {c.get('terrain')!r}"
    effects = c.get("effects", [])
    if not isinstance(effects, list):
        return "cell effects must be a list"
    if c["terrain"] == "road" and effects:
        return "a road is never a building: no effects"
    if c["terrain"] != "road" and not effects:
        return f"a {c['terrain']} cell is a building and needs at least one effect"
    for e in effects:
        p = effect_problem(e)
        if p:
            return p
    for k in ("colonists", "end_points"):
        if k in c and not is_int(c[k]):
            return f"cell {k} must be an integer >= 0"
    return None


def grid_problem(g: Any) -> str | None:
    if not isinstance(g, list) or len(g) != GRID_SIDE or not all(
            isinstance(r, list) and len(r) == GRID_SIDE for r in g):
        return f"a colony grid is {GRID_SIDE} rows of {GRID_SIDE} cells (null = empty)"
    for row in g:
        for c in row:
            if c is not None:
                p = cell_problem(c)
                if p:
                    return p
    return None


def board(b: Any) -> str | None:
    if not isinstance(b, dict) or set(b) != {"id", "grid"} or not isinstance(b["id"], str) or not b["id"]:
        return "a board is {id, grid}"
    p = grid_problem(b["grid"])
    return f"board {b['id']}: {p}" if p else None


def tile(cells: int) -> Check:
    def check(t: Any) -> str | None:
        if not isinstance(t, list) or len(t) != cells:
            return f"a tile lists {cells} cells"
        for c in t:
            p = cell_problem(c)
            if p:
                return p
        return None

    return check


def ship(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != {"cost", "points"}:
        return "a ship tile is {cost, points}"
    p = goods_problem(v["cost"], RESOURCES)
    if p or not v["cost"]:
        return p or "empty cost"
    return None if is_int(v["points"]) else "points must be an integer >= 0"


def camp(v: Any) -> str | None:
    p = goods_problem(v)
    return p or (None if v else "empty reward")


#: Components listed one item per value (so the provenance counts count tiles, ships, boards):
#: prefix -> (number of items, checker). Keys are ``<prefix>_01`` ... ``<prefix>_<n>``.
GROUPS: dict[str, tuple[int, Check]] = {
    "colony_board_a": (4, board),
    "development_tile_double": (15, tile(2)),
    "development_tile_triple": (15, tile(3)),
    "ship_tile_starting": (4, ship),
    "ship_tile_standard": (30, ship),
    "town_hall": (4, tile(2)),
    "missionary_camp": (4, camp),
}


def group_keys(prefix: str) -> list[str]:
    return [f"{prefix}_{i:02d}" for i in range(1, GROUPS[prefix][0] + 1)]


def gather(values: Any, prefix: str) -> list[Any]:
    """The items of a group, in order."""
    return [values[k] for k in group_keys(prefix)]


def shapes(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != {"double", "triple"}:
        return "expected {double, triple}"
    for k, n in (("double", 2), ("triple", 3)):
        s = v[k]
        if (not isinstance(s, list) or len(s) != n or s[0] != [0, 0]
                or not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p) for p in s)
                or len({tuple(p) for p in s}) != n):
            return f"{k}: expected {n} distinct [dr, dc] offsets starting with [0, 0]"
    return None


def conquistador_scoring(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != {"2", "3", "4"}:
        return "expected a table for 2, 3 and 4 players"
    for n, years in v.items():
        if not isinstance(years, list) or len(years) != 3:
            return f"{n} players: expected 3 years"
        for row in years:
            if not isinstance(row, list) or len(row) != int(n) or not all(is_int(x) for x in row):
                return f"{n} players: each year lists {n} points (first place first)"
    return None


def track(keys: tuple[str, ...]) -> Check:
    def check(v: Any) -> str | None:
        if not isinstance(v, dict) or set(v) != {"length", *keys}:
            return f"expected {{length, {', '.join(keys)}}}"
        if not is_int(v["length"], 1):
            return "length must be a positive integer"
        for k in keys:
            xs = v[k]
            if (not isinstance(xs, list) or not all(is_int(x, 1) and x <= v["length"] for x in xs)
                    or xs != sorted(set(xs))):
                return f"{k}: increasing spaces within 1..length"
        return None

    return check


def bishops(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != set(BISHOPS):
        return f"expected parameters for each of {', '.join(BISHOPS)}"
    sq = v["square"]
    if not (isinstance(sq, dict) and set(sq) == {"sizes", "points"}
            and int_list(None, 1)(sq["sizes"]) is None and int_list(len(sq["sizes"]))(sq["points"]) is None):
        return "square: {sizes: [...], points: [...]} of equal length"
    for k in BISHOPS[1:]:
        p = v[k]
        if not (isinstance(p, dict) and set(p) == {"per", "max"} and is_int(p["per"], 1) and is_int(p["max"], 1)):
            return f"{k}: expected {{per, max}}"
    return None


def retreat_spaces(v: Any) -> str | None:
    if not isinstance(v, list) or len(v) < 4:
        return "expected at least 4 retreat spaces (top first)"
    for s in v:
        if not isinstance(s, dict) or s.get("action") not in RETREAT_ACTIONS or set(s) - {"action", "gain"}:
            return f"retreat space {s!r}: action one of {', '.join(RETREAT_ACTIONS)}"
        if s["action"] == "coins" and (goods_problem(s.get("gain")) or not s.get("gain")):
            return "a coins retreat space needs a gain"
    return None


def docks(v: Any) -> str | None:
    if not isinstance(v, list) or len(v) != N_DOCKS:
        return f"expected {N_DOCKS} docks, top first"
    for d in v:
        if not isinstance(d, dict) or d.get("bonus") not in DOCK_BONUSES or set(d) - {"bonus", "gain"}:
            return f"dock {d!r}: bonus one of {', '.join(DOCK_BONUSES)}"
        if d["bonus"] in ("coins", "points") and (goods_problem(d.get("gain")) or not d.get("gain")):
            return "a coins/points dock needs a gain"
    return None


def achievements(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != set(ACHIEVEMENTS):
        return f"expected thresholds for {', '.join(ACHIEVEMENTS)}"
    for k in ("communism", "capitalism", "theocracy", "democracy", "utopia"):
        if not is_int(v[k], 1):
            return f"{k}: a positive threshold"
    if v["capracracy"] is not True:
        return "capracracy: true (a full line of one terrain)"
    return None


def counts(v: Any) -> str | None:
    keys = {"colony_boards", "development_double", "development_triple", "ships_starting",
            "ships_standard", "scholars", "bishops", "town_halls", "monk_spaces", "missionary_camps"}
    if not isinstance(v, dict) or set(v) != keys or not all(is_int(x, 1) for x in v.values()):
        return f"expected positive counts for {', '.join(sorted(keys))}"
    return None


def seats(v: Any) -> str | None:
    return None if v == {"min": 1, "max": 4} else "Santa Maria is for 1 to 4 seats"


SHEET_SCHEMA: dict[str, Check] = {
    "component_counts": counts,
    "seats": seats,
    "years": int_at_least(1),
    "resources": exactly(list(RESOURCES)),
    "storage_limit": int_at_least(1),
    "sell_price": lambda v: goods_problem(v, ("coins",)) if not isinstance(v, dict) or set(v) != set(RESOURCES) else (None if all(is_int(x, 0) for x in v.values()) else "prices are integers"),
    "buy_price": goods(RESOURCES),
    "start_wood": int_at_least(0),
    "start_coins_by_position": int_list(4),
    "blue_dice_per_player": int_at_least(1),
    "start_blue_dice": int_at_least(1),
    "white_dice_per_player": int_at_least(1),
    "white_dice_per_year": int_at_least(1),
    "die_pip_cost": int_at_least(0),
    "expand_cost_double": goods(RESOURCES),
    "expand_cost_triple": goods(RESOURCES),
    "display_doubles": int_at_least(1),
    "display_triples": int_at_least(1),
    "road_tiles": int_at_least(0),
    "scholars_drawn": int_at_least(1),
    "bishops_drawn": int_at_least(1),
    "monks_per_player": int_at_least(1),
    "monk_fee": int_at_least(0),
    "conquistador_scoring": conquistador_scoring,
    "solo_tree_points": int_list(3),
    "solo_achievements": achievements,
    "retreat_spaces": retreat_spaces,
    "docks": docks,
    "port_column_points": int_at_least(0),
    "coins_per_point": int_at_least(1),
    "bishop_penalty": int_at_least(0),
    "scholars": exactly(list(SCHOLARS)),
    **{f"scholar_points_{name}": int_at_least(0) for name in SCHOLARS},
    "bishops": bishops,
    "blue_die_monk_symbols": int_list(None, 1),
    "religion_track": track(("monk_symbols",)),
    "conquistador_track": track(("gold_symbols", "trees")),
    "tile_shapes": shapes,
    "colony_board_b": board,
    "road_tile": cell_problem,
    **{key: check for prefix, (_, check) in GROUPS.items() for key in group_keys(prefix)},
}


def check_consistency(sheet: ComponentSheet) -> None:
    """Cross-value checks the per-value schema cannot make; SheetError names what is wrong."""
    v = sheet.values
    origin = sheet.name
    c = v["component_counts"]
    sizes = {"colony_boards": "colony_board_a", "development_double": "development_tile_double",
             "development_triple": "development_tile_triple", "ships_starting": "ship_tile_starting",
             "ships_standard": "ship_tile_standard", "town_halls": "town_hall",
             "missionary_camps": "missionary_camp"}
    for count, prefix in sizes.items():
        if c[count] != GROUPS[prefix][0]:
            raise SheetError(f"{origin}: component_counts.{count} = {c[count]}, but the sheet "
                             f"lists {GROUPS[prefix][0]} {prefix} values")
    ids = [b["id"] for b in gather(v, "colony_board_a")]
    if len(set(ids)) != len(ids):
        raise SheetError(f"{origin}: colony board ids must be distinct")
    if c["scholars"] != len(SCHOLARS) or c["bishops"] != len(BISHOPS):
        raise SheetError(f"{origin}: 10 Scholars and 6 Bishops")
    if c["scholars"] - v["scholars_drawn"] < c["town_halls"]:
        raise SheetError(f"{origin}: not enough set-aside Scholars for the town hall lots")
    if v["display_doubles"] * 3 > c["development_double"] or v["display_triples"] * 3 > c["development_triple"]:
        raise SheetError(f"{origin}: the development piles cannot fill three years of display")
    if c["monk_spaces"] != v["scholars_drawn"] + v["bishops_drawn"] + c["missionary_camps"]:
        raise SheetError(f"{origin}: monk spaces must be Scholars + Bishops + camps")
    n_symbols = len(v["religion_track"]["monk_symbols"])
    if any(k > n_symbols for k in v["blue_die_monk_symbols"]):
        raise SheetError(f"{origin}: blue_die_monk_symbols names a symbol the track lacks")
    if len(v["conquistador_track"]["trees"]) < 3:
        raise SheetError(f"{origin}: the solo rules need 3 trees on the conquistador track")
    if len(v["retreat_spaces"]) < v["seats"]["max"]:
        raise SheetError(f"{origin}: fewer retreat spaces than seats")
