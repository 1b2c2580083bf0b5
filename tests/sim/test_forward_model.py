"""The forward model's contract, for every registered game (issue 21, items 1 and 2):

* ``Game.clone`` gives an independent copy: playing either to the end leaves the other's hash
  as it was, and a fresh clone hashes like its original;
* ``Game.sample_state`` from one seat's view (and the public events so far) gives a full state
  that shows that seat exactly the view it saw, that plays on to a result, and that depends on
  nothing but what the seat saw: the same view from a true state whose hidden parts were drawn
  anew (the leak-test hook ``rerandomise``) gives the same sample for the same draw; and the
  sampler does redraw (a sample is not the true state itself where something is hidden).

Positions are every few decisions of seeded random games, cycling seat counts and the game's
option sets (``tests/<game>/hooks.py``); ``REFEREE_SIM_POSITIONS`` raises the count.
"""
from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

from referee.core import registry
from referee.core.contract import Event, Game
from referee.core.rng import Rng, Streams
from referee.sim import playout, uniform
from tests.contract import hooks

GAMES = sorted(registry.games())
POSITIONS = int(os.environ.get("REFEREE_SIM_POSITIONS", "300"))  # per game


def positions(name: str, count: int, seed: int) -> Iterator[tuple[Game, Any, dict, list[Event], int]]:
    """(game, state, parsed options, public events so far, seat) at ``count`` positions of random
    games; the state must not be changed by the consumer."""
    game = registry.get(name)
    spec = game.spec
    option_sets = getattr(hooks.for_game(name), "OPTION_SETS", [{}])
    rnd = random.Random(seed)
    k = 0
    found = 0
    while found < count:
        seats = spec.min_seats + k % (spec.max_seats - spec.min_seats + 1)
        options = spec.parse_options(option_sets[k % len(option_sets)])
        state = game.setup(options, seats, Streams(seed + k), game.default_components(options))
        history: list[Event] = []
        every = rnd.randint(5, 25)
        step = 0
        while found < count:
            decision = game.decision(state)
            if step % every == 0 or decision is None:
                seat = decision.seat if decision is not None and rnd.random() < 0.5 \
                    else rnd.randrange(seats)
                yield game, state, options, history, seat
                found += 1
            if decision is None:
                break
            history.extend(game.apply(state, decision.seat,
                                      decision.moves[rnd.randrange(len(decision.moves))]))
            step += 1
        k += 1


def _sample(game: Game, state: Any, options: dict, history: list[Event], seat: int, draw: int):
    view = game.view(state, seat)
    return view, game.sample_state({seat: view}, list(history), Rng(draw), options,
                                   game.seat_count(state), game.default_components(options))


@pytest.mark.parametrize("name", GAMES)
def test_clone_is_independent(name):
    rnd = random.Random(5)
    for game, state, _options, _history, _seat in positions(name, 40, 11):
        before = game.hash_state(state)
        copy = game.clone(state)
        assert game.hash_state(copy) == before, "a fresh clone hashes like its original"
        # play the clone to its end: the original must not move
        playout(game, copy, uniform(rnd))
        assert game.hash_state(state) == before, f"{name}: playing a clone changed the original"
        # and the other way round, on a second clone
        other = game.clone(state)
        mark = game.hash_state(other)
        probe = game.clone(state)
        playout(game, probe, uniform(rnd))
        assert game.hash_state(other) == mark


@pytest.mark.parametrize("name", GAMES)
def test_sample_shows_the_seat_exactly_its_view_and_plays_on(name):
    rnd = random.Random(7)
    for n, (game, state, options, history, seat) in enumerate(positions(name, POSITIONS, 21)):
        view, sample = _sample(game, state, options, history, seat, n)
        assert game.view(sample, seat) == view, (
            f"{name}: position {n}, seat {seat}: the sample shows a different view")
        assert game.seat_count(sample) == game.seat_count(state)
        assert (game.decision(sample) is None) == (game.decision(state) is None)
        if n % 10 == 0:  # and it plays on to a result with the same rules
            copy = game.clone(sample)
            playout(game, copy, uniform(rnd))
            assert game.result(copy) is not None


