"""The ISMCTS search bot (issue 21, item 3): deterministic for a seed and an iteration budget,
never an illegal move, reads only its seat's view and the public events, and with a budget it
beats random play.

Positions are those of the forward model's contract tests (random games of every game, seat
count and option set). Where a game's sampler has not landed yet the search runs on the
provisional determinizer of ``tests/research/peek.py`` (the true state, future chance redrawn);
the test that the bot reads nothing but its view needs the sampler itself and says so.
"""
from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
from referee_client.bots.random_bot import RandomBot
from referee_research import heuristics, ismcts
from referee_research.duel import (
    Sprt,
    decision_message,
    first_share,
    play,
    schedule,
    sprt_for,
    wilson,
)
from referee_research.ismcts import Budget, Settings
from referee_research.ismcts_bot import ISMCTSBot

from referee.core import registry
from referee.core.contract import Result
from referee.core.rng import Rng
from referee.sim import Simulation
from referee.v1 import referee_pb2
from tests.contract import hooks
from tests.research.peek import peeking
from tests.sim.test_forward_model import positions

GAMES = sorted(registry.games())
SMALL = Settings(budget=Budget(iterations=12, seconds=None))


def has_sampler(name: str) -> bool:
    """Whether ``name``'s sampler has landed (it raises NotImplementedError until then)."""
    sim = Simulation.new(name, registry.get(name).spec.min_seats, 1)
    seat = sim.to_move()
    try:
        Simulation.from_views(name, {seat: sim.view(seat)}, sim.seat_count, Rng(1))
    except NotImplementedError:
        return False
    return True


def determinizer_for(name: str, game, state, options, history, seat):
    """The sampler on ``seat``'s view where the game has one, else the provisional peek."""
    if has_sampler(name):
        return ismcts.from_views(name, seat, game.view(state, seat), game.seat_count(state),
                                 list(history), options)
    true_sim = Simulation(game, state, options, game.default_components(options))
    return peeking(true_sim)(name, seat, None, game.seat_count(state), history, options)


def deciding_positions(name: str, count: int, seed: int):
    for game, state, options, history, _seat in positions(name, count * 3, seed):
        d = game.decision(state)
        if d is not None and len(d.moves) > 1:
            yield game, state, options, history, d
            count -= 1
            if count == 0:
                return


@pytest.mark.parametrize("name", GAMES)
def test_search_is_deterministic_for_a_seed_and_an_iteration_budget(name):
    for game, state, options, history, d in deciding_positions(name, 4, 31):
        runs = []
        for _ in range(2):
            det = determinizer_for(name, game, state, options, history, d.seat)
            r = ismcts.search(det, d.seat, d.moves, 77, SMALL)
            runs.append((r.move, r.visits, r.iterations))
        assert runs[0] == runs[1], f"{name}: two searches with seed 77 differ"
        assert runs[0][2] == 12


@pytest.mark.parametrize("name", GAMES)
def test_search_returns_a_legal_move_at_random_positions(name):
    for game, state, options, history, d in deciding_positions(name, 12, 32):
        det = determinizer_for(name, game, state, options, history, d.seat)
        r = ismcts.search(det, d.seat, d.moves, 5, SMALL)
        assert r.move in d.moves
        assert sum(r.visits.values()) == 12, "every iteration passes through one root move"


def test_a_determinization_listing_other_moves_cannot_make_it_play_them():
    """The root keeps to the real decision's moves even if a sample disagreed with them."""
    game, state, options, _history, d = next(deciding_positions("batavia", 1, 33))
    sim = Simulation(game, state, options, game.default_components(options))
    legal = list(d.moves)[:1] + list(d.moves)[1:2]  # pretend only two of them are legal
    r = ismcts.search(lambda rng: sim.clone(), d.seat, legal, 3, SMALL)
    assert r.move in legal
    assert set(r.visits) <= set(legal)


