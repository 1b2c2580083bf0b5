"""Goa's compact observation planes (referee/games/goa/planes.py; issue 36, item 1), both
editions: one fixed layout, a function of the seat's view alone (the leak test of
tests/research/test_encoding.py, with the game's ``rerandomise`` hook), equal views giving equal
vectors, every decision kind and every sub-decision's shown fields covered, and a few facts read
back from known states. tests/research/test_planes.py holds every declaring game to the generic
contract; this file holds Goa's own facts."""
from __future__ import annotations

import pickle
import random
import sys

import numpy as np
import pytest

from referee.core.planes import ObservationPlanes
from referee.games.goa import GAME
from referee.games.goa import planes as goa_planes
from referee.games.goa.auction import auctioneer
from referee.games.goa.catalog import MAX_SEATS, TILE_TYPES
from referee.games.goa.moves import MAX_LANDS
from referee.games.goa.spices import ProgressPayment
from referee.games.goa.state import AUCTION, OVER, Land, State, SubDecision
from referee.sim.model import Simulation
from referee.v1 import goa_pb2 as pb
from tests.contract import hooks
from tests.goa.helpers import new_game, random_until
from tests.research.helpers import positions

PLANES = GAME.observation_planes()
N_TYPES = len(TILE_TYPES)
WIDTH = PLANES.planes.width


def encode(state: State, seat: int) -> np.ndarray:
    out = np.zeros(WIDTH, np.float32)
    PLANES.encode(state, seat, out)
    return out


def plane(vector: np.ndarray, name: str) -> np.ndarray:
    p = PLANES.planes[name]
    return vector[p.start:p.stop]


@pytest.fixture(scope="module")
def sample() -> list[State]:
    """Every 9th position (and the end) of a random game at each seat count with each of the
    Goa tests' option sets (both editions, the variants)."""
    out = []
    rnd = random.Random(11)
    for k, options in enumerate(hooks.for_game("goa").OPTION_SETS):
        for seats in range(2, MAX_SEATS + 1):
            sim = Simulation.new("goa", seats, 100 * k + seats, options)
            step = 0
            while (d := sim.decision()) is not None:
                if step % 9 == 0:
                    out.append(GAME.clone(sim.state))
                sim.apply(d.moves[rnd.randrange(len(d.moves))])
                step += 1
            out.append(sim.state)
    return out


def test_declared_once_with_unique_planes_tiling_the_vector():
    assert isinstance(PLANES, ObservationPlanes)
    assert GAME.observation_planes() is PLANES, "built once, cached"
    at = 0
    names = set()
    for p in PLANES.planes:
        assert p.start == at and p.width > 0 and p.meaning.strip()
        assert p.name not in names
        names.add(p.name)
        at = p.stop
    assert at == WIDTH
    # far narrower than the View's generic encoding (35,109 floats at the time of issue 36)
    assert WIDTH < 2_500


def test_pickles_and_encodes_the_same(sample):
    again = pickle.loads(pickle.dumps(PLANES))
    assert [(p.name, p.start, p.width) for p in again.planes] == [
        (p.name, p.start, p.width) for p in PLANES.planes]
    for state in sample[::20]:
        out = np.zeros(WIDTH, np.float32)
        again.encode(state, 0, out)
        assert np.array_equal(out, encode(state, 0))


def test_fixed_width_bounded_values_at_every_seat_count_and_edition(sample):
    """Every seat of every sampled state, 2-4 seats, both editions and the option sets: the
    vector has the one width (a write past it raises in a list that long), every value is finite,
    not negative and small (scaled to about [0, 1] or small counts), the same into a list as
    into a numpy array."""
    seen = set()
    for state in sample:
        seen.add((state.edition, state.n))
        for seat in range(state.n):
            out = [0.0] * WIDTH
            PLANES.encode(state, seat, out)
            vector = np.array(out)
            assert len(out) == WIDTH
            # a numpy array is written through a memoryview of its buffer: the same values
            assert np.array_equal(vector.astype(np.float32), encode(state, seat))
            assert np.isfinite(vector).all() and vector.min() >= 0
            big = [p.name for p in PLANES.planes if vector[p.start:p.stop].max(initial=0) > 10]
            assert not big, big
    assert seen == {(e, n) for e in ("2012", "2004") for n in range(2, MAX_SEATS + 1)}


