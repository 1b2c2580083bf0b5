"""Goa rules, pure. Section names follow the 2012 English rulebook (shared/rules/goa-2012-en.txt):
"Game setup", "1. Place auction tokens", "2. Tile auctions", "3. Player actions" (Progress, Build
ships, Harvest, Taxes, Expedition, Found a colony), "Expedition cards", "Description of the tiles",
"End of a round", "End of the game", "Final scoring"; the 2004 edition differences follow
shared/rules/goa-2004-fr.txt. Open points: RULINGS.md.

Model. A match is a phase machine (QUICK, PLACE, AUCTION, ACTIONS, EXTRA, OVER) plus a stack of
sub-decision frames (plain lists, ``[kind, seat, ...]``). A player's action turn is a TURN frame at
the bottom of the stack; anything that needs further choices (paying spices field by field,
placing harvested sacks one at a time, founding a colony, drawing Expedition cards, ...) pushes a
frame on top. When the stack empties the phase machine moves on (``_settle``).

Indices: spices 0..4 (ginger, pepper, cinnamon, nutmeg, clove); columns 0..4 (ships, harvest,
taxes, expedition, colonists); rows 0..4 (row 1..5 of the rulebook); colonies 0..3 (Quilon,
Cochin, Madras, Calicut); the 5x5 grid is indexed ``r * 5 + c``; board cells (grid plus the edge
spaces) ``(r + 1) * 7 + (c + 1)`` with r, c in -1..5. A seat's lands are its plantations and
colonies in the order gained: ``[kind, ident, masks, contents]`` (kind 0 plantation with ident a
tile id, 1 colony with ident a colony-tile id; per field an allowed-spice bitmask and the spice on
it or -1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referee.core.components import ComponentSheet
from referee.core.contract import Decision, Event, IllegalMove
from referee.core.rng import Rng

from . import moves as mv
from .moves import (
    BUILD_SHIPS,
    CHOOSE_COLUMN,
    CHOOSE_RESOURCE,
    DECLINE,
    DISCARD_PLANTATION,
    DONE,
    END_TURN,
    ESPIONAGE,
    EXPEDITION,
    FOUND_COLONY,
    KEEP_LOT,
    PASS,
    PASS_EXTRA,
    PAY_SPICE,
    PLACE_FLAG,
    PLACE_SPICE,
    PLACE_TOKEN,
    PLAY_EXTRA,
    QUICK_ADVANCE,
    QUICK_DUCATS,
    RECRUIT,
    SELL_SPICE,
    SWAP_TAKE,
    TAKE_COLONIST,
    TAKE_SHIP,
    TAXES,
    bid,
    choose_colony_tile,
    discard_card,
    draw,
    found_colony,
    harvest,
    play_card,
    progress,
    reveal_more,
    take_favor,
    use_tile,
)

SPICES = ("ginger", "pepper", "cinnamon", "nutmeg", "clove")
COLUMNS = ("ships", "harvest", "taxes", "expedition", "colonists")
COLONIES = ("quilon", "cochin", "madras", "calicut")
C_SHIPS, C_HARVEST, C_TAXES, C_EXPED, C_COLON = range(5)
ALL_SPICES = 31

# phases
QUICK, PLACE, AUCTION, ACTIONS, EXTRA, OVER = range(1, 7)
PHASE_NAMES = {QUICK: "quick_start", PLACE: "place_tokens", AUCTION: "auctions",
               ACTIONS: "actions", EXTRA: "extra_actions", OVER: "over"}

# tile types (component sheet "type")
TILE_TYPES = (
    "plantation", "crop_rotation", "foreman", "mission", "swap", "ships", "colonists",
    "ships_or_colonists", "favor", "settlement", "extra_actions", "expeditions", "red_ship",
    "red_colonist", "red_spice", "red_expedition", "red_ducats", "espionage", "extra_harvest",
    "resupply", "vice_king", "duty",
)
(T_PLANT, T_CROP, T_FOREMAN, T_MISSION, T_SWAP, T_SHIPS, T_COLONISTS, T_SHIPS_OR_COL, T_FAVOR,
 T_SETTLEMENT, T_EXTRA_ACTIONS, T_EXPEDITIONS, T_RED_SHIP, T_RED_COLONIST, T_RED_SPICE,
 T_RED_EXPED, T_RED_DUCATS, T_ESPIONAGE, T_EXTRA_HARVEST, T_RESUPPLY, T_VICE_KING,
 T_DUTY) = range(len(TILE_TYPES))
RED_TILES = frozenset((T_RED_SHIP, T_RED_COLONIST, T_RED_SPICE, T_RED_EXPED, T_RED_DUCATS))
USABLE_TILES = RED_TILES | {T_EXTRA_HARVEST, T_RESUPPLY, T_VICE_KING, T_DUTY, T_SWAP}

# Expedition card effects (component sheet "effect")
CARD_EFFECTS = (
    "ships", "colonists", "ducats", "spices", "sell", "progress_ducats", "harvest_mix",
    "colony_extra", "progress_ships_only", "progress_spices_only",
)
(E_SHIPS, E_COLONISTS, E_DUCATS, E_SPICES, E_SELL, E_PROG_DUCATS, E_HARVEST_MIX, E_COLONY_EXTRA,
 E_PROG_SHIPS, E_PROG_SPICES) = range(len(CARD_EFFECTS))
BONUS_EFFECTS = frozenset((E_SHIPS, E_COLONISTS, E_DUCATS, E_SPICES, E_SELL, E_PROG_DUCATS))

# frames
(F_TURN, F_PAY, F_DUTY, F_PLACE, F_SELL, F_COLONY, F_COLTILE, F_EXPED, F_COLUMN, F_RESOURCE,
 F_PLANT, F_FAVOR, F_SWAP, F_HAND) = range(14)
# PLACE modes
PM_HARVEST, PM_BONUS, PM_FILL, PM_EXTRA_HARVEST = range(4)
# COLUMN modes
CM_VICE_KING, CM_CARD = range(2)

BONANZA_KEYS = ("ships", "colonists", "ducats", "extra_actions", "expedition_cards")

# ---------------------------------------------------------------------------- geometry


def cell_of(r: int, c: int) -> int:
    return (r + 1) * 7 + (c + 1)


def rc_of(cell: int) -> tuple[int, int]:
    return cell // 7 - 1, cell % 7 - 1


def _grid_index(cell: int) -> int:
    r, c = rc_of(cell)
    return r * 5 + c if 0 <= r < 5 and 0 <= c < 5 else -1


GRID_CELLS = tuple(cell_of(i // 5, i % 5) for i in range(25))
EDGE_CELLS = tuple(
    [cell_of(-1, c) for c in range(5)] + [cell_of(5, c) for c in range(5)]
    + [cell_of(r, -1) for r in range(5)] + [cell_of(r, 5) for r in range(5)]
)
# orthogonal grid neighbours (grid indices) of every board cell
ORTH = tuple(
    tuple(
        (r + dr) * 5 + (c + dc)
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
        if 0 <= r + dr < 5 and 0 <= c + dc < 5
    )
    for r, c in (rc_of(x) for x in range(49))
)
# king-move grid neighbours (grid indices) of every board cell
KING = tuple(
    tuple(
        (r + dr) * 5 + (c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < 5 and 0 <= c + dc < 5
    )
    for r, c in (rc_of(x) for x in range(49))
)
CORNERS = (0, 4, 20, 24)


# ---------------------------------------------------------------------------- component values


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

    def __deepcopy__(self, memo):  # immutable: copies of a state share it
        return self

    @classmethod
    def from_sheet(cls, sheet: ComponentSheet) -> Rules:
        v = sheet.values
        sp = {s: i for i, s in enumerate(SPICES)}
        yields = tuple(
            tuple(
                tuple(v[f"yield.{col}.{r}"]) if col == "expedition" else v[f"yield.{col}.{r}"]
                for r in range(1, 6)
            )
            for col in COLUMNS
        )
        costs = []
        for col in COLUMNS:
            steps = []
            for s in range(1, 5):
                counts = [0] * 5
                for name in v[f"cost.{col}.{s}"]:
                    counts[sp[name]] += 1
                steps.append(tuple(counts))
            costs.append(tuple(steps))
        colony_tiles = []
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
            for i, c in enumerate(v[f"card.{k:02d}"] for k in range(1, 31))
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


# ---------------------------------------------------------------------------- state


@dataclass(slots=True)
class State:
    n: int
    options: dict[str, Any]
    rules: Rules = field(metadata={"hash": False})
    rng: Rng
    edition: str
    phase: int = QUICK
    round: int = 0
    first: int = 0
    # board
    grid: list[int] = field(default_factory=lambda: [-1] * 25)  # tile id per grid square
    bonanza: list[int] = field(default_factory=lambda: [-1] * 25)  # face-down Bonanza tile
    box: list[int] = field(default_factory=list)  # tiles removed at set-up (revealed; Favor)
    stacks: dict[str, list[int]] = field(default_factory=dict)  # tiles not yet laid out
    tile_discard: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)  # cell per placed token (-1: none)
    token_seats: list[int] = field(default_factory=list)
    flag_cell: int = -1
    lot: int = 0
    bid_pos: int = 1
    high: int = 0
    high_bidder: int = -1
    bids: list[int] = field(default_factory=list)  # this lot: per bidder in order, -1 = pass
    turns: int = 0
    extra_pos: int = 0
    extra_passed: list[bool] = field(default_factory=list)
    quick_pos: int = 0
    # supplies
    deck: list[int] = field(default_factory=list)
    discard: list[int] = field(default_factory=list)
    colony_supply: list[list[int]] = field(default_factory=list)
    extra_supply: int = 0
    # players
    ducats: list[int] = field(default_factory=list)
    ships: list[int] = field(default_factory=list)
    colonists: list[int] = field(default_factory=list)
    extra_cards: list[int] = field(default_factory=list)
    hands: list[list[int]] = field(default_factory=list)
    rows: list[list[int]] = field(default_factory=list)
    lands: list[list[list]] = field(default_factory=list)
    colonies: list[list[int]] = field(default_factory=list)
    kept: list[list[int]] = field(default_factory=list)
    red_used: list[list[int]] = field(default_factory=list)
    singles_down: list[int] = field(default_factory=list)
    duty_face_down: list[list[int]] = field(default_factory=list)  # fulfilled Duty tiles, kept
    first_bonus: list[int] = field(default_factory=lambda: [-1] * 10)
    all_bonus: list[int] = field(default_factory=list)
    stack: list[list] = field(default_factory=list)
    final: list[dict[str, Any]] = field(default_factory=list)
    cache: Any = field(default=None, metadata={"hash": False})


# ---------------------------------------------------------------------------- small queries


def tile(state: State, t: int) -> Tile:
    return state.rules.tiles[t]


def spice_counts(state: State, p: int) -> list[int]:
    counts = [0, 0, 0, 0, 0]
    for land in state.lands[p]:
        for s in land[3]:
            if s >= 0:
                counts[s] += 1
    return counts


def has_empty_field(state: State, p: int) -> bool:
    for land in state.lands[p]:
        if -1 in land[3]:
            return True
    return False


def plantation_count(state: State, p: int) -> int:
    return sum(1 for land in state.lands[p] if land[0] == 0)


def turn_frame(state: State) -> list | None:
    st = state.stack
    return st[0] if st and st[0][0] == F_TURN else None


def card_played(state: State) -> bool:
    t = turn_frame(state)
    return t is None or t[3] == 1


def row_source(state: State, p: int) -> int:
    """Whose development board an action reads: the spied opponent's (Espionage) or one's own."""
    t = turn_frame(state)
    return t[4] if t is not None and t[4] >= 0 else p


def is_plantation_tile(tl: Tile) -> bool:
    return tl.type in (T_PLANT, T_CROP)


# ---------------------------------------------------------------------------- set-up


def setup(options: dict[str, Any], n: int, rng: Rng, rules: Rules) -> tuple[State, list[Event]]:
    """Game setup 1-9: phase A tiles, colonies, Expedition deck, 4 ships + 2 colonists each;
    the youngest (seat 0) and then clockwise reveal Expedition cards until the first elephant
    (2004: tiger): its revealer is first player with the flag and 5 ducats (2004: 7), the others
    10. With Quick starter each seat then chooses, from the first player on."""
    state = State(n=n, options=dict(options), rules=rules, rng=rng, edition=rules.edition)
    state.stacks = {
        "A": [t.id for t in rules.tiles if t.phase == "A"],
        "B": [t.id for t in rules.tiles if t.phase == "B"],
    }
    state.deck = [c.id for c in rules.cards]
    rng.shuffle(state.deck)
    state.colony_supply = [[ct.id for ct in rules.colony_tiles if ct.colony == c] for c in range(4)]
    state.extra_supply = rules.extra_cards
    state.ships = [rules.start_ships] * n
    state.colonists = [rules.start_colonists] * n
    state.extra_cards = [0] * n
    state.hands = [[] for _ in range(n)]
    state.rows = [[0] * 5 for _ in range(n)]
    state.lands = [[] for _ in range(n)]
    state.colonies = [[-1] * 4 for _ in range(n)]
    state.kept = [[] for _ in range(n)]
    state.red_used = [[] for _ in range(n)]
    state.singles_down = [0] * n
    state.duty_face_down = [[] for _ in range(n)]
    state.all_bonus = [0] * n
    state.extra_passed = [False] * n
    events = lay_out_phase(state, "A")
    events += choose_first_player(state)
    if options.get("quick_starter"):
        state.phase = QUICK
        state.quick_pos = 0
    else:
        start_round(state)
    _settle(state)
    return state, events


def lay_out_phase(state: State, phase: str) -> list[Event]:
    """Game setup 1 (and 'After phase A'): shuffle the phase's tiles, reveal and return to the box
    4 (2004: 2), never more than 2 plantations (a revealed plantation beyond that goes back and
    another tile is revealed), lay the other 25 out face up. Bonanza: one face-down Bonanza tile
    under each corner tile."""
    r = state.rules
    pile = state.stacks[phase]
    state.stacks[phase] = []
    state.rng.shuffle(pile)
    removed: list[int] = []
    aside: list[int] = []
    plantations = 0
    while len(removed) < r.tiles_removed and pile:
        t = pile.pop()
        if is_plantation_tile(r.tiles[t]):
            if plantations >= r.max_plantations_removed:
                aside.append(t)
                continue
            plantations += 1
        removed.append(t)
    pile.extend(aside)
    if aside:
        state.rng.shuffle(pile)
    state.box.extend(removed)
    state.grid = [pile[i] if i < len(pile) else -1 for i in range(25)]
    state.tile_discard.extend(pile[25:])
    state.bonanza = [-1] * 25
    if state.options.get("bonanza") and r.bonanza:
        order = list(range(len(r.bonanza)))
        state.rng.shuffle(order)
        for corner, b in zip(CORNERS, order):
            state.bonanza[corner] = b
    if not boxed_tiles_seen(state):  # 2004: returned to the box unseen
        return [Event("goa.phase_laid_out", -1,
                      f"phase {phase}: 25 tiles laid out; {len(removed)} returned to the box unseen",
                      {"phase": phase, "removed_count": len(removed)})]
    return [
        Event(
            "goa.phase_laid_out",
            -1,
            f"phase {phase}: 25 tiles laid out; returned to the box: "
            + ", ".join(r.tiles[t].name for t in removed),
            {"phase": phase, "removed": removed},
        )
    ]


def boxed_tiles_seen(state: State) -> bool:
    """2012 Setup 1 reveals the tiles returned to the box (Favor may take one later); 2004
    Préparation puts the two unused A tiles back unseen."""
    return state.edition != "2004"


def choose_first_player(state: State) -> list[Event]:
    r = state.rules
    seat = 0
    revealed = []
    while state.deck:
        c = state.deck.pop()
        state.discard.append(c)
        revealed.append(c)
        if r.cards[c].symbol == r.first_symbol:
            break
        seat = (seat + 1) % state.n
    state.first = seat
    state.ducats = [r.first_ducats if s == seat else r.other_ducats for s in range(state.n)]
    return [
        Event(
            "goa.first_player",
            seat,
            f"seat {seat} reveals the first {r.symbols[r.first_symbol]} and takes the flag",
            {"revealed": revealed},
        )
    ]


def start_round(state: State) -> None:
    """A new round: red tiles face up again, auction tokens back, the flag holder places first."""
    state.round += 1
    state.phase = PLACE
    state.tokens = []
    state.token_seats = []
    state.flag_cell = -1
    for used in state.red_used:
        used.clear()


# ---------------------------------------------------------------------------- resources


def draw_cards(state: State, k: int) -> list[int]:
    """Draw up to k Expedition cards; an empty pile is replaced by the shuffled discards
    ('Expedition cards': 'If the draw pile ever runs out, shuffle the discard pile')."""
    out = []
    for _ in range(k):
        if not state.deck:
            if not state.discard:
                break
            state.deck = state.discard
            state.discard = []
            state.rng.shuffle(state.deck)
        out.append(state.deck.pop())
    return out


def gain_cards(state: State, p: int, k: int) -> None:
    state.hands[p].extend(draw_cards(state, k))


def gain_extra(state: State, p: int, k: int) -> None:
    """Extra action cards come from the supply of 10 (RULINGS.md: limited)."""
    g = min(k, state.extra_supply)
    state.extra_supply -= g
    state.extra_cards[p] += g


def place_spice(state: State, p: int, land: int, s: int) -> None:
    masks, contents = state.lands[p][land][2], state.lands[p][land][3]
    bit = 1 << s
    for i, x in enumerate(contents):
        if x < 0 and masks[i] & bit:
            contents[i] = s
            return
    raise AssertionError("no empty field for that spice")


def remove_spice(state: State, p: int, land: int, s: int) -> None:
    contents = state.lands[p][land][3]
    for i in range(len(contents) - 1, -1, -1):
        if contents[i] == s:
            contents[i] = -1
            return
    raise AssertionError("no such spice on that land")


def advance_marker(state: State, p: int, c: int) -> None:
    """Move a Progress marker one row down, then the special cases: the first seat to reach the
    row before last and the last row of a column draws 1 Expedition card (hand limit ignored);
    all five markers at least in row 2 (3, 4, 5) gives 1 Extra action card each time."""
    r = state.rules
    rows = state.rows[p]
    rows[c] += 1
    row = rows[c]
    if row in r.first_to_rows:
        idx = c * 2 + r.first_to_rows.index(row)
        if state.first_bonus[idx] < 0:
            state.first_bonus[idx] = p
            gain_cards(state, p, 1)
    low = min(rows)
    for threshold in r.all_rows:
        if low >= threshold and state.all_bonus[p] < threshold:
            state.all_bonus[p] = threshold
            gain_extra(state, p, 1)


def add_plantation(state: State, p: int, t: int) -> None:
    """Plantation tile: onto a free plantation space, its fields filled with its spice (Crop
    rotation: the spice of choice). With 4 plantations one is discarded first (its sacks too); a
    discarded single plantation stays face down for 1 VP."""
    if plantation_count(state, p) >= state.rules.plantation_limit:
        state.stack.append([F_PLANT, p, t])
        return
    tl = state.rules.tiles[t]
    if tl.type == T_CROP:
        state.lands[p].append([0, t, [ALL_SPICES] * tl.fields, [-1] * tl.fields])
        state.stack.append([F_PLACE, p, tl.fields, PM_FILL, len(state.lands[p]) - 1, 0, 0, []])
    else:
        state.lands[p].append([0, t, [1 << tl.spice] * tl.fields, [tl.spice] * tl.fields])


def gain_tile(state: State, p: int, t: int) -> None:
    """Description of the tiles: what a tile does when a seat obtains it (auction, Swap, Favor)."""
    r = state.rules
    tl = r.tiles[t]
    k = tl.type
    if k in (T_PLANT, T_CROP):
        add_plantation(state, p, t)
    elif k in (T_FOREMAN, T_MISSION, T_SWAP, T_ESPIONAGE, T_EXTRA_HARVEST, T_RESUPPLY,
               T_VICE_KING, T_DUTY) or k in RED_TILES:
        state.kept[p].append(t)
    else:
        state.tile_discard.append(t)
        if k == T_SHIPS:
            state.ships[p] += tl.n
        elif k == T_COLONISTS:
            state.colonists[p] += tl.n
        elif k == T_SHIPS_OR_COL:
            state.stack.append([F_RESOURCE, p, tl.n, 0])
        elif k == T_FAVOR:
            if state.box:
                state.stack.append([F_FAVOR, p])
        elif k == T_SETTLEMENT:
            state.ships[p] += 1
            state.colonists[p] += 1
            gain_extra(state, p, 1)
        elif k == T_EXTRA_ACTIONS:
            gain_extra(state, p, tl.n)
        elif k == T_EXPEDITIONS:
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


# ---------------------------------------------------------------------------- decisions


def decision(state: State) -> Decision | None:
    """The pending decision, or None once the game is over. A pure query: ``setup`` and
    ``apply`` leave every state settled (the phase machine already moved on to the next choice,
    which is kept in ``state.cache``), so nothing is left to do here. A state edited by hand
    must be settled again with :func:`settle` first."""
    return state.cache


def settle(state: State, events: list[Event] | None = None) -> None:
    """Recompute the pending decision of a state edited by hand (tests do this)."""
    state.cache = None
    _settle(state, events)


def _settle(state: State, events: list[Event] | None = None) -> None:
    """Move the phase machine on until some seat has a choice (cached) or the game is over.
    Frames with no legal move left end by themselves (e.g. a harvest with no empty field).
    What happens on the way (a lot taken free, phase B laid out, the final scoring) is appended
    to ``events``. Runs at the end of ``setup`` and of every ``apply``, never in ``decision``."""
    if events is None:
        events = []
    strict = state.options.get("hand_limit") == "always"
    while True:
        st = state.stack
        if strict:
            _enforce_hand_limit(state)
        if st:
            d = _frame_decision(state, st[-1])
            if d is not None:
                state.cache = d
                return
            st.pop()
            continue
        ph = state.phase
        if ph == OVER:
            state.cache = None
            return
        if ph == QUICK:
            if state.quick_pos < state.n:
                seat = (state.first + state.quick_pos) % state.n
                moves = [QUICK_DUCATS] + list(QUICK_ADVANCE.values())
                state.cache = Decision(seat, "goa.quick_start", moves,
                                       "Quick starter: take 10 ducats, or move 2 markers to row 2")
                return
            start_round(state)
            continue
        if ph == PLACE:
            d = _placement_decision(state)
            if d is not None:
                state.cache = d
                return
            continue
        if ph == AUCTION:
            d = _auction_decision(state, events)
            if d is not None:
                state.cache = d
                return
            continue
        if ph == ACTIONS:
            n = state.n
            if state.turns < state.rules.actions_per_round * n:
                seat = (state.first + state.turns) % n
                state.turns += 1
                st.append([F_TURN, seat, 0, 0, -1, 0])
                continue
            state.phase = EXTRA
            state.extra_pos = 0
            state.extra_passed = [False] * n
            continue
        if ph == EXTRA:
            d = _extra_decision(state, events)
            if d is not None:
                state.cache = d
                return
            continue
        raise AssertionError(f"unknown phase {ph}")


def hand_limit(state: State, p: int) -> int:
    return state.rules.yields[C_EXPED][state.rows[p][C_EXPED]][1]


def _enforce_hand_limit(state: State) -> None:
    """Option hand_limit=always (the Rio Grande 2nd printing of 2004, RULINGS.md): a seat above
    its hand limit discards down at once, whatever brought the cards."""
    st = state.stack
    for p in range(state.n):
        if len(state.hands[p]) > hand_limit(state, p):
            if not (st and st[-1][0] == F_HAND and st[-1][1] == p):
                st.append([F_HAND, p])
            return


# ---- 1. place auction tokens


def token_seat(state: State, k: int) -> int:
    """Token k (0 = number 1 on the flag): the flag holder places 1 and the last one, the others
    clockwise place 2..n."""
    n = state.n
    return state.first if k == 0 or k == n else (state.first + k) % n


def flag_cells(state: State) -> list[int]:
    """'Details on placing': an edge space or an empty square of the play area, orthogonally
    adjacent to a tile."""
    grid = state.grid
    out = []
    for cell in EDGE_CELLS:
        if any(grid[g] >= 0 for g in ORTH[cell]):
            out.append(cell)
    for g in range(25):
        if grid[g] < 0:
            cell = GRID_CELLS[g]
            if any(grid[x] >= 0 for x in ORTH[cell]):
                out.append(cell)
    out.sort()
    return out


def token_cells(state: State) -> list[int]:
    """A tile with no token, orthogonally or diagonally adjacent to the previous token; if there
    is none, any tile with no token (the line breaks and restarts there)."""
    grid = state.grid
    taken = state.tokens
    prev = taken[-1]
    out = []
    if prev >= 0:
        for g in KING[prev]:
            if grid[g] >= 0 and GRID_CELLS[g] not in taken:
                out.append(GRID_CELLS[g])
    if not out:
        out = [GRID_CELLS[g] for g in range(25) if grid[g] >= 0 and GRID_CELLS[g] not in taken]
    out.sort()
    return out


def _placement_decision(state: State) -> Decision | None:
    k = len(state.tokens)
    if k > state.n:
        state.phase = AUCTION
        state.lot = 0
        _open_lot(state)
        return None
    seat = token_seat(state, k)
    if k == 0:
        cells = flag_cells(state)
        if cells:
            return Decision(seat, "goa.place_flag", [PLACE_FLAG[c] for c in cells],
                            "Place the flag with your number 1 token")
        state.tokens.append(-1)
        state.token_seats.append(seat)
        return None
    cells = token_cells(state)
    if not cells:
        state.tokens.append(-1)
        state.token_seats.append(seat)
        return None
    return Decision(seat, "goa.place_token", [PLACE_TOKEN[c] for c in cells],
                    f"Place your number {k + 1} auction token")


# ---- 2. tile auctions


def _open_lot(state: State) -> None:
    state.bid_pos = 1
    state.high = 0
    state.high_bidder = -1
    state.bids = []


def auctioneer(state: State) -> int:
    return state.token_seats[state.lot]


def _auction_decision(state: State, events: list[Event]) -> Decision | None:
    while state.lot < len(state.tokens) and state.tokens[state.lot] < 0 and state.lot > 0:
        state.lot += 1
        _open_lot(state)
    if state.lot >= len(state.tokens):
        state.phase = ACTIONS
        state.turns = 0
        return None
    n = state.n
    a = auctioneer(state)
    seat = (a + state.bid_pos) % n
    money = state.ducats[seat]
    high = state.high
    if state.bid_pos < n:
        moves = [PASS] + [bid(x) for x in range(high + 1, money + 1)]
        return Decision(seat, "goa.bid", moves, f"Bid more than {high} ducats, or pass")
    if high == 0:
        events.append(Event("goa.no_bid", a, f"nobody bids: seat {a} takes the lot free"))
        events.extend(_award(state, a))
        return None
    if state.edition == "2004":
        moves = [PASS] + [bid(x) for x in range(high + 1, money + 1)]
        prompt = f"Sell to the high bidder for {high} (pass), or outbid and pay the bank"
    else:
        moves = [PASS, KEEP_LOT] if money >= high - 1 else [PASS]
        prompt = f"Sell to the high bidder for {high} (pass), or keep it paying the bank {high - 1}"
    return Decision(seat, "goa.auctioneer", moves, prompt)


def _award(state: State, winner: int) -> list[Event]:
    """The lot goes to the winner: the flag (first player, 1 Extra action card) or the tile under
    the token; then the next token's auction opens."""
    k = state.lot
    state.lot += 1
    _open_lot(state)
    if k == 0:
        state.first = winner
        gain_extra(state, winner, 1)
        return [Event("goa.flag_won", winner, f"seat {winner} obtains the flag")]
    gi = _grid_index(state.tokens[k])
    t = state.grid[gi]
    state.grid[gi] = -1
    gain_tile(state, winner, t)
    take_bonanza(state, winner, gi)
    return [Event("goa.tile_won", winner, f"seat {winner} obtains {state.rules.tiles[t].name}",
                  {"tile": t})]