def test_a_determinization_where_another_seat_moves_is_dropped():
    """A sample that does not have the searching seat to move teaches nothing about its
    choice: the search skips it and still answers one of the real moves."""
    game, state, options, _history, d = next(deciding_positions("goa", 1, 35))
    sim = Simulation(game, state, options, game.default_components(options))
    search = ismcts.Search(lambda rng: sim.clone(), d.seat + 1, d.moves, SMALL)
    r = search.run(3)
    assert r.move in d.moves
    assert search.root.children == {}, "nothing learnt from another seat's decision"


def test_a_failing_search_costs_the_bot_no_match(monkeypatch):
    """A sampler or engine bug inside the search is logged and noted; the bot still answers a
    legal move instead of dropping out of the match."""
    sim = Simulation.new("batavia", 3, 6)

    def broken(*_args):
        def draw(rng):
            raise RuntimeError("sampler bug")
        return draw

    bot = ISMCTSBot(1, SMALL, determinizer=broken)
    bots = [bot, RandomBot(1), RandomBot(2)]
    assert isinstance(play(sim, bots), Result)


def test_one_legal_move_is_played_without_searching():
    r = ismcts.search(lambda rng: pytest.fail("no determinization needed"), 0, ["only"], 1,
                      SMALL)
    assert r.move == "only" and r.iterations == 0


@pytest.mark.parametrize("name", GAMES)
def test_the_bot_reads_only_its_seat_view_and_the_public_events(name):
    """Leak test: a true state whose hidden parts ``seat`` cannot see are drawn anew
    (``tests/<game>/hooks.py``, ``rerandomise``) shows the seat the same view, so the bot, fed
    that view and the same events, must answer the same move with the same statistics."""
    if not has_sampler(name):
        pytest.skip(f"{name} has no sampler yet (Game.sample_state): the bot cannot run on "
                    "what its seat saw alone until it lands")
    rerandomise = hooks.require(name, "rerandomise")
    rnd = random.Random(9)
    for game, state, options, history, d in deciding_positions(name, 4, 34):
        other = rerandomise(state, d.seat, rnd)
        answers = []
        for s in (state, other):
            view = game.view_bytes(s, d.seat) if hasattr(game, "view_bytes") else \
                game.view(s, d.seat).SerializeToString()
            det = ismcts.from_views(name, d.seat, view, game.seat_count(s), list(history),
                                    options)
            r = ismcts.search(det, d.seat, d.moves, 11, SMALL)
            answers.append((r.move, r.visits))
        assert answers[0] == answers[1], f"{name}: the search read something its seat cannot see"


def test_the_bot_answers_a_decision_as_the_referee_sends_it_with_a_note():
    """The SDK bot, on its game's sampler: a Welcome, public events as MatchEvents, a Decision
    in, a listed Move out, with the search's statistics in its note."""
    sim = Simulation.new("batavia", 3, 4)
    quick = Settings(budget=Budget(iterations=4, seconds=None), rollout_depth=10)
    bot = ISMCTSBot(1, quick)
    bots = [bot, RandomBot(1), RandomBot(2)]
    seen = []
    original = bot.choose

    def spy(decision):
        move = original(decision)
        assert move in decision.legal_moves
        seen.append(bot._referee_note)
        return move

    bot.choose = spy  # type: ignore[method-assign]
    result = play(sim, bots)
    assert isinstance(result, Result)
    assert bot.history, "the bot asked for and kept the public events"
    notes = [n for n in seen if n]
    assert notes and all(n.startswith("ismcts 4 it") for n in notes)


def test_decision_message_carries_the_view_and_every_legal_move():
    sim = Simulation.new("goa", 2, 3)
    d = sim.decision()
    msg = decision_message(sim, d.seat, d.kind, list(d.moves), 0)
    assert len(msg.legal_moves) == len(d.moves)
    assert msg.view.goa == sim.view(d.seat)
    assert [sim.move_from_proto(m.goa) for m in msg.legal_moves] == list(d.moves)


