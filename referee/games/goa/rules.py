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

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from referee.core.components import ComponentSheet
from referee.core.contract import Decision, Event, IllegalMove
from referee.core.hashing import canonical
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

BONANZA_KEYS = ("ships", "colonists", "ducats", "extra_actions", "expedition_cards")

# ---------------------------------------------------------------------------- geometry


def cell_of(r: int, c: int) -> int:
    return (r + 1) * 7 + (c + 1)


def rc_of(cell: int) -> tuple[int, int]:
    return cell // 7 - 1, cell % 7 - 1


def grid_index(cell: int) -> int:
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
    stack: list[SubDecision] = field(default_factory=list)  # pending sub-decisions, top last
    final: list[dict[str, Any]] = field(default_factory=list)
    cache: Any = field(default=None, metadata={"hash": False})


def state_digest(state: State) -> str:
    """The state hash: ``referee.core.hashing``'s canonical JSON and SHA-256, with each pending
    sub-decision in its canonical list form (``SubDecision.encode``), so the typed sub-decisions
    hash exactly as the records made before them."""
    data = {}
    for f in fields(state):
        if not f.metadata.get("hash", True):
            continue
        value = getattr(state, f.name)
        data[f.name] = [frame.encode() for frame in value] if f.name == "stack" else canonical(value)
    text = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    return hashlib.sha256(text).hexdigest()


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


def turn_frame(state: State) -> ActionTurn | None:
    """The action turn under way (always at the bottom of the stack), if any."""
    st = state.stack
    return st[0] if st and type(st[0]) is ActionTurn else None


def card_played(state: State) -> bool:
    """Whether this action's one Expedition card is spent (outside a turn: no card may be)."""
    t = turn_frame(state)
    return t is None or t.card_played


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
        state.stack.append(PlantationDiscard(p, t))
        return
    tl = state.rules.tiles[t]
    if tl.type == T_CROP:
        state.lands[p].append([0, t, [ALL_SPICES] * tl.fields, [-1] * tl.fields])
        state.stack.append(FillLand(p, tl.fields, land=len(state.lands[p]) - 1, may_stop=False))
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
            state.stack.append(ResourceChoice(p, tl.n, False))
        elif k == T_FAVOR:
            if state.box:
                state.stack.append(FavorChoice(p))
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
            d = st[-1].decision(state)
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
                st.append(ActionTurn(seat))
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
            top = st[-1] if st else None
            if not (type(top) is HandLimitDiscard and top.seat == p):
                st.append(HandLimitDiscard(p))
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
    gi = grid_index(state.tokens[k])
    t = state.grid[gi]
    state.grid[gi] = -1
    gain_tile(state, winner, t)
    take_bonanza(state, winner, gi)
    return [Event("goa.tile_won", winner, f"seat {winner} obtains {state.rules.tiles[t].name}",
                  {"tile": t})]


# ---- sub-decisions: one small typed object per kind, owning its legal moves and its effect


@dataclass(slots=True)
class SubDecision:
    """A choice some seat must make before play goes on, kept on ``State.stack`` (the top one is
    pending). ``decision`` lists the legal moves (None when none is left: the sub-decision then
    ends by itself); ``apply`` plays one of them. ``encode`` is the canonical form the state hash
    uses (a list: the kind's number, the seat, then the fields in order)."""

    seat: int
    NUMBER: ClassVar[int] = -1

    def decision(self, state: State) -> Decision | None:
        raise NotImplementedError

    def apply(self, state: State, move) -> list[Event]:
        raise NotImplementedError

    def encode(self) -> list:
        raise NotImplementedError


