"""The search at a thousand iterations a second (issue 36, item 2): the ``fast`` profile's
iterations run on engine states (no View built inside the search), each game's provisional
final scoring reads a state without changing it, the bot still sees only its seat's view, and
a CPU budget counts CPU time. No test asserts a speed: ``make bench`` measures it
(``ismcts.<game>.iterations_per_cpu_s``)."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest
from referee_research import ismcts
from referee_research.ismcts import FAST, PROFILES, STRONG, Budget
from referee_research.ismcts_bot import build_parser, settings_from

from referee.core import registry
from referee.core.rng import Rng
from referee.sim import Simulation
from referee.sim.model import uniform
from tests.contract import hooks
from tests.research.test_ismcts import deciding_positions

GAMES = sorted(registry.games())
QUICK_FAST = replace(FAST, budget=Budget(iterations=30, seconds=None))


@pytest.mark.parametrize("name", GAMES)
def test_the_fast_search_runs_its_budget_and_answers_a_legal_move(name):
    for game, state, options, history, d in deciding_positions(name, 6, 41):
        det = ismcts.from_views(name, d.seat, game.view(state, d.seat), game.seat_count(state),
                                list(history), options)
        r = ismcts.search(det, d.seat, d.moves, 5, QUICK_FAST, d.moves[-1])
        assert r.iterations == 30
        assert r.move in d.moves
        assert set(r.visits) <= set(d.moves)
        assert sum(r.visits.values()) > 0, "no iteration reached a root move"


@pytest.mark.parametrize("name", GAMES)
def test_the_fast_search_builds_no_view_inside_its_iterations(name, monkeypatch):
    """The determinizer gets the seat's view once per decision; after that an iteration works
    on engine states only: a View built (or encoded) inside the search fails the test."""
    game, state, options, history, d = next(deciding_positions(name, 1, 42))
    det = ismcts.from_views(name, d.seat, game.view(state, d.seat), game.seat_count(state),
                            list(history), options)

    def no_view(*_args, **_kwargs):
        raise AssertionError("a View was built inside the search's iterations")

    monkeypatch.setattr(type(game), "view", no_view)
    monkeypatch.setattr(type(game), "view_bytes", no_view)
    r = ismcts.search(det, d.seat, d.moves, 6, QUICK_FAST, d.moves[0])
    assert r.iterations == 30


@pytest.mark.parametrize("name", GAMES)
def test_the_fast_bot_reads_only_its_seat_view_and_the_public_events(name):
    """The leak test of tests/research/test_ismcts.py with the fast profile: a true state whose
    hidden parts are drawn anew shows the seat the same view, so the search answers alike."""
    rerandomise = hooks.require(name, "rerandomise")
    rnd = random.Random(19)
    for game, state, options, history, d in deciding_positions(name, 4, 43):
        other = rerandomise(state, d.seat, rnd)
        answers = []
        for s in (state, other):
            det = ismcts.from_views(name, d.seat, game.view_bytes(s, d.seat),
                                    game.seat_count(s), list(history), options)
            r = ismcts.search(det, d.seat, d.moves, 13, QUICK_FAST, d.moves[0])
            answers.append((r.move, r.visits, r.values))
        assert answers[0] == answers[1], f"{name}: the search read something its seat cannot see"


@pytest.mark.parametrize("name", GAMES)
def test_provisional_scores_change_nothing_and_are_the_final_scores_at_the_end(name):
    """``Game.provisional_scores``: the final scoring applied to a copy, one score a seat; the
    state it reads is left as it was (its hash), and at the end it gives the result's scores."""
    spec = registry.get(name).spec
    for seats in range(max(2, spec.min_seats), spec.max_seats + 1):
        sim = Simulation.new(name, seats, 7 + seats)
        choose = uniform(Rng(seats))
        moves = 0
        while (d := sim.decision()) is not None:
            if moves % 17 == 0:
                before = sim.hash()
                scores = sim.game.provisional_scores(sim.state)
                assert scores is not None and len(scores) == seats
                assert sim.hash() == before, f"{name}: provisional scoring changed the state"
                assert sim.decision() == d
            sim.apply(choose(d), d.seat)
            moves += 1
        result = sim.result()
        assert result is not None
        assert sim.game.provisional_scores(sim.state) == [float(x) for x in result.scores]


def test_a_cpu_budget_counts_cpu_time(monkeypatch):
    """``Budget(cpu=True)`` stops on ``time.process_time``, whatever the wall clock says."""
    game, state, options, history, d = next(deciding_positions("goa", 1, 44))
    det = ismcts.from_views("goa", d.seat, game.view(state, d.seat), game.seat_count(state),
                            list(history), options)
    ticks = iter(range(10_000))
    monkeypatch.setattr(ismcts.time, "process_time", lambda: next(ticks) * 0.01)
    walls = iter(range(10_000))  # wall time runs ten times slower than the CPU's here
    monkeypatch.setattr(ismcts.time, "perf_counter", lambda: next(walls) * 0.001)
    settings = replace(FAST, budget=Budget(seconds=0.05, cpu=True))
    r = ismcts.search(det, d.seat, d.moves, 3, settings, d.moves[0])
    assert r.iterations == 5  # one tick at the start, one after each iteration


def test_the_profile_flag_picks_the_settings_and_flags_change_single_knobs():
    base = ["--match", "m", "--iterations", "9"]
    assert settings_from(build_parser().parse_args(base)) == replace(
        STRONG, budget=Budget(iterations=9, seconds=None))
    fast = settings_from(build_parser().parse_args([*base, "--profile", "fast",
                                                    "--rollout-depth", "4"]))
    assert fast == replace(FAST, budget=Budget(iterations=9, seconds=None), rollout_depth=4)
    assert set(PROFILES) == {"strong", "fast"}


def test_the_sprt_run_covers_every_seat_count_of_every_game():
    from bench.sprt import tables

    expected = []
    for name in GAMES:
        spec = registry.get(name).spec
        expected += [(name, n) for n in range(max(2, spec.min_seats), spec.max_seats + 1)]
    assert tables(GAMES) == expected
    assert ("santa_maria", 2) in expected and ("batavia", 5) in expected
