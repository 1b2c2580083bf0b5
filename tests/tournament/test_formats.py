"""Schedules: all seatings, seat rotation, duplicate seeds, gauntlet, pairs, matches per
pairing."""
from __future__ import annotations

from collections import Counter, defaultdict
from itertools import permutations

import pytest
from referee_tournament.config import parse
from referee_tournament.formats import schedule, seat_counts, seatings_for, tables_for


def cfg(entrants, seats, **fmt):
    return parse({
        "game": {"name": "batavia", "seats": seats},
        "entrants": [{"name": n, "command": "bot {address} {match} {token}"} for n in entrants],
        "format": fmt,
    })


def test_round_robin_plays_every_seating_of_every_table_on_one_seed_per_group():
    c = cfg(["a", "b", "c", "d"], 3, type="round_robin", seating="all", rounds=2)
    specs = schedule(c)
    tables = {s.table for s in specs}
    assert tables == {("a", "b", "c"), ("a", "b", "d"), ("a", "c", "d"), ("b", "c", "d")}
    assert len(specs) == 4 * 6 * 2  # tables x 3! seatings x rounds
    by_group = defaultdict(list)
    for s in specs:
        by_group[s.group].append(s)
    assert len(by_group) == 8
    for members in by_group.values():
        # duplicate seeds: every seating of the group, all on the same seed
        assert {m.seed for m in members} == {members[0].seed}
        assert sorted(m.seating for m in members) == sorted(permutations(members[0].table))
    # different rounds have different seeds
    assert len({s.seed for s in specs if s.round == 0} | {s.seed for s in specs if s.round == 1}) == 2
    # rotation: every entrant sits in every seat equally often
    for counts in seat_counts(specs, c.names).values():
        assert len(set(counts)) == 1
    assert [s.index for s in specs] == list(range(len(specs)))


def test_rotate_uses_cyclic_rotations_and_still_balances_seats():
    c = cfg(["a", "b", "c", "d", "e"], 4, type="round_robin", seating="rotate")
    specs = schedule(c)
    assert len(specs) == 5 * 4
    for counts in seat_counts(specs, c.names).values():
        assert len(set(counts)) == 1
    assert seatings_for(("a", "b", "c"), "rotate") == [("a", "b", "c"), ("b", "c", "a"),
                                                       ("c", "a", "b")]


def test_fewer_entrants_than_seats_fill_the_table_with_every_entrant():
    c = cfg(["random", "greedy"], 3, type="round_robin")
    specs = schedule(c)
    assert {s.table for s in specs} == {("random", "random", "greedy"),
                                        ("random", "greedy", "greedy")}
    assert len(specs) == 6  # 3 distinct orders of AAB + 3 of ABB
    counts = seat_counts(specs, c.names)
    assert counts["random"] == counts["greedy"] == [3, 3, 3]


def test_gauntlet_puts_the_challenger_at_every_table_and_in_every_seat():
    c = cfg(["hero", "x", "y", "z"], 2, type="gauntlet", challenger="hero", rounds=3)
    specs = schedule(c)
    assert {s.table for s in specs} == {("hero", "x"), ("hero", "y"), ("hero", "z")}
    assert all("hero" in s.seating for s in specs)
    assert seat_counts(specs, c.names)["hero"] == [9, 9]
    assert len(specs) == 3 * 2 * 3


def test_pairs_and_matches_per_pairing_round_up_to_whole_rotations():
    c = cfg(["a", "b", "c"], 2, type="pairs", matches_per_pairing=5)
    specs = schedule(c)
    per_table = Counter(s.table for s in specs)
    assert set(per_table) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert set(per_table.values()) == {6}  # ceil(5 / 2 seatings) = 3 rounds of 2
    assert tables_for(c.format, ["a", "b"], 3) == [("a", "a", "b"), ("a", "b", "b")]


