"""Santa Maria's forward-model support (issue 21): a hand-written ``clone`` of the state and the
sampler that builds a full state from what seats saw (``sample_state``). SAMPLING.md in this
folder says what is hidden, how each part is drawn and which bias remains.
"""
from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from referee.core.contract import Event, sample_fitting
from referee.core.rng import Rng, Streams
from referee.v1 import santa_maria_pb2 as pb

from . import action_tasks, effect_tasks
from .catalog import HALL_TILE, N_CELLS, SCHOLAR_BIT, Rules
from .scoring import final_scoring
from .sheet import BISHOPS, GRID_SIDE, SCHOLARS
from .state import DRAFT, N_DOCKS, OVER, YEAR, Player, State, Task
from .view import build_view
from .view_parts import content, tile_cells_view

# ---------------------------------------------------------------------------- clone


def clone_player(p: Player) -> Player:
    """A player's copy: its lists copied, the rest (ints, strings) shared. Every field of
    ``Player`` is assigned here (``tests/santa_maria/test_sim.py`` checks it)."""
    c = object.__new__(Player)
    c.board = p.board
    c.grid = p.grid[:]
    c.printed = p.printed
    c.occ = p.occ
    c.bld = p.bld
    c.die_on = p.die_on[:]
    c.coins_on = p.coins_on[:]
    c.blocked = p.blocked
    c.coins = p.coins
    c.res = p.res[:]
    c.points = p.points
    c.religion = p.religion
    c.conq = p.conq
    c.conq_stamp = p.conq_stamp
    c.blue = p.blue[:]
    c.blue_unlocked = p.blue_unlocked
    c.blue_used = p.blue_used
    c.white_used = p.white_used
    c.activations = p.activations
    c.monks_left = p.monks_left
    c.port = [dock[:] for dock in p.port]
    c.retreat = p.retreat
    c.scholars = p.scholars
    c.own_scholar = p.own_scholar
    return c


def clone_state(s: State) -> State:
    """An independent copy: lists copied, immutable parts shared (the compiled ``Rules``, the
    options, the queued tasks, which nothing changes once queued, the lots' tuples). The
    memoised decision is dropped (the copy asks again). Every field of ``State`` is assigned
    here (``tests/santa_maria/test_sim.py`` checks it)."""
    c = object.__new__(State)
    c.n = s.n
    c.options = s.options
    c.rules = s.rules
    c.rng = copy.deepcopy(s.rng)  # a Streams copies its root and counts only
    c.players = [clone_player(p) for p in s.players]
    c.phase = s.phase
    c.year = s.year
    c.first = s.first
    c.current = s.current
    c.main_done = s.main_done
    c.advanced = s.advanced
    c.shared = s.shared
    c.white = s.white[:]
    c.shared_blue = s.shared_blue[:]
    c.display = s.display[:]
    c.pile_d = s.pile_d[:]
    c.pile_t = s.pile_t[:]
    c.ship_slots = s.ship_slots[:]
    c.ship_pile = s.ship_pile[:]
    c.monk_tiles = s.monk_tiles[:]
    c.monks = [seats[:] for seats in s.monks]
    c.retreat_occ = s.retreat_occ[:]
    c.roads_left = s.roads_left
    c.boards_left = s.boards_left[:]
    c.lots = s.lots[:]
    c.lot_taken = s.lot_taken[:]
    c.set_aside = s.set_aside[:]
    c.queue = s.queue[:]
    c.stamp = s.stamp
    c.last_retreat = s.last_retreat[:]
    c.final = [dict(f) for f in s.final]
    c.cache = None
    return c


# ---------------------------------------------------------------------------- sampler

_T = TypeVar("_T")

_PHASE = {pb.DRAFT: DRAFT, pb.YEAR: YEAR, pb.GAME_OVER: OVER}
#: every kind of queued step, by the tag the View's Pending.queue names it with
_TASKS: dict[str, type[Task]] = {
    cls.tag: cls for cls in (
        effect_tasks.BuildingActivation, effect_tasks.Production, effect_tasks.ConquistadorAdvance,
        effect_tasks.ExchangeOffer, effect_tasks.ShippingOffer, effect_tasks.AstronomyShift,
        effect_tasks.ReligionAdvance, effect_tasks.MonkRecruitment, action_tasks.BoardChoice,
        action_tasks.LotDraft, action_tasks.TilePlacement, action_tasks.DiePlacement,
        action_tasks.RoadPlacement, action_tasks.DockBonuses, action_tasks.MathematicsRecovery,
    )
}


