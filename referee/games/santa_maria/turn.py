"""Santa Maria's turn flow: the pending decision, applying a move, and the turn's actions.

The seat to act gets the "turn" decision: a main action ("(A) Agrandir sa Colonie", "(B) Activer
un bâtiment", "(C) Activer une rangée/colonne", "(D) Se retirer") and free actions ("Actions
gratuites"). A main action queues typed tasks (effect_tasks.py,
action_tasks.py); ``run`` resolves those needing no
choice, and the first that needs one is the next decision. With the queue empty the seat may
take free actions and ends its turn with EndTurn; when every seat has retreated the year ends
(scoring.py).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from referee.core.contract import Decision, Event, IllegalMove

from . import moves
from .action_tasks import (
    DiePlacement,
    DockBonuses,
    MathematicsRecovery,
    RoadPlacement,
    TilePlacement,
    put_die,
)
from .catalog import (
    DIE_FACES,
    GOLD,
    N_CELLS,
    RES_NAMES,
    SCHOLAR_BIT,
    SCHOLAR_BOTANY,
    SCHOLAR_LOGISTICS,
    SCHOLAR_PHILOSOPHY,
    WHEAT,
    WOOD,
    Rules,
    tile_cells,
    tile_shape,
)
from .effect_tasks import (
    BuildingActivation,
    ConquistadorAdvance,
    Production,
    ReligionAdvance,
    ShippingOffer,
)
from .geometry import COL_CELLS, COL_MASK, ROW_CELLS, ROW_MASK, cell_name, fits, reach
from .moves import BLUE, COL, DECLINE, END_TURN, ROW, WHITE
from .payments import buy_price, hand_in, payments, sell_buy_moves
from .scoring import end_of_year
from .sheet import GRID_SIDE
from .state import DRAFT, OVER, YEAR, Player, State, Task
from .wording import coins_text, display_slot_name, goods_text, retreat_name

#: Scholar Taxation: "gagnez 1 Pièce pour chaque paire de 2 Colons présents dans cette rangée /
#: colonne (arrondi à l'inférieure)" (Santa Maria, French rules, "Tuiles Savant")
TAXATION_COLONISTS = 2


def decision(state: State) -> Decision | None:
    """The pending decision: the task at the queue's front, else the turn. A pure query: the
    answer is memoised in ``state.cache``, which the state hash leaves out."""
    d = state.cache
    if d is not None:
        return d
    if state.phase == OVER:
        return None
    d = state.queue[0].decision(state) if state.queue else turn_decision(state)
    state.cache = d
    return d


def apply(state: State, seat: int, move: Any) -> list[Event]:
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
            raise IllegalMove("ILLEGAL_MOVE", _why_illegal(state, move))
        move = d.moves[d.moves.index(move)]
    state.cache = None
    kind = type(move)
    if state.queue and kind is not moves.Sell and kind is not moves.Buy:
        events = state.queue.pop(0).play(state, move)
    else:
        events = TURN_ACTIONS[kind](state, seat, move)
    run(state)
    return events


_TURN_RULE = ("your turn: one main action ((A) expand, (B) activate a building, (C) use a die, "
              "(D) retreat) and free actions, then EndTurn")


def _why_illegal(state: State, move: Any) -> str:
    rule = state.queue[0].rule if state.queue else _TURN_RULE
    return f"{type(move).__name__} is not legal now; {rule}"


def run(state: State) -> None:
    """Resolve the tasks that need no choice; stop at the first that does (or an empty queue).
    The set-up draft ends with the queue: the year begins."""
    q = state.queue
    while q and q[0].settle(state):
        pass
    if not q and state.phase == DRAFT:
        state.boards_left = []  # the remaining boards go back in the box
        state.phase = YEAR
        state.start_turn(state.first)


def default_move(state: State, d: Decision) -> Any:
    """DEFAULT_MOVE: decline an optional effect; in a turn, end it, or retreat to the lowest free
    space if the main action is still to come; otherwise the first listed move."""
    if DECLINE in d.moves:
        return DECLINE
    if d.kind == "santa_maria.turn":
        if END_TURN in d.moves:
            return END_TURN
        return [m for m in d.moves if type(m) is moves.Retreat][-1]
    if d.kind == "santa_maria.religion":
        return d.moves[0]
    return d.moves[0]


# ============================================================================ listing the turn's moves


_PROMPT_MAIN = "Main action: expand, activate a building, use a die or retreat (free actions too)"
_PROMPT_FREE = "Free actions (sell, buy, Logistics) or end your turn"


def turn_decision(state: State) -> Decision:
    seat = state.current
    p = state.players[seat]
    r = state.rules
    if state.main_done:
        listed = free_action_moves(state, p)
        listed.append(END_TURN)
        return Decision(seat, "santa_maria.turn", listed, _PROMPT_FREE)
    # (A) Agrandir sa Colonie
    listed = list(expand_moves(r, tuple(state.display), tuple(p.res), p.occ))
    free = p.bld & ~p.blocked
    if free:
        # (B) Activer un bâtiment
        if p.coins > p.activations:
            listed += activate_moves(free)
        # (C) Activer une rangée/colonne
        listed += die_moves(state, p, free)
    # (D) Se retirer
    listed += retreat_moves(tuple(state.retreat_occ))
    listed += free_action_moves(state, p)
    return Decision(seat, "santa_maria.turn", listed, _PROMPT_MAIN)


@lru_cache(maxsize=65536)
def expand_moves(r: Rules, display: tuple[int, ...], have: tuple[int, ...], occ: int) -> tuple:
    out: list = []
    for slot, tile in enumerate(display):
        if tile < 0:
            continue
        cells = tile_cells(r, tile)
        cost = r.cost_double if len(cells) == 2 else r.cost_triple
        pays = payments(cost, have)
        if pays and fits(tile_shape(r, tile), occ):
            out.extend(moves.expand(slot, pay) for pay in pays)
    return tuple(out)


@lru_cache(maxsize=65536)
def activate_moves(free: int) -> tuple:
    return tuple(moves.activate_building(c) for c in range(N_CELLS) if free >> c & 1)


@lru_cache(maxsize=1 << 12)
def retreat_moves(occ: tuple[int, ...]) -> tuple:
    return tuple(moves.retreat(i) for i, o in enumerate(occ) if o < 0)


@lru_cache(maxsize=1 << 16)  # keyed by a 36-bit mask: bounded
def _line_bits(free: int) -> tuple[int, int]:
    rows = sum(1 << i for i in range(GRID_SIDE) if free & ROW_MASK[i])
    cols = sum(1 << i for i in range(GRID_SIDE) if free & COL_MASK[i])
    return rows, cols


@lru_cache(maxsize=65536)
def _die_options(color: int, face: int, line: int, bits: int, coins: int, botany: tuple[int, ...],
                 pip_cost: int) -> tuple:
    out = []
    for t in range(GRID_SIDE):
        if not bits >> t & 1:
            continue
        if abs(face - 1 - t) * pip_cost <= coins:
            out.append(moves.use_die(color, face, line, t + 1, -1))
        if face - 1 != t:
            out.extend(moves.use_die(color, face, line, t + 1, b) for b in botany)
    return tuple(out)


def die_moves(state: State, p: Player, free: int) -> list:
    r = state.rules
    out: list = []
    rows, cols = _line_bits(free)
    coins = min(p.coins, (DIE_FACES - 1) * r.pip_cost)  # the dearest change of a die
    botany: tuple[int, ...] = ()
    sch = p.scholars
    if sch & SCHOLAR_BOTANY:
        botany = tuple(x for x in (WOOD, WHEAT, GOLD) if p.res[x])
    pip = r.pip_cost
    if p.white_used < r.white_per_year:
        for f in _faces(tuple(state.white)):
            out += _die_options(WHITE, f, COL, cols, coins, botany, pip)
    if state.shared:
        blue = _faces(tuple(state.shared_blue)) if p.blue_used < p.blue_unlocked else ()
    else:
        blue = _faces(tuple(p.blue))
    philosophy = sch & SCHOLAR_PHILOSOPHY
    for f in blue:
        out += _die_options(BLUE, f, ROW, rows, coins, botany, pip)
        if philosophy:
            out += _die_options(BLUE, f, COL, cols, coins, botany, pip)
    return out


@lru_cache(maxsize=4096)
def _faces(dice: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(set(dice)))


def free_action_moves(state: State, p: Player) -> list:
    """Actions gratuites: sell, buy (Scholars: Basic/Advanced economy), Logistics."""
    r = state.rules
    sch = p.scholars
    out = sell_buy_moves(state, p)
    if sch & SCHOLAR_LOGISTICS and p.coins >= 1 and p.blocked:
        free = p.bld & ~p.blocked
        for src in range(N_CELLS):
            if p.die_on[src]:
                reached, _ = reach(p.grid, r.cells, [src])
                out.extend(moves.move_die(src, dst) for dst in sorted(reached) if free >> dst & 1)
    return out


# ============================================================================ the turn's actions


def expand_colony(state: State, seat: int, move: moves.Expand) -> list[Event]:
    """(A) Agrandir sa Colonie: pay 2 wood (double) or 2 wood + 1 wheat (triple), take the tile
    from the display (not refilled this year) and place it (next decision)."""
    p = state.players[seat]
    tile = state.display[move.slot]
    hand_in(p, move.pay)
    state.display[move.slot] = -1
    state.main_done = True
    state.queue.append(TilePlacement(seat, tile, move.slot))
    return [Event("santa_maria.expand", seat, f"seat {seat} expands: buys the {display_slot_name(state.rules, move.slot)} for "
                  f"{goods_text(move.pay)}",
                  {"slot": move.slot, "pay": list(move.pay)})]


def activate_building(state: State, seat: int, move: moves.ActivateBuilding) -> list[Event]:
    """(B) Activer un bâtiment: the Nth coin activation of the year costs N coins, placed on the
    building (blocking it until the year's end)."""
    p = state.players[seat]
    p.activations += 1
    cost = p.activations
    p.coins -= cost
    p.coins_on[move.cell] = cost
    p.blocked |= 1 << move.cell
    state.main_done = True
    state.queue.append(BuildingActivation(seat, move.cell))
    return [Event("santa_maria.activate", seat, f"seat {seat} activates the building at {cell_name(move.cell)} for "
                  f"{coins_text(cost)}",
                  {"cell": move.cell, "cost": cost})]


def _buildings(n: int) -> str:
    return "no building" if n == 0 else "1 building" if n == 1 else f"{n} buildings"


def use_die(state: State, seat: int, move: moves.UseDie) -> list[Event]:
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
    free = p.free_buildings()
    active = [c for c in cells if free >> c & 1]
    if p.scholars & SCHOLAR_BIT["taxation"]:
        colonists = sum(r.cells[p.grid[c]].colonists for c in cells)
        p.coins += colonists // TAXATION_COLONISTS
    state.main_done = True
    state.queue.extend(BuildingActivation(seat, c) for c in active)
    state.queue.append(DiePlacement(seat, move.line, index, move.color))
    line = "row" if move.line == ROW else "column"
    return [Event("santa_maria.use_die", seat,
                  f"seat {seat} places a {'white' if move.color == WHITE else 'blue'} die ({move.face}) "
                  f"on {line} {move.target}: {_buildings(len(active))} activated",
                  {"color": move.color, "face": move.face, "line": move.line, "target": move.target,
                   "botany": move.botany})]


def retreat(state: State, seat: int, move: moves.Retreat) -> list[Event]:
    """(D) Se retirer: FIRST the retreat space and its action, THEN the ship bonuses top to bottom
    (then Mathematics: take back the coins of one building)."""
    p = state.players[seat]
    p.retreat = move.space
    state.retreat_occ[move.space] = seat
    state.main_done = True
    action, g = state.rules.retreat[move.space]
    tasks: list[Task] = []
    if action == "coins":
        tasks.append(Production(seat, g))
    elif action == "religion":
        tasks.append(ReligionAdvance(seat))
    elif action == "conquistador":
        tasks.append(ConquistadorAdvance(seat))
    elif action == "ship":
        tasks.append(ShippingOffer(seat))
    else:
        tasks.append(RoadPlacement(seat))
    tasks.append(DockBonuses(seat))
    if p.scholars & SCHOLAR_BIT["mathematics"]:
        tasks.append(MathematicsRecovery(seat))
    state.queue.extend(tasks)
    return [Event("santa_maria.retreat", seat, f"seat {seat} retreats to {retreat_name(state.rules, move.space)}",
                  {"space": move.space})]


def sell(state: State, seat: int, move: moves.Sell) -> list[Event]:
    """Actions gratuites: sell 1 resource for 1 (wood, wheat) or 2 coins (sugar, gem, gold)."""
    p = state.players[seat]
    p.res[move.resource] -= 1
    p.coins += state.rules.sell[move.resource]
    return [Event("santa_maria.sell", seat, f"seat {seat} sells 1 {RES_NAMES[move.resource]} for "
                  f"{coins_text(state.rules.sell[move.resource])}",
                  {"resource": RES_NAMES[move.resource]})]


def buy(state: State, seat: int, move: moves.Buy) -> list[Event]:
    p = state.players[seat]
    price = buy_price(state.rules, p, move.resource)
    p.coins -= price
    p.res[move.resource] += 1
    return [Event("santa_maria.buy", seat,
                  f"seat {seat} buys 1 {RES_NAMES[move.resource]} for {coins_text(price)}",
                  {"resource": RES_NAMES[move.resource]})]


def move_die(state: State, seat: int, move: moves.MoveDie) -> list[Event]:
    """Logistique: 1 coin to move a die to a free building connected by road or adjacency."""
    p = state.players[seat]
    p.coins -= 1
    color = p.die_on[move.src]
    p.die_on[move.src] = 0
    if not p.coins_on[move.src]:
        p.blocked &= ~(1 << move.src)
    put_die(p, move.dst, color)
    return [Event("santa_maria.move_die", seat, f"seat {seat} pays 1 coin (Logistics) to move a die from {cell_name(move.src)} to "
                  f"{cell_name(move.dst)}",
                  {"from": move.src, "to": move.dst})]


def end_turn(state: State, seat: int, move: moves.EndTurn) -> list[Event]:
    """Next seat clockwise that has not retreated; when all have, the year ends."""
    n = state.n
    for k in range(1, n + 1):
        nxt = (seat + k) % n
        if state.players[nxt].retreat < 0:
            state.start_turn(nxt)
            return []
    return end_of_year(state)


#: the turn's own moves (main actions, free actions, EndTurn) and what each does
TURN_ACTIONS: dict[type, Callable[[State, int, Any], list[Event]]] = {
    moves.Expand: expand_colony, moves.ActivateBuilding: activate_building, moves.UseDie: use_die,
    moves.Retreat: retreat, moves.Sell: sell, moves.Buy: buy, moves.MoveDie: move_die,
    moves.EndTurn: end_turn,
}
