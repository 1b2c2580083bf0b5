"""The search's greedy rollout policy, assembled from encodings (issue 21, item 3: faster
rollouts with the same choices): the Decision it hands the greedy bot is the message the
referee's field-by-field construction gives, so at random positions of every game and seat count
the policy picks exactly what the SDK's greedy bot picks from that seat's view, and a search with
a fixed seed gives the same SearchResult either way."""
from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import replace

import pytest
from referee_research import heuristics, ismcts, messages
from referee_research.ismcts import Budget

from referee.core import registry
from referee.core.contract import Decision
from referee.core.rng import Rng
from referee.sim import Simulation
from tests.contract import hooks
from tests.research.test_ismcts import deciding_positions, determinizer_for

GAMES = sorted(registry.games())


def per_seat_count(name: str, count: int, seed: int) -> Iterator[tuple[Simulation, Decision]]:
    """``count`` positions with a choice, of random games of ``name`` at each seat count (its
    tests' option sets in turn); each yielded state is played on after the consumer's turn."""
    spec = registry.get(name).spec
    option_sets = getattr(hooks.for_game(name), "OPTION_SETS", [{}])
    rnd = random.Random(seed)
    for seats in range(spec.min_seats, spec.max_seats + 1):
        found, k = 0, 0
        while found < count:
            sim = Simulation.new(name, seats, seed + 100 * seats + k,
                                 option_sets[k % len(option_sets)])
            k += 1
            every = rnd.randint(3, 11)
            step = 0
            while found < count and (d := sim.decision()) is not None:
                if step % every == 0 and len(d.moves) > 1:
                    yield sim, d
                    found += 1
                sim.apply(d.moves[rnd.randrange(len(d.moves))], d.seat)
                step += 1


@pytest.mark.parametrize("name", GAMES)
def test_the_encoded_decision_is_the_built_one_and_greedy_chooses_alike(name):
    """At 40 random positions per game and seat count (its option sets in turn), the encoded
    Decision equals the one built field by field, and the rollout policy answers the move the
    SDK's greedy bot answers from the built Decision of that seat."""
    spec = registry.get(name).spec
    seat_counts = set()
    for sim, d in per_seat_count(name, 40, 91):
        game = sim.game
        seat_counts.add(sim.seat_count)
        built = messages.built_decision_message(sim, d.seat, d.kind, list(d.moves), 0, d.prompt)
        encoded = messages.decision_message(sim, d.seat, d.kind, list(d.moves), 0, d.prompt)
        assert encoded == built
        greedy = heuristics.prior_bot(name, 17)
        assert greedy is not None
        answer = greedy.choose(built)
        policy = heuristics.prior_policy(name, sim.seat_count, Rng(17))
        assert policy is not None
        assert policy(sim, d) == sim.move_from_proto(getattr(answer, name))
        # the answer maps back through the encoder's table to the engine move
        assert messages.encoder(game).move(answer) == sim.move_from_proto(getattr(answer, name))
    assert seat_counts == set(range(spec.min_seats, spec.max_seats + 1))


def assert_same_searches(name: str, monkeypatch, ways: list[dict], positions: int,
                         seed: int, search_seed: int) -> None:
    """The bot's settings with a fixed seed, at ``positions`` deciding positions: the same move,
    visits, values and horizon verdict with ``heuristics.prior_policy`` called each of ``ways``
    (its keyword arguments)."""
    settings = replace(ismcts.STRONG, budget=Budget(iterations=6, seconds=None), horizon=400)
    original = heuristics.prior_policy
    for game, state, options, history, d in deciding_positions(name, positions, seed):
        results = []
        for way in ways:
            monkeypatch.setattr(heuristics, "prior_policy", functools.partial(original, **way))
            det = determinizer_for(name, game, state, options, history, d.seat)
            r = ismcts.search(det, d.seat, d.moves, search_seed, settings, d.moves[0])
            results.append((r.move, r.visits, r.values, r.iterations, r.beyond))
        assert all(r == results[0] for r in results)
        assert results[0][3] >= 1


@pytest.mark.parametrize("name", GAMES)
def test_a_search_gives_the_same_result_with_either_decision(name, monkeypatch):
    """The bot's settings with a fixed seed: the same move, visits, values and horizon verdict
    whether the rollouts hand the greedy bot encoded or built Decisions."""
    assert_same_searches(name, monkeypatch, [{"encoded": True, "engine": False},
                                             {"encoded": False, "engine": False}], 2, 53, 29)


def test_an_answer_outside_the_table_is_decoded():
    """A move the encoder has not seen maps back through the game's own decoding."""
    sim = Simulation.new("goa", 2, 4)
    d = sim.decision()
    built = messages.built_decision_message(sim, d.seat, d.kind, list(d.moves), 0)
    fresh = messages.DecisionEncoder(sim.game)
    assert [fresh.move(m) for m in built.legal_moves] == list(d.moves)


def _batavia_end_game_decision() -> tuple[Simulation, Decision, object]:
    """Batavia, 3 seats, seed 1, every seat greedy: the first decision of seat 0 within the last
    120 moves where greedy draws cards though a card could be played (its prior's move and
    the state, the end game of docs/research/search-bot.md's Batavia diagnosis)."""
    sim = Simulation.new("batavia", 3, 1)
    policy = heuristics.prior_policy("batavia", 3, Rng(5))
    assert policy is not None
    line = [sim.clone()]
    while (d := sim.decision()) is not None:
        sim.apply(policy(sim, d), d.seat)
        line.append(sim.clone())
    for state in line[-120:]:
        d = state.decision()
        if d is None or d.seat != 0 or len(d.moves) < 2:
            continue
        prior = policy(state, d)
        names = {type(m).__name__ for m in d.moves}
        if type(prior).__name__ == "DrawCards" and "PlayCard" in names:
            return state, d, prior
    pytest.fail("no such decision in the game")