def test_planes_read_the_seats_view_only(sample):
    """Redrawing what the seat may not see (other hands, the deck's order, the others' ducats,
    face-down Mission and Bonanza tiles, the B stack, the 2004 box, the RNG) leaves its vector
    unchanged, while the redraw does change the state."""
    rerandomise = hooks.require("goa", "rerandomise")
    rnd = random.Random(5)
    changed = total = 0
    for state in sample:
        if state.phase == OVER:  # the final scoring reveals what it reveals at the table
            continue
        for seat in range(state.n):
            other = rerandomise(state, seat, rnd)
            mine, theirs = encode(state, seat), encode(other, seat)
            if not np.array_equal(mine, theirs):
                wrong = np.flatnonzero(mine != theirs)
                names = {p.name for p in PLANES.planes for i in wrong if p.start <= i < p.stop}
                raise AssertionError(f"seat {seat}'s planes changed with what it cannot see: "
                                     f"{sorted(names)}")
            total += 1
            changed += GAME.hash_state(other) != GAME.hash_state(state)
    assert changed > total * 0.5, f"the hook redrew nothing ({changed}/{total})"


def test_equal_views_give_equal_vectors(sample):
    """Over random play (and the redrawn copies, which show each seat the same view), two
    states whose View of a seat is the same give that seat the same vector."""
    rerandomise = hooks.require("goa", "rerandomise")
    rnd = random.Random(9)
    by_view: dict[bytes, bytes] = {}
    repeats = 0
    for state in sample:
        for seat in range(state.n):
            for s in (state, rerandomise(state, seat, rnd)):
                view = pb.View.FromString(GAME.view_bytes(s, seat))
                key = view.SerializeToString(deterministic=True)
                vector = encode(s, seat).tobytes()
                repeats += key in by_view
                assert by_view.setdefault(key, vector) == vector, "one view, two vectors"
    assert repeats > 100


def test_planes_tell_most_positions_apart(sample):
    """A learner's input is not blind: successive sampled positions seen by one seat nearly
    always differ in the vector when they differ in the view."""
    differ = same = 0
    previous: tuple[bytes, bytes] | None = None
    for state in sample:
        key = GAME.view_bytes(state, 0)
        vector = encode(state, 0).tobytes()
        if previous is not None and previous[0] != key:
            differ += 1
            same += previous[1] == vector
        previous = (key, vector)
    assert same <= differ // 20, f"{same} of {differ} different views share a vector"


def test_every_decision_kind_has_a_slot():
    kinds = set()
    for sim in positions("goa", 3000, 23, every=1):
        d = sim.decision()
        if d is not None:
            kinds.add(d.kind)
    unknown = kinds - set(goa_planes.DECISION_KINDS)
    assert not unknown, f"decision kinds with no slot in planes.DECISION_KINDS: {unknown}"
    assert len(kinds) > len(goa_planes.DECISION_KINDS) * 2 // 3


def test_every_sub_decision_that_shows_fields_has_a_writer():
    """A sub-decision whose ``pending_view`` shows more than its kind and seat is written into
    the pending planes (a new one, or a new field shown, needs its writer in planes.py)."""
    def classes(base: type) -> list[type]:
        return [base] + [c for sub in base.__subclasses__() for c in classes(sub)]
    def live(c: type) -> bool:  # dataclass(slots=True) leaves the class it replaced behind
        return getattr(sys.modules[c.__module__], c.__name__, None) is c
    shows = [c for c in classes(SubDecision) if live(c)
             and c.pending_view is not SubDecision.pending_view and c.__name__ != "ActionTurn"]
    assert len(shows) >= 8
    missing = [c.__name__ for c in shows if PLANES.writer_for(c) is None]
    assert not missing, missing


# ---- facts read back from known states

@pytest.mark.parametrize("edition", ["2012", "2004"])
def test_a_new_game_reads_back(edition):
    state = new_game(3, seed=4, edition=edition)
    rules = state.rules
    for seat in range(3):
        v = encode(state, seat)
        assert plane(v, "edition")[0] == (edition == "2004")
        assert list(plane(v, "seat_count")) == [0, 1, 0]
        assert np.flatnonzero(plane(v, "my_seat")).tolist() == [seat]
        # relative seats: slot 0 is the observer; the others' ducats are hidden
        assert plane(v, "ducats")[0] == pytest.approx(state.ducats[seat] / 30)
        assert list(plane(v, "ducats")[1:]) == [0, 0, 0]
        assert list(plane(v, "ships")) == pytest.approx([rules.start_ships / 10] * 3 + [0])
        assert list(plane(v, "colonists")) == pytest.approx([rules.start_colonists / 10] * 3
                                                             + [0])
        first = plane(v, "first_player")
        assert first[(state.first - seat) % 3] == 1 and first.sum() == 1
        assert sorted(np.flatnonzero(plane(v, "my_hand"))) == sorted(state.hands[seat])
        assert plane(v, "progress_rows").sum() == 0
        types = plane(v, "grid_tile_type").reshape(25, N_TYPES)
        for g, t in enumerate(state.grid):
            if t >= 0:
                assert types[g, rules.tiles[t].type] == 1 and types[g].sum() == 1
            else:
                assert types[g].sum() == 0
        box = plane(v, "box_tile_types")
        assert plane(v, "supply_counts")[0] == pytest.approx(len(state.box) / 10)
        if edition == "2004":  # the tiles returned to the box unseen
            assert box.sum() == 0 and state.box
        else:
            assert box.sum() == len(state.box)


