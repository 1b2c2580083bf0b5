"""Santa Maria's forward-model support (referee/games/santa_maria/sim.py, SAMPLING.md): the
clone copies every field, and the sampler rebuilds the pending steps and keeps what is on the
table while redrawing the face-down piles and ports (tests/sim/test_forward_model.py checks the
generic contract)."""
from __future__ import annotations

import inspect
import random
import re
from collections import Counter
from dataclasses import fields

from referee.core.rng import Rng, Streams
from referee.games.santa_maria import GAME, sim
from referee.games.santa_maria import moves as mv
from referee.games.santa_maria import rules as R
from referee.games.santa_maria.state import Player


def _play(stop, n: int = 3, seed: int = 1, limit: int = 5000, prefer=None, **options):
    """A random game stopped at the first state (after a move) where ``stop(state)`` holds;
    (state, events so far, parsed options) or None. ``prefer(state, move)``: moves played
    whenever one is listed."""
    opts = GAME.spec.parse_options(options)
    s = GAME.setup(opts, n, Streams(seed), GAME.default_components(opts))
    rnd = random.Random(seed)
    history: list = []
    for _ in range(limit):
        d = GAME.decision(s)
        if d is None:
            return None
        listed = [m for m in d.moves if prefer(s, m)] if prefer else []
        listed = listed or list(d.moves)
        history += GAME.apply(s, d.seat, listed[rnd.randrange(len(listed))])
        if stop(s):
            return s, history, opts
    return None


def _sample(state, history, opts, seats, draw: int):
    views = {seat: GAME.view(state, seat) for seat in seats}
    return views, GAME.sample_state(views, history, Rng(draw), opts, state.n,
                                    GAME.default_components(opts))


def _assigned(function) -> set[str]:
    return set(re.findall(r"^\s+c\.(\w+) = ", inspect.getsource(function), re.M))


def test_clone_assigns_every_field():
    assert _assigned(sim.clone_state) == {f.name for f in fields(R.State)}, (
        "clone_state must copy every State field (a new field needs a line in clone_state)")
    assert _assigned(sim.clone_player) == {f.name for f in fields(Player)}, (
        "clone_player must copy every Player field")


def test_clone_equals_and_shares_no_mutable_part():
    got = _play(lambda s: s.year == 2 and len(s.queue) >= 2)
    assert got
    s = got[0]
    c = GAME.clone(s)
    assert GAME.hash_state(c) == GAME.hash_state(s)
    for owner, copy in [(s, c)] + list(zip(s.players, c.players)):
        for f in fields(owner):
            a = getattr(owner, f.name)
            if isinstance(a, list) and a and f.name not in ("players",):
                b = getattr(copy, f.name)
                assert a is not b, f"{f.name} is shared"
                if isinstance(a[0], list):
                    assert all(x is not y for x, y in zip(a, b)), f"{f.name}'s rows are shared"


def test_the_view_lists_the_pending_steps_and_the_sample_rebuilds_them():
    """(C) Activer une rangée/colonne queues every building of the line, then the die; each
    effect, the exchanges, religion and monks are steps of their own. The View's Pending lists
    them all, so the sample resolves the rest of the action exactly as the true state."""
    found = 0
    for seed in range(1, 40):
        got = _play(lambda s: len(s.queue) >= 3, seed=seed)
        if not got:
            continue
        state, history, opts = got
        seat = (GAME.decision(state).seat + 1) % state.n
        _v, sample = _sample(state, history, opts, [seat], seed)
        assert [t.hash_form() for t in sample.queue] == [t.hash_form() for t in state.queue]
        assert sample.main_done == state.main_done
        assert GAME.decision(sample).moves == GAME.decision(state).moves
        # and once the action is resolved alike, the turn goes on alike (free actions only)
        truth = GAME.clone(state)
        while truth.queue:
            move = GAME.decision(truth).moves[0]
            GAME.apply(truth, GAME.decision(truth).seat, move)
            GAME.apply(sample, GAME.decision(sample).seat, move)
        assert GAME.decision(sample).moves == GAME.decision(truth).moves
        found += 1
    assert found >= 5