@dataclass(slots=True)
class ActionTurn(SubDecision):
    """3. Player actions: one seat's action turn (a regular one, or one bought with an Extra
    action card). Before and after the action the seat may play one Expedition bonus card and use
    its tiles; Espionage, announced first, makes the action read an opponent's board."""

    action_done: bool = False
    card_played: bool = False
    spied: int = -1  # Espionage: the opponent whose development board this action reads
    extra_action: bool = False
    NUMBER: ClassVar[int] = 0

    def encode(self) -> list:
        return [self.NUMBER, self.seat, int(self.action_done), int(self.card_played), self.spied,
                int(self.extra_action)]

    def decision(self, state: State) -> Decision:
        p = self.seat
        moves: list = []
        if not self.action_done:
            moves += self.action_moves(state)
            kind = "goa.action"
        else:
            kind = "goa.after_action"
        moves += self.free_moves(state)
        if self.action_done:
            moves.append(END_TURN)
        return Decision(p, kind, moves, "Choose your action" if not self.action_done else "End your turn")

    def action_moves(self, state: State) -> list:
        r = state.rules
        p = self.seat
        spying = self.spied >= 0
        hand = state.hands[p]
        free_card = not self.card_played
        moves: list = []
        if not spying:
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
        if not spying:
            moves.append(EXPEDITION)
        before = state.options.get("colony_card_timing") == "before"
        for col in range(4):
            if state.colonies[p][col] < 0 and state.colony_supply[col]:
                moves.append(FOUND_COLONY[col])
                if before and free_card:
                    for card in hand:
                        if r.cards[card].effect == E_COLONY_EXTRA:
                            moves.append(found_colony(col, card))
        if not spying:
            for t in state.kept[p]:
                if r.tiles[t].type == T_ESPIONAGE:
                    moves += [ESPIONAGE[o] for o in range(state.n) if o != p]
                    break
        return moves

    def free_moves(self, state: State) -> list:
        """Not actions: one Expedition bonus card per action, and usable tiles, before or after
        the action ('Expedition cards', 'Description of the tiles')."""
        p = self.seat
        moves: list = []
        if not self.card_played:
            for card in state.hands[p]:
                if card_usable(state, p, card):
                    moves.append(play_card(card))
        used = state.red_used[p]
        for t in state.kept[p]:
            if tile_usable(state, p, t, used):
                moves.append(use_tile(t))
        return moves

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        t = type(move)
        if t is mv.EndTurn:
            state.stack.pop()
            return []
        if t is mv.PlayCard:
            return play_bonus_card(state, p, move.card)
        if t is mv.UseTile:
            return use_tile_effect(state, p, move.tile)
        if t is mv.Espionage:
            tl = next(x for x in state.kept[p] if state.rules.tiles[x].type == T_ESPIONAGE)
            state.kept[p].remove(tl)
            state.tile_discard.append(tl)
            self.spied = move.opponent
            return [Event("goa.espionage", p, f"seat {p} spies on seat {move.opponent}")]
        # the action itself
        self.action_done = True
        r = state.rules
        row = state.rows[self.spied if self.spied >= 0 else p]
        if t is mv.Progress:
            return start_progress(state, p, move.column, move.card)
        if t is mv.BuildShips:
            k = r.yields[C_SHIPS][row[C_SHIPS]]
            state.ships[p] += k
            return [Event("goa.build_ships", p, f"seat {p} builds {k} ship(s)", {"ships": k})]
        if t is mv.Harvest:
            mix = False
            if move.card >= 0:
                spend_card(state, p, move.card)
                mix = True
            k = r.yields[C_HARVEST][row[C_HARVEST]]
            state.stack.append(HarvestSacks(p, k, ships_or_colonists=mix))
            return [Event("goa.harvest", p, f"seat {p} harvests up to {k}", {"sacks": k})]
        if t is mv.Taxes:
            k = r.yields[C_TAXES][row[C_TAXES]]
            state.ducats[p] += k
            return [Event("goa.taxes", p, f"seat {p} collects taxes")]
        if t is mv.Expedition:
            most, limit = r.yields[C_EXPED][row[C_EXPED]]
            state.stack.append(ExpeditionDraw(p, most, limit))
            return [Event("goa.expedition_action", p, f"seat {p} takes the Expedition action")]
        if t is mv.FoundColony:
            extra = False
            if move.card >= 0:  # colony_card_timing=before: the third card is announced first
                spend_card(state, p, move.card)
                extra = True
            cards = draw_cards(state, 2 + extra)
            state.discard.extend(cards)
            revealed = sum(r.cards[c].colonists for c in cards)
            board = r.yields[C_COLON][row[C_COLON]]
            state.stack.append(ColonyFounding(p, move.colony, revealed, board, extra))
            return [Event("goa.found_colony", p,
                          f"seat {p} names {COLONIES[move.colony].title()} and reveals {revealed} colonists",
                          {"colony": COLONIES[move.colony], "revealed": cards})]
        raise AssertionError(f"unexpected move {move!r}")


def card_usable(state: State, p: int, card: int) -> bool:
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


def tile_usable(state: State, p: int, t: int, used: list[int]) -> bool:
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