@lru_cache(maxsize=16)
def _catalogue(rules: Rules) -> tuple[dict[bytes, int], dict[tuple[bytes, ...], list[int]],
                                      dict[bytes, list[int]]]:
    """What the View shows of a component, back to its ids: a cell's content to its kind, a
    tile's cells to the tiles (doubles, triples, town halls) that look like that, a ship's face
    to the ships that carry it. Components that look alike behave alike; ids in order."""
    kinds: dict[bytes, int] = {}
    for k in range(1, len(rules.cells)):
        kinds.setdefault(content(rules, k).SerializeToString(), k)
    tiles: dict[tuple[bytes, ...], list[int]] = {}
    ids = list(range(len(rules.doubles) + len(rules.triples)))
    ids += [HALL_TILE + i for i in range(len(rules.town_halls))]
    for t in ids:
        key = tuple(c.SerializeToString() for c in tile_cells_view(rules, t))
        tiles.setdefault(key, []).append(t)
    ships: dict[bytes, list[int]] = {}
    for x in range(len(rules.ships)):
        ships.setdefault(_ship_key(rules.ships[x][0], rules.ships[x][1]), []).append(x)
    return kinds, tiles, ships


def _ship_key(cost: Sequence[int], points: int) -> bytes:
    return repr((tuple(cost), points)).encode()


def _view_ship_key(ship: pb.ShipTile) -> bytes:
    g = ship.cost
    return _ship_key((g.wood, g.wheat, g.sugar, g.gem, g.gold), ship.points)


class _History:
    """What the public events add to the View (SAMPLING.md, "The history"): the development tiles
    already placed, last year's retreat spaces, and the face of every ship a seat took (it was
    face up on its dock; None for a starting ship, which no event shows), with the port dock it
    went to."""

    def __init__(self, history: Sequence[Event], n: int):
        self.placed: set[int] = set()
        self.retreats = [-1] * n
        self.last_retreat: list[int] = []
        self.taken: list[list[list[Any]]] = [[] for _ in range(n)]  # per seat: [dock, face]
        on_dock: dict[int, bytes | None] = {}  # a dock's ship, once a refill has shown it
        for ev in history:
            kind = ev.kind
            if kind == "santa_maria.ship":
                slot = ev.data["slot"]
                self.taken[ev.seat].append([slot, on_dock.get(slot)])
                refill = ev.data.get("refill")
                on_dock[slot] = _ship_key(refill["cost"], refill["points"]) if refill else None
            elif kind == "santa_maria.astronomy" and self.taken[ev.seat]:
                self.taken[ev.seat][-1][0] = ev.data["to"]
            elif kind == "santa_maria.place_tile" and ev.data["tile"] >= 0:
                self.placed.add(ev.data["tile"])
            elif kind == "santa_maria.retreat":
                self.retreats[ev.seat] = ev.data["space"]
            elif kind == "santa_maria.new_year":
                self.last_retreat, self.retreats = self.retreats, [-1] * n


def sample_state(
    views: Mapping[int, pb.View], history: Sequence[Event], rng: Rng,
    options: Mapping[str, Any], seat_count: int, rules: Rules,
) -> State:
    """A full state that shows every seat in ``views`` exactly its view, the hidden parts drawn
    with ``rng`` (SAMPLING.md). Views that no Santa Maria position shows (or several seats' views of
    different positions) raise ValueError."""
    return sample_fitting(
        lambda: _sample_state(views, history, rng, options, seat_count, rules), views,
        build_view, "Santa Maria")