def test_face_down_ships_are_redrawn_from_the_unseen_ones():
    """Transport maritime: a ship taken goes face down into its owner's port; the standard
    ships wait face down in a pile (Mise en place: the 4 starting ships face up on the docks).
    The other ports and the pile are redrawn from the ships the seat cannot see, the starting
    ships never into the pile; the seat's own port stays as it is."""
    def taken(s):
        return sum(len(d) for p in s.players[1:] for d in p.port) >= 2 and s.phase == R.YEAR
    got = next(filter(None, (_play(taken, n=4, seed=seed) for seed in range(1, 40))))
    state, history, opts = got
    start = state.rules.n_starting_ships
    worth = state.rules.ships

    def faces(ships):
        return Counter(worth[x] for x in ships)

    redrawn = set()
    for draw in range(20):
        _v, sample = _sample(state, history, opts, [0], draw)
        assert [[worth[x] for x in d] for d in sample.players[0].port] == [
            [worth[x] for x in d] for d in state.players[0].port]
        assert [worth[x] if x >= 0 else None for x in sample.ship_slots] == [
            worth[x] if x >= 0 else None for x in state.ship_slots]
        assert all(x >= start for x in sample.ship_pile)
        assert len(sample.ship_pile) == len(state.ship_pile)
        hidden = sample.ship_pile + [x for p in sample.players[1:] for d in p.port for x in d]
        truth = state.ship_pile + [x for p in state.players[1:] for d in p.port for x in d]
        assert faces(hidden) == faces(truth)
        for a, b in zip(sample.players[1:], state.players[1:]):
            assert [len(d) for d in a.port] == [len(d) for d in b.port]
        redrawn.add(tuple(hidden))
    assert len(redrawn) > 15


def test_development_piles_hold_tiles_not_seen():
    """Mise en place: 15 doubles and 15 triples face down, 5 of each on display. The piles are
    redrawn from the tiles neither displayed nor placed (the events name every tile placed)."""
    got = _play(lambda s: s.year == 2 and s.phase == R.YEAR, seed=4)
    assert got
    state, history, opts = got
    placed = {e.data["tile"] for e in history if e.kind == "santa_maria.place_tile"}
    shown = {t for t in state.display if t >= 0}
    orders = set()
    for draw in range(20):
        _v, sample = _sample(state, history, opts, [1], draw)
        assert len(sample.pile_d) == len(state.pile_d)
        assert len(sample.pile_t) == len(state.pile_t)
        assert not (set(sample.pile_d) | set(sample.pile_t)) & (placed | shown)
        orders.add((tuple(sample.pile_d), tuple(sample.pile_t)))
    assert len(orders) > 15


def test_several_seats_views_at_once():
    got = _play(lambda s: s.year == 2 and s.phase == R.YEAR, n=4, seed=6, setup="advanced")
    assert got
    state, history, opts = got
    views, sample = _sample(state, history, opts, [0, 2], 5)
    for seat, view in views.items():
        assert GAME.view(sample, seat) == view
        assert sample.players[seat].port == state.players[seat].port
    assert sample.set_aside == state.set_aside  # the box's Scholars and Bishops, by elimination
    assert GAME.decision(sample).moves == GAME.decision(state).moves


def test_a_finished_game_scores_alike_even_below_zero():
    """Décompte final: -2 per Bishop whose objective scores nothing can leave a total below
    zero; the View shows it (it once refused the value) and the sample scores the same."""
    for n, seed in ((1, 39), (3, 96), (2, 3)):  # the first two end below zero
        got = _play(lambda s: s.phase == R.OVER, n=n, seed=seed, limit=20000)
        assert got
        state, history, opts = got
        view = GAME.view(state, 0)
        assert [f.total for f in view.final] == [f["total"] for f in state.final]
        assert [p.points for p in view.players] == [f["total"] for f in state.final]
        assert min(f["total"] for f in state.final) < 0 or n == 2
        _v, sample = _sample(state, history, opts, [0], seed)
        assert GAME.result(sample) == GAME.result(state)


def test_ships_seen_taken_stay_in_their_takers_ports():
    """A ship is taken face up from its dock, the dock refilled face up from the pile
    ('Transport maritime'): the events show every refill, so a seat knows the face of each
    ship another seat took from a refilled dock, and the sample keeps it in that port."""
    def shipping(s, m):
        return type(m) is mv.Ship or (type(m) is mv.Retreat and s.rules.retreat[m.space][0] == "ship")
    checked = 0
    for seed in range(1, 60):
        got = _play(lambda s: s.phase == R.YEAR and s.year == 3, n=3, seed=seed, prefer=shipping)
        if not got:
            continue
        state, history, opts = got
        worth = {x: sim._ship_key(*state.rules.ships[x]) for x in range(len(state.rules.ships))}
        pins = sim._History(history, state.n).taken
        for draw in range(3):
            _v, sample = _sample(state, history, opts, [0], draw)
            for seat in (1, 2):
                for dock, face in pins[seat]:
                    if face is None:
                        continue
                    checked += 1
                    assert face in [worth[x] for x in state.players[seat].port[dock]]
                    assert face in [worth[x] for x in sample.players[seat].port[dock]]
        if checked >= 3:
            break
    assert checked >= 3


