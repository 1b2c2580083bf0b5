"""The ladder (issue 12, "A ladder"): rating-aware continuous pairing, OpenSkill ratings kept in
the results folder across runs, a leaderboard rewritten after every match."""
from __future__ import annotations

import json
import random
import sqlite3

from openskill.models import PlackettLuce
from referee_tournament.ladder import Rating, pair, rate

from .conftest import GREEDY, RANDOM, run_cli, write_toml
from .test_fail_fast import CRASH
from .test_persistent import SESSION


def _ratings(**mus: float) -> dict[str, Rating]:
    return {n: Rating(n, mu, 8.0) for n, mu in mus.items()}


def test_pairing_anchors_the_least_played_and_takes_its_neighbours_in_mu():
    ratings = _ratings(a=15.0, b=30.0, c=31.0, d=50.0, e=29.0)
    for r in ratings.values():
        r.matches = 5
    ratings["b"].matches = 1
    for seed in range(20):
        table = pair(ratings, {}, 3, random.Random(seed))
        assert "b" in table and len(table) == 3
        # drawn from b's 3 nearest in mu (c, e, a): never d, the farthest
        assert set(table) - {"b"} <= {"c", "e", "a"}
    # matches in progress count as played: d is the least busy now
    busy = {"a": 1, "b": 5, "c": 1, "e": 1}
    assert all("d" in pair(ratings, busy, 3, random.Random(s)) for s in range(10))


def test_pairing_with_fewer_entrants_than_seats_fills_every_seat():
    table = pair(_ratings(a=25.0, b=25.0), {}, 4, random.Random(3))
    assert len(table) == 4 and set(table) == {"a", "b"}


def test_a_win_raises_the_winner_and_counts_every_seat_of_one_entrant():
    model = PlackettLuce()
    ratings = _ratings(a=25.0, b=25.0)
    changed = rate(model, ratings, ["a", "b", "a"], [1, 3, 2])
    assert {r.name for r in changed} == {"a", "b"}
    assert ratings["a"].mu > 25.0 > ratings["b"].mu
    assert ratings["a"].sigma < 8.0 and ratings["b"].sigma < 8.0
    assert (ratings["a"].matches, ratings["a"].wins, ratings["b"].wins) == (1, 1.0, 0.0)


def _board(out):
    return {e["name"]: e for e in json.loads((out / "ladder.json").read_text())["leaderboard"]}


def test_the_ladder_plays_rates_and_resumes_its_ratings(tmp_path, referee):
    out = tmp_path / "out"
    cfg = write_toml(tmp_path / "ladder.toml", f"""
        name = "ladder"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "session-random"
        command = "{SESSION}"
        persistent = true
        [[entrants]]
        name = "random"
        command = "{RANDOM}"
        [[entrants]]
        name = "greedy"
        command = "{GREEDY}"
        [[entrants]]
        name = "random-2"
        command = "{RANDOM}"
        [format]
        type = "ladder"
        [time]
        move_ms = 5000
        [run]
        concurrency = 2
        """)
    common = ("--no-progress", "--address", referee.address, "--admin-token",
              referee.admin_token)
    done = run_cli("ladder", str(cfg), "--max-matches", "4", *common, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    first = _board(out)
    assert sum(e["matches"] for e in first.values()) == 4 * 3  # 4 entrants, 3 seats each match
    assert "4 matches rated" in (out / "leaderboard.txt").read_text()
    order = [e["name"] for e in sorted(first.values(), key=lambda e: e["place"])]
    ordinals = [first[n]["ordinal"] for n in order]
    assert ordinals == sorted(ordinals, reverse=True)

    # a second run (`run FILE` with type = "ladder") goes on from the stored ratings
    done = run_cli("run", str(cfg), "--max-matches", "2", *common, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    second = _board(out)
    assert sum(e["matches"] for e in second.values()) == 6 * 3
    con = sqlite3.connect(out / "tournament.sqlite")
    try:
        rows = con.execute("SELECT status, COUNT(*) FROM ladder_matches GROUP BY status")
        assert dict(rows) == {"done": 6}
        stored = dict(con.execute("SELECT name, matches FROM ladder_ratings"))
    finally:
        con.close()
    assert stored == {n: e["matches"] for n, e in second.items()}
    # every match has its record, and the persistent entrant played its seats itself
    for rec in (out / "records").glob("ladder-*.json"):
        data = json.loads(rec.read_text())
        assert data["result"] and not any(m.get("timeout") for m in data["moves"])


def test_a_ladder_entrant_that_crashes_in_every_match_is_named_and_fails_the_run(tmp_path,
                                                                                 referee):
    """Issue 12, "Fail fast and say why": a dead bot does not sit quietly at the bottom of a
    ladder; the run names it with its own error line and exits 1."""
    out = tmp_path / "out"
    cfg = write_toml(tmp_path / "ladder.toml", f"""
        name = "ladder-dead"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "random"
        command = "{RANDOM}"
        [[entrants]]
        name = "crasher"
        command = '''{CRASH}'''
        [[entrants]]
        name = "random-2"
        command = "{RANDOM}"
        [format]
        type = "ladder"
        [time]
        move_ms = 5000
        on_expiry = "forfeit"
        """)
    done = run_cli("ladder", str(cfg), "--max-matches", "2", "--no-progress", "--address",
                   referee.address, "--admin-token", referee.admin_token, timeout=300)
    text = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, text
    assert "crasher crashed in every match it played (2 seat(s)" in text
    assert "error: weights.bin not found" in text
    assert "random crashed" not in text and "random-2 crashed" not in text
    assert sum(e["matches"] for e in _board(out).values()) == 2 * 3
