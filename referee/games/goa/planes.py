"""Goa's compact observation for learners (``referee.core.planes``; issue 36, item 1): named
feature planes written straight from the engine's state, both editions with one layout.

What enters is what ``view.py`` shows the seat, no more: its own ducats and Expedition hand;
of the other seats only what the table shows (ships, colonists, Extra action cards, hand sizes,
development rows, lands, tiles kept, their Mission tiles face down); never the Expedition deck's
order, the other hands, the others' ducats before the final scoring, the B tiles not yet laid
out, the face-down Bonanza tiles, the 2004 edition's unseen box, or the RNG. A sub-decision
enters through what its ``pending_view`` shows (``_pending``), nothing else of it.

Layout: seats are *relative* to the observer: slot ``k`` of a per-seat plane is the seat ``k``
places after it clockwise (slot 0: the observer itself), so a policy reads "me" in one place
at every seat; slots past the seat count stay 0. Every width comes from the catalog's constants
(4 seats, 5x5 grid, 5 spices, 5 columns, 22 tile types, 30 Expedition cards, 18 Colony tiles,
12 lands a move may name), so the vector has one width for every seat count, option and
edition; the edition itself is a plane. Counts of things a seat holds are divided by a
normaliser (``_SCALE``): not a rule, a typical high value, so most values land in [0, 1].

Speed: only non-zero slots are written (the caller zeroes ``out``), and what a tile, card or
colony tile means is looked up in tables built once per ``Rules``.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, MutableSequence
from typing import Any, cast

from referee.core.planes import ObservationPlanes, PlaneLayout

from .board import boxed_tiles_seen, grid_index
from .cards import ExpeditionDraw
from .catalog import (
    BOARD_CELLS,
    CARD_EFFECTS,
    COLONY_TILES,
    EXPEDITION_CARDS,
    FIRST_BONUSES_PER_COLUMN,
    GRID_SQUARES,
    LAST_ROW,
    MAX_SEATS,
    N_COLONIES,
    N_COLUMNS,
    N_SPICES,
    RED_TILES,
    TILE_MISSION,
    TILE_TYPES,
    Rules,
)
from .colonies import ColonyFounding, ColonyTileChoice
from .moves import MAX_LANDS
from .spices import UNLIMITED, ProgressPayment, SpicePlacement, SpiceSale
from .state import ACTIONS, AUCTION, EXTRA, OVER, PLACE, QUICK, State, TurnInProgress
from .tiles import DutyPayment, ResourceChoice

#: Every kind of decision Goa asks (``Decision.kind``), in a fixed order: the decision-kind
#: plane's slots. tests/research/test_planes_goa.py checks random play meets no other.
DECISION_KINDS = (
    "goa.quick_start", "goa.place_flag", "goa.place_token", "goa.bid", "goa.auctioneer",
    "goa.action", "goa.after_action", "goa.extra_action", "goa.pay_spice", "goa.place_spice",
    "goa.sell_spice", "goa.duty", "goa.expedition", "goa.hand_limit", "goa.colony",
    "goa.colony_tile", "goa.column", "goa.resource", "goa.discard_plantation", "goa.favor",
    "goa.swap",
)
_KIND_SLOT = {k: i for i, k in enumerate(DECISION_KINDS)}
PHASES = (QUICK, PLACE, AUCTION, ACTIONS, EXTRA, OVER)
_RED_TYPES = tuple(sorted(RED_TILES))
N_TILE_TYPES = len(TILE_TYPES)
N_COLONY_TILES = sum(COLONY_TILES.values())
N_TOKENS = MAX_SEATS + 1  # "one more Auction token than there are players" (catalog.MAX_SEATS)
#: land features: present, colony, then per spice the sacks on it and its empty fields that
#: take that spice
_LAND_WIDTH = 2 + 2 * N_SPICES
#: per field mask (a bit per spice it takes), the land-feature slots an empty field counts in
_EMPTY_TAKES = tuple(tuple(2 + N_SPICES + sp for sp in range(N_SPICES) if mask >> sp & 1)
                     for mask in range(1 << N_SPICES))

#: per board cell, its grid square (-1: an edge space)
_GRID_OF_CELL = tuple(grid_index(cell) for cell in range(BOARD_CELLS))

#: Normalisers (not rules: typical high values, so most values land in [0, 1]).
_SCALE = {"ducats": 30.0, "ships": 10.0, "colonists": 10.0, "cards": 10.0, "vp": 10.0,
          "total": 50.0, "sacks": 10.0}
_DUCATS = 1 / _SCALE["ducats"]
_SHIPS = 1 / _SCALE["ships"]
_COLONISTS = 1 / _SCALE["colonists"]
_CARDS = 1 / _SCALE["cards"]
_VP = 1 / _SCALE["vp"]
_TOTAL = 1 / _SCALE["total"]
_SACKS = 1 / _SCALE["sacks"]


class _Tables:
    """What each tile, card and colony tile of one ``Rules`` means, in slot terms."""

    __slots__ = ("b_tiles", "card_colonists", "card_effect", "card_symbol", "extra_cards",
                 "mission", "most_fields", "red_slot", "rounds", "rules", "tile_fields",
                 "tile_n", "tile_spice", "tile_type", "tile_vp")

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        tiles = rules.tiles
        self.tile_type = [t.type for t in tiles]
        self.tile_spice = [t.spice for t in tiles]
        self.tile_fields = [t.fields for t in tiles]
        self.tile_n = [t.n for t in tiles]
        self.tile_vp = [t.vp for t in tiles]
        self.mission = [t.type == TILE_MISSION for t in tiles]
        self.red_slot = [_RED_TYPES.index(t.type) if t.type in RED_TILES else -1 for t in tiles]
        self.card_effect = [c.effect for c in rules.cards]
        self.card_symbol = [c.symbol for c in rules.cards]
        self.card_colonists = [c.colonists for c in rules.cards]
        self.b_tiles = max(1, sum(1 for t in tiles if t.phase == "B"))
        self.most_fields = max(1, *self.tile_fields)
        self.rounds = 2 * rules.rounds_per_phase
        self.extra_cards = max(1, rules.extra_cards)


_TABLES: dict[int, _Tables] = {}
_RULES_LIMIT = 16  # a sheet per match: keep a few rules' tables (as view.py's caches do)
#: the grids' tile-plane blocks kept before the cache is emptied (3 kB each; a match lays out
#: a few dozen grids)
_GRID_LIMIT = 1_024


def _tables(rules: Rules) -> _Tables:
    t = _TABLES.get(id(rules))
    if t is None or t.rules is not rules:
        if len(_TABLES) >= _RULES_LIMIT:
            _TABLES.clear()
        t = _TABLES[id(rules)] = _Tables(rules)
    return t


#: a tile's writes on the grid planes: (slot on square 0, stride per square, value) each
_SquareWrites = tuple[tuple[int, int, float], ...]


class GoaPlanes(ObservationPlanes):
    """Goa's planes (both editions). ``min_seats`` and ``symbols`` (the most Expedition symbols
    the game's own sheets name) fix the widths the catalog does not; a custom sheet with more
    symbols counts its extra ones in the last symbol slot."""

    def __init__(self, min_seats: int, symbols: int) -> None:
        self.min_seats = min_seats
        self.symbols = symbols
        L = self.planes = PlaneLayout()
        S = MAX_SEATS
        # ---- the match
        self.edition = L.add("edition", 1, "1: the 2004 edition, 0: the 2012 edition")
        self.seat_count = L.add("seat_count", S - min_seats + 1,
                                f"one-hot: {min_seats}..{S} seats")
        self.seat = L.add("my_seat", S, "one-hot absolute seat of the observer (the moves name "
                          "seats absolutely: Espionage)")
        self.phase = L.add("phase", len(PHASES),
                           "one-hot: quick start, place tokens, auctions, actions, extra "
                           "actions, game over")
        self.round = L.add("round", 1, "round / 8 (0 before round 1)")
        self.tile_phase_b = L.add("tile_phase_b", 1, "1: phase B's tiles (rounds 5-8)")
        self.first = L.add("first_player", S, "one-hot relative seat of the flag holder")
        self.to_move = L.add("to_move", S, "one-hot relative seat to decide (none: game over)")
        self.kind = L.add("decision_kind", len(DECISION_KINDS),
                          "one-hot: " + ", ".join(k[4:] for k in DECISION_KINDS))
        # ---- the action turn under way and the pending sub-decision
        self.turn = L.add("turn", 3,
                          "the action turn under way: card played, action done, from an Extra "
                          "action card (0/1 each)")
        self.spied = L.add("turn_espionage", S, "one-hot relative seat Espionage reads")
        self.p_remaining = L.add("pending_remaining", 2,
                                 "sacks/ships to place, pay, sell or take / 10; 1 in slot 2: no "
                                 "limit")
        self.p_column = L.add("pending_column", N_COLUMNS, "one-hot column being paid for")
        self.p_owed = L.add("pending_spices_owed", N_SPICES, "spices still owed, per spice")
        self.p_colony = L.add("pending_colony", N_COLONIES, "one-hot colony being founded")
        self.p_colonists = L.add("pending_colonists", 3,
                                 "colonists needed, from the board, revealed / 10")
        self.p_draw = L.add("pending_draw", 2, "Expedition: cards to draw at most, hand limit / 10")
        self.p_lands = L.add("pending_lands_chosen", MAX_LANDS,
                             "Extra harvest: the lands already filled (0/1 per land index)")
        # ---- placement and auctions
        self.flag_cell = L.add("flag_cell", BOARD_CELLS,
                               "one-hot board cell of the flag (7x7 with the edge, row-major)")
        self.lot = L.add("auction_lot", 2,
                         "the lot under auction: its token number / 5; 1 if it is the flag")
        self.lot_square = L.add("auction_lot_square", GRID_SQUARES,
                                "one-hot grid square of the lot's tile")
        self.auctioneer = L.add("auction_auctioneer", S, "one-hot relative seat")
        self.high = L.add("auction_high_bid", 1, "high bid / 30 ducats")
        self.high_bidder = L.add("auction_high_bidder", S, "one-hot relative seat")
        self.bids = L.add("auction_bids", S, "this lot's bid per relative seat / 30 ducats")
        self.passes = L.add("auction_passed", S, "1: the relative seat passed on this lot")
        # ---- the play area
        G = GRID_SQUARES
        self.g_type = L.add("grid_tile_type", G * N_TILE_TYPES,
                            "per square (row-major), one-hot tile type (none: empty)")
        self.g_spice = L.add("grid_tile_spice", G * N_SPICES,
                             "per square, one-hot plantation spice")
        self.g_fields = L.add("grid_tile_fields", G,
                              "per square, the tile's fields / the most a tile has (3)")
        self.g_n = L.add("grid_tile_amount", G, "per square, the tile's amount (n) / 10")
        self.g_vp = L.add("grid_tile_vp", G, "per square, the tile's VP / 10")
        self.g_token = L.add("grid_token_seat", G * S, "per square, one-hot relative seat of "
                             "its auction token")
        self.g_number = L.add("grid_token_number", G, "per square, its token's number / 5")
        self.g_bonanza = L.add("grid_bonanza", G, "1: a face-down Bonanza tile under it")
        # ---- supplies
        self.box = L.add("box_tile_types", N_TILE_TYPES,
                         "tiles returned to the box per type (2012: revealed; 2004: unseen, 0)")
        self.counts = L.add("supply_counts", 4,
                            "box tiles / 10, B tiles left / B tiles, Expedition deck / 30, "
                            "Extra action cards in supply / their number")
        self.discard = L.add("expedition_discard", EXPEDITION_CARDS,
                             "1: the card (sheet id) lies face up on the discard pile")
        self.colony_supply = L.add("colony_supply", N_COLONY_TILES,
                                   "1: the Colony tile (sheet id) is still available")
        self.bonus = L.add("progress_bonus", N_COLUMNS * FIRST_BONUSES_PER_COLUMN * S,
                           "per column and bonus row (4, 5), one-hot relative seat first there")
        # ---- the observer's own hidden things
        self.hand = L.add("my_hand", EXPEDITION_CARDS, "1: the card (sheet id) is in my hand")
        self.hand_effect = L.add("my_hand_effects", len(CARD_EFFECTS),
                                 "my hand's cards per effect")
        self.hand_symbol = L.add("my_hand_symbols", symbols, "my hand's cards per symbol")
        self.hand_colonists = L.add("my_hand_colonists", 1, "colonists on my hand's cards / 10")
        # ---- every seat's holdings, per relative seat
        self.ducats = L.add("ducats", S, "ducats / 30: mine; the others' once the game is over")
        self.ships = L.add("ships", S, "ships / 10")
        self.colonists = L.add("colonists", S, "colonists / 10")
        self.extra = L.add("extra_action_cards", S, "Extra action cards held")
        self.hand_size = L.add("hand_size", S, "Expedition cards in hand / 10")
        self.rows = L.add("progress_rows", S * N_COLUMNS,
                          "per seat, per column (ships, harvest, taxes, expedition, "
                          "colonists): its marker's row / 4 (0: top row)")
        self.lands = L.add("lands", S * MAX_LANDS * _LAND_WIDTH,
                           "per seat, per land index: present, colony, then per spice its "
                           "sacks and its empty fields taking it")
        self.colonies = L.add("colonies", S * N_COLONIES, "per seat, 1: colony founded")
        self.kept = L.add("tiles_kept", S * N_TILE_TYPES, "per seat, tiles kept per type")
        self.red = L.add("red_tiles_used", S * len(_RED_TYPES),
                         "per seat, red tiles used this round per red type")
        self.missions = L.add("mission_vp", S,
                              "VP of its Mission tiles / 10: mine; the others' at the end")
        self.singles = L.add("single_plantations", S, "single plantations kept face down")
        self.duty = L.add("duty_vp", S, "VP of its fulfilled Duty tiles / 10")
        self.passed = L.add("passed_extra_actions", S, "1: passed in the Extra actions")
        # ---- the end
        self.totals = L.add("final_total", S, "final score / 50 (game over)")
        self.winners = L.add("winner", S, "1: a winner (game over)")
        self._by_base = _pending_writers(self)
        self._writers: dict[type, _Writer | None] = {}
        #: per rules' tables, ``_tile_writes``
        self._square_writes: dict[int, tuple[_Tables, list[_SquareWrites]]] = {}
        #: per (tables, grid): the tile planes' float32 block (``_grid``)
        self._grid_blocks: dict[tuple[_Tables, tuple[int, ...]], array] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its two widths (an environment holding it pickles mid-episode; its
        writers are closures and its caches are rebuilt on use)."""
        return (GoaPlanes, (self.min_seats, self.symbols))

    def writer_for(self, cls: type) -> _Writer | None:
        """The writer of a sub-decision class's pending planes (None: it shows nothing of its
        own), found once per class along its bases."""
        write = next((w for base, w in self._by_base if issubclass(cls, base)), None)
        self._writers[cls] = write
        return write

    def encode(self, state: State, seat: int, out: MutableSequence[float]) -> None:
        out = _fast(out)
        n = state.n
        t = _tables(state.rules)
        over = state.phase == OVER
        rel = [(s - seat) % n for s in range(n)]  # seat -> slot
        d = None if over else state.pending
        # ---- the match
        if state.edition == "2004":
            out[self.edition] = 1.0
        out[self.seat_count + n - self.min_seats] = 1.0
        out[self.seat + seat] = 1.0
        out[self.phase + state.phase - QUICK] = 1.0
        out[self.round] = state.round / t.rounds
        if state.round > t.rules.rounds_per_phase:
            out[self.tile_phase_b] = 1.0
        out[self.first + rel[state.first]] = 1.0
        stack = state.stack
        if d is not None:
            out[self.to_move + rel[d.seat]] = 1.0
            k = _KIND_SLOT.get(d.kind)
            if k is not None:
                out[self.kind + k] = 1.0
            if stack:
                bottom = stack[0]
                if isinstance(bottom, TurnInProgress):
                    if bottom.card_played:
                        out[self.turn] = 1.0
                    if bottom.action_done:
                        out[self.turn + 1] = 1.0
                    if bottom.extra_action:
                        out[self.turn + 2] = 1.0
                    if bottom.spied >= 0:
                        out[self.spied + rel[bottom.spied]] = 1.0
                top = stack[-1]
                cls = type(top)
                write = self._writers[cls] if cls in self._writers else self.writer_for(cls)
                if write is not None:
                    write(state, top, out)
        # ---- placement and auctions
        if state.flag_cell >= 0:
            out[self.flag_cell + state.flag_cell] = 1.0
        if state.phase == AUCTION and not stack and state.lot < len(state.tokens):
            self._auction(state, rel, out)
        # ---- the play area
        self._grid(state, t, rel, out, getattr(out, "format", None) == "f")
        # ---- supplies
        if state.box:
            if boxed_tiles_seen(state):
                at = self.box
                for tile in state.box:
                    out[at + t.tile_type[tile]] += 1.0
            out[self.counts] = len(state.box) * 0.1
        b_left = len(state.stacks.get("B", ()))
        if b_left:
            out[self.counts + 1] = b_left / t.b_tiles
        out[self.counts + 2] = len(state.deck) / EXPEDITION_CARDS
        out[self.counts + 3] = state.extra_supply / t.extra_cards
        at = self.discard
        for c in state.discard:
            out[at + c] = 1.0
        at = self.colony_supply
        for sup in state.colony_supply:
            for ct in sup:
                out[at + ct] = 1.0
        at = self.bonus
        for i, s in enumerate(state.first_bonus):
            if s >= 0:
                out[at + i * MAX_SEATS + rel[s]] = 1.0
        # ---- my hand
        hand = state.hands[seat]
        if hand:
            effect, symbol, h = self.hand_effect, self.hand_symbol, self.hand
            colonists = 0
            last = self.symbols - 1
            for c in hand:
                out[h + c] = 1.0
                out[effect + t.card_effect[c]] += 1.0
                sym = t.card_symbol[c]
                out[symbol + (sym if sym < last else last)] += 1.0
                colonists += t.card_colonists[c]
            out[self.hand_colonists] = colonists * _COLONISTS
        # ---- holdings
        for s in range(n):
            self._seat(state, t, s, rel[s], s == seat or over, out)
        if over:
            final = state.final
            best = max((f["total"], f["ducats"]) for f in final)
            for s in range(n):
                f = final[s]
                k = rel[s]
                out[self.totals + k] = f["total"] * _TOTAL
                if (f["total"], f["ducats"]) == best:
                    out[self.winners + k] = 1.0

    def _auction(self, state: State, rel: list[int], out: MutableSequence[float]) -> None:
        """What ``auction.Auction.pending_view`` shows: the lot, its tile's square, the
        auctioneer, the high bid and bidder, the bids so far (in order from the auctioneer's
        left)."""
        k = state.lot
        n = state.n
        a = state.token_seats[k]
        out[self.lot] = (k + 1) / N_TOKENS
        if k == 0:
            out[self.lot + 1] = 1.0
        elif state.tokens[k] >= 0:
            g = _GRID_OF_CELL[state.tokens[k]]
            if g >= 0 and state.grid[g] >= 0:
                out[self.lot_square + g] = 1.0
        out[self.auctioneer + rel[a]] = 1.0
        if state.high:
            out[self.high] = state.high * _DUCATS
        if state.high_bidder >= 0:
            out[self.high_bidder + rel[state.high_bidder]] = 1.0
        for i, amount in enumerate(state.bids):
            slot = rel[(a + 1 + i) % n]
            if amount < 0:
                out[self.passes + slot] = 1.0
            else:
                out[self.bids + slot] = amount * _DUCATS

    def _grid(self, state: State, t: _Tables, rel: list[int], out: MutableSequence[float],
              f32: bool) -> None:
        """What ``view._grid`` shows: each square's tile, auction token and face-down
        Bonanza tile (``f32``: ``out`` is a float32 memoryview, which takes a cached block)."""
        grid = state.grid
        if f32:  # the tile planes' block for this grid, made once (a float32 memoryview only)
            key = (t, tuple(grid))
            block = self._grid_blocks.get(key)
            if block is None:
                block = self._grid_block(t, grid)
                if len(self._grid_blocks) >= _GRID_LIMIT:
                    self._grid_blocks.clear()
                self._grid_blocks[key] = block
            out[self.g_type:self.g_token] = block
        else:
            self._tile_planes(t, grid, out)
        if state.tokens:
            # as view._grid: the last token on a cell is the one shown
            token_at = {cell: k for k, cell in enumerate(state.tokens) if cell >= 0}
            seats = state.token_seats
            for cell, k in token_at.items():
                g = _GRID_OF_CELL[cell]
                if g < 0:
                    continue
                out[self.g_token + g * MAX_SEATS + rel[seats[k]]] = 1.0
                out[self.g_number + g] = (k + 1) / N_TOKENS
        if max(state.bonanza) >= 0:  # the Bonanza variant's face-down tiles (view._grid)
            at = self.g_bonanza
            for g, b in enumerate(state.bonanza):
                if b >= 0:
                    out[at + g] = 1.0

    def _tile_planes(self, t: _Tables, grid: list[int], out: MutableSequence[float]) -> None:
        """Each square's tile into the tile planes (``grid_tile_type`` to ``grid_tile_vp``)."""
        entry = self._square_writes.get(id(t))
        if entry is None or entry[0] is not t:
            if len(self._square_writes) >= _RULES_LIMIT:
                self._square_writes.clear()
            entry = self._square_writes[id(t)] = (t, self._tile_writes(t))
        writes = entry[1]
        for g, tile in enumerate(grid):
            if tile >= 0:
                for base, stride, value in writes[tile]:
                    out[base + g * stride] = value

    def _grid_block(self, t: _Tables, grid: list[int]) -> array:
        """The tile planes of ``grid`` as one float32 block (``_tile_planes`` into zeros)."""
        buf = [0.0] * self.planes.width
        self._tile_planes(t, grid, buf)
        return array("f", buf[self.g_type:self.g_token])

    def _tile_writes(self, t: _Tables) -> list[_SquareWrites]:
        """Per tile, its non-zero slots on square 0 of the grid planes and each plane's stride
        per square: (first slot, stride, value)."""
        out = []
        for tile in range(len(t.tile_type)):
            w = [(self.g_type + t.tile_type[tile], N_TILE_TYPES, 1.0)]
            if t.tile_spice[tile] >= 0:
                w.append((self.g_spice + t.tile_spice[tile], N_SPICES, 1.0))
            if t.tile_fields[tile]:
                w.append((self.g_fields, 1, t.tile_fields[tile] / t.most_fields))
            if t.tile_n[tile]:
                w.append((self.g_n, 1, t.tile_n[tile] * 0.1))
            if t.tile_vp[tile]:
                w.append((self.g_vp, 1, t.tile_vp[tile] * _VP))
            out.append(tuple(w))
        return out

    def _seat(self, state: State, t: _Tables, s: int, k: int, visible: bool,
              out: MutableSequence[float]) -> None:
        """Seat ``s``'s holdings in slot ``k``: what ``view._player`` shows, its ducats and
        Mission VP only where ``visible`` (the observer itself, or the game is over)."""
        if visible and state.ducats[s]:
            out[self.ducats + k] = state.ducats[s] * _DUCATS
        if state.ships[s]:
            out[self.ships + k] = state.ships[s] * _SHIPS
        if state.colonists[s]:
            out[self.colonists + k] = state.colonists[s] * _COLONISTS
        if state.extra_cards[s]:
            out[self.extra + k] = float(state.extra_cards[s])
        if state.hands[s]:
            out[self.hand_size + k] = len(state.hands[s]) * _CARDS
        at = self.rows + k * N_COLUMNS
        for c, r in enumerate(state.rows[s]):
            if r:
                out[at + c] = r / LAST_ROW
        at = self.lands + k * MAX_LANDS * _LAND_WIDTH
        stop = at + MAX_LANDS * _LAND_WIDTH  # the moves name no land past MAX_LANDS either
        for land in state.lands[s]:
            if at == stop:
                break
            out[at] = 1.0
            if land.colony:
                out[at + 1] = 1.0
            for mask, spice in zip(land.takes, land.spices):
                if spice >= 0:
                    out[at + 2 + spice] += 1.0
                else:
                    for sp in _EMPTY_TAKES[mask]:
                        out[at + sp] += 1.0
            at += _LAND_WIDTH
        at = self.colonies + k * N_COLONIES
        for c, ct in enumerate(state.colonies[s]):
            if ct >= 0:
                out[at + c] = 1.0
        kept = state.kept[s]
        if kept:
            at = self.kept + k * N_TILE_TYPES
            mission_vp = 0
            for tile in kept:
                out[at + t.tile_type[tile]] += 1.0
                if t.mission[tile]:
                    mission_vp += t.tile_vp[tile]
            if visible and mission_vp:
                out[self.missions + k] = mission_vp * _VP
        red = state.red_used[s]
        if red:
            at = self.red + k * len(_RED_TYPES)
            for tile in red:
                out[at + t.red_slot[tile]] += 1.0
        if state.singles_down[s]:
            out[self.singles + k] = float(state.singles_down[s])
        if state.duty_face_down[s]:
            out[self.duty + k] = sum(t.tile_vp[x] for x in state.duty_face_down[s]) * _VP
        if state.phase == EXTRA and state.extra_passed[s]:
            out[self.passed + k] = 1.0


