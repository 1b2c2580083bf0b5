"""The encoded View from cached fragments (``view.build_view_bytes``, what the referee sends)
parses to exactly the View built field by field (``build_view_direct``) at every position, seat
count and seat; no change to any part the View shows is served from a stale fragment; and a
seat's bytes do not depend on what it may not see."""
from __future__ import annotations

import random

from referee.games.batavia import GAME
from referee.games.batavia import rules as R
from referee.games.batavia.view import build_view_bytes, build_view_direct
from referee.v1 import batavia_pb2 as pb

from .helpers import new_state
from .hooks import OPTION_SETS, rerandomise


def _encoded(state: R.State, seat: int | None) -> pb.View:
    return pb.View.FromString(build_view_bytes(state, seat))


def test_the_encoded_view_parses_to_the_built_one():
    """Random games at 3, 4 and 5 seats and every option set: every seat and a spectator at
    every decision and at the end."""
    checked = 0
    for g in range(9):
        state = new_state(3 + g % 3, seed=700 + g, **OPTION_SETS[g % len(OPTION_SETS)])
        rnd = random.Random(g)
        while True:
            for seat in [None, *range(state.n)]:
                assert _encoded(state, seat) == build_view_direct(state, seat), (g, seat)
                checked += 1
            d = R.decision(state)
            if d is None:
                break
            R.apply(state, d.seat, rnd.choice(d.moves))
    assert checked > 2000


def _in_phase(phase: int, seed: int) -> R.State:
    """A 4-seat position of a random game, some moves into ``phase``."""
    state = new_state(4, seed=seed)
    rnd = random.Random(seed)
    seen = 0
    while (d := R.decision(state)) is not None:
        if state.phase == phase and any(state.face_up[0]) and any(state.tiles[0]):
            seen += 1
            if seen > 2:
                return state
        R.apply(state, d.seat, rnd.choice(d.moves))
    raise AssertionError(f"no position in phase {phase}")


def _bump(values: list, i: int = 0, by: int = 1):
    return lambda: values.__setitem__(i, values[i] + by)


def _mutations(state: R.State):
    """(what, change): one change to each part of the state that the View shows."""
    taken = next(i for i, t in enumerate(state.track) if t >= 0)
    yield "track", lambda: state.track.__setitem__(taken, -1)
    yield "revealed", lambda: setattr(state, "revealed", state.revealed - 1)
    for name in ("merchant", "bills", "gold", "crates_left"):
        yield name, _bump(getattr(state, name))
    yield "hand size", _bump(state.hands[1])
    yield "my hand", _bump(state.hands[0], 4)
    yield "face_up", _bump(state.face_up[0], 2)
    yield "seal", _bump(state.face_up[1], 3, 9)
    yield "tiles", lambda: state.tiles[0].append(state.tiles[0][0])
    yield "arrival", lambda: setattr(state, "arrival_holder", 2)
    yield "crate_owner", lambda: state.crate_owner.__setitem__(state.crate_owner.index(-1), 1)
    for name in ("round", "first_player", "current"):
        yield name, lambda name=name: setattr(state, name, (getattr(state, name) + 1) % state.n)
    yield "draw pile size", lambda: state.draw_pile.append(0)
    yield "discards", _bump(state.discards, 4)
    yield "played", _bump(state.played, 1)
    if state.phase == R.AUCTION:
        yield "in_auction", lambda: state.in_auction.__setitem__(
            1, not state.in_auction[1])
        for name in ("die", "high_bid", "high_bidder", "auctioneer"):
            yield name, lambda name=name: setattr(state, name, getattr(state, name) + 1)
        yield "lot", _bump(state.lot, 2)
    if state.phase == R.EXCHANGE:
        yield "pending_tile", lambda: setattr(state, "pending_tile", (state.pending_tile + 1)
                                              % (R.N_COMPANIES * R.N_GOODS))
    yield "phase", lambda: setattr(state, "phase", R.ACTIONS if state.phase != R.ACTIONS
                                   else R.AUCTION)


def test_no_change_is_served_from_a_stale_fragment():
    """Each change, made after the View was encoded (its fragments cached), shows in the next
    encoding as in the View built anew, for the seat and for a spectator."""
    covered = set()
    for phase in (R.AUCTION, R.ACTIONS, R.EXCHANGE):
        base = _in_phase(phase, seed=31 + phase)
        base.in_auction = [True] * base.n  # (read in the auction phase only)
        for seat in (0, None):
            for what, _ in _mutations(base):
                state = GAME.clone(base)
                build_view_bytes(state, seat)  # its fragments are cached now
                change = dict(_mutations(state))[what]
                before = build_view_direct(state, seat)
                change()
                after = build_view_direct(state, seat)
                assert after != before, f"{what}: the change does not show in the View"
                assert _encoded(state, seat) == after, f"{what} ({seat=}): a stale fragment"
                covered.add(what)
    assert len(covered) == 27


def test_a_seats_bytes_do_not_depend_on_what_it_may_not_see():
    """The same position with the other hands (same sizes), the draw pile's order, the
    face-down stall tiles and the RNG drawn anew encodes to the same bytes for the seat: its
    fragments cannot carry any of it."""
    rnd = random.Random(5)
    for phase in (R.AUCTION, R.ACTIONS, R.EXCHANGE):
        state = _in_phase(phase, seed=51 + phase)
        for seat in [None, *range(state.n)]:
            mine = build_view_bytes(state, seat)
            for _ in range(5):
                other = rerandomise(state, seat, rnd)
                assert build_view_bytes(other, seat) == mine, (phase, seat)