def sampler(
    views: Mapping[int, pb.View], history: Sequence[Event], options: Mapping[str, Any],
    seat_count: int, rules: Rules,
) -> Callable[[Rng], State]:
    """``draw(rng)``, the same as ``sample_state(views, history, rng, ...)``, with what is on
    the table (``_public``: the View and the events read into a state) built once and copied
    at each draw, so a draw only deals the hidden parts (``_hidden``). Several seats' views go
    through ``sample_state`` at every draw (it checks that they show one position)."""
    if len(views) != 1:
        return lambda rng: sample_state(views, history, rng, options, seat_count, rules)
    table = _fitting(lambda: _public(views, history, options, seat_count, rules))

    def draw(rng: Rng) -> State:
        return _fitting(lambda: _hidden(clone_state(table.state), views, table, rng))

    return draw


def _fitting(make: Callable[[], _T]) -> _T:
    """``make()``, a view that fits no Santa Maria position a ValueError (as ``sample_fitting``
    makes it)."""
    try:
        return make()
    except (KeyError, IndexError) as exc:
        raise ValueError(f"the views do not fit a Santa Maria game ({exc!r})") from exc


def _sample_state(
    views: Mapping[int, pb.View], history: Sequence[Event], rng: Rng,
    options: Mapping[str, Any], seat_count: int, rules: Rules,
) -> State:
    """A full state that shows every seat in ``views`` exactly its view, the hidden parts drawn
    with ``rng`` (SAMPLING.md)."""
    table = _public(views, history, options, seat_count, rules)
    return _hidden(table.state, views, table, rng)


@dataclass(frozen=True, slots=True)
class _Table:
    """What every draw from the same views shares: the state of what is on the table (its
    hidden parts empty), the view read, the history's facts, the sheet's catalogue."""

    state: State
    view: pb.View
    history: _History
    tiles: dict[tuple[bytes, ...], list[int]]
    ships: dict[bytes, list[int]]


def _public(
    views: Mapping[int, pb.View], history: Sequence[Event], options: Mapping[str, Any],
    seat_count: int, rules: Rules,
) -> _Table:
    """The state of what the first view and the events show; the display, the piles, the
    ships, the ports and the chance empty, for ``_hidden`` to deal."""
    if not views:
        raise ValueError("sample_state needs at least one seat's view")
    v = views[min(views)]
    n = seat_count
    if v.seat_count != n or len(v.players) != n:
        raise ValueError(f"the view is of a {v.seat_count}-seat match, not {n}")
    kinds, tiles, ships = _catalogue(rules)
    h = _History(history, n)
    over = v.phase == pb.GAME_OVER

    s = object.__new__(State)
    s.n = n
    s.options = dict(options)
    s.rules = rules
    s.phase = _PHASE[v.phase]
    s.year = v.year
    s.first = v.first_player
    s.current = v.current_seat
    s.advanced = v.advanced
    s.shared = v.shared_blue_dice_variant
    s.white = list(v.white_dice)
    s.shared_blue = list(v.shared_blue_dice)
    s.roads_left = v.road_tiles_left
    s.queue = [_task(step) for step in v.pending.queue]
    s.main_done = v.main_action_done or (s.phase == YEAR and bool(s.queue))
    s.cache = None
    s.final = []
    s.players = [_player(pp, rules, kinds) for pp in v.players]
    ranked = sorted((pp.conquistador_rank, seat) for seat, pp in enumerate(v.players)
                    if pp.conquistador_rank)
    for rank, seat in ranked:
        s.players[seat].conq_stamp = rank
    s.stamp = len(ranked)
    # monks, retreat, lots, boards: all on the table
    s.monk_tiles = [m.tile for m in v.monk_spaces if m.kind != "camp"]
    s.monks = [list(m.monks) for m in v.monk_spaces]
    s.retreat_occ = [r.occupant for r in v.retreat_spaces]
    s.boards_left = [b.board for b in v.colony_boards if not b.taken]
    halls: set[int] = set()
    s.lots = []
    for lot in v.lots:
        hall = _lookup(tiles, lot.town_hall, halls)
        halls.add(hall)
        s.lots.append((hall - HALL_TILE, lot.scholar))
    s.lot_taken = [lot.taken for lot in v.lots]
    s.set_aside = _set_aside(s)
    s.last_retreat = [pp.retreat_space for pp in v.players] if over else h.last_retreat
    # dealt by _hidden
    s.display, s.pile_d, s.pile_t, s.ship_slots, s.ship_pile = [], [], [], [], []
    s.rng = None  # type: ignore[assignment]  # a Streams once dealt
    return _Table(s, v, h, tiles, ships)


