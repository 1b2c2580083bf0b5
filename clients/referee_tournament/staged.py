"""The events of :mod:`.events` on the runner's store: stored rows in, match specs and the
event's summary (standings, rounds, bracket, arena scores) out.

A Swiss or knockout schedule is never stored ahead: :func:`event_schedule` derives it from the
stored results every time (round r+1 once round r is resolved), so a killed runner, started
again, finds the same rounds with the same match indices, seeds and seatings (the store checks
the old schedule is a prefix of the new one) and plays only what is missing.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .config import TournamentConfig
from .events import Arena, EventState, Knockout, Played, Swiss, derive
from .formats import MatchSpec
from .report import did_not_play
from .store import Row


def played(row: Row, table: int = 0) -> Played:
    """A stored match as the events see it (resolved rows only carry results)."""
    seats = (row.outcome or {}).get("seats") or []
    no_play = tuple(did_not_play(s) for s in seats) if len(seats) == len(row.seating) else ()
    ranks = tuple(row.ranks) if row.status == "done" and row.ranks else None
    return Played(row.idx, row.round, table, tuple(row.seating), ranks, no_play,
                  tuple(row.scores or ()))


def seed_order(cfg: TournamentConfig, stored: str | None = None) -> list[str]:
    """The knockout's seeds: ``stored`` (the order fixed when the event started), else the file's
    order, or with ``seeding = "ratings"`` the ordinal (mu - 3 sigma) of each entrant in a
    previous run's ``results.json`` (``ratings_from``; entrants it lacks follow, in file order)."""
    if stored:
        order = json.loads(stored)
        if sorted(order) == sorted(cfg.names):
            return list(order)
    fmt = cfg.format
    if fmt.seeding != "ratings" or not fmt.ratings_from:
        return list(cfg.names)
    path = Path(fmt.ratings_from)
    if not path.is_absolute():
        path = Path(cfg.base_dir) / path
    if path.is_dir():
        path = path / "results.json"
    try:
        board = json.loads(path.read_text(encoding="utf-8")).get("leaderboard") or []
    except (OSError, ValueError) as exc:
        raise ValueError(f"format.ratings_from: cannot read ratings from {path}: {exc}") from None
    ordinal = {e["name"]: float(e["ordinal"]) for e in board
               if isinstance(e, dict) and "name" in e and "ordinal" in e}
    names = list(cfg.names)
    return sorted(names, key=lambda n: (n not in ordinal, -ordinal.get(n, 0.0), names.index(n)))


def planner(cfg: TournamentConfig, seeds: list[str] | None = None) -> Swiss | Knockout:
    fmt = cfg.format
    if fmt.type == "swiss":
        return Swiss(cfg.names, cfg.seats, fmt.rounds, cfg.seed, fmt.points,
                     fmt.duplicate_seeds, fmt.withdraw_after)
    if fmt.type == "knockout":
        return Knockout(seeds or cfg.names, cfg.seats, fmt.advance,
                        fmt.best_of or cfg.seats, cfg.seed, fmt.points, fmt.duplicate_seeds)
    raise ValueError(f"{fmt.type} is not a staged format")


def event_schedule(cfg: TournamentConfig, rows: list[Row], seeds: list[str] | None = None,
                   ) -> tuple[list[MatchSpec], EventState]:
    """Every match the stored results make known, in index order, and the event's state."""
    p = planner(cfg, seeds)
    by_idx = {r.idx: played(r) for r in rows}
    resolved = {r.idx for r in rows if r.status in ("done", "failed")}
    state = derive(p, by_idx, resolved)
    order = {n: i for i, n in enumerate(cfg.names)}
    specs: list[MatchSpec] = []
    for plan, idx in zip(state.rounds, state.indices, strict=True):
        for table, tidx in zip(plan.tables, idx, strict=True):
            canon = tuple(sorted(table.members, key=order.__getitem__))
            group = f"r{plan.number}:t{table.number}"
            for i, seating in zip(tidx, table.seatings, strict=True):
                specs.append(MatchSpec(i, plan.number, canon, group, seating, table.seed))
    return specs, state


def arena(cfg: TournamentConfig) -> Arena:
    return Arena(cfg.names, cfg.seats, cfg.format.points, cfg.format.withdraw_after)


def finished_order(rows: list[Row]) -> list[Played]:
    """Resolved matches in the order they finished (the order arena points are counted)."""
    done = [r for r in rows if r.status in ("done", "failed")]
    done.sort(key=lambda r: (r.finished or 0.0, r.idx))
    return [played(r) for r in done]


def summary(cfg: TournamentConfig, rows: list[Row], seeds: list[str] | None = None,
            ) -> dict[str, Any] | None:
    """The event's part of results.json: ``standings`` (with the tie-break values), and
    ``rounds`` (Swiss), ``bracket`` (knockout) or the arena's scores; None for other formats."""
    fmt = cfg.format
    if fmt.type == "arena":
        a = arena(cfg)
        return {"type": "arena", "complete": not any(r.status in ("pending", "running")
                                                     for r in rows),
                "points": list(a.points), "duration_s": fmt.duration_s,
                "standings": a.standings(finished_order(rows))}
    if fmt.type not in ("swiss", "knockout"):
        return None
    p = planner(cfg, seeds)
    _, state = event_schedule(cfg, rows, seeds)
    by_idx = {r.idx: r for r in rows}
    out: dict[str, Any] = {"type": fmt.type, "complete": state.complete,
                           "points": list(p.points), "standings": state.standings}
    if isinstance(p, Swiss):
        out["bye_points"] = p.bye_points
        out["rounds"] = [{
            "round": plan.number, "byes": plan.byes,
            "tables": [{"table": t.number, "seating": list(t.seatings[0]), "seed": str(t.seed),
                        "match": idx[j][0],
                        "status": by_idx[idx[j][0]].status if idx[j][0] in by_idx else "pending",
                        "ranks": by_idx[idx[j][0]].ranks if idx[j][0] in by_idx else None}
                       for j, t in enumerate(plan.tables)]}
            for plan, idx in zip(state.rounds, state.indices, strict=True)]
    else:
        out["seeds"] = list(p.seeds)
        out["advance"] = p.advance
        out["best_of"] = p.best_of
        out["bracket"] = state.bracket
    return out
