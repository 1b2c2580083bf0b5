"""What each seat sees. Written for the view, not filtered from a dump: every colony, coin,
resource, die, track and monk is public; a seat sees the face of its own ships (placed face down
in its port), of others only how many ships each dock holds. Never the face-down development or
ship piles, the Scholars and Bishops left in the box, or the RNG.

Speed: the encoded View (``build_view_bytes``, what the referee sends and the search's rollouts
hand the greedy bot) caches the encodings of the parts that repeat from move to move, each
seat's holdings and the board's parts, keyed by what they show; concatenated encodings of a
message merge, so it parses to exactly ``build_view`` (tests/santa_maria/test_view_bytes.py)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.v1 import santa_maria_pb2 as pb

from .catalog import N_CELLS
from .rules import (
    DRAFT,
    HALL_TILE,
    OVER,
    SCHOLAR_BIT,
    YEAR,
    Rules,
    State,
    conquistador_order,
    decision,
)
from .sheet import GRID_SIDE
from .state import Player
from .view_parts import content, goods, tile_cells_view


def _flat(values: tuple) -> list[int]:
    """A queued step's fields as the View's integers (a goods tuple as its 7 numbers)."""
    out: list[int] = []
    for v in values:
        if isinstance(v, tuple):
            out.extend(v)
        else:
            out.append(int(v))
    return out


def _ship(rules: Rules, ship: int) -> pb.ShipTile:
    cost, points = rules.ships[ship]
    return pb.ShipTile(cost=goods(cost), points=points)


def _ranks(state: State) -> dict[int, int]:
    """Each seat's rank on the conquistador track."""
    return {s: i + 1 for i, s in enumerate(conquistador_order(state))}


def _add_player(players: Any, r: Rules, s: int, p: Player, rank: int, points: int,
                ships: bool) -> None:
    """Seat ``s``'s public holdings appended to ``players`` (its ships' faces if ``ships``)."""
    pp = players.add(
        seat=s,
        colony_board=p.board,
        coins=p.coins,
        resources=goods(tuple(p.res)),
        points=points,
        religion=p.religion,
        conquistador=p.conq,
        conquistador_rank=rank,
        blue_dice=sorted(p.blue),
        blue_unlocked=p.blue_unlocked,
        blue_used=p.blue_used,
        white_used=p.white_used,
        activation_cost=p.activations + 1,
        monks_left=p.monks_left,
        retreat_space=p.retreat,
        scholars=[n for n, bit in SCHOLAR_BIT.items() if p.scholars & bit],
        own_scholar=p.own_scholar,
        white_limit=r.white_per_year,
    )
    for c in range(N_CELLS):
        k = p.grid[c]
        if k:
            pp.colony.add(row=c // GRID_SIDE + 1, col=c % GRID_SIDE + 1, content=content(r, k),
                          die=p.die_on[c], coins=p.coins_on[c], printed=bool(p.printed >> c & 1))
    pp.port.ships_per_dock.extend(len(dk) for dk in p.port)
    if ships:
        for dock, docked in enumerate(p.port):
            for x in docked:
                pp.port.own_ships.add(dock=dock, ship=_ship(r, x))