def test_rewards_follow_ranks_and_margins():
    r = Result(scores=[30, 20, 20], ranks=[1, 2, 2], winners=[0], details=[{}] * 3)
    first, second, third = ismcts.rewards(r)
    assert 0 <= third <= second <= first <= 1
    assert second == third
    assert first > 0.75 and second < 0.5
    assert ismcts.rewards(Result([5], [1], [0], [{}]))[0] > 0.5  # solo: above 0 is good
    level = ismcts.estimate_rewards([10.0, 10.0])
    assert level[0] == level[1] == 0.5


def test_first_share_and_wilson():
    r = Result(scores=[3, 3, 1], ranks=[1, 1, 3], winners=[0, 1], details=[{}] * 3)
    assert first_share(r, 0) == 0.5 and first_share(r, 2) == 0.0
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)
    assert list(schedule(2, 3)) == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]


def test_budget_needs_a_bound():
    with pytest.raises(ValueError):
        Budget(iterations=None, seconds=None)
    with pytest.raises(ValueError):
        Budget(iterations=0)


@pytest.mark.slow
def test_with_a_budget_it_beats_random_play():
    """Statistical, on a fixed seed set: the search alone (no prior), 16 iterations a move,
    against two random bots in Batavia, each of 3 seeds played with the search in every seat. An
    equal player wins a third (3 of 9; 6 or more of 9 has odds under 5% for it): the search must
    win at least 6 of 9."""
    settings = Settings(budget=Budget(iterations=16, seconds=None), prior_weight=0.0)
    wins = 0.0
    for seed, seat in schedule(3, 3, 40):
        sim = Simulation.new("batavia", 3, seed)
        det = None if has_sampler("batavia") else peeking(sim)
        bots = [RandomBot(seed * 10 + s) for s in range(3)]
        bots[seat] = ISMCTSBot(seed, settings, determinizer=det)
        wins += first_share(play(sim, bots), seat)
    assert wins >= 6, f"the search won {wins} of 9 against random play"


# ---------------------------------------------------------------------- the stronger search
QUICK_STRONG = replace(ismcts.STRONG, budget=Budget(iterations=6, seconds=None), rollout_depth=8)


@pytest.mark.parametrize("name", GAMES)
def test_the_prior_policy_plays_as_the_greedy_bot_would(name):
    """Prior-guided rollouts: at random positions of every game the policy answers, for the
    seat to move, exactly the move the game's greedy bot picks from that seat's Decision."""
    greedy = heuristics.prior_bot(name, 5)
    assert greedy is not None
    checked = 0
    for game, state, options, _history, d in deciding_positions(name, 8, 36):
        sim = Simulation(game, state, options, game.default_components(options))
        policy = heuristics.prior_policy(name, sim.seat_count, Rng(3))
        assert policy is not None
        answer = greedy.choose(decision_message(sim, d.seat, d.kind, list(d.moves), 0, d.prompt))
        assert policy(sim, d) == sim.move_from_proto(getattr(answer, name))
        checked += 1
    assert checked == 8


@pytest.mark.parametrize("name", GAMES)
def test_every_game_has_a_score_estimate_for_cut_rollouts(name):
    sim = Simulation.new(name, max(2, registry.get(name).spec.min_seats), 3)
    for _ in range(60):
        d = sim.decision()
        sim.apply(d.moves[0], d.seat)
    estimate = heuristics.score_estimate(sim)
    assert estimate is not None and len(estimate) == sim.seat_count
    assert all(isinstance(v, float) for v in estimate)


@pytest.mark.parametrize("name", GAMES)
def test_the_strong_search_is_deterministic_and_tries_the_prior_first(name):
    for game, state, options, history, d in deciding_positions(name, 2, 37):
        prior = d.moves[-1]
        runs = []
        for _ in range(2):
            det = determinizer_for(name, game, state, options, history, d.seat)
            r = ismcts.search(det, d.seat, d.moves, 78, QUICK_STRONG, prior)
            runs.append((r.move, r.visits))
        assert runs[0] == runs[1], f"{name}: two strong searches with seed 78 differ"
        det = determinizer_for(name, game, state, options, history, d.seat)
        one = ismcts.search(det, d.seat, d.moves, 78,
                            replace(QUICK_STRONG, budget=Budget(iterations=1, seconds=None)),
                            prior)
        assert one.visits == {prior: 1} and one.move == prior


