"""Santa Maria rules, pure. Section names follow the French rulebook (shared/rules/
santa-maria-fr.txt): "Mise en place", "Mise en place des colonies", "(A) Agrandir sa Colonie",
"(B) Activer un bâtiment", "(C) Activer une rangée/colonne", "Activation des bâtiments"
(Production, Échange, Transport maritime, Conquistador, Religion, Recruter un Moine, Débloquer un
dé bleu, Utilisation de l'Or), "(D) Se retirer", "Actions gratuites", "Fin de l'Année",
"Fin de la partie / Décompte final", "Règles avancées", "Variante: réserve commune de dés bleus",
"Jeu en solo", "Tuiles Savant", "Tuiles Évêque". Open points: RULINGS.md.

How a turn runs: the seat to act gets the "turn" decision (main actions + free actions). A main
action pushes TASKS on ``state.queue`` (activate this building, a religion action, place the
die...). Tasks without a choice are resolved at once by ``run``; a task with a choice becomes the
next decision (exchange, ship, monk...). When the queue is empty the seat may take free actions
and ends its turn with EndTurn.

Indices: cell = row * 6 + col (0-based); resources 0..4 = wood, wheat, sugar, gem, gold; goods
7-tuples add coins (5) and points (6).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from referee.core.components import ComponentSheet
from referee.core.contract import Decision, Event, IllegalMove
from referee.core.rng import Rng

from . import moves as mv
from .moves import BLUE, COL, DECLINE, END_TURN, NO_PAY, ROW, WHITE
from .sheet import BISHOPS, SCHOLARS, TERRAINS, gather

WOOD, WHEAT, SUGAR, GEM, GOLD = range(5)
COINS, POINTS = 5, 6
RES_NAMES = ("wood", "wheat", "sugar", "gem", "gold")
GOODS_NAMES = RES_NAMES + ("coins", "points")
T_EMPTY, T_ROAD, T_FARM, T_FOREST, T_MOUNTAIN, T_CITY, T_HALL = range(7)
TERRAIN_ID = {t: i + 1 for i, t in enumerate(TERRAINS)}  # road=1 ... town_hall=6

SETUP_STANDARD, SETUP_ADVANCED = "standard", "advanced"
BOARDS_RANDOM, BOARDS_PICK = "random", "pick"
DRAFT, YEAR, OVER = 1, 2, 3

FX_PRODUCE, FX_EXCHANGE, FX_SHIP, FX_CONQ, FX_RELIGION = range(1, 6)
FX_ID = {"produce": FX_PRODUCE, "exchange": FX_EXCHANGE, "ship": FX_SHIP,
         "conquistador": FX_CONQ, "religion": FX_RELIGION}
SCH = {name: 1 << i for i, name in enumerate(SCHOLARS)}
SCH_BOTANY, SCH_PHILOSOPHY, SCH_LOGISTICS = SCH["botany"], SCH["philosophy"], SCH["logistics"]
SCH_ECONOMY = SCH["basic_economy"] | SCH["advanced_economy"]
HALL_TILE = 100  # tile references >= 100 are town halls (advanced setup)
ALL = (1 << 36) - 1
ROW_MASK = tuple(63 << (6 * r) for r in range(6))
COL_MASK = tuple(sum(1 << (6 * r + c) for r in range(6)) for c in range(6))
ROW_CELLS = tuple(tuple(6 * r + c for c in range(6)) for r in range(6))
COL_CELLS = tuple(tuple(6 * r + c for r in range(6)) for c in range(6))
NEIGHBOURS = tuple(
    tuple(6 * rr + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
          if 0 <= rr < 6 and 0 <= cc < 6)
    for r in range(6) for c in range(6)
)
Goods = tuple[int, int, int, int, int, int, int]


def _goods(d: dict[str, int] | None) -> Goods:
    d = d or {}
    return tuple(d.get(k, 0) for k in GOODS_NAMES)  # type: ignore[return-value]


def _pay5(d: dict[str, int]) -> tuple[int, ...]:
    return tuple(d.get(k, 0) for k in RES_NAMES)


# ============================================================================ component data


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

    @classmethod
    def from_sheet(cls, sheet: ComponentSheet) -> Rules:
        v = sheet.values
        cells: list[CellKind] = [CellKind(T_EMPTY, False, (), 0, 0, None)]
        cell_index: dict[str, int] = {}
        effects: list[Effect] = []
        effect_index: dict[str, int] = {}

        def effect(e: dict) -> int:
            key = json.dumps(e, sort_keys=True)
            if key not in effect_index:
                effect_index[key] = len(effects)
                effects.append(Effect(
                    FX_ID[e["kind"]], _goods(e.get("gain")),
                    tuple((_pay5(o["pay"]), _goods(o["gain"])) for o in e.get("options", ())), e))
            return effect_index[key]

        def cell(c: dict | None) -> int:
            if c is None:
                return 0
            key = json.dumps(c, sort_keys=True)
            if key not in cell_index:
                terrain = TERRAIN_ID[c["terrain"]]
                cell_index[key] = len(cells)
                cells.append(CellKind(
                    terrain, terrain != T_ROAD, tuple(effect(e) for e in c.get("effects", ())),
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
        ships = [(_pay5(s["cost"]), s["points"]) for s in starting]
        ships += [(_pay5(s["cost"]), s["points"]) for s in gather(v, "ship_tile_standard")]
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
            cost_double=_pay5(v["expand_cost_double"]),
            cost_triple=_pay5(v["expand_cost_triple"]),
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
            retreat=tuple((s["action"], _goods(s.get("gain"))) for s in v["retreat_spaces"]),
            docks=tuple((d["bonus"], _goods(d.get("gain"))) for d in v["docks"]),
            port_column_points=v["port_column_points"],
            coins_per_point=v["coins_per_point"],
            bishop_penalty=v["bishop_penalty"],
            scholar_points={name: v[f"scholar_points_{name}"] for name in SCHOLARS},
            bishop_params=dict(v["bishops"]),
            camps=tuple(_goods(g) for g in gather(v, "missionary_camp")),
            blue_die_symbols=tuple(v["blue_die_monk_symbols"]),
            religion_length=v["religion_track"]["length"],
            monk_symbols=tuple(v["religion_track"]["monk_symbols"]),
            conq_length=v["conquistador_track"]["length"],
            gold_symbols=tuple(v["conquistador_track"]["gold_symbols"]),
            trees=tuple(v["conquistador_track"]["trees"]),
            n_scholars=v["component_counts"]["scholars"],
            n_bishops=v["component_counts"]["bishops"],
        )


# ============================================================================ state


@dataclass(slots=True)
class Player:
    board: str
    grid: list[int]  # 36 cell kinds (0 = empty)
    printed: int  # bitmask of printed cells
    occ: int  # bitmask of non-empty cells
    bld: int  # bitmask of buildings
    die_on: list[int]  # per cell: 0, WHITE or BLUE
    coins_on: list[int]  # per cell: coins placed by ActivateBuilding
    blocked: int  # bitmask: a die or coins on the cell
    coins: int
    res: list[int]
    points: int = 0
    religion: int = 0
    conq: int = 0
    conq_stamp: int = 0
    blue: list[int] = field(default_factory=list)  # own unused blue dice (faces)
    blue_unlocked: int = 1
    blue_used: int = 0
    white_used: int = 0
    activations: int = 0
    monks_left: int = 6
    port: list[list[int]] = field(default_factory=lambda: [[], [], [], []])
    retreat: int = -1
    scholars: int = 0  # bit set of Scholar effects (SCH)
    own_scholar: str = ""


@dataclass(slots=True)
class State:
    n: int
    options: dict[str, Any]
    rules: Rules = field(metadata={"hash": False})
    rng: Rng
    players: list[Player]
    phase: int = YEAR
    year: int = 1
    first: int = 0
    current: int = 0
    main_done: bool = False
    advanced: bool = False
    shared: bool = False
    white: list[int] = field(default_factory=list)
    shared_blue: list[int] = field(default_factory=list)
    display: list[int] = field(default_factory=list)  # 10 slots: tile id or -1
    pile_d: list[int] = field(default_factory=list)
    pile_t: list[int] = field(default_factory=list)
    ship_slots: list[int] = field(default_factory=list)
    ship_pile: list[int] = field(default_factory=list)
    monk_tiles: list[str] = field(default_factory=list)  # 3 scholars then 3 bishops
    monks: list[list[int]] = field(default_factory=list)  # per monk space: seats
    retreat_occ: list[int] = field(default_factory=list)
    roads_left: int = 0
    boards_left: list[int] = field(default_factory=list)  # A boards still to choose
    lots: list[tuple[int, str]] = field(default_factory=list)
    lot_taken: list[bool] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)  # scholars/bishops in the box (hidden)
    queue: list[tuple] = field(default_factory=list)
    stamp: int = 0
    last_retreat: list[int] = field(default_factory=list)
    final: list[dict[str, Any]] = field(default_factory=list)
    cache: Any = field(default=None, metadata={"hash": False})


# ============================================================================ set-up


def setup(options: dict[str, Any], n: int, rng: Rng, rules: Rules) -> tuple[State, list[Event]]:
    """Mise en place + Mise en place des colonies (+ Règles avancées). Seat 0 is the first player;
    clockwise = increasing seat numbers."""
    advanced = options["setup"] == SETUP_ADVANCED or n == 1  # Jeu en solo: advanced set-up
    shared = bool(options["shared_blue_dice"]) and n > 1
    pick = not advanced and options.get("colony_boards") == BOARDS_PICK
    if advanced:
        boards = [rules.board_b] * n
    elif pick:
        boards = [("", (0,) * 36)] * n  # chosen in turn (choose_board)
    else:
        order = list(range(len(rules.boards_a)))
        rng.shuffle(order)  # first game: boards dealt at random
        boards = [rules.boards_a[i] for i in order[:n]]
    players = []
    for seat in range(n):
        res = [0] * 5
        res[WOOD] = rules.start_wood
        p = Player(board="", grid=[0] * 36, printed=0, occ=0, bld=0, die_on=[0] * 36,
                   coins_on=[0] * 36, blocked=0, coins=rules.start_coins[seat], res=res,
                   blue_unlocked=rules.start_blue, monks_left=rules.monks)
        _give_board(p, rules, *boards[seat])
        players.append(p)
    state = State(n=n, options=dict(options), rules=rules, rng=rng, players=players,
                  advanced=advanced, shared=shared)
    # ships: 4 starting ships at random on the 4 docks, 30 standard face down
    start = list(range(rules.n_starting_ships))
    rng.shuffle(start)
    state.ship_slots = start[:4]
    state.ship_pile = list(range(rules.n_starting_ships, len(rules.ships)))
    rng.shuffle(state.ship_pile)
    # white dice: 3 per player, rolled and sorted
    state.white = sorted(rng.randint(1, 6) for _ in range(rules.white_per_player * n))
    state.roads_left = rules.road_tiles
    # 3 Scholars and 3 Bishops drawn; the rest set aside
    scholars = list(SCHOLARS)
    rng.shuffle(scholars)
    bishops = list(BISHOPS)
    rng.shuffle(bishops)
    state.monk_tiles = scholars[: rules.scholars_drawn] + bishops[: rules.bishops_drawn]
    rest = scholars[rules.scholars_drawn:]
    state.monks = [[] for _ in range(rules.scholars_drawn + rules.bishops_drawn + len(rules.camps))]
    state.retreat_occ = [-1] * len(rules.retreat)
    # development tiles: 15 doubles (ids 0..14), 15 triples (ids 15..29)
    nd = len(rules.doubles)
    state.pile_d = list(range(nd))
    state.pile_t = list(range(nd, nd + len(rules.triples)))
    rng.shuffle(state.pile_d)
    rng.shuffle(state.pile_t)
    _new_display(state)
    # blue dice: each player rolls 1 (shared variant: into the common pool)
    for p in players:
        faces = [rng.randint(1, 6) for _ in range(p.blue_unlocked)]
        if shared:
            state.shared_blue.extend(faces)
        else:
            p.blue = faces
    state.shared_blue.sort()
    events = [Event("santa_maria.setup", -1,
                    f"{n} player(s); {'advanced' if advanced else 'standard'} set-up"
                    + ("; shared blue dice" if shared else ""))]
    if advanced:
        halls = list(range(len(rules.town_halls)))
        rng.shuffle(halls)
        rng.shuffle(rest)
        k = len(rules.town_halls)
        state.lots = [(halls[i], rest[i]) for i in range(k)]
        state.lot_taken = [False] * k
        state.set_aside = sorted(rest[k:]) + sorted(bishops[rules.bishops_drawn:])
        state.phase = DRAFT
        # anticlockwise from the seat on the first player's right
        state.queue = [("draft", s) for s in range(n - 1, -1, -1)]
        state.current = n - 1
    else:
        state.set_aside = sorted(rest) + sorted(bishops[rules.bishops_drawn:])
        if pick:
            # later games: boards chosen anticlockwise from the first player's right
            state.boards_left = list(range(len(rules.boards_a)))
            state.phase = DRAFT
            state.queue = [("board", s) for s in range(n - 1, -1, -1)]
            state.current = n - 1
        else:
            _start_turn(state, 0)
    return state, events


def _give_board(p: Player, rules: Rules, board: str, grid: tuple[int, ...]) -> None:
    p.board = board
    p.grid = list(grid)
    p.printed = p.occ = sum(1 << i for i, k in enumerate(grid) if k)
    p.bld = sum(1 << i for i, k in enumerate(grid) if rules.cells[k].building)


def _new_display(state: State) -> None:
    """5 doubles and 5 triples face up (Mise en place; Fin de l'Année: the leftovers are
    discarded). With a pile short of tiles, the missing slots stay empty."""
    r = state.rules
    d = [state.pile_d.pop() if state.pile_d else -1 for _ in range(r.display_doubles)]
    t = [state.pile_t.pop() if state.pile_t else -1 for _ in range(r.display_triples)]
    state.display = d + t


def tile_cells(rules: Rules, tile: int) -> tuple[int, ...]:
    if tile >= HALL_TILE:
        return rules.town_halls[tile - HALL_TILE]
    nd = len(rules.doubles)
    return rules.doubles[tile] if tile < nd else rules.triples[tile - nd]


def tile_shape(rules: Rules, tile: int) -> tuple[tuple[int, int], ...]:
    return rules.shape_double if len(tile_cells(rules, tile)) == 2 else rules.shape_triple


# ============================================================================ geometry


@cache
def _orientations(shape: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int, tuple[int, ...], int], ...]:
    """Every (anchor cell, rotation, cells, mask) of a shape on the 6x6 grid. A quarter-turn
    clockwise maps an offset (dr, dc) to (dc, -dr)."""
    out = []
    for rot in range(4):
        offs = list(shape)
        for _ in range(rot):
            offs = [(dc, -dr) for dr, dc in offs]
        for r in range(6):
            for c in range(6):
                pos = [(r + dr, c + dc) for dr, dc in offs]
                if all(0 <= rr < 6 and 0 <= cc < 6 for rr, cc in pos):
                    cells = tuple(6 * rr + cc for rr, cc in pos)
                    out.append((6 * r + c, rot, cells, sum(1 << x for x in cells)))
    return tuple(out)


@lru_cache(maxsize=65536)
def placements(shape: tuple[tuple[int, int], ...], content: tuple[int, ...], occ: int) -> tuple:
    """Legal placements of a tile on empty cells: (anchor, rotation, cells), one per distinct
    result (a tile with two equal cells turned half-way lands the same)."""
    seen = set()
    out = []
    for anchor, rot, cells, mask in _orientations(shape):
        if mask & occ:
            continue
        key = tuple(sorted(zip(cells, content)))
        if key in seen:
            continue
        seen.add(key)
        out.append((anchor, rot, cells))
    return tuple(out)


@lru_cache(maxsize=65536)
def fits(shape: tuple[tuple[int, int], ...], occ: int) -> bool:
    return any(not (mask & occ) for _, _, _, mask in _orientations(shape))


def reach(grid: list[int], cells_kind: tuple[CellKind, ...], sources: list[int]) -> tuple[set, set]:
    """Connexity ('Tuiles Savant: Logistique', 'Tuiles Évêque' note): a cell is connected to a
    source if adjacent to it, or adjacent to a road cell linked to the source by a chain of
    adjacent roads. Returns (cells reached, road cells of the chain)."""
    src = set(sources)
    reached: set[int] = set()
    roads: set[int] = set()
    frontier = list(sources)
    while frontier:
        x = frontier.pop()
        for y in NEIGHBOURS[x]:
            if y in src or y in reached:
                continue
            reached.add(y)
            if cells_kind[grid[y]].terrain == T_ROAD:
                roads.add(y)
                frontier.append(y)
    return reached, roads


# ============================================================================ payments


@lru_cache(maxsize=65536)
def payments(cost: tuple[int, ...], have: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """'Utilisation de l'Or': every way to pay ``cost`` (5 resources) from ``have``, gold standing
    in for any resource. A payment is the exact resources handed in."""
    need_gold = cost[GOLD]
    if have[GOLD] < need_gold:
        return ()
    spare = have[GOLD] - need_gold
    out: list[tuple[int, ...]] = []

    def rec(r: int, gold_used: int, acc: list[int]) -> None:
        if r == GOLD:
            out.append(tuple(acc) + (need_gold + gold_used,))
            return
        need = cost[r]
        for own in range(min(need, have[r]), -1, -1):
            g = need - own
            if gold_used + g > spare:
                break
            rec(r + 1, gold_used + g, acc + [own])

    rec(0, 0, [])
    return tuple(out)


def _pay(p: Player, pay: tuple[int, ...]) -> None:
    res = p.res
    for r in range(5):
        res[r] -= pay[r]


def gain(state: State, seat: int, g: Goods) -> None:
    """Production: gain resources, coins and points; 'Limite de stockage': a resource over 3 is
    not taken, its sale price is gained instead."""
    p = state.players[seat]
    r = state.rules
    for i in range(5):
        k = g[i]
        if k:
            room = r.limit - p.res[i]
            take = k if k <= room else max(room, 0)
            p.res[i] += take
            p.coins += (k - take) * r.sell[i]
    p.coins += g[COINS]
    p.points += g[POINTS]


# ============================================================================ decisions


def decision(state: State) -> Decision | None:
    d = state.cache
    if d is not None:
        return d
    if state.phase == OVER:
        return None
    if state.queue:
        d = _task_decision(state, state.queue[0])
    else:
        d = _turn_decision(state)
    state.cache = d
    return d


def free_buildings(p: Player) -> int:
    return p.bld & ~p.blocked


_PROMPT_MAIN = "Main action: expand, activate a building, use a die or retreat (free actions too)"
_PROMPT_FREE = "Free actions (sell, buy, Logistics) or end your turn"


def _turn_decision(state: State) -> Decision:
    seat = state.current
    p = state.players[seat]
    r = state.rules
    if state.main_done:
        moves = _free_moves(state, p)
        moves.append(END_TURN)
        return Decision(seat, "santa_maria.turn", moves, _PROMPT_FREE)
    # (A) Agrandir sa Colonie
    moves = list(_expand_moves(r, tuple(state.display), tuple(p.res), p.occ))
    free = p.bld & ~p.blocked
    if free:
        # (B) Activer un bâtiment
        if p.coins > p.activations:
            moves += _activate_moves(free)
        # (C) Activer une rangée/colonne
        moves += _die_moves(state, p, free)
    # (D) Se retirer
    moves += _retreat_moves(tuple(state.retreat_occ))
    moves += _free_moves(state, p)
    return Decision(seat, "santa_maria.turn", moves, _PROMPT_MAIN)


@lru_cache(maxsize=65536)
def _expand_moves(r: Rules, display: tuple[int, ...], have: tuple[int, ...], occ: int) -> tuple:
    out: list = []
    for slot, tile in enumerate(display):
        if tile < 0:
            continue
        cells = tile_cells(r, tile)
        cost = r.cost_double if len(cells) == 2 else r.cost_triple
        pays = payments(cost, have)
        if pays and fits(tile_shape(r, tile), occ):
            out.extend(mv.expand(slot, pay) for pay in pays)
    return tuple(out)


@lru_cache(maxsize=65536)
def _activate_moves(free: int) -> tuple:
    return tuple(mv.activate_building(c) for c in range(36) if free >> c & 1)


@lru_cache(maxsize=1 << 12)
def _retreat_moves(occ: tuple[int, ...]) -> tuple:
    return tuple(mv.retreat(i) for i, o in enumerate(occ) if o < 0)


@lru_cache(maxsize=1 << 16)  # keyed by a 36-bit mask: bounded
def _line_bits(free: int) -> tuple[int, int]:
    rows = sum(1 << i for i in range(6) if free & ROW_MASK[i])
    cols = sum(1 << i for i in range(6) if free & COL_MASK[i])
    return rows, cols


@lru_cache(maxsize=65536)
def _die_options(color: int, face: int, line: int, bits: int, coins: int, botany: tuple[int, ...],
                 pip_cost: int) -> tuple:
    out = []
    for t in range(6):
        if not bits >> t & 1:
            continue
        if abs(face - 1 - t) * pip_cost <= coins:
            out.append(mv.use_die(color, face, line, t + 1, -1))
        if face - 1 != t:
            out.extend(mv.use_die(color, face, line, t + 1, b) for b in botany)
    return tuple(out)


def _die_moves(state: State, p: Player, free: int) -> list:
    r = state.rules
    out: list = []
    rows, cols = _line_bits(free)
    coins = min(p.coins, 5 * r.pip_cost)
    botany: tuple[int, ...] = ()
    sch = p.scholars
    if sch & SCH_BOTANY:
        botany = tuple(x for x in (WOOD, WHEAT, GOLD) if p.res[x])
    pip = r.pip_cost
    if p.white_used < r.white_per_year:
        for f in _faces(tuple(state.white)):
            out += _die_options(WHITE, f, COL, cols, coins, botany, pip)
    if state.shared:
        blue = _faces(tuple(state.shared_blue)) if p.blue_used < p.blue_unlocked else ()
    else:
        blue = _faces(tuple(p.blue))
    philosophy = sch & SCH_PHILOSOPHY
    for f in blue:
        out += _die_options(BLUE, f, ROW, rows, coins, botany, pip)
        if philosophy:
            out += _die_options(BLUE, f, COL, cols, coins, botany, pip)
    return out


@lru_cache(maxsize=4096)
def _faces(dice: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(set(dice)))


def _free_moves(state: State, p: Player) -> list:
    """Actions gratuites: sell, buy (Scholars: Basic/Advanced economy), Logistics."""
    r = state.rules
    sch = p.scholars
    out = list(_sell_buy(r, tuple(p.res), min(p.coins, 3), sch & SCH_ECONOMY))
    if sch & SCH_LOGISTICS and p.coins >= 1 and p.blocked:
        free = p.bld & ~p.blocked
        for src in range(36):
            if p.die_on[src]:
                reached, _ = reach(p.grid, r.cells, [src])
                out.extend(mv.move_die(src, dst) for dst in sorted(reached) if free >> dst & 1)
    return out


@lru_cache(maxsize=65536)
def _sell_buy(r: Rules, res: tuple[int, ...], coins: int, economy: int) -> tuple:
    out = [mv.sell(i) for i in range(5) if res[i]]
    for i in range(5):
        price = _price(r, economy, i)
        if price and coins >= price and res[i] < r.limit:
            out.append(mv.buy(i))
    return tuple(out)


def _price(r: Rules, scholars: int, res: int) -> int:
    if res in (WOOD, WHEAT):
        return 2 if scholars & SCH["basic_economy"] else r.buy[res]
    if res in (SUGAR, GEM) and scholars & SCH["advanced_economy"]:
        return 3
    return r.buy[res]


def sell_buy(state: State, p: Player) -> list:
    """Sell/buy free actions, also offered inside your own paying decisions (exchange, ship,
    religion, monk): 'Actions gratuites' example — Anna buys a wheat to pay a ship."""
    return list(_sell_buy(state.rules, tuple(p.res), min(p.coins, 3), p.scholars & SCH_ECONOMY))


def buy_price(r: Rules, p: Player, res: int) -> int:
    """Acheter: 3 coins for wood or wheat; Basic economy 2; Advanced economy: sugar/gem for 3."""
    return _price(r, p.scholars, res)


def _task_decision(state: State, task: tuple) -> Decision:
    kind, seat = task[0], task[1]
    p = state.players[seat]
    r = state.rules
    if kind == "board":
        return Decision(seat, "santa_maria.board", [mv.choose_board(i) for i in state.boards_left],
                        "Choose your colony board (A side)")
    if kind == "draft":
        moves = [mv.draft_lot(i) for i, t in enumerate(state.lot_taken) if not t]
        return Decision(seat, "santa_maria.draft", moves, "Choose a lot: a town hall and a Scholar")
    if kind == "place":
        tile = task[2]
        moves = [mv.place_tile(a, rot) for a, rot, _ in
                 placements(tile_shape(r, tile), tile_cells(r, tile), p.occ)]
        return Decision(seat, "santa_maria.place_tile", moves, "Place the tile on empty cells")
    if kind == "exch":
        return Decision(seat, "santa_maria.exchange",
                        exchange_moves(state, p, task[2]) + [DECLINE] + sell_buy(state, p),
                        "Exchange (pay one option) or decline; you may sell/buy first")
    if kind == "ship":
        return Decision(seat, "santa_maria.ship", ship_moves(state, p) + [DECLINE] + sell_buy(state, p),
                        "Take a face-up ship (pay its cost) or decline; you may sell/buy first")
    if kind == "astro":
        return Decision(seat, "santa_maria.astronomy", astro_moves(p, task[2]),
                        "Astronomy: choose the dock of your new ship (1 coin per dock moved)")
    if kind == "rel":
        return Decision(seat, "santa_maria.religion", religion_moves(p) + sell_buy(state, p),
                        "Religion: advance 1, or pay 1 wheat (or gold) to advance 2; you may sell/buy first")
    if kind == "monk":
        return Decision(seat, "santa_maria.monk", monk_moves(state, seat) + [DECLINE] + sell_buy(state, p),
                        "Recruit a monk on a monk space, or decline; you may sell/buy first")
    if kind == "die":
        return Decision(seat, "santa_maria.place_die", [mv.place_die(c) for c in die_targets(p, task)],
                        "Construction: choose the building the die goes on")
    if kind == "road":
        return Decision(seat, "santa_maria.road", [mv.place_road(c) for c in range(36) if not p.occ >> c & 1] + [DECLINE],
                        "Place a road tile on a free cell, or decline")
    if kind == "math":
        return Decision(seat, "santa_maria.mathematics", [mv.recover_coins(c) for c in range(36) if p.coins_on[c]],
                        "Mathematics: take back the coins of one building")
    raise AssertionError(f"no decision for task {kind}")


def exchange_moves(state: State, p: Player, eff: int) -> list:
    have = tuple(p.res)
    out = []
    for i, (pay, _) in enumerate(state.rules.effects[eff].options):
        out.extend(mv.exchange(i, v) for v in payments(pay, have))
    return out


def ship_moves(state: State, p: Player) -> list:
    have = tuple(p.res)
    out = []
    for slot, ship in enumerate(state.ship_slots):
        if ship >= 0:
            out.extend(mv.ship(slot, v) for v in payments(state.rules.ships[ship][0], have))
    return out


def astro_moves(p: Player, dock: int) -> list:
    return [mv.shift_ship(d) for d in range(4) if abs(d - dock) <= p.coins]


def religion_moves(p: Player) -> list:
    out = [mv.religion(False, NO_PAY)]
    if p.res[WHEAT]:
        out.append(mv.religion(True, (0, 1, 0, 0, 0)))
    if p.res[GOLD]:
        out.append(mv.religion(True, (0, 0, 0, 0, 1)))
    return out


def monk_moves(state: State, seat: int) -> list:
    p = state.players[seat]
    fee = state.rules.monk_fee
    return [mv.recruit_monk(i) for i, seats in enumerate(state.monks)
            if seat not in seats and p.coins >= fee * len(seats)]


def die_targets(p: Player, task: tuple) -> list[int]:
    _, _, line, index = task[:4]
    cells = ROW_CELLS[index] if line == ROW else COL_CELLS[index]
    free = free_buildings(p)
    return [c for c in cells if free >> c & 1]


def default_move(state: State, d: Decision):
    """DEFAULT_MOVE: decline an optional effect; in a turn, end it, or retreat to the lowest free
    space if the main action is still to come; otherwise the first listed move."""
    if DECLINE in d.moves:
        return DECLINE
    if d.kind == "santa_maria.turn":
        if END_TURN in d.moves:
            return END_TURN
        return [m for m in d.moves if type(m) is mv.Retreat][-1]
    if d.kind == "santa_maria.religion":
        return d.moves[0]
    return d.moves[0]


# ============================================================================ apply


def apply(state: State, seat: int, move) -> list[Event]:
    """Play one move. The move must be one of the decision's listed moves; that check comes
    before any change, so an IllegalMove leaves the state untouched."""
    d = decision(state)
    if d is None:
        raise IllegalMove("MATCH_OVER", "the game is over")
    if seat != d.seat:
        raise IllegalMove("NOT_YOUR_TURN", f"seat {d.seat} is to act ({d.kind}), not seat {seat}")
    for m in d.moves:
        if m is move:
            break
    else:
        if move not in d.moves:
            raise IllegalMove("ILLEGAL_MOVE", _why_illegal(state, d, move))
        move = d.moves[d.moves.index(move)]
    state.cache = None
    kind = type(move)
    if state.queue and kind is not mv.Sell and kind is not mv.Buy:
        task = state.queue.pop(0)
        events = _HANDLERS[task[0]](state, seat, task, move)
    else:
        events = _TURN[kind](state, seat, move)
    run(state)
    return events


def _why_illegal(state: State, d: Decision, move) -> str:
    names = {
        "santa_maria.turn": "your turn: one main action ((A) expand, (B) activate a building, "
        "(C) use a die, (D) retreat) and free actions, then EndTurn",
        "santa_maria.place_tile": "(A): the tile goes on empty cells of your colony",
        "santa_maria.exchange": "Échange: one listed option, paid exactly, or Decline",
        "santa_maria.ship": "Transport maritime: a face-up ship whose cost you pay, or Decline",
        "santa_maria.astronomy": "Astronomie: a dock you can pay to move to",
        "santa_maria.religion": "Religion: advance 1, or 2 paying 1 wheat",
        "santa_maria.monk": "Recruter un Moine: a space without your monk, paying 2 coins per monk there",
        "santa_maria.place_die": "Construction: a free building of the activated line",
        "santa_maria.road": "(D) road: a free cell",
        "santa_maria.mathematics": "Mathématiques: a building holding coins",
        "santa_maria.draft": "Règles avancées: a lot not yet taken",
    }
    return f"{type(move).__name__} is not legal now; {names.get(d.kind, d.kind)}"


def run(state: State) -> None:
    """Resolve tasks that need no choice; stop at the first that does (or an empty queue)."""
    q = state.queue
    while q:
        task = q[0]
        kind = task[0]
        auto = _AUTO.get(kind)
        if auto is None:
            break
        if not auto(state, task):
            break
    if not q and state.phase == DRAFT:
        state.boards_left = []  # the remaining boards go back in the box
        state.phase = YEAR
        _start_turn(state, state.first)


# ---- auto resolution: return True if the task was resolved (popped), False if it needs a choice


def _auto_gain(state: State, task: tuple) -> bool:
    state.queue.pop(0)
    gain(state, task[1], task[2])
    return True


def _auto_conq(state: State, task: tuple) -> bool:
    state.queue.pop(0)
    conquistador_step(state, task[1])
    return True


def _auto_bld(state: State, task: tuple) -> bool:
    """Activation des bâtiments: apply every effect of the building, in order."""
    state.queue.pop(0)
    seat, cell = task[1], task[2]
    r = state.rules
    kind = r.cells[state.players[seat].grid[cell]]
    tasks = []
    for e in kind.effects:
        eff = r.effects[e]
        k = eff.kind
        if k == FX_PRODUCE:
            tasks.append(("gain", seat, eff.gain))
        elif k == FX_CONQ:
            tasks.append(("conq", seat))
        elif k == FX_RELIGION:
            tasks.append(("rel", seat))
        elif k == FX_SHIP:
            tasks.append(("ship", seat))
        else:
            tasks.append(("exch", seat, e, cell, 0))
    state.queue[0:0] = tasks
    return True


def _auto_exch(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    if exchange_moves(state, p, task[2]) or sell_buy(state, p):
        return False
    state.queue.pop(0)
    return True


def _auto_ship(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    if any(x >= 0 for x in state.ship_slots) and (ship_moves(state, p) or sell_buy(state, p)):
        return False
    state.queue.pop(0)
    return True


def _auto_astro(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    if p.coins >= 1:
        return False
    state.queue.pop(0)
    return True


def _auto_rel(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    if p.res[WHEAT] or p.res[GOLD] or sell_buy(state, p):
        return False
    state.queue.pop(0)
    religion_steps(state, task[1], 1)
    return True


def _auto_monk(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    if p.monks_left > 0 and (monk_moves(state, task[1])
                             or (sell_buy(state, p) and any(task[1] not in m for m in state.monks))):
        return False
    state.queue.pop(0)
    return True


def _auto_die(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    targets = die_targets(p, task)
    if p.scholars & SCH["construction"] and len(targets) > 1:
        return False
    state.queue.pop(0)
    if targets:
        # 'Le dé doit être placé sur le dernier Bâtiment libre' (lowest / rightmost)
        _put_die(p, targets[-1], task[4])
    return True


def _auto_road(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    if state.roads_left > 0 and p.occ != ALL:
        return False
    state.queue.pop(0)
    return True


def _auto_math(state: State, task: tuple) -> bool:
    p = state.players[task[1]]
    holders = [c for c in range(36) if p.coins_on[c]]
    if len(holders) > 1:
        return False
    state.queue.pop(0)
    if holders:
        _recover(p, holders[0])
    return True


def _auto_bonus(state: State, task: tuple) -> bool:
    """(D): the bonus of every ship in the port, top dock first, in placement order."""
    state.queue.pop(0)
    seat = task[1]
    p = state.players[seat]
    tasks = []
    for dock, ships in enumerate(p.port):
        bonus, g = state.rules.docks[dock]
        for _ in ships:
            if bonus in ("coins", "points"):
                tasks.append(("gain", seat, g))
            elif bonus == "religion":
                tasks.append(("rel", seat))
            else:
                tasks.append(("conq", seat))
    state.queue[0:0] = tasks
    return True


_AUTO = {
    "gain": _auto_gain, "conq": _auto_conq, "bld": _auto_bld, "exch": _auto_exch,
    "ship": _auto_ship, "astro": _auto_astro, "rel": _auto_rel, "monk": _auto_monk,
    "die": _auto_die, "road": _auto_road, "math": _auto_math, "bonus": _auto_bonus,
}


# ---- tracks


def conquistador_step(state: State, seat: int) -> None:
    """Conquistador: +1 on the track (stacked on top of markers already there); passing a gold
    symbol gains 1 gold; at the end of the track further conquistadors are lost."""
    p = state.players[seat]
    r = state.rules
    if p.conq >= r.conq_length:
        return
    p.conq += 1
    state.stamp += 1
    p.conq_stamp = state.stamp
    if p.conq in r.gold_symbols:
        gain(state, seat, (0, 0, 0, 0, 1, 0, 0))


def religion_steps(state: State, seat: int, steps: int) -> None:
    """Religion: advance; each monk symbol reached lets the seat recruit a monk, the 1st and 3rd
    also unlock a blue die. At the last space each step that cannot be taken scores 1 point."""
    p = state.players[seat]
    r = state.rules
    tasks = []
    for _ in range(steps):
        if p.religion >= r.religion_length:
            p.points += 1
            continue
        p.religion += 1
        if p.religion in r.monk_symbols:
            k = r.monk_symbols.index(p.religion) + 1
            if k in r.blue_die_symbols:
                unlock_blue_die(state, seat)
            tasks.append(("monk", seat))
    state.queue[0:0] = tasks


def unlock_blue_die(state: State, seat: int) -> None:
    """Débloquer un dé bleu: roll it and keep it (shared variant: into the common pool). A die
    unlocked while retreating serves only from next year on (it is rolled at the year's end)."""
    p = state.players[seat]
    if p.blue_unlocked >= state.rules.blue_per_player:
        return
    p.blue_unlocked += 1
    if p.retreat >= 0:
        return
    face = state.rng.randint(1, 6)
    if state.shared:
        state.shared_blue.append(face)
        state.shared_blue.sort()
    else:
        p.blue.append(face)


# ---- turn actions


def _start_turn(state: State, seat: int) -> None:
    state.current = seat
    state.main_done = False


def do_expand(state: State, seat: int, move: mv.Expand) -> list[Event]:
    """(A) Agrandir sa Colonie: pay 2 wood (double) or 2 wood + 1 wheat (triple), take the tile
    from the display (not refilled this year) and place it (next decision)."""
    p = state.players[seat]
    tile = state.display[move.slot]
    _pay(p, move.pay)
    state.display[move.slot] = -1
    state.main_done = True
    state.queue.append(("place", seat, tile, move.slot))
    return [Event("santa_maria.expand", seat, f"seat {seat} buys development tile {move.slot}",
                  {"slot": move.slot, "pay": list(move.pay)})]


def do_activate(state: State, seat: int, move: mv.ActivateBuilding) -> list[Event]:
    """(B) Activer un bâtiment: the Nth coin activation of the year costs N coins, placed on the
    building (blocking it until the year's end)."""
    p = state.players[seat]
    p.activations += 1
    cost = p.activations
    p.coins -= cost
    p.coins_on[move.cell] = cost
    p.blocked |= 1 << move.cell
    state.main_done = True
    state.queue.append(("bld", seat, move.cell))
    return [Event("santa_maria.activate", seat, f"seat {seat} activates {cell_name(move.cell)} for {cost}",
                  {"cell": move.cell, "cost": cost})]


def do_use_die(state: State, seat: int, move: mv.UseDie) -> list[Event]:
    """(C) Activer une rangée/colonne: take the die, change it (1 coin per pip, or Botany), then
    activate every free building of the line in order and place the die on the last one.
    Taxation: 1 coin per 2 colonists in the line."""
    p = state.players[seat]
    r = state.rules
    if move.color == WHITE:
        state.white.remove(move.face)
        p.white_used += 1
    elif state.shared:
        state.shared_blue.remove(move.face)
        p.blue_used += 1
    else:
        p.blue.remove(move.face)
        p.blue_used += 1
    if move.botany >= 0:
        p.res[move.botany] -= 1
    else:
        p.coins -= abs(move.face - move.target) * r.pip_cost
    index = move.target - 1
    cells = ROW_CELLS[index] if move.line == ROW else COL_CELLS[index]
    free = free_buildings(p)
    active = [c for c in cells if free >> c & 1]
    if p.scholars & SCH["taxation"]:
        colonists = sum(r.cells[p.grid[c]].colonists for c in cells)
        p.coins += colonists // 2
    state.main_done = True
    state.queue.extend(("bld", seat, c) for c in active)
    state.queue.append(("die", seat, move.line, index, move.color))
    line = "row" if move.line == ROW else "column"
    return [Event("santa_maria.use_die", seat,
                  f"seat {seat} uses a {'white' if move.color == WHITE else 'blue'} {move.face} "
                  f"on {line} {move.target} ({len(active)} building(s))",
                  {"color": move.color, "face": move.face, "line": move.line, "target": move.target,
                   "botany": move.botany})]


def _put_die(p: Player, cell: int, color: int) -> None:
    p.die_on[cell] = color
    p.blocked |= 1 << cell


def do_retreat(state: State, seat: int, move: mv.Retreat) -> list[Event]:
    """(D) Se retirer: FIRST the retreat space and its action, THEN the ship bonuses top to bottom
    (then Mathematics: take back the coins of one building)."""
    p = state.players[seat]
    p.retreat = move.space
    state.retreat_occ[move.space] = seat
    state.main_done = True
    action, g = state.rules.retreat[move.space]
    tasks: list[tuple] = []
    if action == "coins":
        tasks.append(("gain", seat, g))
    elif action == "religion":
        tasks.append(("rel", seat))
    elif action == "conquistador":
        tasks.append(("conq", seat))
    elif action == "ship":
        tasks.append(("ship", seat))
    else:
        tasks.append(("road", seat))
    tasks.append(("bonus", seat))
    if p.scholars & SCH["mathematics"]:
        tasks.append(("math", seat))
    state.queue.extend(tasks)
    return [Event("santa_maria.retreat", seat, f"seat {seat} retreats to space {move.space} ({action})",
                  {"space": move.space})]


def do_sell(state: State, seat: int, move: mv.Sell) -> list[Event]:
    """Actions gratuites: sell 1 resource for 1 (wood, wheat) or 2 coins (sugar, gem, gold)."""
    p = state.players[seat]
    p.res[move.resource] -= 1
    p.coins += state.rules.sell[move.resource]
    return [Event("santa_maria.sell", seat, f"seat {seat} sells 1 {RES_NAMES[move.resource]}",
                  {"resource": RES_NAMES[move.resource]})]


def do_buy(state: State, seat: int, move: mv.Buy) -> list[Event]:
    p = state.players[seat]
    p.coins -= buy_price(state.rules, p, move.resource)
    p.res[move.resource] += 1
    return [Event("santa_maria.buy", seat, f"seat {seat} buys 1 {RES_NAMES[move.resource]}",
                  {"resource": RES_NAMES[move.resource]})]


def do_move_die(state: State, seat: int, move: mv.MoveDie) -> list[Event]:
    """Logistique: 1 coin to move a die to a free building connected by road or adjacency."""
    p = state.players[seat]
    p.coins -= 1
    color = p.die_on[move.src]
    p.die_on[move.src] = 0
    if not p.coins_on[move.src]:
        p.blocked &= ~(1 << move.src)
    _put_die(p, move.dst, color)
    return [Event("santa_maria.move_die", seat, f"seat {seat} moves a die {cell_name(move.src)} -> {cell_name(move.dst)}",
                  {"from": move.src, "to": move.dst})]


def do_end_turn(state: State, seat: int, move: mv.EndTurn) -> list[Event]:
    """Next seat clockwise that has not retreated; when all have, the year ends."""
    n = state.n
    for k in range(1, n + 1):
        nxt = (seat + k) % n
        if state.players[nxt].retreat < 0:
            _start_turn(state, nxt)
            return []
    return end_of_year(state)


_TURN = {
    mv.Expand: do_expand, mv.ActivateBuilding: do_activate, mv.UseDie: do_use_die,
    mv.Retreat: do_retreat, mv.Sell: do_sell, mv.Buy: do_buy, mv.MoveDie: do_move_die,
    mv.EndTurn: do_end_turn,
}


# ---- task handlers (the move answers the task at the queue's front, already popped)


def h_draft(state: State, seat: int, task: tuple, move: mv.DraftLot) -> list[Event]:
    """Règles avancées: take a lot (town hall + Scholar); place the town hall at once."""
    hall, scholar = state.lots[move.lot]
    state.lot_taken[move.lot] = True
    p = state.players[seat]
    p.own_scholar = scholar
    p.scholars |= SCH[scholar]
    if fits(tile_shape(state.rules, HALL_TILE + hall), p.occ):  # (a B side always has room)
        state.queue.insert(0, ("place", seat, HALL_TILE + hall, 10))
    else:
        _after_draft_step(state)
    return [Event("santa_maria.draft", seat, f"seat {seat} takes lot {move.lot} ({scholar})",
                  {"lot": move.lot, "scholar": scholar})]


def h_board(state: State, seat: int, task: tuple, move: mv.ChooseBoard) -> list[Event]:
    """Mise en place des colonies, later games: choose an A side, anticlockwise from the seat on
    the first player's right."""
    state.boards_left.remove(move.board)
    bid, grid = state.rules.boards_a[move.board]
    _give_board(state.players[seat], state.rules, bid, grid)
    _after_draft_step(state)
    return [Event("santa_maria.board", seat, f"seat {seat} chooses colony board {bid}", {"board": bid})]


def h_place(state: State, seat: int, task: tuple, move: mv.PlaceTile) -> list[Event]:
    tile = task[2]
    r = state.rules
    content = tile_cells(r, tile)
    for a, rot, cells in placements(tile_shape(r, tile), content, state.players[seat].occ):
        if a == move.cell and rot == move.rotation:
            break
    p = state.players[seat]
    for c, k in zip(cells, content):
        _set_cell(p, r, c, k)
    _after_draft_step(state)
    return [Event("santa_maria.place_tile", seat, f"seat {seat} places a tile at {cell_name(move.cell)}",
                  {"tile": tile if tile < HALL_TILE else -1, "cells": list(cells), "rotation": move.rotation})]


def _after_draft_step(state: State) -> None:
    if state.phase == DRAFT and state.queue and state.queue[0][0] in ("draft", "board"):
        state.current = state.queue[0][1]


def _set_cell(p: Player, r: Rules, c: int, k: int) -> None:
    p.grid[c] = k
    p.occ |= 1 << c
    if r.cells[k].building:
        p.bld |= 1 << c


def h_exch(state: State, seat: int, task: tuple, move) -> list[Event]:
    """Échange: pay the option's resources (gold wild) and gain; once per activation —
    Industrialisation: a second time."""
    if move is DECLINE:
        return []
    p = state.players[seat]
    eff = state.rules.effects[task[2]]
    _pay(p, move.pay)
    gain(state, seat, eff.options[move.option][1])
    if not task[4] and p.scholars & SCH["industrialization"]:
        state.queue.insert(0, ("exch", seat, task[2], task[3], 1))
    return [Event("santa_maria.exchange", seat, f"seat {seat} exchanges (option {move.option})",
                  {"option": move.option, "pay": list(move.pay)})]


def h_ship(state: State, seat: int, task: tuple, move) -> list[Event]:
    """Transport maritime: pay the ship's cost, put it in the port beside the dock of the same
    symbol, refill the slot from the face-down pile (an empty pile leaves it empty)."""
    if move is DECLINE:
        return []
    p = state.players[seat]
    ship = state.ship_slots[move.slot]
    _pay(p, move.pay)
    p.port[move.slot].append(ship)
    state.ship_slots[move.slot] = state.ship_pile.pop() if state.ship_pile else -1
    if p.scholars & SCH["astronomy"]:
        state.queue.insert(0, ("astro", seat, move.slot))
    new = state.ship_slots[move.slot]
    data: dict[str, Any] = {"slot": move.slot, "pay": list(move.pay)}
    if new >= 0:
        data["refill"] = {"cost": list(state.rules.ships[new][0]), "points": state.rules.ships[new][1]}
    return [Event("santa_maria.ship", seat, f"seat {seat} takes the ship of dock {move.slot}", data)]


def h_astro(state: State, seat: int, task: tuple, move: mv.ShiftShip) -> list[Event]:
    """Astronomie: 1 coin per dock moved."""
    p = state.players[seat]
    dock = task[2]
    if move.dock != dock:
        p.coins -= abs(move.dock - dock)
        p.port[move.dock].append(p.port[dock].pop())
    return [Event("santa_maria.astronomy", seat, f"seat {seat} moves its new ship to dock {move.dock}",
                  {"from": dock, "to": move.dock})]


def h_rel(state: State, seat: int, task: tuple, move: mv.Religion) -> list[Event]:
    p = state.players[seat]
    if move.extra:
        _pay(p, move.pay)
    religion_steps(state, seat, 2 if move.extra else 1)
    return [Event("santa_maria.religion", seat, f"seat {seat} advances to religion space {p.religion}",
                  {"extra": move.extra, "religion": p.religion})]


def h_monk(state: State, seat: int, task: tuple, move) -> list[Event]:
    """Recruter un Moine: 2 coins to each other owner there; Scholar = permanent effect, Bishop =
    end-game objective, camp = immediate reward."""
    if move is DECLINE:
        return []
    p = state.players[seat]
    space = move.space
    r = state.rules
    owners = state.monks[space]
    for o in owners:
        p.coins -= r.monk_fee
        state.players[o].coins += r.monk_fee
    owners.append(seat)
    p.monks_left -= 1
    ns = r.scholars_drawn
    if space < ns:
        p.scholars |= SCH[state.monk_tiles[space]]
    elif space >= ns + r.bishops_drawn:
        gain(state, seat, r.camps[space - ns - r.bishops_drawn])
    return [Event("santa_maria.monk", seat, f"seat {seat} places a monk on space {space}",
                  {"space": space, "paid_to": list(owners[:-1])})]


def h_die(state: State, seat: int, task: tuple, move: mv.PlaceDie) -> list[Event]:
    _put_die(state.players[seat], move.cell, task[4])
    return []


def h_road(state: State, seat: int, task: tuple, move) -> list[Event]:
    if move is DECLINE:
        return []
    state.roads_left -= 1
    p = state.players[seat]
    _set_cell(p, state.rules, move.cell, state.rules.road)
    return [Event("santa_maria.road", seat, f"seat {seat} places a road at {cell_name(move.cell)}",
                  {"cell": move.cell})]


def h_math(state: State, seat: int, task: tuple, move: mv.RecoverCoins) -> list[Event]:
    _recover(state.players[seat], move.cell)
    return []


def _recover(p: Player, cell: int) -> None:
    p.coins += p.coins_on[cell]
    p.coins_on[cell] = 0
    if not p.die_on[cell]:
        p.blocked &= ~(1 << cell)


_HANDLERS = {
    "board": h_board, "draft": h_draft, "place": h_place, "exch": h_exch, "ship": h_ship, "astro": h_astro,
    "rel": h_rel, "monk": h_monk, "die": h_die, "road": h_road, "math": h_math,
}


# ============================================================================ end of year


def conquistador_order(state: State) -> list[int]:
    """Seats that moved this year, ahead first: further on the track, then lower in the stack
    (arrived first)."""
    moved = [s for s in range(state.n) if state.players[s].conq > 0]
    return sorted(moved, key=lambda s: (-state.players[s].conq, state.players[s].conq_stamp))


def end_of_year(state: State) -> list[Event]:
    """Fin de l'Année: conquistador points, track reset, dice and coins off the buildings; after
    years 1 and 2 a new display, reroll, new first player from the retreat spaces."""
    r = state.rules
    events = []
    awarded = [0] * state.n
    if state.n == 1:
        # Jeu en solo: 4/5/6 points for passing the 1st/2nd/3rd tree in year 1/2/3
        p = state.players[0]
        if p.conq >= r.trees[state.year - 1]:
            awarded[0] = r.solo_tree_points[state.year - 1]
    else:
        table = r.conq_table[state.n][state.year - 1]
        for rank, s in enumerate(conquistador_order(state)):
            awarded[s] = table[rank]
    for s, pts in enumerate(awarded):
        state.players[s].points += pts
    events.append(Event("santa_maria.conquistadors", -1,
                        f"year {state.year}: conquistador points {awarded}", {"points": awarded}))
    for p in state.players:
        p.conq = 0
        p.conq_stamp = 0
        p.die_on = [0] * 36
        p.coins_on = [0] * 36
        p.blocked = 0
        p.white_used = 0
        p.blue_used = 0
        p.activations = 0
    order = sorted(range(state.n), key=lambda s: state.players[s].retreat)
    state.last_retreat = [p.retreat for p in state.players]
    if state.year >= r.years:
        return events + final_scoring(state)
    _new_display(state)
    state.white = sorted(state.rng.randint(1, 6) for _ in range(r.white_per_player * state.n))
    if state.shared:
        state.shared_blue = sorted(state.rng.randint(1, 6) for p in state.players for _ in range(p.blue_unlocked))
    else:
        for p in state.players:
            p.blue = [state.rng.randint(1, 6) for _ in range(p.blue_unlocked)]
    state.first = order[0]
    for p in state.players:
        p.retreat = -1
    state.retreat_occ = [-1] * len(r.retreat)
    state.year += 1
    _start_turn(state, state.first)
    events.append(Event("santa_maria.new_year", -1, f"year {state.year} begins; seat {state.first} first",
                        {"year": state.year, "first": state.first, "white": list(state.white)}))
    return events


# ============================================================================ final scoring


def complete_lines(p: Player) -> list[tuple[int, ...]]:
    return [cells for cells in ROW_CELLS + COL_CELLS if all(p.grid[c] for c in cells)]


def colonist_points(p: Player, r: Rules) -> int:
    """Colons: each complete row/column scores 1 per colonist in it (crossings count twice)."""
    return sum(r.cells[p.grid[c]].colonists for cells in complete_lines(p) for c in cells)


def port_columns(p: Player) -> int:
    return min(len(d) for d in p.port)


def bishop_score(state: State, p: Player, bishop: str) -> int:
    """Tuiles Évêque: the objective's points (the -2 is counted apart)."""
    r = state.rules
    par = r.bishop_params[bishop]
    grid = p.grid
    cells = r.cells
    if bishop == "square":
        best = 0
        for k in range(6, 0, -1):
            if any(all(grid[6 * (r0 + i) + c0 + j] for i in range(k) for j in range(k))
                   for r0 in range(7 - k) for c0 in range(7 - k)):
                best = k
                break
        pts = 0
        for size, value in zip(par["sizes"], par["points"]):
            if best >= size:
                pts = value
        return pts
    if bishop == "ships_in_one_dock":
        return min(par["max"], par["per"] * max(len(d) for d in p.port))
    if bishop in ("cities_to_town_hall", "colonists_to_town_hall"):
        halls = [c for c in range(36) if cells[grid[c]].terrain == T_HALL]
        if not halls:
            return 0
        reached, _ = reach(grid, cells, halls)
        if bishop == "cities_to_town_hall":
            n = sum(1 for c in reached if cells[grid[c]].terrain == T_CITY)
        else:
            n = sum(cells[grid[c]].colonists for c in reached if cells[grid[c]].terrain == T_ROAD)
        return min(par["max"], par["per"] * n)
    if bishop == "largest_area":
        best = 0
        seen: set[int] = set()
        for c in range(36):
            t = cells[grid[c]].terrain
            if c in seen or t not in (T_FARM, T_FOREST, T_MOUNTAIN):
                continue
            stack, size = [c], 0
            seen.add(c)
            while stack:
                x = stack.pop()
                size += 1
                for y in NEIGHBOURS[x]:
                    if y not in seen and cells[grid[y]].terrain == t:
                        seen.add(y)
                        stack.append(y)
            best = max(best, size)
        return min(par["max"], par["per"] * best)
    if bishop == "diversity":
        need = {T_FARM, T_FOREST, T_MOUNTAIN, T_CITY}
        n = sum(1 for line in ROW_CELLS + COL_CELLS if need <= {cells[grid[c]].terrain for c in line})
        return min(par["max"], par["per"] * n)
    raise AssertionError(bishop)


def final_scoring(state: State) -> list[Event]:
    """Décompte final: resources sold then 1 point per 3 coins; colonists on complete lines;
    Scholars' points, -2 per Bishop then its objective; 3 per complete port column; ships'
    points; purple points of the colony. Solo: the named achievements."""
    r = state.rules
    ns = r.scholars_drawn
    final = []
    for s, p in enumerate(state.players):
        coins = p.coins + sum(p.res[i] * r.sell[i] for i in range(5))
        f: dict[str, Any] = {"during_game": p.points, "coins": coins // r.coins_per_point}
        f["colonists"] = colonist_points(p, r)
        f["scholars"] = sum(r.scholar_points[state.monk_tiles[i]] for i in range(ns) if s in state.monks[i])
        objectives = 0
        bishops = 0
        for i in range(ns, ns + r.bishops_drawn):
            if s in state.monks[i]:
                bishops -= r.bishop_penalty
                objectives += bishop_score(state, p, state.monk_tiles[i])
        f["bishop_objectives"] = objectives
        f["bishops"] = bishops + objectives
        f["port"] = r.port_column_points * port_columns(p)
        f["ships"] = sum(r.ships[x][1] for dock in p.port for x in dock)
        f["buildings"] = sum(r.cells[k].end_points for k in p.grid)
        f["total"] = (f["during_game"] + f["coins"] + f["colonists"] + f["scholars"] + f["bishops"]
                      + f["port"] + f["ships"] + f["buildings"])
        f["last_retreat"] = state.last_retreat[s]
        if state.n == 1:
            f["achievements"] = achievements(state, p, f)
        final.append(f)
    state.final = final
    state.phase = OVER
    state.current = -1
    return [Event("santa_maria.final_scoring", -1,
                  "game over; points: " + ", ".join(str(f["total"]) for f in final), {"final": final})]


def achievements(state: State, p: Player, f: dict[str, Any]) -> list[str]:
    """Jeu en solo: Communisme, Capitalisme, Théocratie, Capracratie, Démocratie, Utopie."""
    a = state.rules.achievements
    cells = state.rules.cells
    out = []
    if f["colonists"] >= a["communism"]:
        out.append("communism")
    if port_columns(p) >= a["capitalism"]:
        out.append("capitalism")
    if f["bishop_objectives"] >= a["theocracy"]:
        out.append("theocracy")
    for line in ROW_CELLS + COL_CELLS:
        ts = {cells[p.grid[c]].terrain for c in line}
        if len(ts) == 1 and next(iter(ts)) not in (T_EMPTY, T_ROAD):
            out.append("capracracy")
            break
    if f["total"] >= a["democracy"]:
        out.append("democracy")
    if f["total"] >= a["utopia"]:
        out.append("utopia")
    return out


def cell_name(c: int) -> str:
    return f"({c // 6 + 1},{c % 6 + 1})"