# ---- 3. player actions


def _turn_decision(state: State, f: list) -> Decision:
    p = f[1]
    moves: list = []
    if not f[2]:
        moves += _action_moves(state, p, f)
        kind = "goa.action"
    else:
        kind = "goa.after_action"
    moves += _free_moves(state, p, f)
    if f[2]:
        moves.append(END_TURN)
    return Decision(p, kind, moves, "Choose your action" if not f[2] else "End your turn")


def _action_moves(state: State, p: int, f: list) -> list:
    r = state.rules
    spy = f[4]
    hand = state.hands[p]
    free_card = not f[3]
    moves: list = []
    if spy < 0:
        ships = state.ships[p]
        have = None
        for c in range(5):
            row = state.rows[p][c]
            if row >= 4:
                continue
            k = row + 1
            need = r.costs[c][row]
            if have is None:
                have = spice_counts(state, p)
            spices_ok = all(have[s] >= need[s] for s in range(5))
            if spices_ok and ships >= k:
                moves.append(progress(c, -1))
            if free_card:
                for card in hand:
                    e = r.cards[card].effect
                    if (e == E_PROG_SHIPS and ships >= k) or (e == E_PROG_SPICES and spices_ok):
                        moves.append(progress(c, card))
    moves.append(BUILD_SHIPS)
    moves.append(harvest(-1))
    if free_card:
        for card in hand:
            if r.cards[card].effect == E_HARVEST_MIX:
                moves.append(harvest(card))
    moves.append(TAXES)
    if spy < 0:
        moves.append(EXPEDITION)
    before = state.options.get("colony_card_timing") == "before"
    for col in range(4):
        if state.colonies[p][col] < 0 and state.colony_supply[col]:
            moves.append(FOUND_COLONY[col])
            if before and free_card:
                for card in hand:
                    if r.cards[card].effect == E_COLONY_EXTRA:
                        moves.append(found_colony(col, card))
    if spy < 0:
        for t in state.kept[p]:
            if r.tiles[t].type == T_ESPIONAGE:
                moves += [ESPIONAGE[o] for o in range(state.n) if o != p]
                break
    return moves


