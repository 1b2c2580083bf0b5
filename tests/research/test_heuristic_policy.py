"""The greedy bot on the engine (``Game.heuristic_policy``, issue 36 item 2: a search's greedy
rollouts at the engine's speed): wherever a game has one, it answers exactly the move the SDK's
greedy bot answers from the Decision the referee would send, at positions of random games and of
games every seat plays greedily (the positions a rollout meets), at every seat count, with the
bot's own knobs and with others; and a search with a fixed seed gives the same result whether its
rollouts ask the engine or hand the bot messages."""
from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import fields, replace

import pytest
from referee_research import heuristics, messages

from referee.core import registry
from referee.core.contract import Decision, Game
from referee.core.rng import Rng
from referee.sim import Simulation
from tests.research.test_rollout_policy import assert_same_searches, per_seat_count

#: the games whose engine has the greedy bot (the others return None, checked below)
WITH_HEURISTIC = ("batavia", "goa", "santa_maria")
#: greedy games per seat count whose every decision is checked
GREEDY_GAMES = 6
GAMES = sorted(registry.games())


def greedy_positions(name: str, seats: int, seed: int, every: int = 1,
                     options: dict | None = None) -> Iterator[tuple[Simulation, Decision]]:
    """Each decision with a choice of a game every seat plays as the SDK's greedy bot (through
    Decision messages, never the engine's copy), every ``every``-th one."""
    sim = Simulation.new(name, seats, seed, options)
    policy = heuristics.prior_policy(name, seats, Rng(seed), engine=False)
    assert policy is not None
    step = 0
    while (d := sim.decision()) is not None:
        if len(d.moves) > 1 and step % every == 0:
            yield sim, d
        step += 1
        sim.apply(policy(sim, d), d.seat)


def sdk_answer(sim: Simulation, d: Decision, bot) -> object:
    built = messages.built_decision_message(sim, d.seat, d.kind, list(d.moves), 0, d.prompt)
    return sim.move_from_proto(getattr(bot.choose(built), sim.game.spec.name))


@pytest.mark.parametrize("name", WITH_HEURISTIC)
def test_the_engine_answers_the_sdk_bots_move(name):
    """Random positions (40 per seat count) and every decision of greedy games (two per seat
    count): the engine's copy, given the bot's knobs, answers the bot's move."""
    game = registry.get(name)
    spec = game.spec
    bot = heuristics.prior_bot(name, 3)
    assert bot is not None
    choose = game.heuristic_policy(bot.knobs())
    assert choose is not None
    checked = 0
    positions = [per_seat_count(name, 40, 7)]
    positions += [greedy_positions(name, seats, 100 + 10 * seats + k)
                  for seats in range(spec.min_seats, spec.max_seats + 1) for k in range(GREEDY_GAMES)]
    for source in positions:
        for sim, d in source:
            assert choose(sim.state, d.seat, d.moves) == sdk_answer(sim, d, bot), (
                f"{name} {sim.seat_count} seats, seat {d.seat}, {d.kind}")
            checked += 1
    assert checked > 500


def test_santa_maria_every_kind_of_decision_and_option():
    """Santa Maria's copy answers the bot at every kind of decision the bot has a handler for,
    under every option (colony boards picked, the advanced set-up's draft, shared blue dice):
    greedy games at 2 to 4 seats under each, every decision checked."""
    name = "santa_maria"
    game = registry.get(name)
    bot = heuristics.prior_bot(name, 3)
    assert bot is not None
    choose = game.heuristic_policy(bot.knobs())
    kinds: set[str] = set()
    for k, options in enumerate(({"colony_boards": "pick"}, {"setup": "advanced"},
                                 {"shared_blue_dice": True})):
        for seats in (2, 3, 4):
            for sim, d in greedy_positions(name, seats, 500 + 10 * k + seats, options=options):
                assert choose(sim.state, d.seat, d.moves) == sdk_answer(sim, d, bot), (
                    f"{options} {seats} seats, seat {d.seat}, {d.kind}")
                kinds.add(d.kind.removeprefix("santa_maria."))
    # the kinds greedy games meet; Astronomy and Mathematics need their Scholar, met in the
    # main test's longer run
    assert kinds >= {"board", "draft", "turn", "place_tile", "exchange", "ship", "religion",
                     "monk", "place_die", "road"}, kinds


