"""Santa Maria's compact observation planes (issue 36, item 1; the interface is
``referee/core/planes.py``).

What enters is what ``view.py`` shows the seat, no more: every colony, coin, resource, die,
track, monk and retreat marker, the display, the ship slots, the monk tiles, the draft's lots, the
piles' sizes, the pending step's details (the tile to place, the exchange's building, the die's
line, the ship's dock); the faces of the seat's own ships (everyone's once the game is over, as the final
scoring shows them). Never the piles' order, the Scholars and Bishops left in the box, the
other seats' ship faces or the RNG (tests/research/test_planes_santa_maria.py redraws those and
checks the vector stays).

Seats are laid out relative to the observer: seat slot ``k`` is the seat ``k`` places after it
in seat order (slot 0 is the observer), so a learner's own holdings are always in the same place;
slots past the seat count stay 0. Every width comes from the game's sheet (read once, from the
default sheet) or from the shared vocabulary of ``sheet.py``, so every seat count and option
(standard or advanced set-up, random or picked boards, shared blue dice) has the one width.

Speed (12, 15, 19 and 23 us a call at 1 to 4 seats on random positions, against about 100 us
for the View's bytes and their generic encoding): the parts that change only now and then, a
colony's cells and the board's tiles, are kept as ready ``array('f')`` blocks keyed by what they
show and copied into ``out`` in one slice each; the rest is written slot by slot, only where it is
not 0 (``out`` arrives zeroed). No protobuf message is built."""
from __future__ import annotations

from array import array
from collections.abc import Callable, MutableSequence
from typing import Any

from referee.core.planes import ObservationPlanes, PlaneLayout

from .action_tasks import DiePlacement, TilePlacement
from .catalog import (
    EFFECT_ID,
    HALL_SLOT,
    N_CELLS,
    N_RESOURCES,
    RES_NAMES,
    SCHOLAR_BIT,
    Rules,
    tile_cells,
)
from .effect_tasks import AstronomyShift, ExchangeOffer
from .moves import BLUE, ROW, WHITE
from .sheet import BISHOPS, DOCK_BONUSES, GRID_SIDE, N_DOCKS, SCHOLARS, TERRAINS
from .state import DRAFT, OVER, YEAR, State, Task
from .tracks import conquistador_order

#: the decision a turn asks for when no sub-decision is pending (turn.py)
TURN_KIND = "santa_maria.turn"
#: the scales of the open-ended counts: coins and points in tens (a learner's input stays near
#: [0, 1] over a game); a normalisation, not a component value
_TENS = 0.1
#: cached blocks kept per kind of block before it is emptied: a colony's block with its key is
#: about 2.5 kB, a board's 1.5 kB, so the caches stay under 5 MB; an environment's episodes
#: meet far fewer colonies and boards between two tiles laid
_CACHE_LIMIT = 1_024
#: the phase plane's slot per phase
_PHASE_SLOT = {DRAFT: 0, YEAR: 1, OVER: 2}
#: (slot, bit) of each Scholar in the seat's Scholar planes and its ``scholars`` bit set
_SCHOLAR_SLOTS = tuple((i, SCHOLAR_BIT[name]) for i, name in enumerate(SCHOLARS))