def _free_moves(state: State, p: int, f: list) -> list:
    """Not actions: one Expedition bonus card per action, and usable tiles, before or after the
    action ('Expedition cards', 'Description of the tiles')."""
    moves: list = []
    if not f[3]:
        for card in state.hands[p]:
            if _card_usable(state, p, card):
                moves.append(play_card(card))
    used = state.red_used[p]
    for t in state.kept[p]:
        if _tile_usable(state, p, t, used):
            moves.append(use_tile(t))
    return moves


def _card_usable(state: State, p: int, card: int) -> bool:
    c = state.rules.cards[card]
    e = c.effect
    if e in (E_SHIPS, E_COLONISTS, E_DUCATS):
        return True
    if e == E_SPICES:
        return has_empty_field(state, p)
    if e == E_SELL:
        return any(s >= 0 for land in state.lands[p] for s in land[3])
    if e == E_PROG_DUCATS:
        return state.ducats[p] >= c.price and min(state.rows[p]) < 4
    return False


def _tile_usable(state: State, p: int, t: int, used: list[int]) -> bool:
    k = state.rules.tiles[t].type
    if k in RED_TILES:
        if t in used:
            return False
        return k != T_RED_SPICE or has_empty_field(state, p)
    if k == T_EXTRA_HARVEST:
        return has_empty_field(state, p)
    if k == T_RESUPPLY:
        return True
    if k == T_VICE_KING:
        return min(state.rows[p]) < 4
    if k == T_DUTY:
        return sum(spice_counts(state, p)) >= 6
    if k == T_SWAP:
        return any(g >= 0 for g in state.grid)
    return False