def _spices_on_lands(lands: list, owed: list[int] | None) -> list:
    """One PaySpice per (land, spice) present on the seat's lands (only spices still owed)."""
    moves = []
    for li, land in enumerate(lands):
        seen = 0
        for s in land[3]:
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

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.column, list(self.owed)]

    def decision(self, state: State) -> Decision:
        moves = _spices_on_lands(state.lands[self.seat], self.owed)
        return Decision(self.seat, "goa.pay_spice", moves, "Pay the next spice: choose the field")

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        remove_spice(state, p, move.land, move.spice)
        self.owed[move.spice] -= 1
        if any(self.owed):
            return []
        state.stack.pop()
        c = self.column
        advance_marker(state, p, c)
        return [Event("goa.progress", p, f"seat {p} moves down in {COLUMNS[c]}",
                      {"column": COLUMNS[c], "row": state.rows[p][c] + 1})]


@dataclass(slots=True)
class DutyPayment(SubDecision):
    """Duty: return 6 spice sacks of any kind; the tile then goes face down to its owner."""

    remaining: int
    tile: int
    NUMBER: ClassVar[int] = 2

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.remaining, self.tile]

    def decision(self, state: State) -> Decision:
        moves = _spices_on_lands(state.lands[self.seat], None)
        return Decision(self.seat, "goa.duty", moves, f"Duty: return {self.remaining} more spice sack(s)")

    def apply(self, state: State, move) -> list[Event]:
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

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.remaining, self.MODE, self.land, int(self.may_stop),
                int(self.ships_or_colonists), list(self.lands_chosen)]

    def decision(self, state: State) -> Decision | None:
        remaining = self.remaining
        if remaining <= 0:
            return None
        only = self.land
        chosen = self.lands_chosen
        full = self.MAX_LANDS and len(chosen) >= self.MAX_LANDS
        moves = []
        for li, land in enumerate(state.lands[self.seat]):
            if only >= 0 and li != only:
                continue
            if full and li not in chosen:
                continue
            free = 0
            masks = land[2]
            for i, s in enumerate(land[3]):
                if s < 0:
                    free |= masks[i]
            if free:
                for s in range(5):
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

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        t = type(move)
        if t is mv.Done:
            state.stack.pop()
            return []
        self.remaining -= 1
        if t is mv.TakeShip:
            state.ships[p] += 1
        elif t is mv.TakeColonist:
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
    MAX_LANDS: ClassVar[int] = 3


@dataclass(slots=True)
class SpiceSale(SubDecision):
    """Expedition card Sell: sacks sold one at a time for the card's price (2012: at most 4)."""

    remaining: int
    NUMBER: ClassVar[int] = 4

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.remaining]

    def decision(self, state: State) -> Decision | None:
        moves = []
        for li, land in enumerate(state.lands[self.seat]):
            seen = 0
            for s in land[3]:
                if s >= 0 and not seen & (1 << s):
                    seen |= 1 << s
                    moves.append(SELL_SPICE[li][s])
        if not moves or self.remaining <= 0:
            return None
        moves.append(DONE)
        return Decision(self.seat, "goa.sell_spice", moves, "Sell a spice sack for 3 ducats, or stop")

    def apply(self, state: State, move) -> list[Event]:
        if type(move) is mv.Done:
            state.stack.pop()
            return []
        p = self.seat
        remove_spice(state, p, move.land, move.spice)
        state.ducats[p] += state.rules.sell_price
        self.remaining -= 1
        return []


