"""Batavia's final scoring ("Décompte"): goods majorities, the most bills, the arrival tile,
added to the gold of the exchanges (every game keeps this job in ``scoring.py``)."""
from __future__ import annotations

from typing import Any

from referee.core.contract import Event

from .catalog import GOOD_IDS, N_COMPANIES, N_GOODS
from .state import OVER, State


def final_scoring(state: State, reason: str) -> list[Event]:
    """Décompte: goods majorities per counting house (ties: the bracketed value each), 5 gold for
    the most bills (ties: 2 each), 4 gold for the arrival tile; no pirate attack now."""
    r = state.rules
    n = state.n
    final: list[dict[str, Any]] = [
        {"exchange": state.gold[s], "goods": {}, "bills": 0, "arrival": 0} for s in range(n)
    ]
    for g in range(N_GOODS):
        crates = [0] * n
        for c in range(N_COMPANIES):
            owner = state.crate_owner[c * N_GOODS + g]
            if owner >= 0:
                crates[owner] += 1
        most = max(crates)
        if most == 0:
            continue
        leaders = [s for s in range(n) if crates[s] == most]
        value = r.goods_gold[g][0] if len(leaders) == 1 else r.goods_gold[g][1]
        for s in leaders:
            final[s]["goods"][GOOD_IDS[g]] = value
    most_bills = max(state.bills)
    rich = [s for s in range(n) if state.bills[s] == most_bills]
    for s in rich:
        final[s]["bills"] = r.bills_gold[0] if len(rich) == 1 else r.bills_gold[1]
    if state.arrival_holder >= 0:
        final[state.arrival_holder]["arrival"] = r.arrival_gold
    for s in range(n):
        f = final[s]
        f["total"] = f["exchange"] + sum(f["goods"].values()) + f["bills"] + f["arrival"]
    state.final = final
    state.phase = OVER
    state.current = -1
    state.end_reason = reason
    return [
        Event(
            "batavia.final_scoring",
            -1,
            f"game over ({reason}); gold: " + ", ".join(f"seat {s} {f['total']}" for s, f in enumerate(final)),
            {"final": final, "reason": reason},
        )
    ]