def _frame_decision(state: State, f: list) -> Decision | None:
    kind = f[0]
    p = f[1]
    if kind == F_TURN:
        return _turn_decision(state, f)
    lands = state.lands[p]
    if kind == F_PAY:
        need = f[3]
        moves = []
        for li, land in enumerate(lands):
            seen = 0
            for s in land[3]:
                if s >= 0 and need[s] and not seen & (1 << s):
                    seen |= 1 << s
                    moves.append(PAY_SPICE[li][s])
        return Decision(p, "goa.pay_spice", moves, "Pay the next spice: choose the field")
    if kind == F_DUTY:
        moves = []
        for li, land in enumerate(lands):
            seen = 0
            for s in land[3]:
                if s >= 0 and not seen & (1 << s):
                    seen |= 1 << s
                    moves.append(PAY_SPICE[li][s])
        return Decision(p, "goa.duty", moves, f"Duty: return {f[2]} more spice sack(s)")
    if kind == F_PLACE:
        remaining, mode, restrict, may_stop, mix, chosen = f[2], f[3], f[4], f[5], f[6], f[7]
        if remaining <= 0:
            return None
        moves = []
        for li, land in enumerate(lands):
            if restrict >= 0 and li != restrict:
                continue
            if mode == PM_EXTRA_HARVEST and li not in chosen and len(chosen) >= 3:
                continue
            seen = 0
            masks = land[2]
            for i, s in enumerate(land[3]):
                if s < 0:
                    seen |= masks[i]
            if seen:
                for s in range(5):
                    if seen & (1 << s):
                        moves.append(PLACE_SPICE[li][s])
        if mix:
            moves.append(TAKE_SHIP)
            moves.append(TAKE_COLONIST)
        if not moves:
            return None
        if may_stop:
            moves.append(DONE)
        return Decision(p, "goa.place_spice", moves, f"Place spice sack(s): {remaining} left")
    if kind == F_SELL:
        moves = []
        for li, land in enumerate(lands):
            seen = 0
            for s in land[3]:
                if s >= 0 and not seen & (1 << s):
                    seen |= 1 << s
                    moves.append(SELL_SPICE[li][s])
        if not moves or f[2] <= 0:
            return None
        moves.append(DONE)
        return Decision(p, "goa.sell_spice", moves, "Sell a spice sack for 3 ducats, or stop")
    if kind == F_COLONY:
        return _colony_decision(state, f)
    if kind == F_COLTILE:
        moves = []
        seen = set()
        for ct in state.colony_supply[f[2]]:
            masks = state.rules.colony_tiles[ct].masks
            if masks not in seen:
                seen.add(masks)
                moves.append(choose_colony_tile(ct))
        return Decision(p, "goa.colony_tile", moves, "Choose the colony tile")
    if kind == F_EXPED:
        return _expedition_decision(state, f)
    if kind == F_COLUMN:
        rows = state.rows[p]
        if f[2] == CM_VICE_KING:
            low = min(rows)
            cols = [c for c in range(5) if rows[c] == low and low < 4]
        else:
            cols = [c for c in range(5) if rows[c] < 4]
        if not cols:
            return None
        return Decision(p, "goa.column", [CHOOSE_COLUMN[c] for c in cols],
                        "Choose the column whose marker moves down one row")
    if kind == F_RESOURCE:
        if f[2] <= 0:
            return None
        moves = [CHOOSE_RESOURCE[0], CHOOSE_RESOURCE[1]]
        if f[3]:
            moves.append(CHOOSE_RESOURCE[2])
        return Decision(p, "goa.resource", moves, f"Take {f[2]} ships, colonists or spices")
    if kind == F_PLANT:
        moves = [DISCARD_PLANTATION[li] for li, land in enumerate(lands) if land[0] == 0]
        return Decision(p, "goa.discard_plantation", moves,
                        "Discard one of your 4 plantations for the new one")
    if kind == F_FAVOR:
        if not state.box:
            return None
        return Decision(p, "goa.favor", [take_favor(t) for t in sorted(state.box)],
                        "Favor: take a tile from the box")
    if kind == F_SWAP:
        moves = [SWAP_TAKE[GRID_CELLS[g]] for g in range(25) if state.grid[g] >= 0]
        return Decision(p, "goa.swap", moves, "Swap: take a tile from the board")
    if kind == F_HAND:
        limit = hand_limit(state, p)
        if len(state.hands[p]) <= limit:
            return None
        return Decision(p, "goa.hand_limit", [discard_card(c) for c in state.hands[p]],
                        f"Discard down to your hand limit of {limit}")
    raise AssertionError(f"unknown frame {kind}")