@dataclass(slots=True)
class ColonyFounding(SubDecision):
    """6. Found a colony, after naming it and revealing the 2 cards: recruit (completing with
    Colonist cards from the hand) or give up and take 1 colonist."""

    colony: int
    revealed: int  # colonists on the revealed cards
    board: int  # colonists the (possibly spied) development board gives
    third_card: bool = False  # the 'reveal 3 cards instead of 2' card was played
    NUMBER: ClassVar[int] = 5

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.colony, self.revealed, self.board, int(self.third_card)]

    def decision(self, state: State) -> Decision:
        r = state.rules
        p = self.seat
        need = r.colony_need[self.colony]
        moves = []
        free_card = not card_played(state)
        before = state.options.get("colony_card_timing") == "before"
        if free_card:
            for card in state.hands[p]:
                e = r.cards[card].effect
                if e == E_COLONY_EXTRA and not self.third_card and not before:
                    moves.append(reveal_more(card))
                elif e == E_COLONISTS:
                    moves.append(play_card(card))
        for t in state.kept[p]:
            if r.tiles[t].type == T_RED_COLONIST and t not in state.red_used[p]:
                moves.append(use_tile(t))
        if self.board + self.revealed + state.colonists[p] >= need:
            moves.append(RECRUIT)
        moves.append(DECLINE)
        return Decision(p, "goa.colony", moves,
                        f"{COLONIES[self.colony].title()} needs {need}: board {self.board} + revealed "
                        f"{self.revealed} + colonist cards {state.colonists[p]}")

    def apply(self, state: State, move) -> list[Event]:
        r = state.rules
        p = self.seat
        t = type(move)
        if t is mv.RevealMore:
            spend_card(state, p, move.card)
            cards = draw_cards(state, 1)
            state.discard.extend(cards)
            self.revealed += sum(r.cards[c].colonists for c in cards)
            self.third_card = True
            return [Event("goa.reveal_more", p, f"seat {p} reveals one more card", {"revealed": cards})]
        if t is mv.PlayCard:
            return play_bonus_card(state, p, move.card)
        if t is mv.UseTile:
            return use_tile_effect(state, p, move.tile)
        state.stack.pop()
        col = self.colony
        name = COLONIES[col].title()
        if t is mv.Decline:
            state.colonists[p] += 1
            return [Event("goa.colony_failed", p, f"seat {p} does not found {name}; takes 1 colonist")]
        state.colonists[p] -= max(0, r.colony_need[col] - self.revealed - self.board)
        founded = [Event("goa.colony_founded", p, f"seat {p} founds {name}")]
        supply = state.colony_supply[col]
        if len({r.colony_tiles[ct].masks for ct in supply}) > 1:
            state.stack.append(ColonyTileChoice(p, col))
            return founded
        place_colony(state, p, supply.pop())
        return founded


@dataclass(slots=True)
class ColonyTileChoice(SubDecision):
    """Found a colony (Quilon, Madras): 'choose the tile you want among the remaining ones'."""

    colony: int
    NUMBER: ClassVar[int] = 6

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.colony]

    def decision(self, state: State) -> Decision:
        moves = []
        seen = set()
        for ct in state.colony_supply[self.colony]:
            masks = state.rules.colony_tiles[ct].masks
            if masks not in seen:
                seen.add(masks)
                moves.append(choose_colony_tile(ct))
        return Decision(self.seat, "goa.colony_tile", moves, "Choose the colony tile")

    def apply(self, state: State, move) -> list[Event]:
        state.stack.pop()
        state.colony_supply[self.colony].remove(move.tile)
        place_colony(state, self.seat, move.tile)
        return []


@dataclass(slots=True)
class ExpeditionDraw(SubDecision):
    """5. Expedition: draw up to the number on the board without ending above the hand limit; one
    may first play one card and discard cards to make room, or draw fewer. The limit binds 'at any
    time when doing the Expedition action' (EN; 2004 FR 'après avoir pioché'): a seat holding more
    cards than it (from tiles or progress bonuses) is offered no draw, not even 0, until it has
    played or discarded down to the limit."""

    most: int
    limit: int
    NUMBER: ClassVar[int] = 7

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.most, self.limit]

    def decision(self, state: State) -> Decision:
        p = self.seat
        hand = state.hands[p]
        room = self.limit - len(hand)
        moves = [draw(k) for k in range(min(self.most, room), -1, -1)] if room >= 0 else []
        if not card_played(state):
            for card in hand:
                if card_usable(state, p, card):
                    moves.append(play_card(card))
        for card in hand:
            moves.append(discard_card(card))
        return Decision(p, "goa.expedition", moves,
                        f"Draw up to {self.most} (hand limit {self.limit}); discard or play first to make room")

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        t = type(move)
        if t is mv.Draw:
            state.stack.pop()
            gain_cards(state, p, move.count)
            return [Event("goa.expedition", p, f"seat {p} draws {move.count} Expedition card(s)",
                          {"count": move.count})]
        if t is mv.DiscardCard:
            return discard_expedition_card(state, p, move.card)
        return play_bonus_card(state, p, move.card)


def discard_expedition_card(state: State, p: int, card: int) -> list[Event]:
    state.hands[p].remove(card)
    state.discard.append(card)
    return [Event("goa.discard", p, f"seat {p} discards an Expedition card", {"card": card})]


