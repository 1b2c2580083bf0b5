"""OpenSkill ratings and intervals on synthetic results."""
from __future__ import annotations

import random

from referee_tournament.ratings import MatchResult, leaderboard, wilson


def synthetic(strength: dict[str, float], n: int, seed: int = 1) -> list[MatchResult]:
    rng = random.Random(seed)
    names = list(strength)
    out = []
    for i in range(n):
        seating = tuple(rng.sample(names, 3))
        perf = [strength[x] + rng.gauss(0, 1) for x in seating]
        order = sorted(range(3), key=lambda k: -perf[k])
        ranks = [0] * 3
        for r, k in enumerate(order, 1):
            ranks[k] = r
        scores = [round(10 * p) for p in perf]
        out.append(MatchResult(i, f"g{i // 3}", seating, scores, ranks))
    return out


def test_ratings_order_follows_strength():
    strength = {"weak": 0.0, "mid": 1.0, "strong": 2.0, "best": 3.0}
    board = leaderboard(list(strength), synthetic(strength, 240))
    names = [e["name"] for e in board["entrants"]]
    assert names == ["best", "strong", "mid", "weak"]
    best = board["entrants"][0]
    assert abs(best["ordinal"] - (best["mu"] - 3 * best["sigma"])) < 0.01
    assert best["avg_rank_ci95"][0] <= best["avg_rank"] <= best["avg_rank_ci95"][1]
    assert best["place_ci95"][0] == 1
    assert board["entrants"][-1]["place_ci95"][1] == 4
    assert len(board["history"]) == 240


def test_repeated_entrant_in_one_match_and_ties():
    # "a" fills two seats and ties for first with "b"
    m = [MatchResult(0, "g0", ("a", "a", "b"), [5, 1, 5], [1, 3, 1])]
    board = leaderboard(["a", "b"], m)
    rows = {e["name"]: e for e in board["entrants"]}
    assert rows["a"]["seat_games"] == 2 and rows["a"]["matches"] == 1
    # a tie for first is a win for each tied entrant, whole (issue 33: as the API counts)
    assert rows["a"]["wins"] == 1 and rows["b"]["wins"] == 1
    assert rows["b"]["ordinal"] > rows["a"]["ordinal"]


def test_win_rate_counts_matches_not_seats():
    # issue 12: "Win % counts matches (a win is rank 1), not seats". "a" holds two seats of each
    # match and wins one of the two matches outright: 1 win in 2 matches is 50%, not 1/4.
    m = [MatchResult(0, "g0", ("a", "a", "b"), [9, 1, 5], [1, 3, 2]),
         MatchResult(1, "g1", ("a", "a", "b"), [1, 2, 9], [3, 2, 1])]
    rows = {e["name"]: e for e in leaderboard(["a", "b"], m)["entrants"]}
    assert rows["a"]["wins"] == 1 and rows["a"]["win_rate"] == 0.5
    assert rows["b"]["wins"] == 1 and rows["b"]["win_rate"] == 0.5
    # both of an entrant's seats tied for first: still one match won
    tie = [MatchResult(0, "g0", ("a", "a", "b"), [5, 5, 1], [1, 1, 3])]
    assert {e["name"]: e for e in leaderboard(["a", "b"], tie)["entrants"]}["a"]["wins"] == 1


def test_wilson_interval():
    lo, hi = wilson(5, 10)
    assert 0.2 < lo < 0.5 < hi < 0.8
    assert wilson(0, 0) == (0.0, 1.0)


def test_place_interval_agrees_with_the_rank_order_and_wins_are_whole():
    """Issue 33 item 4d: the report's "place [95%]" was a bootstrap of the order by average
    rank beside places in the order by rating (mu - 3 sigma): here "steady" (second behind the
    champion in 20 three-seat matches) is second by rating, "farmer" (6 wins over the weakest
    bot) third; by average rank farmer is second, and the report read "steady: place 2,
    [95%] 3-3". Wins are whole matches, as the league standings API counts them."""
    matches: list[MatchResult] = []

    def add(seating, ranks):
        matches.append(MatchResult(len(matches), f"g{len(matches)}", seating,
                                   [30 - 10 * r for r in ranks], ranks))
    for i in range(20):
        add(("champ", "steady", "p"), [1, 2, 3])
        if i % 2:
            add(("p", "w"), [1, 2])
    for _ in range(6):
        add(("farmer", "w"), [1, 2])
    add(("p", "w", "farmer"), [1, 1, 3])  # a tie for first: a win for p and for w
    rows = leaderboard(["champ", "steady", "farmer", "p", "w"], matches)["entrants"]
    assert [e["name"] for e in rows[:3]] == ["champ", "steady", "farmer"]
    for e in rows:
        lo, hi = e["place_ci95"]
        assert lo <= e["place"] <= hi, e
    by = {e["name"]: e for e in rows}
    assert by["steady"]["place_ci95"] == [2, 2]  # not [3, 3]
    assert {n: by[n]["wins"] for n in by} == {"champ": 20, "steady": 0, "farmer": 6, "p": 11,
                                              "w": 1}
    assert all(isinstance(e["wins"], int) for e in rows)