def test_widening_and_a_flat_tree_bound_the_nodes():
    """Progressive widening keeps the root to ceil(W * sqrt(n + 1)) children after n visits,
    and tree depth 0 grows no node below the root's moves."""
    game, state, options, history, d = next(
        p for p in deciding_positions("goa", 40, 38) if len(p[4].moves) >= 6)
    det = determinizer_for("goa", game, state, options, history, d.seat)
    settings = replace(QUICK_STRONG, budget=Budget(iterations=9, seconds=None), widening=1.0)
    search = ismcts.Search(det, d.seat, d.moves, settings, d.moves[0])
    search.run(4)
    assert len(search.root.children) <= 4  # ceil(sqrt(9 + 1 - 1))
    assert all(not child.children for child in search.root.children.values())
    wide = ismcts.Search(det, d.seat, d.moves, replace(settings, widening=None), d.moves[0])
    wide.run(4)
    assert len(wide.root.children) > 4


def test_settings_refuse_unknown_rollouts_and_bad_knobs():
    with pytest.raises(ValueError, match="rollout must be one of"):
        Settings(rollout="greedy")
    with pytest.raises(ValueError, match="epsilon"):
        Settings(epsilon=1.5)
    with pytest.raises(ValueError, match="widening"):
        Settings(widening=0)


def test_sprt_decides_for_a_clear_winner_and_a_clear_loser():
    h1 = sprt_for(2)
    assert (h1.p0, h1.p1) == (0.5, pytest.approx(0.65))
    decisions = [h1.add(1.0) for _ in range(20)]
    assert decisions[-1] == "H1" and decisions[0] is None
    at = decisions.index("H1") + 1
    # each win adds ln(0.65/0.5); H1 needs ln(0.95/0.05)
    assert at == math.ceil(math.log(19) / math.log(1.3))
    h1.add(0.0)
    assert h1.decision == "H1", "a decision, once reached, stays"
    h0 = Sprt(1 / 3, 1 / 3 + 0.15)
    for _ in range(60):
        h0.add(0.0)
    assert h0.decision == "H0"
    even = sprt_for(2)
    for share in [1.0, 0.0] * 5 + [0.5] * 2:
        even.add(share)
    assert even.decision is None and "undecided" in even.verdict()
    for share in [1.0, 0.0] * 40:  # an equal player's record drifts to H0
        even.add(share)
    assert even.decision == "H0"
    with pytest.raises(ValueError):
        Sprt(0.5, 0.4)


@pytest.mark.slow
def test_the_strong_bot_beats_random_play_on_fixed_seeds():
    """Statistical, on a fixed seed set: the bot's own settings with a small budget (4
    iterations, rollouts cut after 8 moves) against two random bots in Batavia, 2 seeds with
    the bot in every seat: an equal player wins a third (2 of 6; 5 or more of 6 has odds under
    2% for it)."""
    settings = replace(ismcts.STRONG, budget=Budget(iterations=4, seconds=None), rollout_depth=8)
    wins = 0.0
    for seed, seat in schedule(2, 3, 50):
        sim = Simulation.new("batavia", 3, seed)
        bots = [RandomBot(seed * 10 + s) for s in range(3)]
        bots[seat] = ISMCTSBot(seed, settings)
        wins += first_share(play(sim, bots), seat)
    assert wins >= 5, f"the strong search won {wins} of 6 against random play"


