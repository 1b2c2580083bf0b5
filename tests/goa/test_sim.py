"""Goa's forward model beyond the generic contract (tests/sim/test_forward_model.py): the clone
copies every field of the state, and the sampler (referee/games/goa/SAMPLING.md) rebuilds what
the View and the public events pin down exactly as it is, while drawing what they hide (other
hands and the draw pile, face-down Bonanza tiles) uniformly.

Rulebook passages: Goa 2012 EN, Game setup 9 ("Players keep their ducats hidden throughout the
game"); Mission (B) ("Acquired Mission tiles are placed, face down, in your play area"); 2004 FR,
Préparation ("Les deux tuiles A non utilisées sont remises dans la boite"); Variant - Bonanza
("put one, face down, under each of the 4 tiles located in the corners")."""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

import pytest

from referee.core.contract import Event
from referee.core.rng import Rng, Streams
from referee.games.goa import GAME
from referee.games.goa.sim import CLONED_FIELDS, SampleError, public_ducats
from referee.games.goa.spices import ProgressPayment
from referee.games.goa.state import Land, State
from tests.sim.test_forward_model import positions as sim_positions

#: fields of the state that the sampler draws rather than rebuilds (hidden from the seat)
DRAWN = {"rng", "deck", "hands", "bonanza"}


def positions(count: int, seed: int, want=None) -> Iterator[
        tuple[State, dict[str, Any], list[Event], int]]:
    """(state, options, public events since the first move, seat) at ``count`` positions of
    the forward model's random games (tests/sim) whose options ``want`` accepts."""
    found = 0
    for _game, state, options, history, seat in sim_positions("goa", 10**9, seed):
        if want is None or want(options):
            yield state, options, history, seat
            found += 1
            if found >= count:
                return


def sample(state: State, options: dict, history: list[Event], seats, draw: int) -> State:
    views = {s: GAME.view(state, s) for s in seats}
    return GAME.sample_state(views, list(history), Rng(draw), options, state.n,
                             GAME.default_components(options))


# ---------------------------------------------------------------------------- clone
def test_clone_knows_every_field_of_the_state():
    """A field added to State must be copied by clone_state (and listed in CLONED_FIELDS)."""
    assert {f.name for f in fields(State)} == CLONED_FIELDS
    # Land is rebuilt by its four fields in order
    assert [f.name for f in fields(Land)] == ["colony", "tile", "takes", "spices"]


def test_clone_copies_every_mutable_part():
    """Every list of the clone is its own (sub-decisions' lists included), and both hash alike."""
    for state, _options, _history, _seat in positions(60, 1):
        copy = GAME.clone(state)
        assert GAME.hash_state(copy) == GAME.hash_state(state)
        for f in fields(State):
            a, b = getattr(state, f.name), getattr(copy, f.name)
            if f.name in ("rules", "options", "pending", "final"):
                continue  # immutable in play: shared on purpose
            if isinstance(a, list | dict):
                assert a is not b or not a, f.name
        for a, b in zip(state.stack, copy.stack):
            assert a is not b and a.hash_form() == b.hash_form()
            for f in fields(a):
                value = getattr(a, f.name)
                if isinstance(value, list):
                    assert value is not getattr(b, f.name)
        for la, lb in zip(state.lands, copy.lands):
            for x, y in zip(la, lb):
                assert x is not y and x.spices is not y.spices


def test_clone_of_a_payment_in_progress_is_independent():
    """A Progress payment's sacks still owed (a list inside a sub-decision) are copied."""
    for state, _options, _history, _seat in positions(400, 2):
        if state.stack and isinstance(state.stack[-1], ProgressPayment):
            break
    else:
        pytest.skip("no Progress payment met")
    copy = GAME.clone(state)
    before = GAME.hash_state(state)
    d = GAME.decision(copy)
    GAME.apply(copy, d.seat, d.moves[0])
    assert GAME.hash_state(state) == before


# ---------------------------------------------------------------------------- sampler
def test_sample_rebuilds_everything_the_view_and_events_pin():
    """With the events since the first move, every part of the state but the drawn ones is
    rebuilt exactly: tiles (box, discards, others' face-down Missions from the auctions that
    showed them, Duty tiles used, B tiles), the turn and auction counters, the pending
    sub-decisions (so a seat to act is offered exactly the moves it was), and, without
    Bonanza, every seat's ducats as the public payments add them up."""
    checked = Counter()
    for i, (state, options, history, seat) in enumerate(positions(900, 3)):
        s = sample(state, options, history, [seat], i)
        for f in fields(State):
            if f.name in DRAWN or f.name == "pending" or f.name == "rules":
                continue
            if f.name == "ducats" and options["bonanza"]:
                continue
            a, b = getattr(state, f.name), getattr(s, f.name)
            if f.name == "stack":
                a, b = [x.hash_form() for x in a], [x.hash_form() for x in b]
            elif f.name == "lands":
                a, b = [[x.hash_form() for x in y] for y in a], [[x.hash_form() for x in y] for y in b]
            elif f.name in ("tile_discard", "box"):
                a, b = sorted(a), sorted(b)  # their order is no one's to see
            elif f.name == "stacks":
                a, b = {k: sorted(v) for k, v in a.items()}, {k: sorted(v) for k, v in b.items()}
            assert a == b, f"position {i}, seat {seat}, {options}: {f.name}"
            checked[f.name] += 1
        d, ds = GAME.decision(state), GAME.decision(s)
        if d is not None and d.seat == seat:
            assert ds.kind == d.kind and set(ds.moves) == set(d.moves), f"position {i}: {d.kind}"
            checked["moves"] += 1
    assert checked["moves"] > 200


