"""Ratings and statistics from finished matches.

* **OpenSkill** (Plackett-Luce model of the ``openskill`` package): every seat is a one-player
  team ranked by the referee's finishing ranks (ties share a rank); matches are rated in schedule
  order. The leaderboard shows the conservative estimate ``mu - 3 sigma`` ("ordinal"). An entrant
  that fills several seats of one match (2 entrants on 3 seats) gets every seat's update: its
  ``mu`` moves by the sum of the seats' deltas and its ``sigma`` shrinks by the product of their
  factors, as if the seats had been rated one after the other.
* **Wins** count matches, whole, as the league standings API counts them: an entrant wins a
  match when one of its seats finishes first, a tie for first included (each tied entrant wins
  it), and an entrant filling several seats of one match wins at most that match. Win rate =
  wins / matches, with a Wilson 95% interval over matches.
* **Average score** and **average finishing rank** with normal-approximation 95% intervals
  (mean ± 1.96·s/√n).
* **Leaderboard place interval**: a bootstrap over duplicate-seed groups (fixed seed): each
  resample is rated again, by the same rating and in the same schedule order as the
  leaderboard itself (OpenSkill, ``mu - 3 sigma``), and the 2.5%-97.5% range of each entrant's
  place over the resamples is reported, widened to hold the place shown (a percentile interval
  may miss its own estimate by one). The interval is about the order the table shows: it was
  once the order by average rank, and contradicted the places beside it. Resampling whole
  groups keeps each group's luck cancellation intact. Rating is the cost (tens of microseconds
  a match): there are :data:`RESAMPLES` resamples, fewer for big tournaments so that at most
  :data:`RATE_BUDGET` matches are rated in all, and never fewer than :data:`MIN_RESAMPLES`.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Z95 = 1.959963984540054
#: resamples of the place interval's bootstrap, at most (see the module's docstring)
RESAMPLES = 500
#: matches rated over all the resamples, at most (a few seconds), unless MIN_RESAMPLES needs more
RATE_BUDGET = 20_000
MIN_RESAMPLES = 40


@dataclass
class MatchResult:
    index: int
    group: str
    seating: tuple[str, ...]
    scores: list[int]
    ranks: list[int]
    outcome: dict[str, Any] = field(default_factory=dict)


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_ci(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    n = len(values)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    m = sum(values) / n
    if n == 1:
        return (m, m, m)
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return (m, m - half, m + half)


def win_shares(ranks: Sequence[int]) -> list[float]:
    best = min(ranks)
    k = sum(1 for r in ranks if r == best)
    return [1.0 / k if r == best else 0.0 for r in ranks]


def openskill_ratings(names: Sequence[str], matches: Sequence[MatchResult],
                      history_too: bool = True):
    """Final ratings and the history [(match_index, {name: ordinal})] after every match (empty
    without ``history_too``)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {n: model.rating(name=n) for n in names}
    history: list[tuple[int, dict[str, float]]] = []
    for m in matches:
        teams = [[model.rating(mu=ratings[n].mu, sigma=ratings[n].sigma, name=n)]
                 for n in m.seating]
        rated = model.rate(teams, ranks=list(m.ranks))
        delta_mu: dict[str, float] = defaultdict(float)
        factor: dict[str, float] = defaultdict(lambda: 1.0)
        for n, team in zip(m.seating, rated, strict=True):
            delta_mu[n] += team[0].mu - ratings[n].mu
            factor[n] *= team[0].sigma / ratings[n].sigma
        for n, dmu in delta_mu.items():
            ratings[n] = model.rating(mu=ratings[n].mu + dmu,
                                      sigma=ratings[n].sigma * factor[n], name=n)
        if history_too:
            history.append((m.index, {n: ratings[n].ordinal() for n in names}))
    return ratings, history


def place_intervals(names: Sequence[str], matches: Sequence[MatchResult],
                    resamples: int = RESAMPLES, seed: int = 12345) -> dict[str, tuple[int, int]]:
    """Each entrant's 95% place interval in the leaderboard's order (``names``: best first by
    ``mu - 3 sigma``), from a bootstrap over duplicate-seed groups, each resample rated again
    (see the module's docstring)."""
    by_group: dict[str, list[MatchResult]] = defaultdict(list)
    for m in matches:
        by_group[m.group].append(m)
    groups = list(by_group.values())
    if not groups:
        return {n: (1, len(names)) for n in names}
    resamples = max(MIN_RESAMPLES, min(resamples, RATE_BUDGET // max(1, len(matches))))
    rng = random.Random(seed)
    places: dict[str, list[int]] = {n: [] for n in names}
    pos = {n: i for i, n in enumerate(names)}  # ties: the order given
    for _ in range(resamples):
        picked = sorted(rng.randrange(len(groups)) for _ in groups)  # in schedule order
        sample = [m for g in picked for m in groups[g]]
        ratings, _ = openskill_ratings(names, sample, history_too=False)
        order = sorted(names, key=lambda n: (-ratings[n].ordinal(), pos[n]))
        for i, n in enumerate(order, 1):
            places[n].append(i)
    out = {}
    for n, ps in places.items():
        ps.sort()
        lo = ps[int(0.025 * (len(ps) - 1))]
        hi = ps[math.ceil(0.975 * (len(ps) - 1))]
        shown = pos[n] + 1
        out[n] = (min(lo, shown), max(hi, shown))
    return out


def leaderboard(names: Sequence[str], matches: Sequence[MatchResult]) -> dict[str, Any]:
    """Everything the reports show, as plain data (sorted best first by mu - 3 sigma)."""
    ratings, history = openskill_ratings(names, matches)
    per: dict[str, dict[str, Any]] = {
        n: {"scores": [], "ranks": [], "timeouts": 0, "crashes": 0, "hangs": 0,
            "rejected": 0, "forfeits": 0, "matches": set(), "match_wins": {}} for n in names
    }
    for m in matches:
        shares = win_shares(m.ranks)
        for seat, n in enumerate(m.seating):
            p = per[n]
            p["scores"].append(m.scores[seat])
            p["ranks"].append(m.ranks[seat])
            p["match_wins"][m.index] = p["match_wins"].get(m.index, 0.0) + shares[seat]
            p["matches"].add(m.index)
    by_rating = sorted(names, key=lambda n: -ratings[n].ordinal())
    places = place_intervals(by_rating, matches)  # the same order as the rows' places
    rows = []
    for n in names:
        p = per[n]
        seat_games = len(p["ranks"])
        played = len(p["matches"])
        wins = sum(1 for share in p["match_wins"].values() if share > 0)  # whole matches
        score = mean_ci(p["scores"])
        rank = mean_ci(p["ranks"])
        r = ratings[n]
        rows.append({
            "name": n,
            "ordinal": round(r.ordinal(), 3), "mu": round(r.mu, 3), "sigma": round(r.sigma, 3),
            "matches": len(p["matches"]), "seat_games": seat_games,
            "wins": wins,
            "win_rate": round(wins / played, 4) if played else None,
            "win_rate_ci95": [round(x, 4) for x in wilson(wins, played)],
            "avg_score": _r(score[0]), "avg_score_ci95": [_r(score[1]), _r(score[2])],
            "avg_rank": _r(rank[0]), "avg_rank_ci95": [_r(rank[1]), _r(rank[2])],
            "place_ci95": list(places[n]),
            "scores": p["scores"],
        })
    rows.sort(key=lambda x: by_rating.index(x["name"]))
    for i, row in enumerate(rows, 1):
        row["place"] = i
    return {"entrants": rows, "history": history}


def _r(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(x, 3)
