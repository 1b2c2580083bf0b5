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
from .challenges import POOL, is_pool
from .store import LeagueStore, split_key

RATING_MODEL = "OpenSkill Plackett-Luce; rating = mu - 3 sigma"


def build(store: LeagueStore, league: str, games: list[str], *, running: int, paused: bool,
          last_error: str = "", current: dict[str, int] | None = None,
          events: list[dict[str, Any]] | None = None,
          challenge_mode: bool | None = None) -> dict[str, Any]:
    """The standings of ``league``: one entry per bot, for the version that plays now
    (``current``: each hosted bot's current version; a bot without one, e.g. its versions all
    failed, shows its newest rated version), ranked by rating. Older versions' ratings stay in
    the league's database and its report. ``challenge_mode``: None when the league takes no
    challenges, else whether it rates them (the ``challenges`` section, :func:`_challenges`)."""
    rows = store.rows(rated_only=True)  # an unrated event's matches are the event's only
    ratings = store.ratings()
    keys = sorted(k for k in ratings if not is_pool(k))
    counts, _ = incidents(rows, keys)
    taken = store.challenge_rows()
    firsts: dict[str, int] = {}
    # a rated challenge counts in its entrants' matches (the ratings'), so in their wins too
    for m in match_results(rows + [r for r, rated in taken if rated]):
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
    bots = [b for b in bots if not is_pool(b)]
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
    if challenge_mode is not None:
        doc["challenges"] = _challenges(taken, ratings, rated=challenge_mode)
    if events:
        doc["version"] = 2  # standings/2: with the league's events
        doc["events"] = events
    return doc


def _as_bot(m: MatchResult) -> MatchResult:
    return replace(m, seating=tuple(split_key(k)[0] for k in m.seating))


#: the newest challenges the standings list
RECENT_CHALLENGES = 50


def _challenges(taken: list[tuple[Any, bool]], ratings: dict[str, Any], *,
                rated: bool) -> dict[str, Any]:
    """The challenges to the league's entrants, apart from the league's own matches (issue 33
    item 2): whether they are rated, the challengers' pool entry (its rating, when rated),
    each entrant's results against its challengers, and the newest matches. An entrant wins
    a challenge when it placed ahead of every challenger, loses when a challenger placed
    ahead of it, and draws otherwise."""
    by_bot: dict[str, dict[str, int]] = {}
    recent: list[dict[str, Any]] = []
    for row, was_rated in taken:
        ranks = row.ranks or []
        pool_best = min((r for k, r in zip(row.seating, ranks, strict=False) if is_pool(k)),
                        default=None)
        outcome: dict[str, str] = {}
        for k, r in zip(row.seating, ranks, strict=False):
            if is_pool(k) or pool_best is None:
                continue
            bot = split_key(k)[0]
            what = "win" if r < pool_best else "loss" if r > pool_best else "draw"
            outcome[bot] = what
            c = by_bot.setdefault(bot, {"matches": 0, "wins": 0, "losses": 0, "draws": 0})
            c["matches"] += 1
            c[{"win": "wins", "loss": "losses", "draw": "draws"}[what]] += 1
        recent.append({"match": row.match_id or "", "game": row.group,
                       "finished_unix_ms": int((row.finished or 0) * 1000),
                       "entrants": outcome, "rated": was_rated,
                       **({"problem": row.error[:300]} if row.error else {})})
    pool = ratings.get(POOL)
    return {
        "rated": rated, "matches": len(taken),
        "pool": {"rating": round(pool.ordinal, 4), "mu": round(pool.mu, 4),
                 "sigma": round(pool.sigma, 4), "matches": pool.matches}
        if pool is not None and rated else None,
        "by_entrant": [{"bot": b, **c} for b, c in sorted(by_bot.items())],
        "recent": recent[-RECENT_CHALLENGES:][::-1],
    }