def _colony_decision(state: State, f: list) -> Decision:
    """Found a colony, after naming it and revealing the 2 cards: recruit (completing with
    Colonist cards from the hand) or give up and take 1 colonist."""
    r = state.rules
    p, col, revealed, board, extra_done = f[1], f[2], f[3], f[4], f[5]
    need = r.colony_need[col]
    moves = []
    free_card = not card_played(state)
    before = state.options.get("colony_card_timing") == "before"
    if free_card:
        for card in state.hands[p]:
            e = r.cards[card].effect
            if e == E_COLONY_EXTRA and not extra_done and not before:
                moves.append(reveal_more(card))
            elif e == E_COLONISTS:
                moves.append(play_card(card))
    for t in state.kept[p]:
        if r.tiles[t].type == T_RED_COLONIST and t not in state.red_used[p]:
            moves.append(use_tile(t))
    if board + revealed + state.colonists[p] >= need:
        moves.append(RECRUIT)
    moves.append(DECLINE)
    return Decision(p, "goa.colony", moves,
                    f"{COLONIES[col].title()} needs {need}: board {board} + revealed {revealed}"
                    f" + colonist cards {state.colonists[p]}")


def _expedition_decision(state: State, f: list) -> Decision:
    """Expedition: draw up to the number on the board without ending above the hand limit; one may
    first play one card and discard cards to make room, or draw fewer. The limit binds 'at any
    time when doing the Expedition action' (EN; 2004 FR 'après avoir pioché'): a seat holding more
    cards than it (from tiles or progress bonuses) is offered no draw, not even 0, until it has
    played or discarded down to the limit."""
    p, most, limit = f[1], f[2], f[3]
    hand = state.hands[p]
    room = limit - len(hand)
    moves = [draw(k) for k in range(min(most, room), -1, -1)] if room >= 0 else []
    if not card_played(state):
        for card in hand:
            if _card_usable(state, p, card):
                moves.append(play_card(card))
    for card in hand:
        moves.append(discard_card(card))
    return Decision(p, "goa.expedition", moves,
                    f"Draw up to {most} (hand limit {limit}); discard or play first to make room")