def _decision_kinds() -> tuple[str, ...]:
    """Every Decision.kind the game asks: the turn's, then each task's that asks a choice, by
    name (an order that does not hang on the order the task modules are imported in)."""
    kinds: set[str] = set()
    todo: list[type] = list(Task.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        kind = getattr(cls, "kind", "")
        if kind:
            kinds.add(kind)
    kinds.discard(TURN_KIND)
    return (TURN_KIND, *sorted(kinds))


#: a cell kind's features, in this order, as the colony planes and the display planes show them
_CELL_FEATURES = (
    *((t, f"1 where the cell's terrain is {t}") for t in TERRAINS),
    ("building", "1 where the cell is a building (any terrain but road)"),
    ("colonists", "colonists printed on the cell (a small integer)"),
    ("end_points", "purple-framed points scored at the end of the game (a small integer)"),
    *((f"effect_{name}", f"how many of the building's effects are '{name}'")
      for name in EFFECT_ID),
)


class SantaMariaPlanes(ObservationPlanes):
    """Santa Maria's planes (see the module docstring); built once by ``observation_planes()``
    for the sheet's ``rules``, and encoding states of any sheet with the same shape."""

    def __init__(self, rules: Rules, max_seats: int) -> None:
        self.rules = rules
        self.seats = max_seats
        self.kinds = _decision_kinds()
        self._kind_index = {k: i for i, k in enumerate(self.kinds)}
        self._shape = self._shape_of(rules)
        self._tables: dict[Rules, tuple[Any, ...]] = {}
        self._colony_cache: dict[tuple, array] = {}
        self._board_cache: dict[tuple, array] = {}
        self._tile_cache: dict[tuple, array] = {}
        ms = max_seats
        n_display = rules.display_doubles + rules.display_triples
        n_monk = rules.scholars_drawn + rules.bishops_drawn + len(rules.camps)
        n_halls = len(rules.town_halls)
        lay = self.planes = PlaneLayout()
        add = lay.add
        # ---- the decision and the year
        self.o_phase = add("phase", 3, "1 at the phase: draft (advanced set-up), year, game over")
        self.o_year = add("year", 1, f"the year / {rules.years} (the game's years)")
        self.o_kind = add("decision.kind", len(self.kinds),
                          "1 at the pending decision's kind: " + ", ".join(self.kinds))
        self.o_main = add("decision.main_action_done", 1,
                          "1 when the turn's main action is taken (free actions or end turn left)")
        self.o_queue = add("decision.queued_steps", 1,
                           "how many steps of the turn are pending (a small integer)")
        # what the pending step shows (view.py: the Pending message)
        nf = len(_CELL_FEATURES)
        self.max_tile_cells = max(len(t) for t in (*rules.doubles, *rules.triples,
                                                   *rules.town_halls))
        self.o_p_tile = add("pending.tile", self.max_tile_cells * nf,
                            "place_tile: the tile's cells in its order, [cell][feature: as the "
                            "colony planes, " + ", ".join(f for f, _ in _CELL_FEATURES) + "]")
        self.o_p_slot = add("pending.tile_slot", HALL_SLOT + 1,
                            "place_tile: 1 at the display slot the tile came from (last: a "
                            "drafted town hall)")
        self.o_p_building = add("pending.building", N_CELLS,
                                "exchange: 1 at the building's cell (row-major) in your colony")
        self.o_p_second = add("pending.second_exchange", 1,
                              "exchange: 1 for Industrialization's second exchange")
        self.o_p_line = add("pending.line", 2 * GRID_SIDE,
                            "place_die: 1 at the activated line, [row, column][index]")
        self.o_p_dock = add("pending.dock", N_DOCKS, "astronomy: 1 at the shifted ship's dock")
        self.o_variant = add("variant", 2, "1 for: advanced set-up, shared blue dice variant")
        # ---- seat slots: slot k is the seat k places after the observer (slot 0: the observer)
        per_seat = f"one slot per seat slot (0 = you, k = the k-th seat after you; {ms} slots)"
        self.o_present = add("seat.present", ms, "1 where the seat slot is in play; " + per_seat)
        self.o_to_act = add("seat.to_act", ms, "1 at the seat that makes the pending decision; "
                            + per_seat)
        self.o_first = add("seat.first_player", ms, "1 at this year's first player; " + per_seat)
        self.o_coins = add("seat.coins", ms, "coins / 10; " + per_seat)
        self.o_points = add("seat.points", ms,
                            "points / 10, below 0 if the seat paid more than it had (the final "
                            "total once the game is over); " + per_seat)
        self.o_res = add("seat.resources", ms * N_RESOURCES,
                         f"stores / the storage limit {rules.limit}, [slot][resource: "
                         + ", ".join(RES_NAMES) + "]")
        self.o_religion = add("seat.religion", ms,
                              f"religion track space / {rules.religion_length}; " + per_seat)
        self.o_conq = add("seat.conquistador", ms,
                          f"conquistador track space this year / {rules.conq_length}; " + per_seat)
        self.o_rank = add("seat.conquistador_rank", ms,
                          "rank on the conquistador track this year (1 = ahead; 0 = not moved); "
                          + per_seat)
        self.o_blue = add("seat.blue_dice", ms * GRID_SIDE,
                          f"own unused blue dice showing each face / {rules.blue_per_player}, "
                          f"[slot][face 1..{GRID_SIDE}]")
        self.o_blue_unlocked = add("seat.blue_unlocked", ms,
                                   f"blue dice unlocked / {rules.blue_per_player}; " + per_seat)
        self.o_blue_used = add("seat.blue_used", ms,
                               f"blue dice used this year / {rules.blue_per_player}; " + per_seat)
        self.o_white_used = add("seat.white_used", ms,
                                f"white dice used this year / {rules.white_per_year}; " + per_seat)
        self.o_activations = add("seat.activations", ms,
                                 "coin activations this year (the next costs one more coin); "
                                 + per_seat)
        self.o_monks_left = add("seat.monks_left", ms,
                                f"monks not yet placed / {rules.monks}; " + per_seat)
        self.o_scholars = add("seat.scholars", ms * len(SCHOLARS),
                              "1 where the seat has the Scholar's effect, [slot][scholar: "
                              + ", ".join(SCHOLARS) + "]")
        self.o_own_scholar = add("seat.own_scholar", ms * len(SCHOLARS),
                                 "1 at the Scholar of the seat's drafted lot (advanced set-up), "
                                 "[slot][scholar]")
        self.n_boards = len(rules.boards_a) + 1
        self.o_board = add("seat.colony_board", ms * self.n_boards,
                           "1 at the seat's colony board, [slot][A boards in sheet order, then "
                           "the B side]")
        self.o_port = add("seat.port_ships", ms * N_DOCKS,
                          "ships in the seat's port, [slot][dock: " + ", ".join(DOCK_BONUSES)
                          + "] (a small integer)")
        self.o_port_points = add("seat.port_points", ms * N_DOCKS,
                                 "points of the ships in the dock / 10, [slot][dock]: your own "
                                 "ships only (face down), everyone's once the game is over")
        n_retreat = len(rules.retreat)
        self.o_retreat = add("retreat.occupant", n_retreat * ms,
                             "1 where the seat slot's marker is on the retreat space, "
                             f"[space: {', '.join(a for a, _ in rules.retreat)}][slot]")
        self.o_monks = add("monk_space.monks", n_monk * ms,
                           "the seat slot's monks on the space, [space: Scholars, Bishops, "
                           "missionary camps, in the board's order][slot]")
        # ---- the common supply
        self.o_white = add("supply.white_dice", GRID_SIDE,
                           f"white dice left showing each face 1..{GRID_SIDE} (a small integer)")
        self.o_shared_blue = add("supply.shared_blue_dice", GRID_SIDE,
                                 "blue dice in the common pool (variant) showing each face "
                                 "(a small integer)")
        self.o_piles = add("supply.piles", 4,
                           "left in the face-down piles / their size: doubles, triples, ships, "
                           "road tiles")
        self.o_conq_points = add("supply.conquistador_points", ms,
                                 "points for each conquistador rank this year / 10 (solo: the "
                                 "trees' points)")
        # ---- the board's tiles (cached blocks: they change now and then)
        self.o_board_block = lay.width
        self.n_display = n_display
        for name, meaning in _CELL_FEATURES:
            add(f"display.{name}", n_display,
                f"{meaning}: summed over the development tile's cells, one slot per display "
                f"slot ({rules.display_doubles} doubles, then triples)")
        add("display.present", n_display, "1 where the display slot holds a tile")
        add("ship_slot.present", N_DOCKS, "1 where the ship slot holds a ship")
        add("ship_slot.cost", N_DOCKS * N_RESOURCES,
            "the ship's cost in resources, [slot][resource] (a small integer)")
        add("ship_slot.points", N_DOCKS, "the ship's points / 10")
        add("monk_space.scholar", rules.scholars_drawn * len(SCHOLARS),
            "1 at the Scholar on the space, [scholar space][scholar]")
        add("monk_space.bishop", rules.bishops_drawn * len(BISHOPS),
            "1 at the Bishop on the space, [bishop space][bishop: " + ", ".join(BISHOPS) + "]")
        add("draft.available_board", len(rules.boards_a),
            "1 where the A-side colony board is still to be chosen (picked boards)")
        add("draft.lot_present", n_halls, "1 where the draft lot exists (advanced set-up)")
        add("draft.lot_taken", n_halls, "1 where the draft lot is taken")
        add("draft.lot_town_hall", n_halls * n_halls, "1 at the lot's town hall, [lot][town hall]")
        add("draft.lot_scholar", n_halls * len(SCHOLARS), "1 at the lot's Scholar, [lot][scholar]")
        self.board_width = lay.width - self.o_board_block
        # ---- each seat slot's colony (cached per colony: it changes when a tile is laid)
        self.o_colony: list[int] = []
        for k in range(ms):
            who = "your colony" if k == 0 else f"the colony of the seat {k} after you"
            first = lay.width
            for name, meaning in _CELL_FEATURES:
                add(f"colony{k}.{name}", N_CELLS,
                    f"{meaning}; {who}, one slot per cell, row-major {GRID_SIDE}x{GRID_SIDE}")
            self.o_colony.append(first)
            add(f"colony{k}.die_white", N_CELLS, f"1 where a white die lies on the cell; {who}")
            add(f"colony{k}.die_blue", N_CELLS, f"1 where a blue die lies on the cell; {who}")
            add(f"colony{k}.coins", N_CELLS,
                f"coins placed on the building to activate it (a small integer); {who}")
        self.colony_width = len(_CELL_FEATURES) * N_CELLS
        self.colony_stride = (len(_CELL_FEATURES) + 3) * N_CELLS
        self._table(rules)
        self._slots = [self._slot_offsets(k) for k in range(ms)]
        #: per (seat count, observer): each seat's slot
        self._rel: dict[tuple[int, int], tuple[int, ...]] = {}

    @staticmethod
    def feature_index(name: str) -> int:
        """A cell feature's place in a cell's features (``pending.tile``'s inner axis)."""
        return [f for f, _ in _CELL_FEATURES].index(name)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its sheet's rules and seat count (the caches are rebuilt, not carried), so
        a pickled research environment stays small."""
        return (type(self), (self.rules, self.seats))

    # ------------------------------------------------------------------ sheet-derived tables

    @staticmethod
    def _shape_of(r: Rules) -> tuple:
        """What the layout's widths read of a sheet: a sheet of another shape cannot be encoded."""
        return (r.display_doubles, r.display_triples, r.scholars_drawn, r.bishops_drawn,
                len(r.camps), len(r.town_halls), len(r.boards_a), len(r.retreat))

    def _table(self, r: Rules) -> tuple[Any, ...]:
        """Per sheet: each cell kind's and tile's features, the boards' ids, the ships."""
        found = self._tables.get(r)
        if found is not None:
            return found
        if self._shape_of(r) != self._shape:
            raise ValueError("the planes were laid out for a sheet of another shape "
                             f"({self._shape_of(r)} != {self._shape})")
        fx_kinds = tuple(EFFECT_ID.values())
        kind_feat: list[tuple[float, ...]] = []
        for ck in r.cells:
            terrain = [0.0] * len(TERRAINS)
            if ck.terrain:
                terrain[ck.terrain - 1] = 1.0
            fx = [float(sum(r.effects[e].kind == k for e in ck.effects)) for k in fx_kinds]
            kind_feat.append((*terrain, float(ck.building), float(ck.colonists),
                              float(ck.end_points), *fx))
        nf = len(_CELL_FEATURES)

        def tile_feat(tile: int) -> tuple[float, ...]:
            return tuple(sum(kind_feat[k][f] for k in tile_cells(r, tile)) for f in range(nf))

        n_tiles = len(r.doubles) + len(r.triples)
        tiles = {t: tile_feat(t) for t in range(n_tiles)}
        boards = {bid: i for i, (bid, _) in enumerate(r.boards_a)}
        boards[r.board_b[0]] = len(r.boards_a)
        ship_points = tuple(points * _TENS for _, points in r.ships)
        found = (kind_feat, tiles, boards, ship_points)
        self._tables[r] = found
        return found

    @staticmethod
    def _cached(cache: dict[tuple, array], key: tuple,
                build: Callable[[Rules, Any], list[float]], r: Rules, what: Any) -> array:
        """The block ``build(r, what)`` made for ``key``, made once."""
        block = cache.get(key)
        if block is None:
            block = array("f", build(r, what))
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[key] = block
        return block

    def _colony_block(self, r: Rules, grid: list[int]) -> list[float]:
        kind_feat = self._table(r)[0]
        rows = [kind_feat[k] for k in grid]
        return [row[f] for f in range(len(_CELL_FEATURES)) for row in rows]

    def _board_block(self, r: Rules, state: State) -> list[float]:
        _, tiles, _, _ = self._table(r)
        nf = len(_CELL_FEATURES)
        nd = self.n_display
        out = [0.0] * self.board_width
        for slot, tile in enumerate(state.display):
            if tile >= 0:
                feat = tiles[tile]
                for f in range(nf):
                    out[f * nd + slot] = feat[f]
                out[nf * nd + slot] = 1.0
        at = (nf + 1) * nd
        for slot, ship in enumerate(state.ship_slots):
            if ship >= 0:
                cost, points = r.ships[ship]
                out[at + slot] = 1.0
                for i, x in enumerate(cost):
                    out[at + N_DOCKS + slot * N_RESOURCES + i] = float(x)
                out[at + N_DOCKS * (1 + N_RESOURCES) + slot] = points * _TENS
        at += N_DOCKS * (2 + N_RESOURCES)
        ns, nb = r.scholars_drawn, r.bishops_drawn
        for i, name in enumerate(state.monk_tiles[:ns]):
            out[at + i * len(SCHOLARS) + SCHOLARS.index(name)] = 1.0
        at += ns * len(SCHOLARS)
        for i, name in enumerate(state.monk_tiles[ns:ns + nb]):
            out[at + i * len(BISHOPS) + BISHOPS.index(name)] = 1.0
        at += nb * len(BISHOPS)
        for b in state.boards_left:
            out[at + b] = 1.0
        at += len(r.boards_a)
        nh = len(r.town_halls)
        for i, (hall, scholar) in enumerate(state.lots):
            out[at + i] = 1.0
            out[at + nh + i] = float(state.lot_taken[i])
            out[at + 2 * nh + i * nh + hall] = 1.0
            out[at + 2 * nh + nh * nh + i * len(SCHOLARS) + SCHOLARS.index(scholar)] = 1.0
        return out

    def _pending(self, task: Any, r: Rules, o: Any) -> None:
        """The front task's own details, as its ``pending_view`` shows them (by exact type: an
        isinstance check on a generic class costs more than the write)."""
        cls = type(task)
        if cls is TilePlacement:
            block = self._cached(self._tile_cache, (r, task.tile), self._tile_block, r, task.tile)
            o[self.o_p_tile:self.o_p_tile + len(block)] = block
            o[self.o_p_slot + task.slot] = 1.0
        elif cls is ExchangeOffer:
            o[self.o_p_building + task.cell] = 1.0
            if task.second:
                o[self.o_p_second] = 1.0
        elif cls is DiePlacement:
            o[self.o_p_line + (0 if task.line == ROW else GRID_SIDE) + task.index] = 1.0
        elif cls is AstronomyShift:
            o[self.o_p_dock + task.dock] = 1.0

    def _tile_block(self, r: Rules, tile: int) -> list[float]:
        kind_feat = self._table(r)[0]
        return [x for k in tile_cells(r, tile) for x in kind_feat[k]]

    # ------------------------------------------------------------------ the encoder

    def _slot_offsets(self, k: int) -> tuple[int, ...]:
        """Seat slot ``k``'s first index in each per-seat plane, in the order ``encode``
        unpacks them (one tuple per slot: an attribute read per write costs more than the
        write)."""
        nsch = len(SCHOLARS)
        return (self.o_present + k, self.o_coins + k, self.o_points + k,
                self.o_res + k * N_RESOURCES, self.o_religion + k, self.o_conq + k,
                self.o_blue + k * GRID_SIDE - 1, self.o_blue_unlocked + k, self.o_blue_used + k,
                self.o_white_used + k, self.o_activations + k, self.o_monks_left + k,
                self.o_scholars + k * nsch, self.o_own_scholar + k * nsch,
                self.o_board + k * self.n_boards, self.o_port + k * N_DOCKS,
                self.o_port_points + k * N_DOCKS, self.o_colony[0] + k * self.colony_stride)

    def encode(self, state: State, seat: int, out: MutableSequence[float]) -> None:
        r = state.rules
        _, _, boards, ship_points = self._table(r)
        o: Any = out
        try:  # a float32 numpy array: its memoryview takes items and array slices fastest
            view = memoryview(out)  # type: ignore[arg-type]
            if view.format == "f" and view.ndim == 1:
                o = view
        except TypeError:
            pass
        n = state.n
        ms = self.seats
        over = state.phase == OVER
        rel = self._rel.get((n, seat))
        if rel is None:  # seat -> its slot, per seat count and observer
            rel = self._rel[n, seat] = tuple((s - seat) % n for s in range(n))
        players = state.players
        queue = state.queue
        # the decision (turn.py: the queue's front task, else the turn)
        o[self.o_phase + _PHASE_SLOT[state.phase]] = 1.0
        o[self.o_year] = state.year / r.years
        if not over:
            if queue:
                task = queue[0]
                actor, kind = task.seat, task.kind
                self._pending(task, r, o)
            else:
                actor, kind = state.current, TURN_KIND
            o[self.o_kind + self._kind_index[kind]] = 1.0
            o[self.o_to_act + rel[actor]] = 1.0
            o[self.o_queue] = float(len(queue))
        if state.main_done and not queue:
            o[self.o_main] = 1.0
        if state.advanced:
            o[self.o_variant] = 1.0
        if state.shared:
            o[self.o_variant + 1] = 1.0
        o[self.o_first + rel[state.first]] = 1.0
        at = self.o_rank
        for i, s in enumerate(conquistador_order(state)):
            o[at + rel[s]] = float(i + 1)
        limit = 1.0 / r.limit
        per_blue = 1.0 / r.blue_per_player
        per_white = 1.0 / r.white_per_year
        religion, conq, monks = 1.0 / r.religion_length, 1.0 / r.conq_length, 1.0 / r.monks
        cwidth = self.colony_width
        colony_cache = self._colony_cache
        scholar_bits = _SCHOLAR_SLOTS
        final = state.final
        for k in range(n):
            s = seat + k
            if s >= n:
                s -= n
            p = players[s]
            (present, a_coins, a_points, a_res, a_religion, a_conq, a_blue, a_unlocked, a_used,
             a_white, a_act, a_monks, a_sch, a_own, a_board, a_port, a_port_points,
             base) = self._slots[k]
            o[present] = 1.0
            if p.coins:
                o[a_coins] = p.coins * _TENS
            points = final[s]["total"] if over else p.points
            if points:
                o[a_points] = points * _TENS
            i = a_res
            for x in p.res:
                if x:
                    o[i] = x * limit
                i += 1
            if p.religion:
                o[a_religion] = p.religion * religion
            if p.conq:
                o[a_conq] = p.conq * conq
            for face in p.blue:
                o[a_blue + face] += per_blue
            o[a_unlocked] = p.blue_unlocked * per_blue
            if p.blue_used:
                o[a_used] = p.blue_used * per_blue
            if p.white_used:
                o[a_white] = p.white_used * per_white
            if p.activations:
                o[a_act] = float(p.activations)
            if p.monks_left:
                o[a_monks] = p.monks_left * monks
            if p.scholars:
                bits = p.scholars
                for i, bit in scholar_bits:
                    if bits & bit:
                        o[a_sch + i] = 1.0
            if p.own_scholar:
                o[a_own + SCHOLARS.index(p.own_scholar)] = 1.0
            if p.board:
                o[a_board + boards[p.board]] = 1.0
            faces = k == 0 or over
            for i, docked in enumerate(p.port):
                if docked:
                    o[a_port + i] = float(len(docked))
                    if faces:
                        o[a_port_points + i] = sum(ship_points[x] for x in docked)
            # the colony: its cells' kinds from the cache, then the dice and coins on them
            o[base:base + cwidth] = self._cached(colony_cache, (r, tuple(p.grid)),
                                                 self._colony_block, r, p.grid)
            b = p.blocked
            if b:
                at = base + cwidth
                die_on, coins_on = p.die_on, p.coins_on
                while b:
                    low = b & -b
                    c = low.bit_length() - 1
                    b ^= low
                    die = die_on[c]
                    if die == WHITE:
                        o[at + c] = 1.0
                    elif die == BLUE:
                        o[at + N_CELLS + c] = 1.0
                    if coins_on[c]:
                        o[at + 2 * N_CELLS + c] = float(coins_on[c])
        at = self.o_retreat
        for space, occupant in enumerate(state.retreat_occ):
            if occupant >= 0:
                o[at + space * ms + rel[occupant]] = 1.0
        at = self.o_monks
        for seats in state.monks:
            for s in seats:
                o[at + rel[s]] += 1.0
            at += ms
        at = self.o_white - 1
        for face in state.white:
            o[at + face] += 1.0
        if state.shared_blue:
            at = self.o_shared_blue - 1
            for face in state.shared_blue:
                o[at + face] += 1.0
        at = self.o_piles
        o[at] = len(state.pile_d) / len(r.doubles)
        o[at + 1] = len(state.pile_t) / len(r.triples)
        o[at + 2] = len(state.ship_pile) / len(r.ships)
        o[at + 3] = state.roads_left / r.road_tiles
        year = min(state.year, r.years) - 1
        row = r.conq_table[n][year] if n > 1 else (r.solo_tree_points[year],)
        at = self.o_conq_points
        for x in row:
            if x:
                o[at] = x * _TENS
            at += 1
        at = self.o_board_block
        shown = (r, tuple(state.display), tuple(state.ship_slots), tuple(state.monk_tiles),
                 tuple(state.boards_left), tuple(state.lots), tuple(state.lot_taken))
        o[at:at + self.board_width] = self._cached(self._board_cache, shown, self._board_block,
                                                  r, state)