def test_money_and_rows_read_back_after_an_edit():
    state = new_game(4, seed=2)
    state.ducats[2] = 21
    state.rows[2][3] = 2
    v = encode(state, 2)
    assert plane(v, "ducats")[0] == pytest.approx(21 / 30)
    assert plane(v, "progress_rows")[3] == pytest.approx(2 / 4)
    seen_by_0 = encode(state, 0)
    assert plane(seen_by_0, "ducats")[2] == 0, "another seat's ducats are hidden"
    assert plane(seen_by_0, "progress_rows")[2 * 5 + 3] == pytest.approx(2 / 4)


def test_an_auction_reads_back():
    state = new_game(3, seed=6)
    d = random_until(state, lambda s, d: s.phase == AUCTION and d.kind == "goa.bid" and s.bids)
    assert d is not None
    seat = d.seat
    v = encode(state, seat)
    a = auctioneer(state)
    assert plane(v, "auction_auctioneer")[(a - seat) % 3] == 1
    assert plane(v, "to_move")[0] == 1
    assert plane(v, "decision_kind")[goa_planes.DECISION_KINDS.index("goa.bid")] == 1
    first_bidder = (a + 1) % 3
    if state.bids[0] < 0:
        assert plane(v, "auction_passed")[(first_bidder - seat) % 3] == 1
    else:
        assert plane(v, "auction_bids")[(first_bidder - seat) % 3] == pytest.approx(
            state.bids[0] / 30)


def test_a_progress_payment_reads_back():
    state = new_game(3, seed=8)
    rnd = random.Random(3)
    d = random_until(state, lambda s, d: bool(s.stack) and isinstance(s.stack[-1],
                                                                       ProgressPayment), rnd)
    assert d is not None
    top = state.stack[-1]
    v = encode(state, d.seat)
    assert plane(v, "pending_column")[top.column] == 1
    assert list(plane(v, "pending_spices_owed")) == [float(x) for x in top.owed]
    assert plane(v, "pending_remaining")[0] == pytest.approx(sum(top.owed) / 10)


def test_the_end_reads_back():
    state = new_game(3, seed=5)
    random_until(state, lambda s, d: False, random.Random(1))
    assert state.phase == OVER
    v = encode(state, 1)
    totals = [f["total"] for f in state.final]
    for s in range(3):
        k = (s - 1) % 3
        assert plane(v, "final_total")[k] == pytest.approx(totals[s] / 50)
        assert plane(v, "ducats")[k] == pytest.approx(state.ducats[s] / 30), "shown at the end"
    winners = GAME.result(state).winners
    assert sorted((w - 1) % 3 for w in winners) == sorted(
        np.flatnonzero(plane(v, "winner")).tolist())
    assert plane(v, "to_move").sum() == 0 and plane(v, "decision_kind").sum() == 0


def test_lands_past_what_moves_can_name_stay_in_their_plane():
    """A custom sheet may allow more lands than the moves name (moves.MAX_LANDS): the extra
    ones are not written over the next planes."""
    state = new_game(4, seed=3)
    before = encode(state, 0)
    state.lands[3] = [Land(False, 0, [1], [0]) for _ in range(MAX_LANDS + 3)]  # slot 3: last
    after = encode(state, 0)
    lands = plane(after, "lands").reshape(MAX_SEATS, MAX_LANDS, -1)
    assert lands[3, :, 0].sum() == MAX_LANDS
    assert np.array_equal(lands[:3], plane(before, "lands").reshape(MAX_SEATS, MAX_LANDS, -1)[:3])
    for p in PLANES.planes:
        if p.name != "lands":
            assert np.array_equal(before[p.start:p.stop], after[p.start:p.stop]), p.name