@pytest.mark.parametrize("options", [
    {"edition": "2004"}, {"quick_starter": True}, {"colony_card_timing": "before"},
    {"hand_limit": "always"}, {"bonanza": True}, {"edition": "2004", "quick_starter": True}])
def test_goa_under_every_option(options):
    """Goa's copy answers the bot under each option (the 2004 edition and its own sheet, the
    Quick starter, the colony card's timing, the hand limit, Bonanza): greedy games at 2 to 4
    seats, every decision checked."""
    name = "goa"
    bot = heuristics.prior_bot(name, 3)
    assert bot is not None
    choose = registry.get(name).heuristic_policy(bot.knobs())
    checked = 0
    for seats in (2, 3, 4):
        for sim, d in greedy_positions(name, seats, 700 + seats, options=options):
            assert choose(sim.state, d.seat, d.moves) == sdk_answer(sim, d, bot), (
                f"{options} {seats} seats, seat {d.seat}, {d.kind}")
            checked += 1
    assert checked > 300


def _scaled(knob, factor: float):
    """A knob (a number, or a tuple of them per year, nested) times ``factor``."""
    if isinstance(knob, tuple):
        return tuple(_scaled(k, factor) for k in knob)
    return knob * factor


@pytest.mark.parametrize("name", WITH_HEURISTIC)
def test_other_knobs_reach_the_engine(name):
    """A bot tuned otherwise (every knob changed) is copied as tuned: the engine's choices
    follow the knobs it is given, not defaults of its own."""
    game = registry.get(name)
    default = heuristics.prior_bot(name, 3)
    assert default is not None
    tuned_weights = replace(default.w, **{
        f.name: _scaled(getattr(default.w, f.name), 3 if f.name != "bill_reserve" else 0)
        for f in fields(default.w)})
    tuned = type(default)(3, tuned_weights)
    choose = game.heuristic_policy(tuned.knobs())
    differ = 0
    for sim, d in greedy_positions(name, 4, 5):
        answer = sdk_answer(sim, d, tuned)
        assert choose(sim.state, d.seat, d.moves) == answer
        differ += answer != sdk_answer(sim, d, default)
    assert differ > 0  # the tuned bot does play otherwise: the test can tell knobs apart
    with pytest.raises(ValueError, match="needs"):
        game.heuristic_policy({})


def test_every_game_has_one():
    """Every registered game has its greedy bot on the engine (a new game without one is
    listed here on purpose), and the contract's default is None (a caller then hands the bot
    messages)."""
    assert sorted(WITH_HEURISTIC) == GAMES
    assert Game.heuristic_policy(registry.get(GAMES[0]), {}) is None


@pytest.mark.parametrize("name", WITH_HEURISTIC)
def test_a_search_gives_the_same_result_from_the_engine(name, monkeypatch):
    """The bot's settings with a fixed seed: the same move, visits, values and horizon verdict
    whether the rollouts ask the engine's copy or hand the bot messages."""
    assert_same_searches(name, monkeypatch, [{"engine": True}, {"engine": False}], 3, 61, 31)


@pytest.mark.parametrize("name", WITH_HEURISTIC)
def test_a_rollout_asks_the_engine_and_no_message_is_built(name, monkeypatch):
    """The rollout policy answers from the engine: no Decision message is encoded or built on
    the way (the point of the copy)."""
    def no_message(*_args, **_kwargs):
        raise AssertionError("a Decision message was made")

    monkeypatch.setattr(messages.DecisionEncoder, "decision", no_message)
    monkeypatch.setattr(heuristics, "built_decision_message", no_message)
    policy = heuristics.prior_policy(name, 3, Rng(2))
    assert policy is not None
    sim = Simulation.new(name, 3, 2)
    rnd = random.Random(2)
    moves = 0
    while (d := sim.decision()) is not None and moves < 300:
        sim.apply(policy(sim, d) if rnd.random() < 0.8 else rnd.choice(list(d.moves)), d.seat)
        moves += 1
    assert moves > 100