@dataclass(slots=True)
class MarkerChoice(SubDecision):
    """A Progress marker moves down one row for free: the seat names the column."""

    NUMBER: ClassVar[int] = 8
    MODE: ClassVar[int] = -1

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.MODE]

    def columns(self, rows: list[int]) -> list[int]:
        return [c for c in range(5) if rows[c] < 4]

    def decision(self, state: State) -> Decision | None:
        cols = self.columns(state.rows[self.seat])
        if not cols:
            return None
        return Decision(self.seat, "goa.column", [CHOOSE_COLUMN[c] for c in cols],
                        "Choose the column whose marker moves down one row")

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        state.stack.pop()
        advance_marker(state, p, move.column)
        return [Event("goa.progress", p, f"seat {p} moves down in {COLUMNS[move.column]}",
                      {"column": COLUMNS[move.column]})]


@dataclass(slots=True)
class ViceKingChoice(MarkerChoice):
    """Vice-king: 'move your least advanced Progress marker'; with several, the seat chooses."""

    MODE: ClassVar[int] = 0

    def columns(self, rows: list[int]) -> list[int]:
        low = min(rows)
        return [c for c in range(5) if rows[c] == low and low < 4]


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

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.amount, int(self.spices_allowed)]

    def decision(self, state: State) -> Decision | None:
        if self.amount <= 0:
            return None
        moves = [CHOOSE_RESOURCE[0], CHOOSE_RESOURCE[1]]
        if self.spices_allowed:
            moves.append(CHOOSE_RESOURCE[2])
        return Decision(self.seat, "goa.resource", moves, f"Take {self.amount} ships, colonists or spices")

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        state.stack.pop()
        amount = self.amount
        if move.kind == 0:
            state.ships[p] += amount
        elif move.kind == 1:
            state.colonists[p] += amount
        else:
            state.stack.append(BonusSacks(p, amount))
        return [Event("goa.resource", p,
                      f"seat {p} takes {amount} {('ships', 'colonists', 'spices')[move.kind]}")]


@dataclass(slots=True)
class PlantationDiscard(SubDecision):
    """A 5th plantation: 'you must first discard 1 plantation, and any spice sacks still on it';
    a single plantation is kept face down (1 VP)."""

    tile: int  # the new plantation, placed once one is discarded
    NUMBER: ClassVar[int] = 10

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.tile]

    def decision(self, state: State) -> Decision:
        moves = [DISCARD_PLANTATION[li] for li, land in enumerate(state.lands[self.seat]) if land[0] == 0]
        return Decision(self.seat, "goa.discard_plantation", moves,
                        "Discard one of your 4 plantations for the new one")

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        state.stack.pop()
        land = state.lands[p].pop(move.land)
        tl = state.rules.tiles[land[1]]
        if tl.type == T_PLANT and tl.fields == 1:
            state.singles_down[p] += 1
        else:
            state.tile_discard.append(land[1])
        add_plantation(state, p, self.tile)
        return [Event("goa.plantation_discarded", p, f"seat {p} discards {tl.name}")]


@dataclass(slots=True)
class FavorChoice(SubDecision):
    """Favor: take one of the tiles returned to the box at set-up."""

    NUMBER: ClassVar[int] = 11

    def encode(self) -> list:
        return [self.NUMBER, self.seat]

    def decision(self, state: State) -> Decision | None:
        if not state.box:
            return None
        return Decision(self.seat, "goa.favor", [take_favor(t) for t in sorted(state.box)],
                        "Favor: take a tile from the box")

    def apply(self, state: State, move) -> list[Event]:
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

    def encode(self) -> list:
        return [self.NUMBER, self.seat, self.tile]

    def decision(self, state: State) -> Decision:
        moves = [SWAP_TAKE[GRID_CELLS[g]] for g in range(25) if state.grid[g] >= 0]
        return Decision(self.seat, "goa.swap", moves, "Swap: take a tile from the board")

    def apply(self, state: State, move) -> list[Event]:
        p = self.seat
        state.stack.pop()
        gi = grid_index(move.cell)
        taken = state.grid[gi]
        state.grid[gi] = self.tile
        gain_tile(state, p, taken)
        take_bonanza(state, p, gi)
        return [Event("goa.swap", p, f"seat {p} swaps for {state.rules.tiles[taken].name}", {"tile": taken})]


@dataclass(slots=True)
class HandLimitDiscard(SubDecision):
    """Option hand_limit=always: a seat above its hand limit discards down at once."""

    NUMBER: ClassVar[int] = 13

    def encode(self) -> list:
        return [self.NUMBER, self.seat]

    def decision(self, state: State) -> Decision | None:
        p = self.seat
        limit = hand_limit(state, p)
        if len(state.hands[p]) <= limit:
            return None
        return Decision(p, "goa.hand_limit", [discard_card(c) for c in state.hands[p]],
                        f"Discard down to your hand limit of {limit}")

    def apply(self, state: State, move) -> list[Event]:
        return discard_expedition_card(state, self.seat, move.card)


