"""Batavia's forward-model support (referee/games/batavia/sim.py, SAMPLING.md): the clone
copies every field, and the sampler keeps what the rules and the public events pin down about
hidden cards and tiles (tests/sim/test_forward_model.py checks the generic contract)."""
from __future__ import annotations

import inspect
import random
import re
from collections import Counter
from dataclasses import fields

from referee.core.contract import Event
from referee.core.rng import Rng, Streams
from referee.games.batavia import GAME, sim
from referee.games.batavia import rules as R

from .helpers import new_state


def _play(n: int, seed: int, stop, setup: str = "face_down", limit: int = 5000):
    """A random game from the set-up, stopped at the first state (after a move) where
    ``stop(state, history)`` holds; returns (state, history) or None."""
    s = new_state(n, seed=seed, setup=setup)
    rnd = random.Random(seed)
    history: list = []
    for _ in range(limit):
        d = GAME.decision(s)
        if d is None:
            return None
        history += GAME.apply(s, d.seat, d.moves[rnd.randrange(len(d.moves))])
        if stop(s, history):
            return s, history
    return None


def _sample(state, history, seats, draw: int):
    views = {seat: GAME.view(state, seat) for seat in seats}
    opts = GAME.spec.parse_options(state.options)
    return views, GAME.sample_state(views, history, Rng(draw), opts, state.n,
                                    GAME.default_components(opts))


def test_clone_assigns_every_field_of_the_state():
    source = inspect.getsource(sim.clone_state)
    assigned = set(re.findall(r"^\s+c\.(\w+) = ", source, re.M))
    assert assigned == {f.name for f in fields(R.State)}, (
        "clone_state must copy every State field (a new field needs a line in clone_state)")


def test_clone_equals_and_shares_no_mutable_part():
    got = _play(4, 3, lambda s, h: s.round >= 4 and s.phase == R.ACTIONS)
    assert got
    s = got[0]
    c = GAME.clone(s)
    for f in fields(R.State):
        a, b = getattr(s, f.name), getattr(c, f.name)
        assert a == b or f.name == "rng", f.name
        if isinstance(a, list) and a:
            assert a is not b, f"{f.name} is shared"
            if isinstance(a[0], list):
                assert all(x is not y for x, y in zip(a, b)), f"{f.name}'s rows are shared"
    assert c.rng is not s.rng and c.rng.counts is not s.rng.counts
    assert GAME.hash_state(c) == GAME.hash_state(s)


def test_unseen_cards_are_redealt_as_a_permutation_of_what_is_left():
    """The other hands and the pile hold, together, exactly the cards the seat cannot see
    ('Préparation': 10 cards per company; hand sizes shown, « Tous les joueurs doivent montrer
    le nombre de cartes qu'ils tiennent en main »), each hand its public size."""
    got = _play(4, 5, lambda s, h: s.round >= 3 and s.phase == R.ACTIONS)
    assert got
    state, history = got
    orders = set()
    for draw in range(20):
        _v, sample = _sample(state, history, [1], draw)
        for seat in range(4):
            assert sum(sample.hands[seat]) == sum(state.hands[seat])
        assert sample.hands[1] == state.hands[1]
        unseen = Counter(sample.draw_pile)
        truth = Counter(state.draw_pile)
        for o in (0, 2, 3):
            unseen.update(dict(enumerate(sample.hands[o])))
            truth.update(dict(enumerate(state.hands[o])))
        assert unseen == truth
        orders.add(tuple(sample.draw_pile))
    assert len(orders) > 15, "the pile's order is redrawn"


def test_cards_bought_at_auction_stay_in_the_buyers_hand_until_laid():
    """A lot goes to the winner's hand in the open ('A. Vente aux enchères'): until the winner
    lays cards of a company, the sample gives it at least the cards of that company it bought."""
    def bought(s, h):
        return (h[-1].kind == "batavia.auction_won" and h[-1].seat != 0
                and sum(h[-1].data["cards"]) >= 3)
    checked = 0
    for seed in range(1, 30):
        got = _play(3, seed, bought)
        if not got:
            continue
        state, history = got
        buyer, cards = history[-1].seat, history[-1].data["cards"]
        for draw in range(10):
            _v, sample = _sample(state, history, [0], draw)
            assert all(sample.hands[buyer][c] >= k for c, k in enumerate(cards)), (seed, draw)
        checked += 1
    assert checked >= 5


def test_several_seats_views_at_once():
    got = _play(5, 7, lambda s, h: s.round >= 3 and s.phase == R.ACTIONS)
    assert got
    state, history = got
    views, sample = _sample(state, history, [0, 2, 3], 9)
    for seat, view in views.items():
        assert GAME.view(sample, seat) == view
        assert sample.hands[seat] == state.hands[seat]
    assert GAME.decision(sample).moves == GAME.decision(state).moves


def test_face_down_blocks_hold_one_tile_per_company():
    """Préparation: the tiles, sorted by company and shuffled, are laid five at a time, one of
    each company, face down; the hidden tiles are the unseen ones, in a redrawn order."""
    got = _play(4, 11, lambda s, h: 15 < s.revealed < 35 and s.phase == R.ACTIONS)
    assert got
    state, history = got
    layouts = set()
    for draw in range(20):
        _v, sample = _sample(state, history, [2], draw)
        hidden = sample.track[state.revealed:]
        assert sorted(hidden) == sorted(state.track[state.revealed:])
        for b in range(state.revealed, 35, 5):
            assert sorted(t // R.N_GOODS for t in sample.track[b:b + 5]) == list(range(5))
        layouts.add(tuple(hidden))
    assert len(layouts) > 15


def test_reshuffles_are_counted_from_the_events():
    """The n-th reshuffle of the discards draws from its own stream (docs/ARCHITECTURE.md, Fair
    chance), so the sample keeps the count, read off the public draws and pirate attacks: the
    pile runs out, the sunk cards are shuffled into a new one (the remark under 'A. Vente aux
    enchères'). Random games end long before, so the events are written out here."""
    rules = GAME.rules_for(GAME.default_components(GAME.spec.parse_options({})))
    start = sum(rules.cards_per_company) - 3 * rules.starting_hand  # 80
    events = [
        Event("batavia.pirates", -1, "", {"companies": ["EN", "DK"], "cards_each": 4}),
        Event("batavia.auction_opened", 0, "", {"round": 1, "die": 6, "revealed": [6, 0, 0, 0, 0],
                                                "lot": [6, 0, 0, 0, 0]}),
        Event("batavia.draw", 1, "", {"count": start - 6}),
        Event("batavia.draw", 2, "", {"count": 2}),
    ]
    h = sim._History(events, 3, rules)
    assert (h.reshuffles, h.pile, h.discards) == (1, 6, 0)
    h = sim._History(events[:3], 3, rules)
    assert (h.reshuffles, h.pile, h.discards) == (0, 0, 8)


def test_a_finished_game_scores_alike():
    got = _play(3, 13, lambda s, h: s.phase == R.OVER, limit=20000)
    assert got
    state, history = got
    _v, sample = _sample(state, history, [1], 2)
    assert GAME.result(sample) == GAME.result(state)
    assert sample.gold == state.gold and sample.end_reason == state.end_reason


def test_sampler_and_clone_leave_the_engine_states_alone():
    s = new_state(3, seed=2)
    before = GAME.hash_state(s)
    GAME.clone(s)
    _sample(s, [], [0], 1)
    assert GAME.hash_state(s) == before
    assert isinstance(s.rng, Streams)