def test_schedule_is_deterministic_and_seeded():
    a = schedule(cfg(["a", "b", "c"], 3, rounds=2))
    b = schedule(cfg(["a", "b", "c"], 3, rounds=2))
    assert a == b
    c = parse({**_doc(["a", "b", "c"], 3), "seed": 99})
    assert schedule(c)[0].seed != a[0].seed


def _doc(entrants, seats):
    return {"game": {"name": "batavia", "seats": seats},
            "entrants": [{"name": n, "command": "bot {address} {match} {token}"}
                         for n in entrants]}


@pytest.mark.parametrize("doc, key", [
    ({"entrants": []}, "game"),
    ({"game": {"name": "batavia"}}, "game.seats"),
    ({"game": {"name": "batavia", "seats": 3}}, "entrants"),
    ({**_doc(["a", "b"], 3), "format": {"type": "swizz"}}, "format.type"),
    ({**_doc(["a", "b"], 3), "format": {"rounds": 0}}, "format.rounds"),
    ({**_doc(["a", "b"], 3), "format": {"type": "gauntlet"}}, "format.challenger"),
    ({**_doc(["a", "b"], 3), "time": {"on_expiry": "panic"}}, "time.on_expiry"),
    ({**_doc(["a", "b"], 3), "time": {"move_ms": -1}}, "time.move_ms"),
    ({**_doc(["a", "b"], 3), "run": {"concurrency": "many"}}, "run.concurrency"),
    ({**_doc(["a", "b"], 3), "colour": "red"}, "colour"),
    ({"game": {"name": "batavia", "seats": 3},
      "entrants": [{"name": "a", "command": "bot {address} {token}"},
                   {"name": "b", "command": "bot {address} {match} {token}"}]},
     "entrants[0].command"),
    ({"game": {"name": "batavia", "seats": 3},
      "entrants": [{"name": "a", "command": "bot {address} {match} {token} {tokn}"},
                   {"name": "b", "command": "bot {address} {match} {token}"}]},
     "entrants[0].command"),
    ({"game": {"name": "batavia", "seats": 3},
      "entrants": [{"name": "a", "command": "bot {address} {match} {token}"},
                   {"name": "a", "command": "bot {address} {match} {token}"}]},
     "entrants[1].name"),
])
def test_bad_files_name_the_key(doc, key):
    from referee_tournament.config import ConfigError

    with pytest.raises(ConfigError) as info:
        parse(doc)
    assert info.value.key == key
    assert str(info.value).startswith(key)


def test_placeholders_and_tokens_that_look_like_options():
    from referee_tournament.play import fill

    values = {"address": "127.0.0.1:1", "match": "m1", "token": "-tok", "seat": "2"}
    assert fill(["bot", "--address", "{address}", "--token", "{token}", "--seat={seat}"],
                values) == ["bot", "--address", "127.0.0.1:1", "--token=-tok", "--seat=2"]
    assert fill(["bot", "{match}", "{token}"], values) == ["bot", "m1", "-tok"]


def test_more_rounds_extend_a_stored_schedule_and_other_changes_are_refused(tmp_path):
    from referee_tournament.store import ScheduleMismatch, Store

    store = Store(tmp_path / "t.sqlite")
    two = schedule(cfg(["a", "b", "c"], 3, rounds=2))
    three = schedule(cfg(["a", "b", "c"], 3, rounds=3))
    assert three[: len(two)] == two
    assert store.ensure_schedule(two) == 0
    assert store.ensure_schedule(two) == 0
    assert store.ensure_schedule(three) == len(three) - len(two)
    assert len(store.rows()) == len(three)
    assert (cfg(["a", "b", "c"], 3, rounds=2).schedule_fingerprint()
            == cfg(["a", "b", "c"], 3, rounds=3).schedule_fingerprint())
    with pytest.raises(ScheduleMismatch):
        store.ensure_schedule(two)  # fewer matches
    with pytest.raises(ScheduleMismatch):
        store.ensure_schedule(schedule(cfg(["a", "b", "c"], 3, rounds=3, seating="rotate")))
    store.close()
