"""``referee-tournament report runs/league-NAME/``: a league folder's HTML report.

The same files as a tournament's or a ladder's (``index.html``, ``results.json``,
``matches.csv``, plots, replays), from the league's database alone: every finished match with
each seat's outcome, and the league's own ratings. Entrants are bot versions (``bot@2``; a
remote bot is its name); hosted versions are marked sandboxed.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ..ladder import write_rated_report
from ..runner import METHODS, RunError
from .challenges import is_pool
from .events import events_json, report_event
from .store import LeagueStore, split_key


def is_league_folder(out: Path) -> bool:
    return (Path(out) / "league.sqlite").is_file()


def report_only(out: Path, console=None) -> dict[str, Any]:
    out = Path(out)
    if not is_league_folder(out):
        raise RunError(f"no league results in {out}")
    store = LeagueStore(out / "league.sqlite")
    try:
        meta = store.meta()
        settings = json.loads(meta.get("settings") or "{}")
        # the challengers' pool (rated challenges, issue 33) is no entrant of the league's
        ratings = {k: r for k, r in store.ratings().items() if not is_pool(k)}
        rows = store.rows()
        names = sorted(set(ratings) | {k for r in rows for k in r.seating})
        games = [g["name"] for g in settings.get("games", [])]
        info = {"name": meta.get("name", out.name), "game": ", ".join(games),
                "seats": max((g.get("seats", 0) for g in settings.get("games", [])), default=0),
                "options": {}, "format": "league",
                "time_policy": settings.get("time_policy", {}), "entrants": names,
                "sandboxed": [n for n in names if split_key(n)[1]], "methods": METHODS,
                "generated_unix": round(time.time(), 3)}
        # the league's events (results.json "events"); the HTML shows the latest one begun
        events = events_json(store)
        info["events"] = events
        shown = [e for e in (report_event(d) for d in events) if e is not None]
        if shown:
            info["event"] = shown[-1]
        return write_rated_report(out, rows, names, info, ratings, console)
    finally:
        store.close()
