"""Helpers for Santa Maria tests: a fresh state, custom cells, playing listed moves."""
from __future__ import annotations

import dataclasses

from referee.core.rng import Streams
from referee.games.santa_maria import moves as mv
from referee.games.santa_maria import rules as R

# the cell builders of the default sheet's own script, so that a test's cells are written exactly
# as the sheet's are (a copy here had drifted: its road carried no colonist)
from referee.games.santa_maria.components.make_sheets import CONQ, REL, ROAD, SHIP, B, P, X
from referee.games.santa_maria.game import SantaMariaGame

GAME = SantaMariaGame()


def new_state(n: int = 2, seed: int = 1, **options) -> R.State:
    opts = GAME.spec.parse_options(options)
    return GAME.setup(opts, n, Streams(seed), GAME.default_components(opts))


def cell_kind(state: R.State, spec: dict) -> int:
    """Compile a cell spec into the state's rules (appending a cell kind and its effects)."""
    rules = state.rules
    effects = list(rules.effects)
    ids = []
    for e in spec.get("effects", []):
        effects.append(R.Effect(
            R.EFFECT_ID[e["kind"]], R.goods_tuple(e.get("gain")),
            tuple((R.payment_tuple(o["pay"]), R.goods_tuple(o["gain"])) for o in e.get("options", ())), e))
        ids.append(len(effects) - 1)
    terrain = R.TERRAIN_ID[spec["terrain"]]
    kind = R.CellKind(terrain, terrain != R.TERRAIN_ROAD, tuple(ids), spec.get("colonists", 0),
                      spec.get("end_points", 0), spec)
    state.rules = dataclasses.replace(rules, cells=rules.cells + (kind,), effects=tuple(effects))
    return len(state.rules.cells) - 1


def set_colony(state: R.State, seat: int, cells: dict[tuple[int, int], dict | None], clear=True):
    """Give ``seat`` a colony: {(row, col) 1-based: cell spec}; clear=True empties the rest."""
    p = state.players[seat]
    if clear:
        p.grid = [0] * 36
        p.occ = p.bld = p.printed = 0
    for (row, col), spec in cells.items():
        c = (row - 1) * 6 + col - 1
        k = cell_kind(state, spec) if spec else 0
        p.grid[c] = k
        if k:
            p.occ |= 1 << c
            if state.rules.cells[k].building:
                p.bld |= 1 << c
        else:
            p.occ &= ~(1 << c)
            p.bld &= ~(1 << c)
    state.cache = None


def cell(row, col):
    return (row - 1) * 6 + col - 1


def play(state, move, seat=None):
    """Apply a move that must be listed (compared by value)."""
    d = R.decision(state)
    assert move in d.moves, f"{move} not in {d.kind}: {d.moves}"
    return R.apply(state, d.seat if seat is None else seat, move)


def kinds(state):
    d = R.decision(state)
    return d.kind if d else None


def moves_of(state, cls):
    return [m for m in R.decision(state).moves if type(m) is cls]


def to_turn_of(state, seat):
    """Make ``seat`` the seat to act at the start of its turn (tests only)."""
    state.queue.clear()
    state.current = seat
    state.main_done = False
    state.cache = None


__all__ = [
    "CONQ",
    "GAME",
    "REL",
    "ROAD",
    "SHIP",
    "B",
    "P",
    "R",
    "X",
    "cell",
    "cell_kind",
    "kinds",
    "moves_of",
    "mv",
    "new_state",
    "play",
    "set_colony",
    "to_turn_of",
]