def _extra_decision(state: State, events: list[Event]) -> Decision | None:
    """End of a round: from the first player clockwise, each plays 1 Extra action card for one
    more action, or passes for the round; nobody keeps more than 1."""
    n = state.n
    for _ in range(n):
        seat = (state.first + state.extra_pos) % n
        if state.extra_passed[seat]:
            state.extra_pos += 1
            continue
        cards = state.extra_cards[seat]
        if cards == 0:
            state.extra_passed[seat] = True
            state.extra_pos += 1
            continue
        moves = [PLAY_EXTRA]
        if cards <= state.rules.keep_extra:
            moves.append(PASS_EXTRA)
        return Decision(seat, "goa.extra_action", moves,
                        f"Play an Extra action card ({cards} held, keep at most 1), or pass")
    if all(state.extra_passed):
        events.extend(end_round(state))
        return None
    return None


def end_round(state: State) -> list[Event]:
    """End of a round; after round 4 phase B is laid out; after round 8 the final scoring."""
    r = state.rules
    last = 2 * r.rounds_per_phase
    if state.round >= last:
        final_scoring(state)
        totals = ", ".join(str(f["total"]) for f in state.final)
        return [Event("goa.final_scoring", -1, f"game over; VP: {totals}", {"final": state.final})]
    events = []
    if state.round == r.rounds_per_phase:
        state.tile_discard.extend(t for t in state.grid if t >= 0)
        events = lay_out_phase(state, "B")
    start_round(state)
    return events + [Event("goa.round", -1, f"round {state.round} begins", {"round": state.round})]


# ---------------------------------------------------------------------------- apply


def apply(state: State, seat: int, move) -> list[Event]:
    """Play one move. The move must be one of the pending decision's moves (checked before any
    change, so an IllegalMove leaves the state untouched)."""
    d = decision(state)
    if d is None:
        raise IllegalMove("MATCH_OVER", "the game is over")
    if seat != d.seat:
        raise IllegalMove("NOT_YOUR_TURN", f"seat {d.seat} is to act ({d.kind}), not seat {seat}")
    if move not in d.moves:
        raise IllegalMove("ILLEGAL_MOVE", f"{_move_name(move)} is not legal now ({d.kind}): {d.prompt}")
    state.cache = None
    st = state.stack
    if st:
        events = _apply_frame(state, st[-1], seat, move)
    else:
        events = _apply_phase(state, seat, move)
    _settle(state, events)
    return events


def _move_name(move) -> str:
    return type(move).__name__


def _apply_phase(state: State, p: int, move) -> list[Event]:
    ph = state.phase
    kind = type(move)
    if ph == QUICK:
        state.quick_pos += 1
        if kind is mv.QuickDucats:
            state.ducats[p] += 10
            return [Event("goa.quick_start", p, f"seat {p} takes 10 ducats")]
        state.rows[p][move.first] += 1
        state.rows[p][move.second] += 1
        return [Event("goa.quick_start", p, f"seat {p} moves two markers to row 2")]
    if ph == PLACE:
        k = len(state.tokens)
        state.tokens.append(move.cell)
        state.token_seats.append(p)
        if k == 0:
            state.flag_cell = move.cell
        r, c = rc_of(move.cell)
        return [Event("goa.token", p, f"seat {p} places token {k + 1} at row {r}, column {c}",
                      {"token": k + 1, "row": r, "col": c})]
    if ph == AUCTION:
        return _apply_auction(state, p, move)
    if ph == EXTRA:
        state.extra_pos += 1
        if kind is mv.PlayExtraAction:
            state.extra_cards[p] -= 1
            state.extra_supply += 1
            state.stack.append([F_TURN, p, 0, 0, -1, 1])
            return [Event("goa.extra_action", p, f"seat {p} plays an Extra action card")]
        state.extra_passed[p] = True
        return [Event("goa.extra_pass", p, f"seat {p} passes")]
    raise AssertionError("no phase move here")


def _apply_auction(state: State, p: int, move) -> list[Event]:
    """2. Tile auctions: one round of bids from the auctioneer's left; the auctioneer last sells
    to the high bidder (who pays him), or keeps the lot paying the bank the high bid minus 1
    (2004: outbids and pays his bid to the bank)."""
    n = state.n
    a = auctioneer(state)
    kind = type(move)
    if state.bid_pos < n:
        state.bid_pos += 1
        if kind is mv.Bid:
            state.high = move.amount
            state.high_bidder = p
            state.bids.append(move.amount)
            return [Event("goa.bid", p, f"seat {p} bids {move.amount}", {"amount": move.amount})]
        state.bids.append(-1)
        return [Event("goa.pass", p, f"seat {p} passes")]
    # the auctioneer
    if kind is mv.Pass:
        winner, price = state.high_bidder, state.high
        state.ducats[winner] -= price
        state.ducats[a] += price
        ev = Event("goa.sold", a, f"seat {a} sells to seat {winner} for {price}", {"price": price})
    elif kind is mv.KeepLot:
        winner, price = a, state.high - 1
        state.ducats[a] -= price
        ev = Event("goa.kept", a, f"seat {a} keeps the lot paying the bank {price}", {"price": price})
    else:
        winner, price = a, move.amount
        state.ducats[a] -= price
        ev = Event("goa.kept", a, f"seat {a} outbids and pays the bank {price}", {"price": price})
    return [ev] + _award(state, winner)


