"""The play area: cell geometry (the 5x5 grid, indexed ``r * 5 + c``, plus the edge spaces; a
board cell is ``(r + 1) * 7 + (c + 1)`` with r, c in -1..5), laying out a phase's tiles (Game
setup 1, After phase A), and where the flag and the auction tokens may go ("Details on
placing")."""
from __future__ import annotations

from referee.core.contract import Event

from .catalog import BOARD_CELLS, BOARD_SIDE, GRID_SIDE, GRID_SQUARES, is_plantation_tile
from .state import State


def cell_of(r: int, c: int) -> int:
    return (r + 1) * BOARD_SIDE + (c + 1)


def rc_of(cell: int) -> tuple[int, int]:
    return cell // BOARD_SIDE - 1, cell % BOARD_SIDE - 1


def _on_grid(r: int, c: int) -> bool:
    return 0 <= r < GRID_SIDE and 0 <= c < GRID_SIDE


def grid_index(cell: int) -> int:
    r, c = rc_of(cell)
    return r * GRID_SIDE + c if _on_grid(r, c) else -1


GRID_CELLS = tuple(cell_of(i // GRID_SIDE, i % GRID_SIDE) for i in range(GRID_SQUARES))


EDGE_CELLS = tuple(
    [cell_of(-1, c) for c in range(GRID_SIDE)] + [cell_of(GRID_SIDE, c) for c in range(GRID_SIDE)]
    + [cell_of(r, -1) for r in range(GRID_SIDE)] + [cell_of(r, GRID_SIDE) for r in range(GRID_SIDE)]
)


# orthogonal grid neighbours (grid indices) of every board cell
ORTH = tuple(
    tuple(
        (r + dr) * GRID_SIDE + (c + dc)
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
        if _on_grid(r + dr, c + dc)
    )
    for r, c in (rc_of(x) for x in range(BOARD_CELLS))
)


# king-move grid neighbours (grid indices) of every board cell
KING = tuple(
    tuple(
        (r + dr) * GRID_SIDE + (c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and _on_grid(r + dr, c + dc)
    )
    for r, c in (rc_of(x) for x in range(BOARD_CELLS))
)


LAST = GRID_SIDE - 1
CORNERS = (0, LAST, LAST * GRID_SIDE, LAST * GRID_SIDE + LAST)  # grid indices


def lay_out_phase(state: State, phase: str) -> list[Event]:
    """Game setup 1 (and 'After phase A'): shuffle the phase's tiles, reveal and return to the box
    4 (2004: 2), never more than 2 plantations (a revealed plantation beyond that goes back and
    another tile is revealed), lay the other 25 out face up. Bonanza: one face-down Bonanza tile
    under each corner tile."""
    r = state.rules
    pile = state.stacks[phase]
    state.stacks[phase] = []
    rng = state.rng.stream("lay_out", phase)  # the whole lay-out is one chance event
    rng.shuffle(pile)
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
        rng.shuffle(pile)
    state.box.extend(removed)
    state.grid = [pile[i] if i < len(pile) else -1 for i in range(GRID_SQUARES)]
    state.tile_discard.extend(pile[GRID_SQUARES:])
    state.bonanza = [-1] * GRID_SQUARES
    if state.options.get("bonanza") and r.bonanza:
        order = list(range(len(r.bonanza)))
        rng.shuffle(order)
        for corner, b in zip(CORNERS, order):
            state.bonanza[corner] = b
    if not boxed_tiles_seen(state):  # 2004: returned to the box unseen
        return [Event("goa.phase_laid_out", -1,
                      f"phase {phase}: {GRID_SQUARES} tiles laid out; {len(removed)} returned to the box unseen",
                      {"phase": phase, "removed_count": len(removed)})]
    return [
        Event(
            "goa.phase_laid_out",
            -1,
            f"phase {phase}: {GRID_SQUARES} tiles laid out; returned to the box: "
            + ", ".join(r.tiles[t].name for t in removed),
            {"phase": phase, "removed": removed},
        )
    ]


def boxed_tiles_seen(state: State) -> bool:
    """2012 Setup 1 reveals the tiles returned to the box (Favor may take one later); 2004
    Préparation puts the two unused A tiles back unseen."""
    return state.edition != "2004"


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
    for g in range(GRID_SQUARES):
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
        out = [GRID_CELLS[g] for g in range(GRID_SQUARES) if grid[g] >= 0 and GRID_CELLS[g] not in taken]
    out.sort()
    return out
