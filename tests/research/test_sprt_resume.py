"""``make bench-sprt`` spread over sittings: a stopped duel resumes from the matches its JSON
lists, counting them once and playing only the rest of its schedule (bench/sprt.py --resume).
The matches are faked (a fixed result per seed and seat), so this pins the bookkeeping, not the
bot."""
from __future__ import annotations

import json
from typing import Any

import pytest
from referee_research import duel as duel_mod

from bench import machine
from bench import sprt as sprt_bench
from referee.core.contract import Result


@pytest.fixture
def fake_matches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Every match "played" (seed, the bot's seat); the bot wins when seed + seat is even."""
    played: list[tuple[int, int]] = []

    def run_one(job: tuple[Any, ...]) -> tuple[int, int, Result, int, float, int]:
        _game, seats, seed, seat = job[:4]
        played.append((seed, seat))
        win = (seed + seat) % 2 == 0
        scores = [10 if (s == seat) == win else 5 for s in range(seats)]
        ranks = [1 + sum(1 for o in scores if o > x) for x in scores]
        return seed, seat, Result(scores, ranks, [], []), 3, 1.5, 30

    monkeypatch.setattr(duel_mod, "_run_one", run_one)
    return played


@pytest.fixture
def jobs(fake_matches, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every fake match's whole job (``duel._run_one``'s argument: its knobs, its options...)."""
    seen: list[tuple[Any, ...]] = []
    fake = duel_mod._run_one

    def run_one(job: tuple[Any, ...]) -> tuple[int, int, Result, int, float, int]:
        seen.append(job)
        return fake(job)

    monkeypatch.setattr(duel_mod, "_run_one", run_one)
    return seen


def test_a_resumed_duel_counts_its_matches_once_and_plays_only_the_rest(fake_matches):
    whole = duel_mod.duel("batavia", 3, 9, 4)
    assert len(fake_matches) == 9
    fake_matches.clear()
    first = duel_mod.duel("batavia", 3, 4, 4)  # whole seeds: 6 matches
    rows = json.loads(json.dumps(first.as_dict()))["played"][:4]  # a sitting stopped after 4
    assert [tuple(r[:2]) for r in rows] == [(1, 0), (1, 1), (1, 2), (2, 0)]
    fake_matches.clear()
    rest = duel_mod.duel("batavia", 3, 9, 4, resume=rows)
    assert fake_matches == [(2, 1), (2, 2), (3, 0), (3, 1), (3, 2)], "only the rest is played"
    for key in ("matches", "wins", "win_rate", "mean_score_margin", "searched_moves",
                "iterations_per_move", "played"):
        assert rest.as_dict()[key] == whole.as_dict()[key], key


def test_bench_sprt_resume_keeps_decided_tables_and_goes_on_with_the_others(
        fake_matches, tmp_path, capsys):
    out = tmp_path / "sprt.json"
    args = ["--games", "batavia", "--seats", "3", "4", "--matches", "6", "--json", str(out)]
    assert sprt_bench.main(args) == 0
    reports = json.loads(out.read_text())
    assert [(r["game"], r["seats"], r["matches"]) for r in reports] == [
        ("batavia", 3, 6), ("batavia", 4, 8)]
    assert all(r["commits"] for r in reports)
    # and the CPU they were played on, which a second of CPU a move depends on
    assert all(r["machines"] == [machine.label()] and "CPU" in r["machines"][0]
               for r in reports)
    # the 3-seat table is marked decided, the 4-seat one stopped after 5 matches
    reports[0]["sprt"]["decision"] = "H1"
    reports[1]["played"] = reports[1]["played"][:5]
    out.write_text(json.dumps(reports))
    fake_matches.clear()
    assert sprt_bench.main([*args, "--resume"]) == 0
    assert fake_matches == [(2, 1), (2, 2), (2, 3)], "the decided table is not played again"
    again = json.loads(out.read_text())
    assert again[0] == reports[0]
    assert again[1]["matches"] == 8 and len(again[1]["played"]) == 8
    said = capsys.readouterr().out
    assert "decided earlier (H1), kept" in said and "resuming after 5 matches" in said
    # a report of other terms (another profile) is never resumed: the table is played anew
    fake_matches.clear()
    assert sprt_bench.main([*args, "--resume", "--profile", "fast", "--seats", "4"]) == 0
    assert len(fake_matches) == 8


def test_an_edition_is_a_table_of_its_own(jobs, tmp_path):
    """``--option edition=2004`` plays Goa's first edition (the option reaches every match) as
    tables of their own in the same JSON, never resumed from the default edition's."""
    out = tmp_path / "sprt.json"
    args = ["--games", "goa", "--seats", "2", "--matches", "2", "--json", str(out), "--resume"]
    assert sprt_bench.main(args) == 0
    assert sprt_bench.main([*args, "--option", "edition=2004"]) == 0
    reports = json.loads(out.read_text())
    assert [(r["game"], r["options"], r["matches"]) for r in reports] == [
        ("goa", {"edition": "2004"}, 2), ("goa", {}, 2)]
    assert [job[7] for job in jobs] == [{}, {}, {"edition": "2004"}, {"edition": "2004"}]


def test_a_search_knob_is_a_table_of_its_own(fake_matches, jobs, tmp_path, capsys):
    """``bench.sprt --horizon 240`` (any of the search's flags) plays the profile with that knob
    changed, in every match, as a table of its own beside the profile's: never resumed from it,
    and resumed from its own. A report written before a knob existed still resumes."""
    out = tmp_path / "sprt.json"
    args = ["--games", "batavia", "--seats", "3", "--matches", "3", "--json", str(out),
            "--resume"]
    assert sprt_bench.main(args) == 0
    assert sprt_bench.main([*args, "--horizon", "240"]) == 0
    reports = json.loads(out.read_text())
    assert [(r["settings"]["horizon"], r["matches"]) for r in reports] == [(240, 3), (120, 3)]
    knobs = [job[6] for job in jobs]
    assert knobs[:3] == [{"profile": "strong", "cpu": True}] * 3
    assert knobs[3:] == [{"profile": "strong", "cpu": True, "horizon": 240}] * 3
    # the one with the knob stopped after 1 match; the profile's was written before its
    # `evaluation` knob existed
    reports[0]["played"] = reports[0]["played"][:1]
    del reports[1]["settings"]["evaluation"]
    out.write_text(json.dumps(reports))
    fake_matches.clear()
    capsys.readouterr()
    assert sprt_bench.main([*args, "--horizon", "240", "--matches", "6"]) == 0
    assert fake_matches == [(1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
    assert "batavia --horizon 240 3 seats: resuming after 1 matches" in capsys.readouterr().out
    fake_matches.clear()
    assert sprt_bench.main([*args, "--matches", "6"]) == 0
    assert fake_matches == [(2, 0), (2, 1), (2, 2)], "the profile's table went on from its 3"
    with pytest.raises(SystemExit):  # a knob the settings refuse: a usage error, no match
        sprt_bench.main([*args, "--horizon", "0"])