def _apply_frame(state: State, f: list, p: int, move) -> list[Event]:
    kind = f[0]
    t = type(move)
    if kind == F_TURN:
        return _apply_turn(state, f, p, move)
    if kind == F_PAY:
        remove_spice(state, p, move.land, move.spice)
        f[3][move.spice] -= 1
        if not any(f[3]):
            state.stack.pop()
            advance_marker(state, p, f[2])
            return [Event("goa.progress", p, f"seat {p} moves down in {COLUMNS[f[2]]}",
                          {"column": COLUMNS[f[2]], "row": state.rows[p][f[2]] + 1})]
        return []
    if kind == F_DUTY:
        remove_spice(state, p, move.land, move.spice)
        f[2] -= 1
        if f[2] == 0:
            state.stack.pop()
            duty = f[3]
            state.kept[p].remove(duty)
            state.duty_face_down[p].append(duty)
            vp = state.rules.tiles[duty].vp
            return [Event("goa.duty", p, f"seat {p} fulfils a Duty ({vp} VP)", {"tile": duty})]
        return []
    if kind == F_PLACE:
        if t is mv.Done:
            state.stack.pop()
            return []
        f[2] -= 1
        if t is mv.TakeShip:
            state.ships[p] += 1
        elif t is mv.TakeColonist:
            state.colonists[p] += 1
        else:
            place_spice(state, p, move.land, move.spice)
            if f[3] == PM_EXTRA_HARVEST and move.land not in f[7]:
                f[7].append(move.land)
        return []
    if kind == F_SELL:
        if t is mv.Done:
            state.stack.pop()
            return []
        remove_spice(state, p, move.land, move.spice)
        state.ducats[p] += state.rules.sell_price
        f[2] -= 1
        return []
    if kind == F_COLONY:
        return _apply_colony(state, f, p, move)
    if kind == F_COLTILE:
        state.stack.pop()
        state.colony_supply[f[2]].remove(move.tile)
        return _place_colony(state, p, move.tile)
    if kind == F_EXPED:
        if t is mv.Draw:
            state.stack.pop()
            gain_cards(state, p, move.count)
            return [Event("goa.expedition", p, f"seat {p} draws {move.count} Expedition card(s)",
                          {"count": move.count})]
        if t is mv.DiscardCard:
            state.hands[p].remove(move.card)
            state.discard.append(move.card)
            return [Event("goa.discard", p, f"seat {p} discards an Expedition card", {"card": move.card})]
        return _play_card(state, p, move.card)
    if kind == F_COLUMN:
        state.stack.pop()
        advance_marker(state, p, move.column)
        return [Event("goa.progress", p, f"seat {p} moves down in {COLUMNS[move.column]}",
                      {"column": COLUMNS[move.column]})]
    if kind == F_RESOURCE:
        state.stack.pop()
        amount = f[2]
        if move.kind == 0:
            state.ships[p] += amount
        elif move.kind == 1:
            state.colonists[p] += amount
        else:
            state.stack.append([F_PLACE, p, amount, PM_BONUS, -1, 1, 0, []])
        return [Event("goa.resource", p, f"seat {p} takes {amount} {('ships', 'colonists', 'spices')[move.kind]}")]
    if kind == F_PLANT:
        state.stack.pop()
        land = state.lands[p].pop(move.land)
        tl = state.rules.tiles[land[1]]
        if tl.type == T_PLANT and tl.fields == 1:
            state.singles_down[p] += 1
        else:
            state.tile_discard.append(land[1])
        add_plantation(state, p, f[2])
        return [Event("goa.plantation_discarded", p, f"seat {p} discards {tl.name}")]
    if kind == F_FAVOR:
        state.stack.pop()
        state.box.remove(move.tile)
        gain_tile(state, p, move.tile)
        return [Event("goa.favor", p, f"seat {p} takes {state.rules.tiles[move.tile].name} from the box",
                      {"tile": move.tile})]
    if kind == F_HAND:
        state.hands[p].remove(move.card)
        state.discard.append(move.card)
        return [Event("goa.discard", p, f"seat {p} discards an Expedition card", {"card": move.card})]
    if kind == F_SWAP:
        state.stack.pop()
        gi = _grid_index(move.cell)
        taken = state.grid[gi]
        state.grid[gi] = f[2]
        gain_tile(state, p, taken)
        take_bonanza(state, p, gi)
        return [Event("goa.swap", p, f"seat {p} swaps for {state.rules.tiles[taken].name}", {"tile": taken})]
    raise AssertionError(f"unknown frame {kind}")


def _apply_turn(state: State, f: list, p: int, move) -> list[Event]:
    t = type(move)
    if t is mv.EndTurn:
        state.stack.pop()
        return []
    if t is mv.PlayCard:
        return _play_card(state, p, move.card)
    if t is mv.UseTile:
        return _use_tile(state, p, move.tile)
    if t is mv.Espionage:
        tl = next(x for x in state.kept[p] if state.rules.tiles[x].type == T_ESPIONAGE)
        state.kept[p].remove(tl)
        state.tile_discard.append(tl)
        f[4] = move.opponent
        return [Event("goa.espionage", p, f"seat {p} spies on seat {move.opponent}")]
    # the action itself
    f[2] = 1
    r = state.rules
    src = f[4] if f[4] >= 0 else p
    row = state.rows[src]
    if t is mv.Progress:
        return _progress(state, f, p, move.column, move.card)
    if t is mv.BuildShips:
        k = r.yields[C_SHIPS][row[C_SHIPS]]
        state.ships[p] += k
        return [Event("goa.build_ships", p, f"seat {p} builds {k} ship(s)", {"ships": k})]
    if t is mv.Harvest:
        mix = 0
        if move.card >= 0:
            _spend_card(state, p, move.card)
            mix = 1
        k = r.yields[C_HARVEST][row[C_HARVEST]]
        state.stack.append([F_PLACE, p, k, PM_HARVEST, -1, 1, mix, []])
        return [Event("goa.harvest", p, f"seat {p} harvests up to {k}", {"sacks": k})]
    if t is mv.Taxes:
        k = r.yields[C_TAXES][row[C_TAXES]]
        state.ducats[p] += k
        return [Event("goa.taxes", p, f"seat {p} collects taxes")]
    if t is mv.Expedition:
        most, limit = r.yields[C_EXPED][row[C_EXPED]]
        state.stack.append([F_EXPED, p, most, limit])
        return [Event("goa.expedition_action", p, f"seat {p} takes the Expedition action")]
    if t is mv.FoundColony:
        extra = 0
        if move.card >= 0:  # colony_card_timing=before: the third card is announced first
            _spend_card(state, p, move.card)
            extra = 1
        cards = draw_cards(state, 2 + extra)
        state.discard.extend(cards)
        revealed = sum(r.cards[c].colonists for c in cards)
        board = r.yields[C_COLON][row[C_COLON]]
        state.stack.append([F_COLONY, p, move.colony, revealed, board, extra])
        return [Event("goa.found_colony", p,
                      f"seat {p} names {COLONIES[move.colony].title()} and reveals {revealed} colonists",
                      {"colony": COLONIES[move.colony], "revealed": cards})]
    raise AssertionError(f"unexpected move {move!r}")


def _spend_card(state: State, p: int, card: int) -> None:
    state.hands[p].remove(card)
    state.discard.append(card)
    tf = turn_frame(state)
    if tf is not None:
        tf[3] = 1


def _progress(state: State, f: list, p: int, c: int, card: int) -> list[Event]:
    """1. Progress: one row in one column, paying the spices shown (field by field) and one ship
    per spice; a modifier card waives the spices or the ships."""
    r = state.rules
    row = state.rows[p][c]
    need = list(r.costs[c][row])
    k = row + 1
    effect = r.cards[card].effect if card >= 0 else -1
    if card >= 0:
        _spend_card(state, p, card)
    if effect != E_PROG_SPICES:
        state.ships[p] -= k
    if effect == E_PROG_SHIPS:
        advance_marker(state, p, c)
        return [Event("goa.progress", p, f"seat {p} moves down in {COLUMNS[c]} paying ships only",
                      {"column": COLUMNS[c]})]
    state.stack.append([F_PAY, p, c, need])
    return [Event("goa.progress_started", p, f"seat {p} progresses in {COLUMNS[c]}", {"column": COLUMNS[c]})]