def _add_board(view: pb.View, r: Rules, state: State) -> None:
    """The display, ship slots, docks, monk and retreat spaces, tracks, colony boards and lots."""
    for slot, tile in enumerate(state.display):
        dt = view.display.add(present=tile >= 0, triple=slot >= r.display_doubles)
        dt.cost.CopyFrom(goods(r.cost_triple if dt.triple else r.cost_double))
        if tile >= 0:
            dt.cells.extend(tile_cells_view(r, tile))
    for slot, ship in enumerate(state.ship_slots):
        ss = view.ship_slots.add(dock=slot, present=ship >= 0)
        if ship >= 0:
            ss.ship.CopyFrom(_ship(r, ship))
    for dock, (bonus, g) in enumerate(r.docks):
        view.docks.add(dock=dock, bonus=bonus, gain=goods(g))
    ns, nb = r.scholars_drawn, r.bishops_drawn
    for i, seats in enumerate(state.monks):
        if i < ns:
            ms = pb.MonkSpace(space=i, kind="scholar", tile=state.monk_tiles[i],
                              points=r.scholar_points[state.monk_tiles[i]])
        elif i < ns + nb:
            ms = pb.MonkSpace(space=i, kind="bishop", tile=state.monk_tiles[i])
        else:
            ms = pb.MonkSpace(space=i, kind="camp", reward=goods(r.camps[i - ns - nb]))
        ms.monks.extend(seats)
        view.monk_spaces.append(ms)
    for i, (action, g) in enumerate(r.retreat):
        view.retreat_spaces.add(space=i, action=action, gain=goods(g), occupant=state.retreat_occ[i])
    view.religion_track.CopyFrom(pb.Track(length=r.religion_length, monk_symbols=r.monk_symbols))
    view.conquistador_track.CopyFrom(pb.Track(length=r.conq_length, gold_symbols=r.gold_symbols, trees=r.trees))
    if state.boards_left:
        for i, (bid, grid) in enumerate(r.boards_a):
            cb = view.colony_boards.add(board=i, id=bid, taken=i not in state.boards_left)
            for c, k in enumerate(grid):
                if k:
                    cb.cells.add(row=c // GRID_SIDE + 1, col=c % GRID_SIDE + 1, content=content(r, k), printed=True)
    for i, (hall, scholar) in enumerate(state.lots):
        view.lots.add(lot=i, taken=state.lot_taken[i], town_hall=tile_cells_view(r, HALL_TILE + hall),
                      scholar=scholar)


def _board_key(r: Rules, state: State) -> tuple:
    """What :func:`_add_board` reads of the state (and the rules)."""
    return (r, tuple(state.display), tuple(state.ship_slots), tuple(state.monk_tiles),
            tuple(tuple(m) for m in state.monks), tuple(state.retreat_occ),
            tuple(state.boards_left), tuple(state.lots), tuple(state.lot_taken))


# A seat's holdings change only when it acts, the board's parts (display, ships, monks...) only
# now and then: in a rollout most Views repeat most of these encodings. A few thousand entries
# keep the hits and cap the memory at a few MB.
_CACHE_LIMIT = 8_192
_player_cache: dict[tuple, bytes] = {}
_board_cache: dict[tuple, bytes] = {}


def _cached(cache: dict[tuple, bytes], key: tuple, build: Callable[..., object]) -> bytes:
    frag = cache.get(key)
    if frag is None:
        one = pb.View()
        build(one)
        frag = one.SerializeToString()
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = frag
    return frag


def build_view_bytes(state: State, seat: int | None) -> bytes:
    """The encoded View: its scalars and pending decision built as :func:`build_view` does, then
    each seat's holdings and the board's parts from caches of their encodings. Concatenated encodings of a message merge
    (a repeated field appends), so it parses to exactly ``build_view(state, seat)``."""
    r = state.rules
    over = state.phase == OVER
    parts = [_build(state, seat, False, False).SerializeToString()]
    rank = _ranks(state)
    for s, p in enumerate(state.players):
        points = state.final[s]["total"] if over else p.points
        ships = seat == s or over
        key = (r, s, p.board, p.coins, tuple(p.res), points, p.religion, p.conq, rank.get(s, 0),
               tuple(p.blue), p.blue_unlocked, p.blue_used, p.white_used, p.activations,
               p.monks_left, p.retreat, p.scholars, p.own_scholar, tuple(p.grid),
               tuple(p.die_on), tuple(p.coins_on), p.printed, ships,
               tuple(tuple(dk) for dk in p.port))
        parts.append(_cached(_player_cache, key, lambda v, s=s, p=p, points=points, ships=ships:
                             _add_player(v.players, r, s, p, rank.get(s, 0), points, ships)))
    parts.append(_cached(_board_cache, _board_key(r, state),
                         lambda v: _add_board(v, r, state)))
    return b"".join(parts)


def build_view(state: State, seat: int | None) -> pb.View:
    return _build(state, seat, True)


def _build(state: State, seat: int | None, with_players: bool, with_board: bool = True
           ) -> pb.View:
    """The View, without the players' holdings unless ``with_players``, without the board's
    parts (:func:`_add_board`) unless ``with_board``."""
    r = state.rules
    over = state.phase == OVER
    d = decision(state)
    view = pb.View(
        seat=-1 if seat is None else seat,
        seat_count=state.n,
        phase={DRAFT: pb.DRAFT, YEAR: pb.YEAR, OVER: pb.GAME_OVER}[state.phase],
        year=state.year,
        first_player=state.first,
        current_seat=d.seat if d is not None else -1,
        white_dice=state.white,
        shared_blue_dice=state.shared_blue,
        doubles_left=len(state.pile_d),
        triples_left=len(state.pile_t),
        ships_left=len(state.ship_pile),
        road_tiles_left=state.roads_left,
        main_action_done=state.main_done and not state.queue,
        shared_blue_dice_variant=state.shared,
        advanced=state.advanced,
    )
    if state.n > 1:
        view.conquistador_points.extend(r.conq_table[state.n][min(state.year, r.years) - 1])
    else:
        view.conquistador_points.append(r.solo_tree_points[min(state.year, r.years) - 1])
    if d is not None:
        pend = pb.Pending(kind=d.kind)
        if state.queue:
            state.queue[0].pending_view(state, pend)
            for task in state.queue:
                pend.queue.add(tag=task.tag, args=_flat(task.hash_form()[1:]))
        view.pending.CopyFrom(pend)
    if with_players:
        rank = _ranks(state)
        for s, p in enumerate(state.players):
            _add_player(view.players, r, s, p, rank.get(s, 0),
                        state.final[s]["total"] if over else p.points, seat == s or over)
    if with_board:
        _add_board(view, r, state)
    if over:
        for s, f in enumerate(state.final):
            view.final.add(seat=s, during_game=f["during_game"], coins=f["coins"],
                           colonists=f["colonists"], scholars=f["scholars"], bishops=f["bishops"],
                           port=f["port"], ships=f["ships"], buildings=f["buildings"],
                           total=f["total"], achievements=f.get("achievements", []))
    return view