def _hidden(s: State, views: Mapping[int, pb.View], table: _Table, rng: Rng) -> State:
    """``s`` (a state of ``_public``'s, or its copy) with the display, the piles, the ships and
    the chance dealt with ``rng``; scored when the game is over."""
    v = table.view
    _sample_tiles(s, v, table.history, rng, table.tiles)
    _sample_ships(s, views, v, table.history, rng, table.ships)
    s.rng = Streams.from_root(rng.next64(), {})  # Santa Maria counts no repeatable event
    if v.phase == pb.GAME_OVER:
        for p, f in zip(s.players, v.final):
            p.points = f.during_game  # the View shows the final total instead
        final_scoring(s)
    return s


def _task(step: pb.QueuedStep) -> Task:
    cls = _TASKS[step.tag]
    args = list(step.args)
    values: list[Any] = []
    name: str
    for name in cls.__slots__:
        if name == "goods":
            values.append(tuple(args[:7]))
            del args[:7]
        else:
            values.append(args.pop(0))
    return cls(*values)


def _lookup(catalogue: Mapping[tuple[bytes, ...], list[int]], cells: Sequence[pb.TileCell],
            used: set[int]) -> int:
    """The first id of a tile that looks like ``cells`` and is not in ``used``."""
    key = tuple(c.SerializeToString() for c in cells)
    for t in catalogue[key]:
        if t not in used:
            return t
    raise ValueError("the view shows more tiles of a kind than the component sheet has")


def _player(pp: pb.PlayerPublic, rules: Rules, kinds: Mapping[bytes, int]) -> Player:
    grid = [0] * N_CELLS
    die_on = [0] * N_CELLS
    coins_on = [0] * N_CELLS
    printed = 0
    for cell in pp.colony:
        c = (cell.row - 1) * GRID_SIDE + cell.col - 1
        grid[c] = kinds[cell.content.SerializeToString()]
        die_on[c], coins_on[c] = cell.die, cell.coins
        printed |= cell.printed << c
    g = pp.resources
    p = Player(
        board=pp.colony_board, grid=grid, printed=printed,
        occ=sum(1 << c for c in range(N_CELLS) if grid[c]),
        bld=sum(1 << c for c in range(N_CELLS) if rules.cells[grid[c]].building),
        die_on=die_on, coins_on=coins_on,
        blocked=sum(1 << c for c in range(N_CELLS) if die_on[c] or coins_on[c]),
        coins=pp.coins, res=[g.wood, g.wheat, g.sugar, g.gem, g.gold], points=pp.points,
        religion=pp.religion, conq=pp.conquistador, blue=list(pp.blue_dice),
        blue_unlocked=pp.blue_unlocked, blue_used=pp.blue_used, white_used=pp.white_used,
        activations=pp.activation_cost - 1, monks_left=pp.monks_left,
        port=[[] for _ in range(N_DOCKS)], retreat=pp.retreat_space,
        scholars=sum(SCHOLAR_BIT[name] for name in pp.scholars), own_scholar=pp.own_scholar,
    )
    return p


def _set_aside(s: State) -> list[str]:
    """The Scholars and Bishops in the box: those neither on a monk space nor in a lot, each
    group sorted as the set-up leaves them (so nothing is drawn)."""
    shown = set(s.monk_tiles) | {scholar for _hall, scholar in s.lots}
    return sorted(x for x in SCHOLARS if x not in shown) + sorted(
        x for x in BISHOPS if x not in shown)


