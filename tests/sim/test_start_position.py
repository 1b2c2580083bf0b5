"""Start from a position (issue 21, item 6), without a referee: a match or a simulation that
begins where a recorded match stood after N moves. Its record keeps the start, so ``replay``
verifies it from scratch; with ``redraw_hidden`` the game's sampler draws what no seat could see
there from the new match's seed, every seat's view unchanged. Bad starts are refused with
ReplayError naming why.

The redraw's plumbing is pinned here with a stand-in sampler for Batavia that redraws what no
seat sees (the draw pile's order, the stall tiles still face down, the future of chance: Batavia
rules, "Preparation", the ship cards shuffled face down and the stall tiles laid face down);
``test_redraw_with_the_games_sampler`` runs the games' own samplers where they exist."""
from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from referee.core import registry
from referee.core.match import Match, ReplayError, redraw_rng, replay, start_doc
from referee.core.rng import Rng, Streams
from referee.sim import Simulation, playout, uniform

from .records import finish, played

BATAVIA = registry.get("batavia")


@pytest.fixture
def stand_in_sampler(monkeypatch):
    """Batavia's ``sample_state`` replaced by one that knows the true state of the record being
    started (the test sets it) and redraws only what every seat cannot see."""
    truth: dict[str, Any] = {}

    def sample_state(views, history, rng, options, seat_count, components):
        s = copy.deepcopy(truth["state"])
        assert set(views) == set(range(seat_count)), "a start gives every seat's view"
        order = list(s.draw_pile)
        for i in range(len(order) - 1, 0, -1):
            j = rng.below(i + 1)
            order[i], order[j] = order[j], order[i]
        s.draw_pile = order
        hidden = [i for i in range(s.revealed, len(s.track)) if s.track[i] >= 0]
        tiles = [s.track[i] for i in hidden]
        rng.shuffle(tiles)
        for i, t in zip(hidden, tiles, strict=True):
            s.track[i] = t
        s.rng = Streams.from_root(rng.next64(), s.rng.counts)
        return s

    monkeypatch.setattr(BATAVIA, "sample_state", sample_state)
    return truth


def at(record: dict, move: int) -> Any:
    return Simulation.from_record(record, move).state


def test_a_match_started_at_move_n_plays_on_and_verifies():
    source = played()
    n = 40
    m = Match.create(BATAVIA, {}, 3, 99, start=start_doc(source, n, False))
    # without redraw it is the recorded position itself, its chance included
    assert m.initial_hash == source["moves"][n - 1]["state_hash"]
    record = finish(m, 1)
    assert record["start"]["move"] == n and len(record["start"]["record"]["moves"]) == n
    assert "result" not in record["start"]["record"]  # only what the replay to n needs
    again = replay(BATAVIA, record)
    assert again.result() is not None
    # the same moves from the source's own position: the same play (no redraw, same chance)
    assert again.initial_hash == record["initial_state_hash"]


def test_start_at_zero_is_the_set_up_and_starts_nest():
    source = played(seed=8)
    m0 = Match.create(BATAVIA, {}, 3, 1, start=start_doc(source, 0, False))
    assert m0.initial_hash == source["initial_state_hash"]
    first = finish(Match.create(BATAVIA, {}, 3, 2, start=start_doc(source, 30, False)), 3)
    second = finish(Match.create(BATAVIA, {}, 3, 4, start=start_doc(first, 10, False)), 5)
    assert second["start"]["record"]["start"]["move"] == 30
    replay(BATAVIA, second)


def test_a_tampered_or_mismatched_start_is_refused():
    source = played(seed=6)
    bad_hash = copy.deepcopy(source)
    bad_hash["moves"][5]["state_hash"] = "0" * 64
    with pytest.raises(ReplayError, match="move 6"):
        Match.create(BATAVIA, {}, 3, 1, start=start_doc(bad_hash, 10, False))
    bad_move = copy.deepcopy(source)
    bad_move["moves"][2]["move"] = {"nonsense": 1}
    with pytest.raises(ReplayError, match="move 3"):
        Match.create(BATAVIA, {}, 3, 1, start=start_doc(bad_move, 10, False))
    with pytest.raises(ReplayError, match="cannot start after move"):
        start_doc(source, len(source["moves"]) + 1, False)
    with pytest.raises(ReplayError, match="over after move"):
        Match.create(BATAVIA, {}, 3, 1, start=start_doc(source, len(source["moves"]), False))
    with pytest.raises(ReplayError, match="seats"):
        Match.create(BATAVIA, {}, 4, 1, start=start_doc(source, 10, False))
    with pytest.raises(ReplayError, match="options"):
        Match.create(BATAVIA, {"setup": "face_up"}, 3, 1, start=start_doc(source, 10, False))
    with pytest.raises(ReplayError, match="not 'goa'"):
        Match.create(registry.get("goa"), {}, 3, 1, start=start_doc(source, 10, False))
    # a record whose start was tampered with no longer verifies
    record = finish(Match.create(BATAVIA, {}, 3, 2, start=start_doc(source, 20, False)), 1)
    record["start"]["move"] = 19
    record["start"]["record"]["moves"].pop()
    with pytest.raises(ReplayError, match="initial state hash"):
        replay(BATAVIA, record)