def spend_card(state: State, p: int, card: int) -> None:
    """An Expedition card played: to the discard pile; it is the action's one card."""
    state.hands[p].remove(card)
    state.discard.append(card)
    turn = turn_frame(state)
    if turn is not None:
        turn.card_played = True


def start_progress(state: State, p: int, c: int, card: int) -> list[Event]:
    """1. Progress: one row in one column, paying the spices shown (field by field) and one ship
    per spice; a modifier card waives the spices or the ships."""
    r = state.rules
    row = state.rows[p][c]
    effect = r.cards[card].effect if card >= 0 else -1
    if card >= 0:
        spend_card(state, p, card)
    if effect != E_PROG_SPICES:
        state.ships[p] -= row + 1
    if effect == E_PROG_SHIPS:
        advance_marker(state, p, c)
        return [Event("goa.progress", p, f"seat {p} moves down in {COLUMNS[c]} paying ships only",
                      {"column": COLUMNS[c]})]
    state.stack.append(ProgressPayment(p, c, list(r.costs[c][row])))
    return [Event("goa.progress_started", p, f"seat {p} progresses in {COLUMNS[c]}", {"column": COLUMNS[c]})]


def play_bonus_card(state: State, p: int, card: int) -> list[Event]:
    """A bonus Expedition card: 2 ships, 2 colonists, 5 ducats, 2 spices onto empty fields, sell
    spices at 3 ducats (2012: at most 4), or pay its price to move one marker one row."""
    r = state.rules
    c = r.cards[card]
    spend_card(state, p, card)
    e = c.effect
    if e == E_SHIPS:
        state.ships[p] += r.card_ships
    elif e == E_COLONISTS:
        state.colonists[p] += r.card_colonists
    elif e == E_DUCATS:
        state.ducats[p] += r.card_ducats
    elif e == E_SPICES:
        state.stack.append(BonusSacks(p, r.card_spices))
    elif e == E_SELL:
        state.stack.append(SpiceSale(p, r.sell_max if r.sell_max > 0 else 99))
    elif e == E_PROG_DUCATS:
        state.ducats[p] -= c.price
        state.stack.append(PaidProgressChoice(p))
    return [Event("goa.card_played", p, f"seat {p} plays an Expedition card ({CARD_EFFECTS[e]})",
                  {"card": card})]


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
        if k == T_RED_SHIP:
            state.ships[p] += tl.n
        elif k == T_RED_COLONIST:
            state.colonists[p] += tl.n
        elif k == T_RED_DUCATS:
            state.ducats[p] += tl.n
        elif k == T_RED_EXPED:
            gain_cards(state, p, tl.n)
        elif k == T_RED_SPICE:
            state.stack.append(BonusSacks(p, tl.n))
        return used
    if k == T_DUTY:  # stays in kept until the sacks are paid, then goes face down
        state.stack.append(DutyPayment(p, tl.n, t))
        return used
    state.kept[p].remove(t)
    if k == T_EXTRA_HARVEST:
        state.tile_discard.append(t)
        state.stack.append(ExtraHarvest(p, 99))
    elif k == T_RESUPPLY:
        state.tile_discard.append(t)
        cards = draw_cards(state, tl.n)
        state.discard.extend(cards)
        total = sum(r.cards[c].colonists for c in cards)
        state.stack.append(ResourceChoice(p, total, True))
        return [Event("goa.tile_used", p, f"seat {p} uses Resupply: {total}", {"tile": t, "revealed": cards})]
    elif k == T_VICE_KING:
        state.tile_discard.append(t)
        state.stack.append(ViceKingChoice(p))
    elif k == T_SWAP:
        state.stack.append(SwapChoice(p, t))
    return used


def place_colony(state: State, p: int, ct: int) -> None:
    """The colony tile goes on its space and is filled with spices of choice among its own."""
    spec = state.rules.colony_tiles[ct]
    state.colonies[p][spec.colony] = ct
    state.lands[p].append([1, ct, list(spec.masks), [-1] * len(spec.masks)])
    state.stack.append(FillLand(p, len(spec.masks), land=len(state.lands[p]) - 1, may_stop=False))


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
        events = st[-1].apply(state, move)
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
            state.stack.append(ActionTurn(p, extra_action=True))
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
