"""The component catalog the rules read: spices, development columns, colonies, tile types and
Expedition card effects (names as in the component sheets), and ``Rules``, the frozen values
compiled once from a sheet (``Rules.from_sheet``).

Indices: spices 0..4 (ginger, pepper, cinnamon, nutmeg, clove); columns 0..4 (ships, harvest,
taxes, expedition, colonists); rows 0..4 (row 1..5 of the rulebook); colonies 0..3 (Quilon,
Cochin, Madras, Calicut)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.core.components import ComponentSheet, reduce_derived

SPICES = ("ginger", "pepper", "cinnamon", "nutmeg", "clove")
COLUMNS = ("ships", "harvest", "taxes", "expedition", "colonists")
COLONIES = ("quilon", "cochin", "madras", "calicut")
N_SPICES, N_COLUMNS, N_COLONIES = len(SPICES), len(COLUMNS), len(COLONIES)
COLUMN_SHIPS, COLUMN_HARVEST, COLUMN_TAXES, COLUMN_EXPEDITION, COLUMN_COLONISTS = range(N_COLUMNS)
ALL_SPICES = (1 << N_SPICES) - 1  # a field that takes any spice: all five bits

#: Rows of a Development board column, 0 the top row ("put one marker in the first box (top row)
#: of each column", Goa 2012 EN, Game setup 8); the sheet gives a yield per row
#: (``yield.<column>.1..5``) and a cost per step between rows (``cost.<column>.1..4``). A marker
#: in the last row progresses no more.
N_ROWS = 5
LAST_ROW = N_ROWS - 1
N_STEPS = N_ROWS - 1
#: "Randomly place the remaining 25 tiles in the play area, face up in a 5x5 grid" (Goa 2012 EN,
#: Game setup 1).
GRID_SIDE = 5
GRID_SQUARES = GRID_SIDE * GRID_SIDE
#: the board's cells: the grid and the row of edge spaces around it (board.py)
BOARD_SIDE = GRID_SIDE + 2
BOARD_CELLS = BOARD_SIDE * BOARD_SIDE
#: "30 Expedition cards" (Goa 2012 EN, Components); the sheet names them card.01..card.30.
EXPEDITION_CARDS = 30
#: Found a colony: "reveal 2 Expedition cards and add the colonists depicted" (Goa 2012 EN,
#: 6. Found a colony); a card reveals one more ("3 instead of 2").
COLONY_REVEAL = 2
#: "Each player always has one more Auction token than there are players. With 4 players, use all
#: 5 tokens" (Goa 2012 EN, Game setup): at most 4 seats, each with the 20 Auction tokens'
#: "numbered 1 to 5 in each of the player colors" (Components).
MAX_SEATS = 4
#: Resupply (B): "take this sum in spices, colonists or ships. You can only choose one type of
#: resource" (Goa 2012 EN, Resupply (B)); the Ships/Colonists tile offers the first two. In the
#: order of the wire's Resource enum (RESOURCE_SHIPS = 1, ...).
RESOURCES = ("ships", "colonists", "spices")
N_RESOURCES = len(RESOURCES)
RESOURCE_SHIPS, RESOURCE_COLONISTS, RESOURCE_SPICES = range(N_RESOURCES)
#: "18 Colony tiles (5 Quilon, 4 Cochin, 5 Madras, and 4 Calicut)" (Goa 2012 EN, Components)
COLONY_TILES = {"quilon": 5, "cochin": 4, "madras": 5, "calicut": 4}
#: "Two Expedition cards per column can be obtained this way (one for the last row, one for the
#: row before last)" (Goa 2012 EN, Progress bonuses); the sheet's ``first_to_rows`` names the rows.
FIRST_BONUSES_PER_COLUMN = 2


# tile types (component sheet "type")
TILE_TYPES = (
    "plantation", "crop_rotation", "foreman", "mission", "swap", "ships", "colonists",
    "ships_or_colonists", "favor", "settlement", "extra_actions", "expeditions", "red_ship",
    "red_colonist", "red_spice", "red_expedition", "red_ducats", "espionage", "extra_harvest",
    "resupply", "vice_king", "duty",
)
(
    TILE_PLANTATION, TILE_CROP_ROTATION, TILE_FOREMAN, TILE_MISSION, TILE_SWAP, TILE_SHIPS,
    TILE_COLONISTS, TILE_SHIPS_OR_COLONISTS, TILE_FAVOR, TILE_SETTLEMENT, TILE_EXTRA_ACTIONS,
    TILE_EXPEDITIONS, TILE_RED_SHIP, TILE_RED_COLONIST, TILE_RED_SPICE, TILE_RED_EXPEDITION,
    TILE_RED_DUCATS, TILE_ESPIONAGE, TILE_EXTRA_HARVEST, TILE_RESUPPLY, TILE_VICE_KING, TILE_DUTY,
) = range(len(TILE_TYPES))


RED_TILES = frozenset(
    (TILE_RED_SHIP, TILE_RED_COLONIST, TILE_RED_SPICE, TILE_RED_EXPEDITION, TILE_RED_DUCATS)
)

# Expedition card effects (component sheet "effect")
CARD_EFFECTS = (
    "ships", "colonists", "ducats", "spices", "sell", "progress_ducats", "harvest_mix",
    "colony_extra", "progress_ships_only", "progress_spices_only",
)
(
    EFFECT_SHIPS, EFFECT_COLONISTS, EFFECT_DUCATS, EFFECT_SPICES, EFFECT_SELL,
    EFFECT_PROGRESS_DUCATS, EFFECT_HARVEST_MIX, EFFECT_COLONY_EXTRA, EFFECT_PROGRESS_SHIPS_ONLY,
    EFFECT_PROGRESS_SPICES_ONLY,
) = range(len(CARD_EFFECTS))


BONANZA_KEYS = ("ships", "colonists", "ducats", "extra_actions", "expedition_cards")


@dataclass(frozen=True)
class Tile:
    id: int
    name: str
    type: int
    phase: str  # "A" | "B"
    spice: int = -1
    fields: int = 0
    n: int = 0
    vp: int = 0


@dataclass(frozen=True)
class Card:
    id: int
    effect: int
    colonists: int
    symbol: int
    price: int = 0


@dataclass(frozen=True)
class ColonyTile:
    id: int
    colony: int
    masks: tuple[int, ...]


@dataclass(frozen=True)
class Rules:
    """The component values the rules use, read once from the sheet."""

    edition: str
    yields: tuple[tuple[Any, ...], ...]  # [column][row]; expedition: (draw, limit)
    costs: tuple[tuple[tuple[int, ...], ...], ...]  # [column][step] -> counts per spice
    row_vp: tuple[int, ...]
    colony_need: tuple[int, ...]
    colony_vp: tuple[int, ...]
    colony_tiles: tuple[ColonyTile, ...]
    symbols: tuple[str, ...]
    set_vp: tuple[int, ...]
    cards: tuple[Card, ...]
    card_ships: int
    card_colonists: int
    card_ducats: int
    card_spices: int
    sell_max: int  # 0 = no maximum
    sell_price: int
    start_ships: int
    start_colonists: int
    first_ducats: int
    other_ducats: int
    first_symbol: int
    tiles_removed: int
    max_plantations_removed: int
    most_ducats_vp: int
    single_vp: int
    plantation_limit: int
    extra_cards: int
    keep_extra: int
    rounds_per_phase: int
    actions_per_round: int
    first_to_rows: tuple[int, ...]  # 0-based rows
    all_rows: tuple[int, ...]  # 0-based rows
    tiles: tuple[Tile, ...]
    bonanza: tuple[tuple[int, ...], ...]  # per tile: amounts in BONANZA_KEYS order

    def __deepcopy__(self, memo: dict[int, Any]) -> Rules:  # immutable: copies of a state share it
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # a pickled state unpickles onto the process's Rules
        return reduce_derived(self)

    @classmethod
    def from_sheet(cls, sheet: ComponentSheet) -> Rules:
        v = sheet.values
        sp = {s: i for i, s in enumerate(SPICES)}
        yields = tuple(
            tuple(
                tuple(v[f"yield.{col}.{r}"]) if col == "expedition" else v[f"yield.{col}.{r}"]
                for r in range(1, N_ROWS + 1)
            )
            for col in COLUMNS
        )
        costs = []
        for col in COLUMNS:
            steps = []
            for s in range(1, N_STEPS + 1):
                counts = [0] * N_SPICES
                for name in v[f"cost.{col}.{s}"]:
                    counts[sp[name]] += 1
                steps.append(tuple(counts))
            costs.append(tuple(steps))
        colony_tiles: list[ColonyTile] = []
        need = []
        for ci, name in enumerate(COLONIES):
            spec = v[f"colony.{name}"]
            need.append(spec["colonists"])
            for k in range(spec["tiles"]):
                if name in ("quilon", "madras"):
                    pair = v[f"colony_tile.{name}.{k + 1}"]
                    mask = (1 << sp[pair[0]]) | (1 << sp[pair[1]])
                else:
                    mask = ALL_SPICES
                colony_tiles.append(ColonyTile(len(colony_tiles), ci, (mask,) * spec["fields"]))
        symbols = tuple(v["expedition_symbols"])
        cards = tuple(
            Card(
                i,
                CARD_EFFECTS.index(c["effect"]),
                c["colonists"],
                symbols.index(c["symbol"]),
                c.get("price", 0),
            )
            for i, c in enumerate(v[f"card.{k:02d}"] for k in range(1, EXPEDITION_CARDS + 1))
        )
        tiles: list[Tile] = []
        for phase in ("A", "B"):
            for spec in v[f"tiles_{phase}"]:
                for _ in range(spec["count"]):
                    tiles.append(
                        Tile(
                            len(tiles),
                            spec["name"],
                            TILE_TYPES.index(spec["type"]),
                            phase,
                            sp.get(spec.get("spice", ""), -1),
                            spec.get("fields", 0),
                            spec.get("n", 0),
                            spec.get("vp", 0),
                        )
                    )
        eff = v["card_effects"]
        start = v["start"]
        lim = v["limits"]
        pb = v["progress_bonus"]
        return cls(
            edition=v["edition"],
            yields=yields,
            costs=tuple(costs),
            row_vp=tuple(v["row_vp"]),
            colony_need=tuple(need),
            colony_vp=tuple(v["colony_vp"]),
            colony_tiles=tuple(colony_tiles),
            symbols=symbols,
            set_vp=tuple(v["expedition_set_vp"]),
            cards=cards,
            card_ships=eff["ships"],
            card_colonists=eff["colonists"],
            card_ducats=eff["ducats"],
            card_spices=eff["spices"],
            sell_max=eff["sell_max"],
            sell_price=eff["sell_price"],
            start_ships=start["ships"],
            start_colonists=start["colonists"],
            first_ducats=start["first_ducats"],
            other_ducats=start["other_ducats"],
            first_symbol=symbols.index(start["first_symbol"]),
            tiles_removed=v["tiles_removed"],
            max_plantations_removed=v["max_plantations_removed"],
            most_ducats_vp=v["scoring"]["most_ducats_vp"],
            single_vp=v["scoring"]["single_plantation_vp"],
            plantation_limit=lim["plantations"],
            extra_cards=lim["extra_action_cards"],
            keep_extra=lim["keep_extra_action_cards"],
            rounds_per_phase=lim["rounds_per_phase"],
            actions_per_round=lim["actions_per_round"],
            first_to_rows=tuple(r - 1 for r in pb["first_to_rows"]),
            all_rows=tuple(r - 1 for r in pb["all_markers_rows"]),
            tiles=tuple(tiles),
            bonanza=tuple(tuple(b.get(k, 0) for k in BONANZA_KEYS) for b in v["bonanza"]),
        )


def card_amount(rules: Rules, effect: int) -> int:
    """The amount an Expedition card of ``effect`` shows (ships, colonists, ducats, spices, or a
    sack's sale price); 0 for an effect without one."""
    return {EFFECT_SHIPS: rules.card_ships, EFFECT_COLONISTS: rules.card_colonists,
            EFFECT_DUCATS: rules.card_ducats, EFFECT_SPICES: rules.card_spices,
            EFFECT_SELL: rules.sell_price}.get(effect, 0)


def is_plantation_tile(tl: Tile) -> bool:
    return tl.type in (TILE_PLANTATION, TILE_CROP_ROTATION)