def test_ducats_are_the_public_payments_added_up():
    """Goa 2012 EN, Game setup 9: ducats are hidden, but every payment is made in public
    (bids, taxes, cards, sales): the tally of the events is each seat's purse."""
    for state, _options, history, _seat in positions(300, 4, lambda o: not o["bonanza"]):
        assert public_ducats(history, state.rules, state.n, state.round,
                             state.first if not history else -1) == state.ducats
    # with the events cut, there is no tally
    state, _options, history, _ = next(p for p in positions(50, 5) if p[0].round > 2)
    assert public_ducats(history[10:], state.rules, state.n, state.round) is None


def test_others_hands_and_the_draw_pile_are_a_uniform_deal_of_the_unseen_cards():
    """The cards no given seat can place (not in its hand nor in the face-up discards) are
    dealt to the other hands (their sizes kept) and the draw pile, each order alike."""
    state, options, history, seat = next(
        p for p in positions(400, 6) if p[0].round >= 2 and len(p[0].deck) >= 8)
    unseen = set(range(30)) - set(state.hands[seat]) - set(state.discard)
    tops = Counter()
    draws = 1500
    for k in range(draws):
        s = sample(state, options, history, [seat], k)
        others = [c for p in range(state.n) if p != seat for c in s.hands[p]]
        assert sorted(s.deck + others) == sorted(unseen)
        assert [len(h) for h in s.hands] == [len(h) for h in state.hands]
        assert sorted(s.hands[seat]) == sorted(state.hands[seat])
        tops[s.deck[-1]] += 1
    assert set(tops) == unseen  # every unseen card can be on top
    expected = draws / len(unseen)
    chi2 = sum((tops[c] - expected) ** 2 / expected for c in unseen)
    assert chi2 < 3 * len(unseen), chi2  # far above the 99.9% point only if not uniform


def test_several_views_each_see_their_own():
    """Starting from a position with hidden parts redrawn for all seats: given every seat's
    View, the sample shows each exactly its own, holds every hand as it is, and still draws the
    pile's order and the future of chance."""
    differs = 0
    for i, (state, options, history, _seat) in enumerate(positions(80, 7)):
        seats = list(range(state.n))
        s = sample(state, options, history, seats, i)
        for p in seats:
            assert GAME.view(s, p) == GAME.view(state, p), f"position {i}, seat {p}"
        assert [sorted(h) for h in s.hands] == [sorted(h) for h in state.hands]
        differs += s.deck != state.deck
        # two seats out of three or four
        some = seats[:2]
        s2 = sample(state, options, history, some, i)
        for p in some:
            assert GAME.view(s2, p) == GAME.view(state, p)
    assert differs > 30


def test_face_down_bonanza_tiles_are_drawn():
    """Variant - Bonanza: the tiles under the corners are face down: the sample puts distinct
    Bonanza tiles there, every one of the 8 in some draw."""
    state, options, history, seat = next(
        p for p in positions(200, 8, lambda o: o["bonanza"]) if sum(b >= 0 for b in p[0].bonanza) >= 2)
    seen = Counter()
    for k in range(400):
        s = sample(state, options, history, [seat], k)
        placed = [b for b in s.bonanza if b >= 0]
        assert [g for g, b in enumerate(s.bonanza) if b >= 0] == \
            [g for g, b in enumerate(state.bonanza) if b >= 0]
        assert len(set(placed)) == len(placed)
        seen.update(placed)
    assert set(seen) == set(range(len(state.rules.bonanza)))


def test_without_the_events_the_sample_still_shows_the_view():
    """Events cut short (a bot that joined late): what they pinned is drawn instead (ducats
    from a wide range), and the sample still shows the seat its View and plays on."""
    rnd = random.Random(9)
    for i, (state, options, history, seat) in enumerate(positions(120, 9)):
        cut = history[len(history) // 2:]
        s = sample(state, options, cut, [seat], i)
        assert GAME.view(s, seat) == GAME.view(state, seat)
        while (d := GAME.decision(s)) is not None:
            GAME.apply(s, d.seat, rnd.choice(d.moves))


def test_views_of_different_matches_are_refused():
    state, options, history, _ = next(positions(1, 10))
    other = GAME.setup(options, state.n + 1, Streams(3), GAME.default_components(options))
    with pytest.raises(SampleError):
        GAME.sample_state({0: GAME.view(state, 0), 1: GAME.view(other, 1)}, history, Rng(1),
                          options, state.n, GAME.default_components(options))
    later = GAME.clone(state)
    d = GAME.decision(later)
    GAME.apply(later, d.seat, d.moves[0])
    with pytest.raises(SampleError):  # two moments of one match
        GAME.sample_state({0: GAME.view(state, 0), 1: GAME.view(later, 1)}, history, Rng(1),
                          options, state.n, GAME.default_components(options))
    with pytest.raises(SampleError):
        GAME.sample_state({}, history, Rng(1), options, state.n,
                          GAME.default_components(options))
    spectator = GAME.view(state, None)
    with pytest.raises(SampleError):
        GAME.sample_state({-1: spectator}, history, Rng(1), options, state.n,
                          GAME.default_components(options))
    broken = GAME.view(state, 0)
    del broken.players[1:]
    with pytest.raises(SampleError):
        GAME.sample_state({0: broken}, history, Rng(1), options, state.n,
                          GAME.default_components(options))