def test_with_the_prior_at_pace_a_paired_search_can_leave_a_greedy_move_that_looks_worse():
    """Batavia's end game: the greedy move looks worse at its first visit, so UCB left it at one
    visit and the paired choice (two shared worlds at least) kept it; at pace (Batavia's
    setting, ``heuristics.PRIOR_PACE``) it is played in every world the others are, and the
    search leaves it for a move that gains on those worlds."""
    state, d, prior = _batavia_end_game_decision()
    det = ismcts.from_views("batavia", 0, state.view(0), 3)
    settings = replace(ismcts.STRONG, budget=Budget(iterations=12, seconds=None))
    unpaced = ismcts.Search(det, 0, d.moves, replace(settings, prior_pace=False), prior)
    assert unpaced.run(1).move == prior
    assert unpaced.root.children[(0, prior)].visits == 1
    paced = ismcts.Search(det, 0, d.moves, settings, prior)  # None: the game's choice
    r = paced.run(1)
    assert r.move != prior and r.values[r.move] > r.values[prior] + settings.prior_margin
    prior_visits = paced.root.children[(0, prior)].visits
    assert prior_visits >= max(r.visits.values()) - 1


def test_the_cyclic_collector_is_off_during_a_search_and_on_again_after(monkeypatch):
    """A search runs with the cyclic GC paused (a fifth of Goa's strong search was collection)
    and restores it, also when an iteration raises; a search that starts with it off (another
    thread's search paused it) leaves it off."""
    import gc

    sim = Simulation.new("goa", 2, 4)
    d = sim.decision()
    det = ismcts.from_views("goa", d.seat, sim.view(d.seat), 2)
    settings = replace(ismcts.STRONG, budget=Budget(iterations=2, seconds=None))
    seen: list[bool] = []
    original = ismcts.Search._iterate

    def iterate(self, rng):
        seen.append(gc.isenabled())
        return original(self, rng)

    monkeypatch.setattr(ismcts.Search, "_iterate", iterate)
    assert gc.isenabled()
    ismcts.search(det, d.seat, d.moves, 3, settings, d.moves[0])
    assert seen and not any(seen)
    assert gc.isenabled()

    def broken(self, rng):
        raise RuntimeError("boom")

    monkeypatch.setattr(ismcts.Search, "_iterate", broken)
    with pytest.raises(RuntimeError):
        ismcts.search(det, d.seat, d.moves, 3, settings, d.moves[0])
    assert gc.isenabled()
    gc.disable()
    try:
        with ismcts.cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_santa_maria_greedy_chooses_alike_with_its_shared_placement_cache(monkeypatch):
    """The greedy Santa Maria bot's best placements are shared across decisions
    (``santa_maria_values._PLACEMENTS``, the rollouts' main cost): along random games at every
    seat count, its choice with the cache warm from all the decisions before is the one it
    makes with the cache emptied first, and the cache was hit."""
    from referee_client.bots import santa_maria_values as smv

    hits = 0
    original = smv.Ctx.best_placement

    def counted(self, tile_cells):
        nonlocal hits
        before = len(smv._PLACEMENTS)
        found = original(self, tile_cells)
        hits += len(smv._PLACEMENTS) == before
        return found

    monkeypatch.setattr(smv.Ctx, "best_placement", counted)
    for sim, d in per_seat_count("santa_maria", 60, 7):
        message = messages.decision_message(sim, d.seat, d.kind, list(d.moves), 0, d.prompt)
        bot = heuristics.prior_bot("santa_maria", 3)
        assert bot is not None
        warm = bot.choose(message)
        saved = dict(smv._PLACEMENTS)
        smv._PLACEMENTS.clear()
        bot = heuristics.prior_bot("santa_maria", 3)
        assert bot is not None
        assert bot.choose(message) == warm
        smv._PLACEMENTS.update(saved)
    assert hits > 0


def test_santa_maria_shared_placements_tell_colonies_apart():
    """Colonies with the same cells but other contents (a building, colonists) or another year
    do not share a best placement: each display tile's with the shared cache warm from the
    first colony is the one computed from an empty cache."""
    from referee_client.bots import santa_maria_values as smv

    from referee.v1 import santa_maria_pb2

    checked = 0
    for sim, d in per_seat_count("santa_maria", 12, 5):
        view = santa_maria_pb2.View.FromString(sim.game.view_bytes(sim.state, d.seat))
        me = next(p for p in view.players if p.seat == view.seat)
        if not me.colony or not view.display:
            continue
        for change in ("building", "colonists", "year"):
            other = santa_maria_pb2.View()
            other.CopyFrom(view)
            them = next(p for p in other.players if p.seat == other.seat)
            for cell in them.colony:
                if change == "building":
                    cell.content.building = not cell.content.building
                elif change == "colonists":
                    cell.content.colonists += 1
            if change == "year":
                other.year = 3 if view.year != 3 else 1
            smv._PLACEMENTS.clear()
            first = smv.Ctx(view, smv.Weights())
            for tile in view.display:
                first.best_placement(tile.cells)
            warm = smv.Ctx(other, smv.Weights())
            got = [warm.best_placement(t.cells) for t in other.display]
            smv._PLACEMENTS.clear()
            cold = smv.Ctx(other, smv.Weights())
            assert got == [cold.best_placement(t.cells) for t in other.display], change
            checked += 1
    assert checked > 0