def _sample_tiles(s: State, v: pb.View, h: _History, rng: Rng,
                  tiles: Mapping[tuple[bytes, ...], list[int]]) -> None:
    """The display from what it shows; each face-down pile from the tiles of its size neither
    shown, placed nor being placed, in a uniform order (a uniform subset when the events do not
    say which tiles earlier years' displays discarded)."""
    used = set(h.placed)
    used.update(t.tile for t in s.queue if isinstance(t, action_tasks.TilePlacement))
    s.display = []
    for slot in v.display:
        if slot.present:
            t = _lookup(tiles, slot.cells, used)
            used.add(t)
            s.display.append(t)
        else:
            s.display.append(-1)
    r = s.rules
    nd, nt = len(r.doubles), len(r.triples)
    piles = []
    for ids, size in ((range(nd), v.doubles_left), (range(nd, nd + nt), v.triples_left)):
        unseen = [t for t in ids if t not in used]
        if len(unseen) < size:
            raise ValueError("the view's face-down piles do not fit the component sheet")
        rng.shuffle(unseen)
        piles.append(unseen[:size])
    s.pile_d, s.pile_t = piles


def _sample_ships(s: State, views: Mapping[int, pb.View], v: pb.View, h: _History, rng: Rng,
                  ships: Mapping[bytes, list[int]]) -> None:
    """Ships face up on the board and in the ports of the seats given (or every port, once the
    game is over) from what they show. The other ports' ships are placed face down ('Transport
    maritime'), but each was face up on its dock when taken: a ship whose face a refill event
    showed goes back to its port dock, a dock's first ship is one of the unseen starting ships;
    the rest of those ports and the face-down pile are drawn uniformly from what is left, the
    starting ships (never in the pile) all in the ports."""
    used: set[int] = set()
    ships_of = {x: face for face, ids in ships.items() for x in ids}

    def identify(ship: pb.ShipTile) -> int:
        for x in ships[_view_ship_key(ship)]:
            if x not in used:
                used.add(x)
                return x
        raise ValueError("the view shows more ships of a kind than the component sheet has")

    s.ship_slots = [identify(slot.ship) if slot.present else -1 for slot in v.ship_slots]
    over = v.phase == pb.GAME_OVER
    hidden: list[tuple[int, int]] = []  # (seat, dock) of every face-down ship to draw
    for seat in range(s.n):
        shown = views.get(seat, v if over else None)
        if shown is not None:
            for ps in shown.players[seat].port.own_ships:
                s.players[seat].port[ps.dock].append(identify(ps.ship))
        else:
            for dock, count in enumerate(v.players[seat].port.ships_per_dock):
                hidden += [(seat, dock)] * count
    start = s.rules.n_starting_ships
    starting = [x for x in range(start) if x not in used]
    standard = [x for x in range(start, len(s.rules.ships)) if x not in used]
    rng.shuffle(standard)
    rng.shuffle(starting)
    # the ships the events show going into those ports first
    free = Counter(hidden)
    for seat, dock, face in _pinned(h, hidden):
        if face is None:
            if not starting:
                continue
            x = starting.pop()
        else:
            x = next((x for x in standard if ships_of[x] == face), -1)
            if x < 0:
                continue
            standard.remove(x)
        s.players[seat].port[dock].append(x)
        free[(seat, dock)] -= 1
    rest = []
    for place in hidden:
        if free[place] > 0:
            free[place] -= 1
            rest.append(place)
    pile_size = v.ships_left
    k = len(rest) - (len(standard) - pile_size)  # starting ships in those ports
    if len(standard) < pile_size or not 0 <= k <= len(starting):
        raise ValueError("the view's ships do not fit the component sheet")
    s.ship_pile = standard[:pile_size]
    in_ports = starting[:k] + standard[pile_size:]
    rng.shuffle(in_ports)
    for (seat, dock), x in zip(rest, in_ports):
        s.players[seat].port[dock].append(x)


def _pinned(h: _History, hidden: list[tuple[int, int]]) -> list[tuple[int, int, bytes | None]]:
    """(seat, dock, face) of the ships the events say went into a face-down port, as far as the
    View's counts of those ports leave room for them."""
    room = Counter(hidden)
    out = []
    for seat, taken in enumerate(h.taken):
        for dock, face in taken:
            if room[(seat, dock)] > 0:
                room[(seat, dock)] -= 1
                out.append((seat, dock, face))
    return out