def test_redraw_keeps_every_view_and_changes_hidden_parts(stand_in_sampler):
    source = played(seed=11)
    n = 30
    stand_in_sampler["state"] = at(source, n)
    true_state = stand_in_sampler["state"]
    a = Match.create(BATAVIA, {}, 3, 1, start=start_doc(source, n, True))
    b = Match.create(BATAVIA, {}, 3, 2, start=start_doc(source, n, True))
    again = Match.create(BATAVIA, {}, 3, 1, start=start_doc(source, n, True))
    for s in range(3):  # every seat sees exactly what it saw at move n
        assert BATAVIA.view(a.state, s) == BATAVIA.view(true_state, s)
    assert BATAVIA.view(a.state, None) == BATAVIA.view(true_state, None)
    truth = BATAVIA.hash_state(true_state)
    assert len({truth, a.initial_hash, b.initial_hash}) == 3, "hidden parts are redrawn per seed"
    assert again.initial_hash == a.initial_hash, "the redraw is the new seed's"
    assert a.state.draw_pile != true_state.draw_pile
    record = finish(a, 7)
    assert record["start"]["redraw_hidden"] is True
    assert replay(BATAVIA, record).result() is not None  # verifies from scratch


def test_simulation_from_record_is_the_same_start(stand_in_sampler):
    source = played(seed=12)
    stand_in_sampler["state"] = at(source, 25)
    plain = Simulation.from_record(json.dumps(source), 25)
    assert plain.hash() == source["moves"][24]["state_hash"]
    drawn = Simulation.from_record(source, 25, redraw=redraw_rng(3))
    started = Match.create(BATAVIA, {}, 3, 3, start=start_doc(source, 25, True))
    assert drawn.hash() == started.initial_hash, "a simulation redraws as a match of that seed"
    assert Simulation.from_record(source, 25, redraw=4).hash() != plain.hash()
    assert drawn.rollout(Rng(1)) is not None
    with pytest.raises(ReplayError):
        Simulation.from_record(source, 10_000)


def test_redraw_without_a_sampler_says_so(monkeypatch):
    source = played(seed=13)

    def no_sampler(*args, **kwargs):
        raise NotImplementedError("batavia has no sampler")

    monkeypatch.setattr(BATAVIA, "sample_state", no_sampler)
    with pytest.raises(NotImplementedError):
        Match.create(BATAVIA, {}, 3, 1, start=start_doc(source, 10, True))


def _has_sampler(name: str) -> bool:
    game = registry.get(name)
    sim = Simulation.new(name, game.spec.min_seats, 1)
    view = sim.view(0)
    try:
        game.sample_state({0: view}, [], Rng(1), sim.options, sim.seat_count, sim.components)
    except NotImplementedError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(registry.games()))
def test_redraw_with_the_games_sampler(name):
    if not _has_sampler(name):
        pytest.skip(f"{name} has no sampler yet (Game.sample_state)")
    game = registry.get(name)
    seats = game.spec.max_seats
    source = played(name, seats, 21)
    changed = 0
    for k, n in enumerate(range(5, len(source["moves"]) - 1, max(1, len(source["moves"]) // 8))):
        true_state = Simulation.from_record(source, n).state
        m = Match.create(game, source["options"], seats, 100 + k, start=start_doc(source, n, True))
        for s in range(seats):
            assert game.view(m.state, s) == game.view(true_state, s), (
                f"{name}: move {n}, seat {s}: the redraw changed what the seat saw")
        changed += m.initial_hash != game.hash_state(true_state)
        replay(game, finish(m, k))
    assert changed > 0


def test_playout_is_the_one_random_loop():
    """``playout`` plays to the end and counts moves; ``uniform`` draws with either RNG kind."""
    sim = Simulation.new("batavia", 3, 5)
    seen: list[str] = []
    moves = playout(sim.game, sim.state, uniform(random.Random(1)), watch=lambda d: seen.append(d.kind))
    assert sim.over and moves == len(seen) > 0
    other = Simulation.new("batavia", 3, 5)
    assert playout(other.game, other.state, uniform(Rng(2))) > 0 and other.over
    with pytest.raises(RuntimeError, match="without an end"):
        playout(sim.game, Simulation.new("batavia", 3, 5).state, uniform(Rng(2)), max_moves=3)
