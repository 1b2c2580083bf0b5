"""What every game's ``GameSpec`` declares of it in OpenSpiel's terms (referee/core/contract.py,
``Information``, ``ChanceMode``, ``max_decisions``, ``min_score`` / ``max_score``), checked
against random matches: a long random playout asks no more decisions than the declared bound
and ends with every score within the declared range. The derivations are in each game's
RULINGS.md, "Bounds of a match"; a game that has not derived a bound yet is listed here, so that
the list shrinks as they are written."""
from __future__ import annotations

import random

import pytest

from referee.core import registry
from referee.core.contract import ChanceMode, GameSpec, Information
from referee.core.rng import Streams

from . import hooks

GAMES = sorted(registry.games())
#: games whose length and score bounds are not derived yet (RULINGS.md says what is missing)
NOT_DERIVED = {"goa", "santa_maria"}
#: option sets played besides each game's own (tests/<game>/hooks.py OPTION_SETS): the round
#: limit at its lowest, where Batavia's length bound is tightest
EXTRA_OPTIONS: dict[str, list[dict]] = {"batavia": [{"max_rounds": 1}, {"max_rounds": 3}]}
SEEDS = 12


def _bounded(name: str) -> bool:
    spec = registry.get(name).spec
    return None not in (spec.max_decisions, spec.min_score, spec.max_score)


@pytest.mark.parametrize("name", GAMES)
def test_every_game_declares_its_type(name):
    spec = registry.get(name).spec
    assert isinstance(spec.information, Information)
    assert isinstance(spec.chance, ChanceMode)
    assert _bounded(name) == (name not in NOT_DERIVED), (
        f"{name}: update NOT_DERIVED to what the game declares")


def _playouts(name: str) -> list[tuple[dict, int, int]]:
    spec = registry.get(name).spec
    option_sets = getattr(hooks.for_game(name), "OPTION_SETS", [{}]) + EXTRA_OPTIONS.get(name, [])
    return [(options, seats, seed) for options in option_sets
            for seats in range(spec.min_seats, spec.max_seats + 1) for seed in range(SEEDS)]


def _check(spec: GameSpec, name: str, raw: dict, seats: int, seed: int) -> None:
    assert spec.max_decisions and spec.min_score and spec.max_score
    game = registry.get(name)
    options = spec.parse_options(raw)
    bound = spec.max_decisions(options, seats)
    state = game.setup(options, seats, Streams(seed), game.default_components(options))
    rnd = random.Random(seed)
    decisions = 0
    while (decision := game.decision(state)) is not None:
        decisions += 1
        assert decisions <= bound, f"{name} {raw} {seats} seats: past {bound} decisions"
        game.apply(state, decision.seat, decision.moves[rnd.randrange(len(decision.moves))])
    result = game.result(state)
    assert result is not None
    lo, hi = spec.min_score(options, seats), spec.max_score(options, seats)
    assert all(lo <= s <= hi for s in result.scores), f"{name}: {result.scores} not in [{lo}, {hi}]"


@pytest.mark.parametrize("name", [n for n in GAMES if n not in NOT_DERIVED])
def test_random_playouts_stay_within_the_declared_bounds(name):
    spec = registry.get(name).spec
    for raw, seats, seed in _playouts(name):
        _check(spec, name, raw, seats, seed)


def test_the_check_catches_a_bound_too_low():
    """The playout check itself: a bound one below a real match's length, and a score range
    that leaves out its scores, are both reported."""
    name = next(n for n in GAMES if _bounded(n))
    spec = registry.get(name).spec
    real = registry.get(name).spec.max_decisions
    assert real is not None
    raw, seats, seed = _playouts(name)[0]
    game = registry.get(name)
    options = spec.parse_options(raw)
    state = game.setup(options, seats, Streams(seed), game.default_components(options))
    rnd, length = random.Random(seed), 0
    while (decision := game.decision(state)) is not None:
        length += 1
        game.apply(state, decision.seat, decision.moves[rnd.randrange(len(decision.moves))])
    short = GameSpec(spec.name, spec.title, spec.min_seats, spec.max_seats, spec.options,
                     spec.information, spec.chance, max_decisions=lambda o, s: length - 1,
                     min_score=spec.min_score, max_score=spec.max_score)
    with pytest.raises(AssertionError, match="past"):
        _check(short, name, raw, seats, seed)
    narrow = GameSpec(spec.name, spec.title, spec.min_seats, spec.max_seats, spec.options,
                      spec.information, spec.chance, max_decisions=spec.max_decisions,
                      min_score=lambda o, s: -1, max_score=lambda o, s: -1)
    with pytest.raises(AssertionError, match="not in"):
        _check(narrow, name, raw, seats, seed)
