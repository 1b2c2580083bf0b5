"""Pairing logic of the events (issue 35): Swiss, knockout and arena, as properties over random
fields and random results (hypothesis), and the [format] keys of the events."""
from __future__ import annotations

import os
import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from referee_tournament.config import ConfigError, parse
from referee_tournament.events import (
    Arena,
    Knockout,
    Played,
    Swiss,
    derive,
    positions,
    rank_points,
)


def _names(n: int) -> list[str]:
    return [f"e{i}" for i in range(n)]


def _play_out(planner, rng: random.Random, no_play: set[str] = frozenset()):
    """Derive rounds and give every new match random ranks until the event is over. Entrants in
    ``no_play`` never play (their seats forfeit)."""
    matches: dict[int, Played] = {}
    resolved: set[int] = set()
    for _ in range(200):
        state = derive(planner, matches, resolved)
        if state.complete:
            return state, matches
        for plan, idx in zip(state.rounds, state.indices, strict=True):
            for table, tidx in zip(plan.tables, idx, strict=True):
                for i, seating in zip(tidx, table.seatings, strict=True):
                    if i in resolved:
                        continue
                    k = len(seating)
                    ranks = [rng.randint(1, k) for _ in range(k)]
                    matches[i] = Played(i, plan.number, table.number, seating, tuple(ranks),
                                        tuple(n in no_play for n in seating),
                                        tuple(float(rng.randint(0, 50)) for _ in range(k)))
                    resolved.add(i)
    raise AssertionError("the event never ended")


# ---------------------------------------------------------------------- table points

def test_a_seat_that_did_not_play_ranks_below_every_seat_that_did():
    # the referee ranked the absent seat first (its timed-out moves scored): it forfeits
    assert positions([1, 2, 3], [True, False, False]) == [3, 1, 2]
    assert positions([1, 1, 3]) == [1, 1, 3]
    assert rank_points([1, 1, 3], [2, 1, 0]) == [1.5, 1.5, 0]


# ---------------------------------------------------------------------- Swiss

@settings(max_examples=60, deadline=None)
@given(k=st.integers(2, 5), extra=st.integers(0, 11), rounds=st.integers(1, 6),
       seed=st.integers(0, 2**32))