def test_a_paired_search_plays_every_root_move_in_the_same_worlds():
    """Common random numbers: with ``paired`` the j-th visit of every root move is played in the
    j-th determinization, so a search draws only as many worlds as its most visited root move
    has visits (an unpaired one draws one a iteration), and each world is drawn from one seed."""
    game, state, options, history, d = next(
        p for p in deciding_positions("santa_maria", 40, 39) if len(p[4].moves) >= 4)
    seeds: list[int] = []

    def counting(rng):
        seeds.append(rng.next64())
        return determinizer_for("santa_maria", game, state, options, history, d.seat)(rng)

    settings = replace(QUICK_STRONG, budget=Budget(iterations=10, seconds=None))
    r = ismcts.search(counting, d.seat, d.moves, 5, settings, d.moves[0])
    assert len(r.visits) >= 2
    assert len(seeds) == max(r.visits.values()) < 10
    assert len(set(seeds)) == len(seeds)
    seeds.clear()
    ismcts.search(counting, d.seat, d.moves, 5, replace(settings, paired=False), d.moves[0])
    assert len(seeds) == 10


def test_a_paired_search_leaves_the_prior_only_for_a_clear_gain_on_shared_worlds():
    """The paired choice: a root move replaces the prior's only if, on the worlds both were
    played in (two at least), it gains more than ``prior_margin`` on average."""
    search = ismcts.Search(lambda rng: pytest.fail("no world needed"), 0, ["p", "a", "b"],
                           replace(QUICK_STRONG, prior_margin=0.05), prior="p")

    def node(move, rewards):
        n = ismcts.Node(0)
        n.visits, n.total = len(rewards), sum(rewards)
        search.root.children[(0, move)] = n
        search._paired[n] = list(rewards)

    node("p", [0.5, 0.2, 0.6])
    node("a", [0.56, 0.26])  # +0.06 on the two shared worlds
    node("b", [0.9])  # one world only: not enough
    assert search._result(6, 0.0).move == "a"
    search._paired[search.root.children[(0, "a")]] = [0.54, 0.24]  # +0.04: within the margin
    assert search._result(6, 0.0).move == "p"


def test_beyond_the_horizon_the_search_stops_and_keeps_the_prior():
    """With rollouts to the end, a rollout still running after ``horizon`` moves stops the
    search at once: the prior's move is played (here the opening of Goa, far from its end)."""
    sim = Simulation.new("goa", 2, 8)
    d = sim.decision()
    prior = d.moves[-1]
    settings = replace(ismcts.STRONG, budget=Budget(iterations=6, seconds=None), horizon=5)
    search = ismcts.Search(lambda rng: sim.clone(), d.seat, d.moves, settings, prior)
    r = search.run(3)
    assert search.beyond and r.move == prior and r.iterations == 1
    with pytest.raises(ValueError, match="horizon"):
        Settings(horizon=0)


def test_the_bot_plays_greedy_without_searching_while_the_end_is_beyond_its_horizon():
    """One search that measured the end beyond the horizon spares the next ones: until the
    state version it implies, the bot answers the greedy move and searches nothing."""
    sim = Simulation.new("goa", 2, 9)
    settings = replace(ismcts.STRONG, budget=Budget(iterations=3, seconds=None), horizon=20)
    bot = ISMCTSBot(2, settings)
    greedy = heuristics.prior_bot("goa", 2)
    d = sim.decision()
    welcome = referee_pb2.Welcome(match_id="m", game="goa", seat=d.seat, seat_count=2)
    bot.on_welcome(welcome)
    version = 0
    while (d := sim.decision()).seat != bot.seat or len(d.moves) < 2:
        sim.apply(d.moves[0], d.seat)
        version += 1
    bot.choose(decision_message(sim, d.seat, d.kind, list(d.moves), version))
    assert bot.searches == 1 and bot.skip_until == version + 20  # given up at 40 moves
    answered = 0
    while True:
        sim.apply(d.moves[0], d.seat)
        version += 1
        while (d := sim.decision()).seat != bot.seat or len(d.moves) < 2:
            sim.apply(d.moves[0], d.seat)
            version += 1
        if version >= bot.skip_until:
            break
        message = decision_message(sim, d.seat, d.kind, list(d.moves), version)
        assert bot.choose(message) == greedy.choose(message)
        answered += 1
    assert answered >= 2 and bot.searches == 1
