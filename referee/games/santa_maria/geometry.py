"""Santa Maria's colony geometry: the 6x6 grid (cell = row * 6 + col), its rows, columns and
neighbours, where a tile fits ("(A) Agrandir sa Colonie"), and what a road network connects
("Tuiles Savant: Logistique", "Tuiles Évêque")."""
from __future__ import annotations

from functools import cache, lru_cache

from .catalog import N_CELLS, TERRAIN_ROAD, CellKind
from .sheet import GRID_SIDE

ALL = (1 << N_CELLS) - 1
ROW_MASK = tuple(((1 << GRID_SIDE) - 1) << (GRID_SIDE * r) for r in range(GRID_SIDE))
COL_MASK = tuple(sum(1 << (GRID_SIDE * r + c) for r in range(GRID_SIDE)) for c in range(GRID_SIDE))
ROW_CELLS = tuple(tuple(GRID_SIDE * r + c for c in range(GRID_SIDE)) for r in range(GRID_SIDE))
COL_CELLS = tuple(tuple(GRID_SIDE * r + c for r in range(GRID_SIDE)) for c in range(GRID_SIDE))
NEIGHBOURS = tuple(
    tuple(GRID_SIDE * rr + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
          if 0 <= rr < GRID_SIDE and 0 <= cc < GRID_SIDE)
    for r in range(GRID_SIDE) for c in range(GRID_SIDE)
)


#: a tile lies in any of its four quarter-turns
N_ROTATIONS = 4


@cache
def orientations(shape: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int, tuple[int, ...], int], ...]:
    """Every (anchor cell, rotation, cells, mask) of a shape on the 6x6 grid. A quarter-turn
    clockwise maps an offset (dr, dc) to (dc, -dr)."""
    out = []
    for rot in range(N_ROTATIONS):
        offs = list(shape)
        for _ in range(rot):
            offs = [(dc, -dr) for dr, dc in offs]
        for r in range(GRID_SIDE):
            for c in range(GRID_SIDE):
                pos = [(r + dr, c + dc) for dr, dc in offs]
                if all(0 <= rr < GRID_SIDE and 0 <= cc < GRID_SIDE for rr, cc in pos):
                    cells = tuple(GRID_SIDE * rr + cc for rr, cc in pos)
                    out.append((GRID_SIDE * r + c, rot, cells, sum(1 << x for x in cells)))
    return tuple(out)


@lru_cache(maxsize=65536)
def placements(shape: tuple[tuple[int, int], ...], content: tuple[int, ...], occ: int) -> tuple:
    """Legal placements of a tile on empty cells: (anchor, rotation, cells), one per distinct
    result (a tile with two equal cells turned half-way lands the same)."""
    seen = set()
    out = []
    for anchor, rot, cells, mask in orientations(shape):
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
    return any(not (mask & occ) for _, _, _, mask in orientations(shape))


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
            if cells_kind[grid[y]].terrain == TERRAIN_ROAD:
                roads.add(y)
                frontier.append(y)
    return reached, roads


def cell_name(c: int) -> str:
    """(row,col), 1-based, as the rulebook and the protocol count."""
    return f"({c // GRID_SIDE + 1},{c % GRID_SIDE + 1})"