def test_swiss_rounds_seat_everyone_once_and_share_byes(k, extra, rounds, seed):
    n = k + extra
    names = _names(n)
    state, _ = _play_out(Swiss(names, k, rounds, seed), random.Random(seed))
    assert len(state.rounds) == rounds
    byes = dict.fromkeys(names, 0)
    seats = {x: [0] * k for x in names}
    for plan in state.rounds:
        seated = [x for t in plan.tables for x in t.seatings[0]]
        assert all(len(t.seatings[0]) == k for t in plan.tables)
        # nobody twice at a round's tables; everybody at a table or on a bye
        assert len(seated) == len(set(seated))
        assert sorted(seated + plan.byes) == sorted(names)
        assert len(plan.byes) == n % k
        for x in plan.byes:
            byes[x] += 1
        # byes go round: nobody gets a second before everyone had a first
        assert max(byes.values()) - min(byes.values()) <= 1
        for t in plan.tables:
            for s, x in enumerate(t.seatings[0]):
                seats[x][s] += 1
    # seat balance: nobody holds a seat more than one time above its fair share
    for x, counts in seats.items():
        played = sum(counts)
        assert max(counts) <= -(-played // k) + 1, (x, counts)


def test_swiss_avoids_repeating_table_mates_where_it_can():
    # 9 entrants at tables of 3, 2 rounds: a round 2 with no pair of round 1 exists; with the
    # results fixed so that round 1's tables would stand together again, it is found
    names = _names(9)
    sw = Swiss(names, 3, 2, 1)
    r0 = sw.plan_round(0, [], [])
    played = [Played(i, 0, i, t.seatings[0], (1, 2, 3)) for i, t in enumerate(r0.tables)]
    r1 = sw.plan_round(1, [r0], played)
    met = {frozenset(p) for m in played for p in combinations(m.seating, 2)}
    again = [p for t in r1.tables for p in combinations(t.seatings[0], 2) if frozenset(p) in met]
    assert again == []
    # and the leaders meet: the three winners of round 1 share round 2's first table
    winners = {m.seating[0] for m in played}
    assert set(r1.tables[0].members) == winners
    # two drawn duels leave the standings in seed order (e0, e1, e2, e3): the closest in
    # standing would be the same pairs again, and the Swiss pairs e0 with e2 instead
    sw2 = Swiss(_names(4), 2, 2, 1)
    r0 = sw2.plan_round(0, [], [])
    draws = [Played(i, 0, i, t.seatings[0], (1, 1)) for i, t in enumerate(r0.tables)]
    r1 = sw2.plan_round(1, [r0], draws)
    assert sorted(t.members for t in r0.tables) == [("e0", "e1"), ("e2", "e3")]
    assert sorted(t.members for t in r1.tables) == [("e0", "e2"), ("e1", "e3")]


def test_swiss_standings_tie_breaks_buchholz_then_direct_then_seed():
    names = _names(4)
    sw = Swiss(names, 2, 2, 1, points=[1, 0])
    # e0 beats e1, e2 beats e3; then e2 beats e0, e1 beats e3
    m = [Played(0, 0, 0, ("e0", "e1"), (1, 2)), Played(1, 0, 1, ("e2", "e3"), (1, 2)),
         Played(2, 1, 0, ("e2", "e0"), (1, 2)), Played(3, 1, 1, ("e1", "e3"), (1, 2))]
    order = [s.name for s in sw.standings([], m)]
    # e2: 2 points. e0 and e1: 1 point each; Buchholz e0 = e1 + e2 = 1 + 2 = 3,
    # e1 = e0 + e3 = 1 + 0 = 1 -> e0 first. e3: 0.
    assert order == ["e2", "e0", "e1", "e3"]
    # equal points and Buchholz: direct result decides (e1 beat e0), then seed
    m2 = [Played(0, 0, 0, ("e1", "e0"), (1, 2)), Played(1, 0, 1, ("e2", "e3"), (1, 2)),
          Played(2, 1, 0, ("e0", "e1"), (1, 2)), Played(3, 1, 1, ("e3", "e2"), (1, 2))]
    order = [s.name for s in sw.standings([], m2)]
    st_ = {s.name: s for s in sw.standings([], m2)}
    assert st_["e0"].points == st_["e1"].points == 1 and st_["e0"].direct == 0
    assert order[:2] == ["e0", "e1"]  # tied on everything: seed


def test_swiss_withdraws_an_entrant_that_does_not_play():
    names = _names(7)
    state, _ = _play_out(Swiss(names, 3, 5, 3, withdraw_after=2), random.Random(3),
                         no_play={"e4"})
    played_rounds = [p.number for p in state.rounds
                     if any("e4" in t.members for t in p.tables) or "e4" in p.byes]
    assert len(played_rounds) < 5  # seated no more after two unplayed matches (and byes)
    st_ = {s["name"]: s for s in state.standings}
    assert st_["e4"]["withdrawn"]


# ---------------------------------------------------------------------- knockout

@settings(max_examples=80, deadline=None)
@given(k=st.integers(2, 5), extra=st.integers(0, 30), data=st.data(), seed=st.integers(0, 99))
def test_knockout_bracket_advances_the_right_number_and_ends_with_one_full_final(
        k, extra, data, seed):
    n = k + extra
    advance = data.draw(st.integers(1, k - 1))
    best_of = data.draw(st.integers(1, 3))
    ko = Knockout(_names(n), k, advance, best_of, seed)
    state, _ = _play_out(ko, random.Random(seed))
    field = set(_names(n))
    for entry, plan in zip(state.bracket, state.rounds, strict=True):
        seated = [x for t in plan.tables for x in t.members]
        assert len(seated) == len(set(seated))
        assert all(len(t.members) == k for t in plan.tables)
        assert all(len(t.seatings) == best_of for t in plan.tables)
        assert set(seated) | set(plan.byes) == field and not set(seated) & set(plan.byes)
        # the byes go to the top seeds
        assert plan.byes == sorted(field, key=ko.seeds.index)[: len(plan.byes)]
        advanced = [x for t in entry["tables"] for x in t["advanced"]]
        assert len(advanced) == sum(t.advance for t in plan.tables)
        assert all(set(t["advanced"]) <= set(t["members"]) for t in entry["tables"])
        field = set(advanced) | set(plan.byes)
        if plan.tables[0].advance == 0:
            assert len(plan.tables) == 1 and not plan.byes  # one full final table
        else:
            assert len(field) >= k
    places = [s["name"] for s in state.standings]
    assert sorted(places) == sorted(_names(n))
    final = state.bracket[-1]["tables"][0]
    assert places[:k] == final["order"]


def test_knockout_seats_rotate_on_one_seed():
    ko = Knockout(_names(6), 3, 1, 3, 1)
    plan = ko.plan_round(0, _names(6))
    for t in plan.tables:
        assert len({s[0] for s in t.seatings}) == 3  # every entrant in the first seat once
    # snake: seeds 1, 2 | 3, 4 (reversed) | 5, 6; 6 entrants leave 3 for the final, so the
    # second table lets 2 go on
    assert [t.members for t in plan.tables] == [("e0", "e3", "e4"), ("e1", "e2", "e5")]
    assert [t.advance for t in plan.tables] == [1, 2]


# ---------------------------------------------------------------------- arena

@settings(max_examples=60, deadline=None)
@given(k=st.integers(2, 5), extra=st.integers(0, 8), seed=st.integers(0, 2**16))
def test_arena_tables_take_free_entrants_once_and_avoid_an_immediate_rematch(k, extra, seed):
    names = _names(k + extra)
    arena = Arena(names, k)
    rng = random.Random(seed)
    matches: list[Played] = []
    for i in range(12):
        free = [x for x in names if rng.random() < 0.8]
        seating = arena.form_table(free, matches)
        if len(free) < k:
            assert seating is None
            continue
        assert seating is not None and len(seating) == k
        assert len(set(seating)) == k and set(seating) <= set(free)
        scores = arena.scores(matches)
        anchor = min(free, key=lambda x: (scores[x].matches, scores[x].seed))
        assert anchor in seating
        others_ok = [x for x in free if x != anchor and x not in scores[anchor].last_mates
                     and anchor not in scores[x].last_mates]
        if len(others_ok) >= k - 1 and all(
                scores[x].matches <= scores[anchor].matches + 1 for x in others_ok):
            assert not set(seating) & set(scores[anchor].last_mates)
        matches.append(Played(i, i, 0, seating, tuple(rng.sample(range(1, k + 1), k))))


def test_arena_doubles_points_after_two_wins_in_a_row():
    arena = Arena(["a", "b"], 2, points=[2, 0])
    m = [Played(i, i, 0, ("a", "b"), (1, 2)) for i in range(3)]
    m.append(Played(3, 3, 0, ("a", "b"), (1, 1)))  # a shared first: not a win, still doubled
    m.append(Played(4, 4, 0, ("a", "b"), (1, 2)))
    s = arena.scores(m)["a"]
    assert s.history == [2, 2, 4, 2, 2]


# ---------------------------------------------------------------------- config

def _doc(entrants, seats, fmt):
    return {"game": {"name": "batavia", "seats": seats}, "format": fmt,
            "entrants": [{"name": n, "command": "bot {address} {match}"} for n in entrants]}


@pytest.mark.parametrize("doc, key", [
    (_doc(["a", "b"], 3, {"type": "swiss"}), "entrants"),
    (_doc(["a", "b", "c"], 3, {"type": "swiss", "best_of": 3}), "format.best_of"),
    (_doc(["a", "b", "c"], 3, {"type": "swiss", "points": [2, 1]}), "format.points"),
    (_doc(["a", "b", "c"], 3, {"type": "swiss", "points": [0, 1, 2]}), "format.points"),
    (_doc(["a", "b", "c"], 3, {"type": "swiss", "early_stop": {}}), "format.early_stop"),
    (_doc(["a", "b", "c"], 3, {"type": "knockout", "advance": 3}), "format.advance"),
    (_doc(["a", "b", "c"], 3, {"type": "knockout", "rounds": 2}), "format.rounds"),
    (_doc(["a", "b", "c"], 3, {"type": "knockout", "seeding": "ratings"}),
     "format.ratings_from"),
    (_doc(["a", "b", "c"], 3, {"type": "arena"}), "format.duration_s"),
    (_doc(["a", "b", "c"], 3, {"type": "round_robin", "duration_s": 60}), "format.duration_s"),
])
def test_bad_event_keys_are_named(doc, key):
    with pytest.raises(ConfigError) as info:
        parse(doc)
    assert info.value.key == key


def test_swiss_rounds_default_grows_with_the_field():
    assert parse(_doc(list("abc"), 3, {"type": "swiss"})).format.rounds == 3
    assert parse(_doc([f"x{i}" for i in range(20)], 3, {"type": "swiss"})).format.rounds == 5
    assert parse(_doc(list("abc"), 3, {"type": "swiss", "rounds": 7})).format.rounds == 7


def test_check_shows_what_an_event_will_play():
    from referee_tournament.check import print_schedule
    from rich.console import Console

    def shown(fmt: dict, n: int) -> str:
        console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
        print_schedule(parse(_doc([f"x{i}" for i in range(n)], 3, fmt)), console)
        return console.export_text()

    text = shown({"type": "swiss", "rounds": 2}, 7)
    assert "2 round(s) of 2 table(s) and 1 bye(s)" in text
    assert "round 1, table 2: x3, x4, x5" in text
    text = shown({"type": "knockout", "best_of": 1}, 7)
    assert "round 1: 7 entrant(s), 2 table(s) of best of 1, 1 bye(s), 2 go on" in text
    assert "final: 3 entrant(s)" in text
    assert "60 s; up to 2 table(s) at once" in shown({"type": "arena", "duration_s": 60}, 7)


def test_duplicate_seeds_put_every_table_of_a_round_on_one_seed():
    from referee_tournament.staged import event_schedule

    for dup in (True, False):
        cfg = parse(_doc([f"x{i}" for i in range(9)], 3, {"type": "swiss",
                                                          "duplicate_seeds": dup}))
        specs, _ = event_schedule(cfg, [])
        assert len(specs) == 3
        assert (len({s.seed for s in specs}) == 1) is dup


def test_knockout_seeds_from_a_previous_runs_ratings(tmp_path):
    import json

    from referee_tournament.staged import seed_order

    (tmp_path / "results.json").write_text(json.dumps({"leaderboard": [
        {"name": "c", "ordinal": 5.0}, {"name": "a", "ordinal": 1.0},
        {"name": "zzz", "ordinal": 9.0}]}))
    cfg = parse(_doc(["a", "b", "c", "d"], 2, {"type": "knockout", "seeding": "ratings",
                                               "ratings_from": str(tmp_path)}))
    assert seed_order(cfg) == ["c", "a", "b", "d"]  # rated first, the rest in file order
    # the order fixed when the event started wins over ratings read later
    assert seed_order(cfg, json.dumps(["d", "c", "b", "a"])) == ["d", "c", "b", "a"]


def test_a_results_folder_made_before_the_events_still_resumes():
    # the schedule fingerprint of a round robin is the one the runner wrote before the event
    # keys existed (a folder with finished matches is refused when it differs)
    doc = _doc(["a", "b", "c"], 3, {"type": "round_robin", "seating": "rotate", "rounds": 2})
    assert parse(doc).schedule_fingerprint() == "6224b2b51afc82a9"


def test_retry_failed_of_an_event_replays_only_the_last_rounds_failures(tmp_path):
    from referee_tournament.formats import MatchSpec
    from referee_tournament.store import Store

    store = Store(tmp_path / "t.sqlite")
    store.ensure_schedule([MatchSpec(i, i // 2, ("a", "b"), f"r{i // 2}:t{i % 2}", ("a", "b"), 1)
                           for i in range(4)])
    for i in range(4):
        store.mark_running(i, "ref")
        store.finish(i, {"ranks": None, "error": "wall-clock limit"})
    assert store.retry_failed(last_round_only=True) == 2
    assert [r.idx for r in store.rows("pending")] == [2, 3]
    assert store.retry_failed() == 2
    store.close()