def test_every_seats_view_pins_every_port_and_mismatched_views_are_refused():
    import pytest

    got = _play(lambda s: s.year == 2 and s.phase == R.YEAR and len(s.queue) >= 2, n=3, seed=2)
    assert got
    state, history, opts = got
    _views, sample = _sample(state, history, opts, range(3), 3)
    worth = state.rules.ships
    for a, b in zip(sample.players, state.players):
        assert [[worth[x] for x in d] for d in a.port] == [[worth[x] for x in d] for d in b.port]
    sheet = GAME.default_components(opts)
    later = GAME.clone(state)
    d = GAME.decision(later)
    GAME.apply(later, d.seat, d.moves[0])
    mixed = {0: GAME.view(state, 0), 1: GAME.view(later, 1)}
    with pytest.raises(ValueError, match="same position"):
        GAME.sample_state(mixed, history, Rng(1), opts, 3, sheet)
    broken = GAME.view(state, 0)
    broken.pending.queue[0].tag = "nonsense"
    with pytest.raises(ValueError):
        GAME.sample_state({0: broken}, history, Rng(1), opts, 3, sheet)


def test_every_seat_gets_the_decision_the_seat_to_act_saw():
    """Nothing hidden enters a Santa Maria decision (ports' ships and the piles do not), so the
    sample's pending decision, rebuilt from the View's Pending and queue, is the true one
    whoever's view it comes from."""
    from tests.sim.test_forward_model import positions

    checked = 0
    for n, (game, state, options, history, seat) in enumerate(
            positions("santa_maria", 300, 43)):
        d = game.decision(state)
        if d is None:
            continue
        _v, sample = _sample(state, history, options, [seat], n)
        got = game.decision(sample)
        assert (got.seat, got.kind, list(got.moves)) == (d.seat, d.kind, list(d.moves)), n
        checked += 1
    assert checked > 250


def test_the_sampler_draws_what_sample_state_draws_and_draws_stay_apart():
    """``Game.sampler`` reads the table once and copies it at each draw: for the same chance it
    gives the very state ``sample_state`` gives (hash and decision), and playing one draw on
    (even to the end) leaves the next draws as they were. The contract's default wraps
    ``sample_state`` and is checked the same way (it must agree with the override)."""
    from referee.core.contract import Game
    from tests.sim.test_forward_model import positions

    checked = over = 0
    for n, (game, state, options, history, seat) in enumerate(
            positions("santa_maria", 120, 45)):
        views = {seat: game.view(state, seat)}
        sheet = game.default_components(options)
        fast = game.sampler(views, history, options, state.n, sheet)
        plain = Game.sampler(game, views, history, options, state.n, sheet)
        for k in range(3):
            want = game.sample_state(views, history, Rng(1000 * n + k), options, state.n, sheet)
            got = fast(Rng(1000 * n + k))
            assert game.hash_state(got) == game.hash_state(want), (n, k)
            assert game.hash_state(plain(Rng(1000 * n + k))) == game.hash_state(want)
            assert game.view(got, seat) == views[seat]
            # play the draw on: the table the next draw copies is untouched
            rnd = random.Random(k)
            for _ in range(400):
                d = game.decision(got)
                if d is None:
                    over += 1
                    break
                game.apply(got, d.seat, d.moves[rnd.randrange(len(d.moves))])
        checked += 1
    assert checked >= 100 and over > 0


def test_the_sampler_refuses_views_that_fit_no_game():
    import pytest

    found = _play(lambda s: s.year >= 2, n=3, seed=5)
    assert found is not None
    state, history, opts = found
    view = GAME.view(state, 0)
    view.seat_count = 4  # not this 3-seat match
    with pytest.raises(ValueError, match="seat match"):
        GAME.sampler({0: view}, history, opts, 3, GAME.default_components(opts))
