"""The action and observation encodings of every game (issue 21, item 5;
docs/research/environments.md):

* a move of an enumerated kind has one index in every state, and a decision's legal moves get
  distinct indices, at least one of them, none past the space, nearly all in the stable block;
* the observation is built from the seat's view only: redrawing everything the seat may not see
  (the leak-test hook ``rerandomise``, as in tests/contract) leaves it unchanged, while the
  redraw does change the full state;
* the observation tells views apart: two different views of a sample never share one vector.
"""
from __future__ import annotations

import copy
import dataclasses
import random

import numpy as np
import pytest
from referee_research.envs.encoding import ActionEncoding, ObservationEncoding, encodings

from referee.core import registry
from referee.sim.model import Simulation
from tests.contract import hooks
from tests.research.helpers import positions

GAMES = sorted(registry.games())


@pytest.mark.parametrize("name", GAMES)
def test_legal_moves_get_distinct_stable_indices(name):
    enc = encodings(name).actions
    again = ActionEncoding(registry.get(name))  # built anew: the same enumeration
    assert again.moves == enc.moves and again.size == enc.size
    dropped = overflowed = total = 0
    for sim in positions(name, 400, 3, every=1):
        d = sim.decision()
        if d is None:
            continue
        legal = enc.legal(d.moves)
        assert legal, f"{name}: a decision with no legal action ({d.kind})"
        assert all(0 <= i < enc.size for i in legal)
        assert len(set(map(id, legal.values()))) == len(legal)
        for i, move in legal.items():
            if i < enc.stable:
                assert enc.moves[i] == move and enc.index[move] == i
        dropped += len(d.moves) - len(legal)
        overflowed += sum(i >= enc.stable for i in legal)
        total += len(d.moves)
        mask = enc.mask(legal)
        assert mask.dtype == np.int8 and np.flatnonzero(mask).tolist() == sorted(legal)
    assert dropped == 0, f"{name}: {dropped} legal moves past the overflow cap"
    # the enumeration covers what play reaches: the overflow slots are for rare values
    assert overflowed <= total / 100, f"{name}: {overflowed} of {total} moves in the overflow"


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 300])
def test_the_mask_has_a_one_at_each_legal_index_and_nowhere_else(count):
    """Both ways of writing it (item by item for a few, one numpy write for many)."""
    enc = encodings("santa_maria").actions
    legal = dict.fromkeys(random.Random(count).sample(range(enc.size), count))
    mask = enc.mask(legal)
    assert mask.shape == (enc.size,) and mask.dtype == np.int8
    assert np.flatnonzero(mask).tolist() == sorted(legal) and set(mask.tolist()) <= {0, 1}


def _anew(move):
    """An equal move that is another object (an interning ``__copy__`` is bypassed)."""
    if dataclasses.is_dataclass(move):
        return dataclasses.replace(move)
    return copy.copy(move)


@pytest.mark.parametrize("name", GAMES)
def test_a_move_built_anew_gets_the_index_of_the_interned_one(name):
    """Legal moves are matched to their index by identity first (the engines intern their
    moves); an equal move that is another object (a bid past the interned range, a move
    unpickled or built by a client) must get the same index."""
    enc = encodings(name).actions
    seen = 0
    for sim in positions(name, 60, 9, every=3):
        d = sim.decision()
        if d is None:
            continue
        fresh = [_anew(m) for m in d.moves]
        assert fresh == list(d.moves)
        assert enc.legal(fresh).keys() == enc.legal(d.moves).keys()
        seen += sum(a is not b for a, b in zip(fresh, d.moves))
    assert seen > 100, f"{name}: too few moves built anew to check ({seen})"


