"""The game contract (referee/core/contract.py, docs/ARCHITECTURE.md "The game contract"),
checked once for every registered game, with no game named here; a game's tests provide hooks
(tests/contract/hooks.py) for what only the game knows:

* ``decision(state)`` is a pure query: the state hash is the same before and after;
* every golden record (``tests/<game>/golden/*.json``) replays to its recorded state hashes and
  result, so a change of behaviour is caught at the move where it starts;
* no view carries what its seat may not see: redrawing the seat's hidden information
  (``hooks.rerandomise``) leaves the bytes the seat is sent unchanged;
* the game's conservation laws (``hooks.check_invariants``) hold after every move, and every
  random game ends with a result.
"""
from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.core import registry
from referee.core.contract import Game
from referee.core.match import ReplayError, replay
from referee.core.rng import Streams
from referee.core.text import describe_state

from . import hooks

GAMES = sorted(registry.games())
TESTS = Path(__file__).resolve().parents[1]
GOLDEN = [(name, path) for name in GAMES for path in sorted((TESTS / name / "golden").glob("*.json"))]
KNOWN_IMPURE: dict[str, str] = {}  # none: every game's decision() is a pure query
MAX_STEPS = 50_000


def _params(names: list[str], marks: dict[str, str] | None = None) -> list:
    marks = marks or {}
    return [pytest.param(n, marks=pytest.mark.xfail(strict=False, reason=marks[n]))
            if n in marks else n for n in names]


def random_games(name: str, count: int, seed: int) -> Iterator[tuple[Game, Any]]:
    """(game, state) at every step of ``count`` random games, seat counts and the game's option
    sets in turn, each state before its decision is first asked for (so a test sees a decision
    computed afresh); the last state of a game is over. The consumer must not change the state."""
    game = registry.get(name)
    spec = game.spec
    option_sets = getattr(hooks.for_game(name), "OPTION_SETS", [{}])
    for k in range(count):
        seats = spec.min_seats + k % (spec.max_seats - spec.min_seats + 1)
        options = spec.parse_options(option_sets[k % len(option_sets)])
        state = game.setup(options, seats, Streams(seed + k), game.default_components(options))
        rnd = random.Random(seed + k)
        for _ in range(MAX_STEPS):
            yield game, state
            decision = game.decision(state)
            if decision is None:
                break
            game.apply(state, decision.seat, decision.moves[rnd.randrange(len(decision.moves))])
        else:
            raise AssertionError(f"{name}: a random game passed {MAX_STEPS} decisions")


def described(game: Game, state: Any) -> str:
    """A state in words for a failure message: what the seat to act sees and its decision
    (``referee.core.text.describe_state``), or the spectator's view once the game is over."""
    decision = game.decision(state)
    return describe_state(game, state, decision.seat if decision is not None else None)


# ---------------------------------------------------------------------------- decision is a query


@pytest.mark.parametrize("name", _params(GAMES, KNOWN_IMPURE))
def test_decision_is_a_pure_query(name):
    """Contract: ``decision(state)`` changes nothing (a game may memoise in fields the hash
    leaves out). Asked twice, before and after, it gives the same answer and the same hash."""
    game = registry.get(name)
    checked = 0
    for _, state in random_games(name, 12, 1000):
        before = game.hash_state(state)
        first = game.decision(state)
        assert game.hash_state(state) == before, (
            f"{name}: decision() changed the state, at\n{described(game, state)}")
        again = game.decision(state)
        assert (first is None) == (again is None)
        if first is not None:
            assert (first.seat, first.kind, list(first.moves)) == (
                again.seat, again.kind, list(again.moves))
        checked += 1
    assert checked > 500


# ---------------------------------------------------------------------------- golden records


@pytest.mark.parametrize("name", GAMES)
def test_every_game_has_golden_records(name):
    assert sum(1 for game, _ in GOLDEN if game == name) >= 3, f"tests/{name}/golden/"


@pytest.mark.parametrize(("name", "path"), GOLDEN, ids=[p.name for _, p in GOLDEN])
def test_golden_record_replays(name, path):
    """Every recorded move is legal again and every per-move state hash and the result match.
    A failure means the rules, the set-up or a default sheet changed behaviour: if that is
    meant, regenerate with ``python -m tests.<game>.make_golden`` and say why in the commit."""
    record = json.loads(path.read_text())
    assert record["game"] == name
    m = replay(registry.get(name), record)
    assert m.over and len(m.moves) == len(record["moves"]) > 50


def test_tampered_record_is_caught():
    _, path = GOLDEN[0]
    record = json.loads(path.read_text())
    record["moves"][10]["state_hash"] = "0" * 64
    with pytest.raises(ReplayError, match="move 11: state hash differs"):
        replay(registry.get(record["game"]), record)
    record = json.loads(path.read_text())
    record["result"]["scores"][0] += 1
    with pytest.raises(ReplayError, match="result differs"):
        replay(registry.get(record["game"]), record)


# ---------------------------------------------------------------------------- hidden information


@pytest.mark.parametrize("name", GAMES)
def test_views_do_not_depend_on_hidden_information(name):
    """Hidden information: for every seat and a spectator, redraw what that seat may not see
    (other hands, deck and pile order, face-down tiles, the RNG) and the view bytes it is sent
    stay the same. The redraw must actually change the state most of the time. Only games in
    play: the final scoring reveals what was hidden (ports, Mission tiles)."""
    rerandomise = hooks.require(name, "rerandomise")
    rnd = random.Random(7)
    checked = changed = 0
    for game, state in random_games(name, 8, 2000):
        if game.decision(state) is None or rnd.random() > 0.08:
            continue
        seats = list(range(game.seat_count(state))) + [None]
        for seat in seats:
            want = (game.view(state, seat).SerializeToString(deterministic=True),
                    game.view_bytes(state, seat))
            other = rerandomise(state, seat, rnd)
            changed += game.hash_state(other) != game.hash_state(state)
            got = (game.view(other, seat).SerializeToString(deterministic=True),
                   game.view_bytes(other, seat))
            assert got == want, (f"{name}: the view of seat {seat} depends on what it may not "
                                 f"see, at\n{describe_state(game, state, seat)}")
            checked += 1
    assert checked > 100
    assert changed > checked // 2, "the redraw must actually change hidden information"


# ---------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("name", GAMES)
def test_invariants_hold_and_games_end(name):
    check = hooks.require(name, "check_invariants")
    ended = 0
    for game, state in random_games(name, 20, 3000):
        try:
            check(state)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}, at\n{described(game, state)}") from exc
        decision = game.decision(state)
        if decision is None:
            result = game.result(state)
            n = game.seat_count(state)
            assert result is not None and len(result.scores) == len(result.ranks) == n
            assert min(result.ranks) == 1 and result.winners
            ended += 1
        else:
            assert decision.moves, (f"{name}: decision {decision.kind} lists no move, at\n"
                                    f"{described(game, state)}")
    assert ended == 20
