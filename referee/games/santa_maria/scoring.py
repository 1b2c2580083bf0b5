"""Santa Maria's scoring: the end of each year ("Fin de l'Année": conquistador points, a new
display, rerolled dice, the new first player) and the final scoring ("Fin de la partie /
Décompte final", "Tuiles Évêque", "Jeu en solo" achievements)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.core.contract import Event

from .catalog import (
    N_CELLS,
    N_RESOURCES,
    TERRAIN_CITY,
    TERRAIN_EMPTY,
    TERRAIN_FARM,
    TERRAIN_FOREST,
    TERRAIN_MOUNTAIN,
    TERRAIN_ROAD,
    TERRAIN_TOWN_HALL,
    CellKind,
    Rules,
)
from .dice import roll_blue, roll_white
from .game_setup import new_display
from .geometry import COL_CELLS, NEIGHBOURS, ROW_CELLS, reach
from .sheet import GRID_SIDE
from .state import OVER, Player, State
from .tracks import conquistador_order


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
                        f"end of year {state.year}: conquistador points "
                        + ", ".join(f"seat {k} {n}" for k, n in enumerate(awarded)), {"points": awarded}))
    for p in state.players:
        p.conq = 0
        p.conq_stamp = 0
        p.die_on = [0] * N_CELLS
        p.coins_on = [0] * N_CELLS
        p.blocked = 0
        p.white_used = 0
        p.blue_used = 0
        p.activations = 0
    order = sorted(range(state.n), key=lambda s: state.players[s].retreat)
    state.last_retreat = [p.retreat for p in state.players]
    if state.year >= r.years:
        return events + final_scoring(state)
    new_display(state)
    state.white = roll_white(state, state.year + 1)
    roll_blue(state, state.year + 1)
    state.first = order[0]
    for p in state.players:
        p.retreat = -1
    state.retreat_occ = [-1] * len(r.retreat)
    state.year += 1
    state.start_turn(state.first)
    events.append(Event("santa_maria.new_year", -1, f"year {state.year} begins; seat {state.first} is first player",
                        {"year": state.year, "first": state.first, "white": list(state.white)}))
    return events


def complete_lines(p: Player) -> list[tuple[int, ...]]:
    return [cells for cells in ROW_CELLS + COL_CELLS if all(p.grid[c] for c in cells)]


def colonist_points(p: Player, r: Rules) -> int:
    """Colons: each complete row/column scores 1 per colonist in it (crossings count twice)."""
    return sum(r.cells[p.grid[c]].colonists for cells in complete_lines(p) for c in cells)


def port_columns(p: Player) -> int:
    return min(len(d) for d in p.port)


def largest_square(grid: Sequence[int]) -> int:
    """The side of the largest square of occupied cells of a colony (0: none)."""
    for k in range(GRID_SIDE, 0, -1):
        if any(all(grid[GRID_SIDE * (r0 + i) + c0 + j] for i in range(k) for j in range(k))
               for r0 in range(GRID_SIDE + 1 - k) for c0 in range(GRID_SIDE + 1 - k)):
            return k
    return 0


def largest_area(grid: Sequence[int], cells: Sequence[CellKind]) -> int:
    """The most cells of one terrain (farm, forest or mountain) joined side by side."""
    best = 0
    seen: set[int] = set()
    for c in range(N_CELLS):
        t = cells[grid[c]].terrain
        if c in seen or t not in (TERRAIN_FARM, TERRAIN_FOREST, TERRAIN_MOUNTAIN):
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
    return best


def hall_reach(grid: list[int], cells: tuple[CellKind, ...]) -> tuple[int, int] | None:
    """(cities, colonists on roads) connected to the town hall (``reach``), None without one."""
    halls = [c for c in range(N_CELLS) if cells[grid[c]].terrain == TERRAIN_TOWN_HALL]
    if not halls:
        return None
    reached, _ = reach(grid, cells, halls)
    cities = sum(1 for c in reached if cells[grid[c]].terrain == TERRAIN_CITY)
    colonists = sum(cells[grid[c]].colonists for c in reached
                    if cells[grid[c]].terrain == TERRAIN_ROAD)
    return cities, colonists


def diverse_lines(grid: Sequence[int], cells: Sequence[CellKind]) -> int:
    """Rows and columns holding a farm, a forest, a mountain and a city."""
    need = {TERRAIN_FARM, TERRAIN_FOREST, TERRAIN_MOUNTAIN, TERRAIN_CITY}
    return sum(1 for line in ROW_CELLS + COL_CELLS
               if need <= {cells[grid[c]].terrain for c in line})


def bishop_score(state: State, p: Player, bishop: str) -> int:
    """Tuiles Évêque: the objective's points (the -2 is counted apart)."""
    r = state.rules
    par = r.bishop_params[bishop]
    grid = p.grid
    cells = r.cells
    if bishop == "square":
        best = largest_square(grid)
        pts = 0
        for size, value in zip(par["sizes"], par["points"]):
            if best >= size:
                pts = value
        return pts
    if bishop == "ships_in_one_dock":
        return min(par["max"], par["per"] * max(len(d) for d in p.port))
    if bishop in ("cities_to_town_hall", "colonists_to_town_hall"):
        found = hall_reach(grid, cells)
        if found is None:
            return 0
        n = found[0] if bishop == "cities_to_town_hall" else found[1]
        return min(par["max"], par["per"] * n)
    if bishop == "largest_area":
        return min(par["max"], par["per"] * largest_area(grid, cells))
    if bishop == "diversity":
        return min(par["max"], par["per"] * diverse_lines(grid, cells))
    raise AssertionError(bishop)


def final_scoring(state: State) -> list[Event]:
    """Décompte final: resources sold then 1 point per 3 coins; colonists on complete lines;
    Scholars' points, -2 per Bishop then its objective; 3 per complete port column; ships'
    points; purple points of the colony. Solo: the named achievements."""
    r = state.rules
    ns = r.scholars_drawn
    final = []
    for s, p in enumerate(state.players):
        coins = p.coins + sum(p.res[i] * r.sell[i] for i in range(N_RESOURCES))
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
                  "game over; points: " + ", ".join(f"seat {k} {f['total']}" for k, f in enumerate(final)), {"final": final})]


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
        if len(ts) == 1 and next(iter(ts)) not in (TERRAIN_EMPTY, TERRAIN_ROAD):
            out.append("capracracy")
            break
    if f["total"] >= a["democracy"]:
        out.append("democracy")
    if f["total"] >= a["utopia"]:
        out.append("utopia")
    return out