@pytest.mark.parametrize("name", GAMES)
def test_observation_reads_the_seats_view_only(name):
    rerandomise = hooks.require(name, "rerandomise")
    enc = encodings(name).observations
    rnd = random.Random(5)
    changed = 0
    total = 0
    for sim in positions(name, 60, 17):
        if sim.over:  # the final scoring reveals what it reveals at the table
            continue
        for seat in range(sim.seat_count):
            other = Simulation(sim.game, rerandomise(sim.state, seat, rnd), sim.options,
                               sim.components)
            mine = enc.encode(sim.view(seat), memo=False)
            theirs = enc.encode(other.view(seat), memo=False)
            assert np.array_equal(mine, theirs), (
                f"{name}: seat {seat}'s observation changed with what it cannot see")
            # the environments' path (the view's bytes, memoised writes) reads no more
            fast = enc.encode_bytes(other.game.view_bytes(other.state, seat))
            assert np.array_equal(mine, fast), f"{name}: seat {seat}'s fast observation differs"
            total += 1
            changed += other.hash() != sim.hash()
    assert changed > total * 0.5, f"{name}: the hook redrew nothing ({changed}/{total})"


@pytest.mark.parametrize("name", GAMES)
def test_observation_tells_views_apart(name):
    enc = ObservationEncoding(registry.get(name))
    assert enc.size == len(enc.names)
    seen: dict[bytes, bytes] = {}
    for sim in positions(name, 150, 29, every=3):
        seat = sim.to_move() if sim.to_move() is not None else 0
        view = sim.view(seat)
        vector = enc.encode(view)
        assert vector.shape == (enc.size,) and vector.dtype == np.float32
        key = vector.tobytes()
        data = view.SerializeToString(deterministic=True)
        assert seen.setdefault(key, data) == data, f"{name}: two views, one observation"
    assert len(seen) > 100


@pytest.mark.parametrize("name", GAMES)
def test_planes_tile_the_observation_space(name):
    """The planes (one per View field) cover the vector in order, without gap or overlap, and
    the environments' space is that wide."""
    from referee_research.envs.aec import raw_env
    enc = encodings(name).observations
    at = 0
    for plane in enc.planes:
        assert plane.start == at, (name, plane.name)
        assert all(n.startswith(plane.name) for n in enc.names[at:at + plane.width])
        at += plane.width
    assert at == enc.size == len(enc.names)
    env = raw_env(name, 3 if registry.get(name).spec.max_seats >= 3 else None,
                  observations="memoised")
    space = env.observation_space(env.possible_agents[0])["observation"]
    assert space.shape == (enc.size,)
    env.reset(seed=1)
    assert env.observe(env.agent_selection)["observation"].shape == space.shape


@pytest.mark.parametrize("name", GAMES)
def test_memoised_encoding_equals_the_reflective_walk(name):
    """On random positions, every seat's and a spectator's view: the environments' encoding
    (the view's bytes, writes memoised per message and field) is the reflective walk's vector,
    and so is a second encoding of the same view (the memo's hits)."""
    enc = ObservationEncoding(registry.get(name))  # a fresh memo: misses, then hits
    checked = 0
    for sim in positions(name, 120, 41, every=2):
        for seat in (None, *range(sim.seat_count)):
            reference = enc.encode(sim.view(seat), memo=False)
            data = sim.game.view_bytes(sim.state, seat)
            for _ in range(2):
                fast = enc.encode_bytes(data)
                assert fast.dtype == np.float32 and fast.shape == reference.shape
                if not np.array_equal(fast, reference):
                    wrong = np.flatnonzero(fast != reference)[:5]
                    raise AssertionError(f"{name}: {[enc.names[i] for i in wrong]}")
            checked += 1
    assert checked > 300


def test_reflective_option_gives_the_same_observations():
    from referee_research.envs.aec import raw_env
    envs = [raw_env("santa_maria", 3, seed=4, observations=mode)
            for mode in ("memoised", "reflective")]
    for env in envs:
        env.reset(seed=4)
    rng = np.random.default_rng(3)
    for _ in range(40):
        a, b = (env.observe(env.agent_selection) for env in envs)
        assert np.array_equal(a["observation"], b["observation"])
        assert np.array_equal(a["action_mask"], b["action_mask"])
        action = int(rng.choice(np.flatnonzero(a["action_mask"])))
        for env in envs:
            env.step(action)
    with pytest.raises(ValueError, match="observations"):
        raw_env("batavia", 3, observations="pixels")