@pytest.mark.parametrize("name", GAMES)
def test_sample_depends_only_on_what_the_seat_saw(name):
    rerandomise = hooks.require(name, "rerandomise")
    rnd = random.Random(3)
    differs = 0
    total = 0
    for n, (game, state, options, history, seat) in enumerate(positions(name, POSITIONS // 3, 31)):
        other = rerandomise(state, seat, rnd)  # same view for seat, hidden parts drawn anew
        view, sample = _sample(game, state, options, history, seat, 1000 + n)
        other_view, other_sample = _sample(game, other, options, history, seat, 1000 + n)
        assert other_view == view  # the hook's own promise
        assert game.hash_state(sample) == game.hash_state(other_sample), (
            f"{name}: position {n}, seat {seat}: the sample depends on hidden parts of the "
            "true state")
        if game.decision(state) is not None:
            total += 1
            differs += game.hash_state(sample) != game.hash_state(state)
    # every live position has some hidden part (at least the future of chance): a sampler that
    # copied the truth would give the true state back
    assert differs > total * 0.9, f"{name}: only {differs} of {total} samples differ from the truth"


@pytest.mark.parametrize("name", GAMES)
def test_sample_from_every_seats_view_shows_each_its_view(name):
    """What a start with ``redraw_hidden`` asks (CreateMatchRequest.start, issue 21 item 6): a
    sample from every seat's view at once shows each seat exactly its view (only what no seat
    sees is drawn: deck orders, face-down tiles, the future of chance), and plays on."""
    rnd = random.Random(9)
    for n, (game, state, options, history, _seat) in enumerate(
            positions(name, max(20, POSITIONS // 10), 41)):
        seats = game.seat_count(state)
        views = {s: game.view(state, s) for s in range(seats)}
        sample = game.sample_state(views, list(history), Rng(500 + n), options, seats,
                                   game.default_components(options))
        for s, view in views.items():
            assert game.view(sample, s) == view, (
                f"{name}: position {n}: the sample from every view shows seat {s} another one")
        assert game.view(sample, None) == game.view(state, None)
        if n % 5 == 0:
            copy = game.clone(sample)
            playout(game, copy, uniform(rnd))
            assert game.result(copy) is not None


@pytest.mark.parametrize("name", GAMES)
def test_the_simulation_api_keeps_to_the_contract(name):
    """``Simulation``'s own promises on every game: a clone is independent, and a rollout is
    its seed's and ends in a result."""
    from referee.sim import Simulation

    game = registry.get(name)
    sim = Simulation.new(name, game.spec.max_seats, 12)
    for _ in range(15):
        sim.apply(sim.legal_moves()[0])
    before = sim.hash()
    a, b = sim.clone(), sim.clone()
    assert a.rollout(Rng(3)).scores == b.rollout(Rng(3)).scores and a.hash() == b.hash()
    assert a.over and sim.hash() == before and not sim.over


@pytest.mark.parametrize("name", GAMES)
def test_a_simulation_from_view_bytes_is_the_one_from_the_message(name):
    """``Simulation.from_views`` takes the seat's View message or its bytes (as a Decision
    carries them) alike, and the sample shows the seat its view."""
    from referee.sim import Simulation

    game = registry.get(name)
    sim = Simulation.new(name, game.spec.max_seats, 12)
    for _ in range(15):
        sim.apply(sim.legal_moves()[0])
    seat = sim.to_move()
    as_bytes = Simulation.from_views(name, {seat: sim.view(seat).SerializeToString()},
                                     sim.seat_count, 4)
    as_message = Simulation.from_views(name, {seat: sim.view(seat)}, sim.seat_count, Rng(4))
    assert as_bytes.view(seat) == sim.view(seat) and as_bytes.hash() == as_message.hash()
