"""Santa Maria's component rules: the sheet's values compiled once into the frozen ``Rules`` the
rules read (cell kinds with their effects, boards, development tiles, town halls, ships, tracks,
prices, scoring tables), and the lookups over them."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from referee.core.components import ComponentSheet, reduce_derived

from .sheet import GRID_SIDE, SCHOLARS, TERRAINS, gather

#: the vocabulary every rule shares (indices of cells, resources, terrains, effects, scholars),
#: here below the state so that the state and the compiled ``Rules`` both read it
N_CELLS = GRID_SIDE * GRID_SIDE
DIE_FACES = GRID_SIDE

RES_NAMES = ("wood", "wheat", "sugar", "gem", "gold")
N_RESOURCES = len(RES_NAMES)
WOOD, WHEAT, SUGAR, GEM, GOLD = range(N_RESOURCES)
COINS, POINTS = N_RESOURCES, N_RESOURCES + 1
GOODS_NAMES = RES_NAMES + ("coins", "points")
Goods = tuple[int, int, int, int, int, int, int]

TERRAIN_EMPTY, TERRAIN_ROAD, TERRAIN_FARM, TERRAIN_FOREST, TERRAIN_MOUNTAIN, TERRAIN_CITY, TERRAIN_TOWN_HALL = range(7)
TERRAIN_ID = {t: i + 1 for i, t in enumerate(TERRAINS)}  # road=1 ... town_hall=6


EFFECT_PRODUCE, EFFECT_EXCHANGE, EFFECT_SHIP, EFFECT_CONQUISTADOR, EFFECT_RELIGION = range(1, 6)
EFFECT_ID = {"produce": EFFECT_PRODUCE, "exchange": EFFECT_EXCHANGE, "ship": EFFECT_SHIP,
         "conquistador": EFFECT_CONQUISTADOR, "religion": EFFECT_RELIGION}

#: Scholar effects as bits of ``Player.scholars``
SCHOLAR_BIT = {name: 1 << i for i, name in enumerate(SCHOLARS)}
SCHOLAR_BOTANY, SCHOLAR_PHILOSOPHY, SCHOLAR_LOGISTICS = SCHOLAR_BIT["botany"], SCHOLAR_BIT["philosophy"], SCHOLAR_BIT["logistics"]
SCHOLAR_ECONOMY = SCHOLAR_BIT["basic_economy"] | SCHOLAR_BIT["advanced_economy"]

HALL_TILE = 100  # tile references >= 100 are town halls (advanced set-up)
#: the display slot a drafted town hall is said to come from: past the display's 10 slots
HALL_SLOT = 10

#: each player takes "6 Moines" (Santa Maria, French rules, "Mise en place")
MONKS_PER_PLAYER = 6


def goods_tuple(d: dict[str, int] | None) -> Goods:
    """A sheet's goods object as a 7-tuple (resources, coins, points)."""
    d = d or {}
    return tuple(d.get(k, 0) for k in GOODS_NAMES)  # type: ignore[return-value]


def payment_tuple(d: dict[str, int]) -> tuple[int, ...]:
    """A sheet's resources object as a 5-tuple."""
    return tuple(d.get(k, 0) for k in RES_NAMES)


@dataclass(frozen=True)
class CellKind:
    terrain: int
    building: bool
    effects: tuple[int, ...]  # indices into Rules.effects
    colonists: int
    end_points: int
    spec: Any  # the sheet's cell object (for the view)


@dataclass(frozen=True)
class Effect:
    kind: int
    gain: Goods  # produce
    options: tuple[tuple[tuple[int, ...], Goods], ...]  # exchange: (pay5, gain7)
    spec: Any


