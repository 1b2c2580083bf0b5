"""The standings document the league publishes (``PublishStandings``; schema
``referee/schema/standings.schema.json``), built from the league's database alone.

One entry per bot, for its version that plays now (a remote bot is its version 0; ratings are
per version): displayed rating ``mu - 3 sigma``, ``mu``, ``sigma``, its interval
``mu ± 2 sigma``, matches, wins (first places, shared ones included), win rate, incidents counted from the seats' outcomes (timeouts,
crashes, refused moves, forfeits; :func:`..report.incidents`), its rating history and its latest
incidents with their error lines. Head-to-head is per bot (its versions together), from
:func:`..report.head_to_head`.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from ..ratings import MatchResult
from ..report import head_to_head, incidents, match_results
from .store import LeagueStore, split_key

RATING_MODEL = "OpenSkill Plackett-Luce; rating = mu - 3 sigma"


def build(store: LeagueStore, league: str, games: list[str], *, running: int, paused: bool,
          last_error: str = "", current: dict[str, int] | None = None,
          events: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The standings of ``league``: one entry per bot, for the version that plays now
    (``current``: each hosted bot's current version; a bot without one, e.g. its versions all
    failed, shows its newest rated version), ranked by rating. Older versions' ratings stay in
    the league's database and its report."""
    rows = store.rows(rated_only=True)  # an unrated event's matches are the event's only
    ratings = store.ratings()
    keys = sorted(ratings)
    counts, _ = incidents(rows, keys)
    firsts: dict[str, int] = {}
    for m in match_results(rows):
        for k, rank in zip(m.seating, m.ranks, strict=True):
            if rank == min(m.ranks):
                firsts[k] = firsts.get(k, 0) + 1
    history = store.history()
    recent = store.incidents()
    shown: dict[str, str] = {}  # bot -> the key of the version it shows
    for k in keys:
        bot, version = split_key(k)
        want = (current or {}).get(bot)
        have = shown.get(bot)
        if have is None or version == want or (split_key(have)[1] != want
                                               and version > split_key(have)[1]):
            shown[bot] = k
    entries: list[dict[str, Any]] = []
    for k in shown.values():
        r = ratings[k]
        bot, version = split_key(k)
        c = counts.get(k, {})
        wins = firsts.get(k, 0)
        entries.append({
            "bot": bot, "version": version, "rating": round(r.ordinal, 4),
            "mu": round(r.mu, 4), "sigma": round(r.sigma, 4),
            "interval": [round(r.mu - 2 * r.sigma, 4), round(r.mu + 2 * r.sigma, 4)],
            "matches": r.matches, "wins": wins,
            "win_rate": round(min(1.0, wins / r.matches), 4) if r.matches else 0.0,
            "incidents": {"timeouts": c.get("timeouts", 0), "crashes": c.get("crashes", 0),
                          "refused": c.get("rejected", 0), "forfeits": c.get("forfeits", 0)},
            "history": history.get(k, [])[-200:],
            "recent_incidents": recent.get(k, []),
        })
    entries.sort(key=lambda e: (-float(e["rating"]), str(e["bot"])))
    # head-to-head per bot: every version of a bot is that bot
    by_bot = [_as_bot(m) for m in match_results(rows)]
    bots = sorted({split_key(k)[0] for k in keys} | {n for m in by_bot for n in m.seating})
    h2h = []
    for p in head_to_head(by_bot, bots):
        h2h.append({"bot": p["a"], "opponent": p["b"], "matches": p["meetings"],
                    "wins": p["wins"], "losses": p["losses"], "draws": p["draws"]})
        h2h.append({"bot": p["b"], "opponent": p["a"], "matches": p["meetings"],
                    "wins": p["losses"], "losses": p["wins"], "draws": p["draws"]})
    doc: dict[str, Any] = {
        "league": league, "generated_unix_ms": int(time.time() * 1000), "games": games,
        "rating_model": RATING_MODEL, "entries": entries, "head_to_head": h2h,
        "health": {"running_matches": running,
                   "matches_total": store.count("done") + store.count("failed"),
                   "paused": paused, "last_error": last_error[:300]}}
    if events:
        doc["version"] = 2  # standings/2: with the league's events
        doc["events"] = events
    return doc


def _as_bot(m: MatchResult) -> MatchResult:
    return replace(m, seating=tuple(split_key(k)[0] for k in m.seating))