def _fast(out: MutableSequence[float]) -> MutableSequence[float]:
    """``out`` itself, or a memoryview of its buffer where it has a flat one (a numpy array):
    a memoryview's item writes cost about half a numpy array's."""
    try:
        view = memoryview(out)  # type: ignore[arg-type]  # a list has no buffer: TypeError
    except TypeError:
        return out
    return cast(MutableSequence[float], view) if view.ndim == 1 else out


_Writer = Callable[[State, Any, MutableSequence[float]], None]


def _pending_writers(p: GoaPlanes) -> list[tuple[type, _Writer]]:
    """Per sub-decision class (and its subclasses), what its ``pending_view`` shows, written
    into the pending planes; a class not named here shows nothing beyond its kind and seat."""

    def remaining(r: int, out: MutableSequence[float]) -> None:
        if r >= UNLIMITED:
            out[p.p_remaining + 1] = 1.0
        elif r:
            out[p.p_remaining] = r * _SACKS

    def progress(state: State, sub: ProgressPayment, out: MutableSequence[float]) -> None:
        out[p.p_column + sub.column] = 1.0
        for s, owed in enumerate(sub.owed):
            if owed:
                out[p.p_owed + s] = float(owed)
        remaining(sum(sub.owed), out)

    def placement(state: State, sub: SpicePlacement, out: MutableSequence[float]) -> None:
        remaining(sub.remaining, out)
        for land in sub.lands_chosen:
            out[p.p_lands + land] = 1.0

    def sacks(state: State, sub: SpiceSale | DutyPayment, out: MutableSequence[float]) -> None:
        remaining(sub.remaining, out)

    def resource(state: State, sub: ResourceChoice, out: MutableSequence[float]) -> None:
        remaining(sub.amount, out)

    def expedition(state: State, sub: ExpeditionDraw, out: MutableSequence[float]) -> None:
        out[p.p_draw] = sub.most * _CARDS
        out[p.p_draw + 1] = sub.limit * _CARDS

    def founding(state: State, sub: ColonyFounding, out: MutableSequence[float]) -> None:
        out[p.p_colony + sub.colony] = 1.0
        out[p.p_colonists] = state.rules.colony_need[sub.colony] * _COLONISTS
        out[p.p_colonists + 1] = sub.board * _COLONISTS
        out[p.p_colonists + 2] = sub.revealed * _COLONISTS

    def colony_tile(state: State, sub: ColonyTileChoice, out: MutableSequence[float]) -> None:
        out[p.p_colony + sub.colony] = 1.0

    return [
        (ProgressPayment, progress), (SpicePlacement, placement), (SpiceSale, sacks),
        (DutyPayment, sacks), (ResourceChoice, resource), (ExpeditionDraw, expedition),
        (ColonyFounding, founding), (ColonyTileChoice, colony_tile),
    ]