@dataclass(frozen=True, eq=False)
class Rules:
    """The component values the rules use, read once from the sheet."""

    cells: tuple[CellKind, ...]  # index 0 = empty
    effects: tuple[Effect, ...]
    boards_a: tuple[tuple[str, tuple[int, ...]], ...]
    board_b: tuple[str, tuple[int, ...]]
    doubles: tuple[tuple[int, ...], ...]
    triples: tuple[tuple[int, ...], ...]
    town_halls: tuple[tuple[int, ...], ...]
    road: int
    shape_double: tuple[tuple[int, int], ...]
    shape_triple: tuple[tuple[int, int], ...]
    ships: tuple[tuple[tuple[int, ...], int], ...]  # 0..3 starting, then standard: (cost5, points)
    n_starting_ships: int
    years: int
    limit: int
    sell: tuple[int, ...]
    buy: tuple[int, ...]  # 0 = cannot buy
    start_wood: int
    start_coins: tuple[int, ...]
    blue_per_player: int
    start_blue: int
    white_per_player: int
    white_per_year: int
    pip_cost: int
    cost_double: tuple[int, ...]
    cost_triple: tuple[int, ...]
    display_doubles: int
    display_triples: int
    road_tiles: int
    scholars_drawn: int
    bishops_drawn: int
    monks: int
    monk_fee: int
    conq_table: dict[int, tuple[tuple[int, ...], ...]]
    solo_tree_points: tuple[int, ...]
    achievements: dict[str, Any]
    retreat: tuple[tuple[str, Goods], ...]
    docks: tuple[tuple[str, Goods], ...]
    port_column_points: int
    coins_per_point: int
    bishop_penalty: int
    scholar_points: dict[str, int]
    bishop_params: dict[str, Any]
    camps: tuple[Goods, ...]
    blue_die_symbols: tuple[int, ...]
    religion_length: int
    monk_symbols: tuple[int, ...]
    conq_length: int
    gold_symbols: tuple[int, ...]
    trees: tuple[int, ...]
    n_scholars: int
    n_bishops: int

    def __reduce__(self) -> tuple[Any, ...]:  # a pickled state unpickles onto the process's Rules
        return reduce_derived(self)

    @classmethod
    def from_sheet(cls, sheet: ComponentSheet) -> Rules:
        v = sheet.values
        cells: list[CellKind] = [CellKind(TERRAIN_EMPTY, False, (), 0, 0, None)]
        cell_index: dict[str, int] = {}
        effects: list[Effect] = []
        effect_index: dict[str, int] = {}

        def effect(e: dict) -> int:
            key = json.dumps(e, sort_keys=True)
            if key not in effect_index:
                effect_index[key] = len(effects)
                effects.append(Effect(
                    EFFECT_ID[e["kind"]], goods_tuple(e.get("gain")),
                    tuple((payment_tuple(o["pay"]), goods_tuple(o["gain"])) for o in e.get("options", ())), e))
            return effect_index[key]

        def cell(c: dict | None) -> int:
            if c is None:
                return 0
            key = json.dumps(c, sort_keys=True)
            if key not in cell_index:
                terrain = TERRAIN_ID[c["terrain"]]
                cell_index[key] = len(cells)
                cells.append(CellKind(
                    terrain, terrain != TERRAIN_ROAD, tuple(effect(e) for e in c.get("effects", ())),
                    c.get("colonists", 0), c.get("end_points", 0), c))
            return cell_index[key]

        def grid(g: list) -> tuple[int, ...]:
            return tuple(cell(c) for row in g for c in row)

        boards_a = tuple((b["id"], grid(b["grid"])) for b in gather(v, "colony_board_a"))
        board_b = (v["colony_board_b"]["id"], grid(v["colony_board_b"]["grid"]))
        doubles = tuple(tuple(cell(c) for c in t) for t in gather(v, "development_tile_double"))
        triples = tuple(tuple(cell(c) for c in t) for t in gather(v, "development_tile_triple"))
        town_halls = tuple(tuple(cell(c) for c in t) for t in gather(v, "town_hall"))
        road = cell(v["road_tile"])
        starting = gather(v, "ship_tile_starting")
        ships = [(payment_tuple(s["cost"]), s["points"]) for s in starting]
        ships += [(payment_tuple(s["cost"]), s["points"]) for s in gather(v, "ship_tile_standard")]
        table = {int(k): tuple(tuple(r) for r in rows) for k, rows in v["conquistador_scoring"].items()}
        return cls(
            cells=tuple(cells),
            effects=tuple(effects),
            boards_a=boards_a,
            board_b=board_b,
            doubles=doubles,
            triples=triples,
            town_halls=town_halls,
            road=road,
            shape_double=tuple(tuple(p) for p in v["tile_shapes"]["double"]),
            shape_triple=tuple(tuple(p) for p in v["tile_shapes"]["triple"]),
            ships=tuple(ships),
            n_starting_ships=len(starting),
            years=v["years"],
            limit=v["storage_limit"],
            sell=tuple(v["sell_price"][r] for r in RES_NAMES),
            buy=tuple(v["buy_price"].get(r, 0) for r in RES_NAMES),
            start_wood=v["start_wood"],
            start_coins=tuple(v["start_coins_by_position"]),
            blue_per_player=v["blue_dice_per_player"],
            start_blue=v["start_blue_dice"],
            white_per_player=v["white_dice_per_player"],
            white_per_year=v["white_dice_per_year"],
            pip_cost=v["die_pip_cost"],
            cost_double=payment_tuple(v["expand_cost_double"]),
            cost_triple=payment_tuple(v["expand_cost_triple"]),
            display_doubles=v["display_doubles"],
            display_triples=v["display_triples"],
            road_tiles=v["road_tiles"],
            scholars_drawn=v["scholars_drawn"],
            bishops_drawn=v["bishops_drawn"],
            monks=v["monks_per_player"],
            monk_fee=v["monk_fee"],
            conq_table=table,
            solo_tree_points=tuple(v["solo_tree_points"]),
            achievements=dict(v["solo_achievements"]),
            retreat=tuple((s["action"], goods_tuple(s.get("gain"))) for s in v["retreat_spaces"]),
            docks=tuple((d["bonus"], goods_tuple(d.get("gain"))) for d in v["docks"]),
            port_column_points=v["port_column_points"],
            coins_per_point=v["coins_per_point"],
            bishop_penalty=v["bishop_penalty"],
            scholar_points={name: v[f"scholar_points_{name}"] for name in SCHOLARS},
            bishop_params=dict(v["bishops"]),
            camps=tuple(goods_tuple(g) for g in gather(v, "missionary_camp")),
            blue_die_symbols=tuple(v["blue_die_monk_symbols"]),
            religion_length=v["religion_track"]["length"],
            monk_symbols=tuple(v["religion_track"]["monk_symbols"]),
            conq_length=v["conquistador_track"]["length"],
            gold_symbols=tuple(v["conquistador_track"]["gold_symbols"]),
            trees=tuple(v["conquistador_track"]["trees"]),
            n_scholars=v["component_counts"]["scholars"],
            n_bishops=v["component_counts"]["bishops"],
        )


def tile_cells(rules: Rules, tile: int) -> tuple[int, ...]:
    """The cell kinds of a development tile (ids: doubles, then triples) or a town hall."""
    if tile >= HALL_TILE:
        return rules.town_halls[tile - HALL_TILE]
    nd = len(rules.doubles)
    return rules.doubles[tile] if tile < nd else rules.triples[tile - nd]


def tile_shape(rules: Rules, tile: int) -> tuple[tuple[int, int], ...]:
    return rules.shape_double if len(tile_cells(rules, tile)) == 2 else rules.shape_triple