def _play_card(state: State, p: int, card: int) -> list[Event]:
    """A bonus Expedition card: 2 ships, 2 colonists, 5 ducats, 2 spices onto empty fields, sell
    spices at 3 ducats (2012: at most 4), or pay its price to move one marker one row."""
    r = state.rules
    c = r.cards[card]
    _spend_card(state, p, card)
    e = c.effect
    if e == E_SHIPS:
        state.ships[p] += r.card_ships
    elif e == E_COLONISTS:
        state.colonists[p] += r.card_colonists
    elif e == E_DUCATS:
        state.ducats[p] += r.card_ducats
    elif e == E_SPICES:
        state.stack.append([F_PLACE, p, r.card_spices, PM_BONUS, -1, 1, 0, []])
    elif e == E_SELL:
        state.stack.append([F_SELL, p, r.sell_max if r.sell_max > 0 else 99])
    elif e == E_PROG_DUCATS:
        state.ducats[p] -= c.price
        state.stack.append([F_COLUMN, p, CM_CARD])
    return [Event("goa.card_played", p, f"seat {p} plays an Expedition card ({CARD_EFFECTS[e]})",
                  {"card": card})]


def _use_tile(state: State, p: int, t: int) -> list[Event]:
    """Red tiles: once per round. Blue tiles: once, then discarded; Duty is kept by its owner,
    face down, once its sacks are paid (EN Duty: 'flip this tile face down until the final
    scoring'; 2004 FR: 'retourne alors la tuile face cachée et la conserve')."""
    r = state.rules
    tl = r.tiles[t]
    k = tl.type
    if k in RED_TILES:
        state.red_used[p].append(t)
        if k == T_RED_SHIP:
            state.ships[p] += tl.n
        elif k == T_RED_COLONIST:
            state.colonists[p] += tl.n
        elif k == T_RED_DUCATS:
            state.ducats[p] += tl.n
        elif k == T_RED_EXPED:
            gain_cards(state, p, tl.n)
        elif k == T_RED_SPICE:
            state.stack.append([F_PLACE, p, tl.n, PM_BONUS, -1, 1, 0, []])
        return [Event("goa.tile_used", p, f"seat {p} uses {tl.name}", {"tile": t})]
    if k == T_DUTY:  # stays in kept until the sacks are paid, then goes face down
        state.stack.append([F_DUTY, p, tl.n, t])
        return [Event("goa.tile_used", p, f"seat {p} uses {tl.name}", {"tile": t})]
    state.kept[p].remove(t)
    if k == T_EXTRA_HARVEST:
        state.tile_discard.append(t)
        state.stack.append([F_PLACE, p, 99, PM_EXTRA_HARVEST, -1, 1, 0, []])
    elif k == T_RESUPPLY:
        state.tile_discard.append(t)
        cards = draw_cards(state, tl.n)
        state.discard.extend(cards)
        total = sum(r.cards[c].colonists for c in cards)
        state.stack.append([F_RESOURCE, p, total, 1])
        return [Event("goa.tile_used", p, f"seat {p} uses Resupply: {total}", {"tile": t, "revealed": cards})]
    elif k == T_VICE_KING:
        state.tile_discard.append(t)
        state.stack.append([F_COLUMN, p, CM_VICE_KING])
    elif k == T_SWAP:
        state.stack.append([F_SWAP, p, t])
    return [Event("goa.tile_used", p, f"seat {p} uses {tl.name}", {"tile": t})]


def _apply_colony(state: State, f: list, p: int, move) -> list[Event]:
    r = state.rules
    t = type(move)
    if t is mv.RevealMore:
        _spend_card(state, p, move.card)
        cards = draw_cards(state, 1)
        state.discard.extend(cards)
        f[3] += sum(r.cards[c].colonists for c in cards)
        f[5] = 1
        return [Event("goa.reveal_more", p, f"seat {p} reveals one more card", {"revealed": cards})]
    if t is mv.PlayCard:
        return _play_card(state, p, move.card)
    if t is mv.UseTile:
        return _use_tile(state, p, move.tile)
    state.stack.pop()
    col = f[2]
    if t is mv.Decline:
        state.colonists[p] += 1
        return [Event("goa.colony_failed", p, f"seat {p} does not found {COLONIES[col].title()}; takes 1 colonist")]
    need = r.colony_need[col]
    state.colonists[p] -= max(0, need - f[3] - f[4])
    supply = state.colony_supply[col]
    kinds = {r.colony_tiles[ct].masks for ct in supply}
    if len(kinds) > 1:
        state.stack.append([F_COLTILE, p, col])
        return [Event("goa.colony_founded", p, f"seat {p} founds {COLONIES[col].title()}")]
    ct = supply.pop()
    return [Event("goa.colony_founded", p, f"seat {p} founds {COLONIES[col].title()}")] + _place_colony(state, p, ct)


def _place_colony(state: State, p: int, ct: int) -> list[Event]:
    """The colony tile goes on its space and is filled with spices of choice among its own."""
    spec = state.rules.colony_tiles[ct]
    state.colonies[p][spec.colony] = ct
    state.lands[p].append([1, ct, list(spec.masks), [-1] * len(spec.masks)])
    state.stack.append([F_PLACE, p, len(spec.masks), PM_FILL, len(state.lands[p]) - 1, 0, 0, []])
    return []


# ---------------------------------------------------------------------------- final scoring


def score_seat(state: State, p: int) -> dict[str, Any]:
    """Final scoring: progress rows, colonies, Expedition symbol sets, most ducats (ties: each),
    single plantations (3 VP each with the Foreman), Duty, Missions."""
    r = state.rules
    rows_vp = [r.row_vp[x] for x in state.rows[p]]
    ncol = sum(1 for x in state.colonies[p] if x >= 0)
    colonies = r.colony_vp[ncol - 1] if ncol else 0
    counts = [0] * len(r.symbols)
    for c in state.hands[p]:
        counts[r.cards[c].symbol] += 1
    cards = sum(r.set_vp[min(k, len(r.set_vp)) - 1] for k in counts if k)
    most = max(state.ducats)
    money = r.most_ducats_vp if state.ducats[p] == most else 0
    kept = [r.tiles[t] for t in state.kept[p]]
    foreman = any(t.type == T_FOREMAN for t in kept)
    singles = state.singles_down[p] + sum(
        1 for land in state.lands[p]
        if land[0] == 0 and r.tiles[land[1]].type == T_PLANT and r.tiles[land[1]].fields == 1
    )
    single_vp = singles * (next(t.vp for t in kept if t.type == T_FOREMAN) if foreman else r.single_vp)
    missions = sum(t.vp for t in kept if t.type == T_MISSION)
    out = {
        "progress": sum(rows_vp),
        "progress_by_column": dict(zip(COLUMNS, rows_vp)),
        "colonies": colonies,
        "expedition_cards": cards,
        "most_ducats": money,
        "single_plantations": single_vp,
        "duty": duty_vp(state, p),
        "missions": missions,
        "ducats": state.ducats[p],
    }
    out["total"] = (out["progress"] + colonies + cards + money + single_vp + out["duty"] + missions)
    return out


def duty_vp(state: State, p: int) -> int:
    """Victory points of the seat's fulfilled Duty tiles (kept face down, revealed at the end)."""
    return sum(state.rules.tiles[t].vp for t in state.duty_face_down[p])


def final_scoring(state: State) -> None:
    state.final = [score_seat(state, p) for p in range(state.n)]
    state.phase = OVER
    state.stack.clear()


def default_move(state: State, d: Decision):
    """DEFAULT_MOVE: the cheapest sensible choice: pass, stop, decline, end the turn, otherwise
    the first move listed."""
    for m in (PASS, DONE, END_TURN, PASS_EXTRA, DECLINE, TAXES, QUICK_DUCATS):
        if m in d.moves:
            return m
    return d.moves[0]
