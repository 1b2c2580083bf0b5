""""Final scoring": progress rows, colonies, Expedition symbol sets, most ducats, single
plantations (Foreman), Duty tiles kept face down, Missions."""
from __future__ import annotations

from typing import Any

from .catalog import COLUMNS, TILE_FOREMAN, TILE_MISSION, TILE_PLANTATION
from .state import OVER, State


def score_seat(state: State, p: int) -> dict[str, Any]:
    """Final scoring: progress rows, colonies, Expedition symbol sets, most ducats (ties: each),
    single plantations (3 VP each with the Foreman), Duty, Missions."""
    r = state.rules
    rows_vp = [r.row_vp[x] for x in state.rows[p]]
    ncol = sum(1 for x in state.colonies[p] if x >= 0)
    colonies = r.colony_vp[ncol - 1] if ncol else 0
    counts = [0] * len(r.symbols)
    for c in state.hands[p]:
        counts[r.cards[c].symbol] += 1
    cards = sum(r.set_vp[min(k, len(r.set_vp)) - 1] for k in counts if k)
    most = max(state.ducats)
    money = r.most_ducats_vp if state.ducats[p] == most else 0
    kept = [r.tiles[t] for t in state.kept[p]]
    foreman = any(t.type == TILE_FOREMAN for t in kept)
    singles = state.singles_down[p] + sum(
        1 for land in state.lands[p]
        if not land.colony and r.tiles[land.tile].type == TILE_PLANTATION
        and r.tiles[land.tile].fields == 1
    )
    single_vp = singles * (next(t.vp for t in kept if t.type == TILE_FOREMAN) if foreman else r.single_vp)
    missions = sum(t.vp for t in kept if t.type == TILE_MISSION)
    out: dict[str, Any] = {
        "progress": sum(rows_vp),
        "progress_by_column": dict(zip(COLUMNS, rows_vp)),
        "colonies": colonies,
        "expedition_cards": cards,
        "most_ducats": money,
        "single_plantations": single_vp,
        "duty": duty_vp(state, p),
        "missions": missions,
        "ducats": state.ducats[p],
    }
    out["total"] = (out["progress"] + colonies + cards + money + single_vp + out["duty"] + missions)
    return out


def duty_vp(state: State, p: int) -> int:
    """Victory points of the seat's fulfilled Duty tiles (kept face down, revealed at the end)."""
    return sum(state.rules.tiles[t].vp for t in state.duty_face_down[p])


def final_scoring(state: State) -> None:
    state.final = [score_seat(state, p) for p in range(state.n)]
    state.phase = OVER
    state.stack.clear()
