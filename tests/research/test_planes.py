"""The observation planes every game that declares them keeps (issue 36, item 1;
referee/core/planes.py, docs/research/environments.md):

* a fixed layout: the planes tile ``[0, width)`` in order, with unique names and a meaning each,
  and every state, seat count and option set of the game encodes to ``width`` finite floats;
* a function of the seat's view alone: redrawing everything the seat may not see (the leak-test
  hook ``rerandomise``, as in tests/contract and test_encoding.py) leaves the vector unchanged,
  and two positions whose views are equal (the same encoded view) give equal vectors;
* the environments observe through them by default, with a space as wide as the planes.

The checks are functions (:func:`leaks`, :func:`view_clashes`) so that
:func:`test_the_checks_catch_an_encoder_that_reads_hidden_state` can hold them to failing on an
encoder that reads one hidden value.
"""
from __future__ import annotations

import math
import random
from collections.abc import MutableSequence
from typing import Any

import numpy as np
import pytest

from referee.core import registry
from referee.core.planes import ObservationPlanes
from referee.sim.model import Simulation
from tests.contract import hooks
from tests.research.helpers import positions

DECLARING = sorted(n for n in registry.games() if registry.get(n).observation_planes() is not None)

pytestmark = pytest.mark.skipif(not DECLARING, reason="no registered game declares planes")


def _encode(planes: ObservationPlanes, sim: Simulation, seat: int) -> np.ndarray:
    out = np.zeros(planes.planes.width, dtype=np.float32)
    planes.encode(sim.state, seat, out)
    return out


def leaks(name: str, planes: ObservationPlanes, count: int = 60) -> list[str]:
    """Where redrawing what a seat may not see changed its vector (empty: nowhere)."""
    rerandomise = hooks.require(name, "rerandomise")
    rnd = random.Random(5)
    found, changed, total = [], 0, 0
    for sim in positions(name, count, 17):
        if sim.over:  # the final scoring reveals what it reveals at the table
            continue
        for seat in range(sim.seat_count):
            other = Simulation(sim.game, rerandomise(sim.state, seat, rnd), sim.options,
                               sim.components)
            assert other.view(seat) == sim.view(seat), f"{name}: the hook changed the view"
            mine, theirs = _encode(planes, sim, seat), _encode(planes, other, seat)
            if not np.array_equal(mine, theirs):
                wrong = np.flatnonzero(mine != theirs)
                names = sorted({p.name for p in planes.planes for i in wrong
                                if p.start <= i < p.stop})
                found.append(f"seat {seat} of a {sim.seat_count}-seat match: {names}")
            total += 1
            changed += other.hash() != sim.hash()
    assert changed > total * 0.5, f"{name}: the hook redrew nothing ({changed}/{total})"
    return found


def view_clashes(name: str, planes: ObservationPlanes, count: int = 150) -> list[str]:
    """Positions whose seat saw the same view as an earlier one (its encoding, canonical) yet
    got another vector; the number of repeated views checked rides along in the answer."""
    rerandomise = hooks.require(name, "rerandomise")
    rnd = random.Random(11)
    seen: dict[tuple[int, bytes], bytes] = {}
    found, repeats = [], 0
    for sim in positions(name, count, 29, every=3):
        for seat in range(sim.seat_count):
            # the position and a redraw of its hidden parts: two states, one view
            for state in (sim.state, rerandomise(sim.state, seat, rnd)):
                pos = Simulation(sim.game, state, sim.options, sim.components)
                view = pos.view(seat).SerializeToString(deterministic=True)
                vector = _encode(planes, pos, seat).tobytes()
                key = (sim.seat_count, view)
                first = seen.setdefault(key, vector)
                if first is not vector:
                    repeats += 1
                    if first != vector:
                        found.append(f"seat {seat}: one view, two vectors")
    assert repeats > count, f"{name}: too few repeated views to check ({repeats})"
    return found


@pytest.mark.parametrize("name", DECLARING)
def test_planes_tile_the_vector_with_named_meaningful_slices(name):
    planes = registry.get(name).observation_planes()
    assert planes is not None and registry.get(name).observation_planes() is planes, (
        f"{name}: the declaration is built once")
    layout = planes.planes
    at = 0
    names = set()
    for plane in layout:
        assert plane.start == at and plane.width > 0, (name, plane.name)
        assert plane.name not in names and plane.name.strip(), (name, plane.name)
        assert plane.meaning.strip(), (name, plane.name)
        assert layout[plane.name] is plane
        names.add(plane.name)
        at = plane.stop
    assert at == layout.width > 0 and len(layout) == len(names)


@pytest.mark.parametrize("name", DECLARING)
def test_every_position_encodes_to_the_fixed_width_finite(name):
    planes = registry.get(name).observation_planes()
    assert planes is not None
    spec = registry.get(name).spec
    seat_counts = set()
    for sim in positions(name, 150, 3, every=11):
        seat_counts.add(sim.seat_count)
        for seat in range(sim.seat_count):
            out = _encode(planes, sim, seat)
            assert out.shape == (planes.planes.width,)
            assert np.isfinite(out).all(), (
                f"{name}: not finite in {[p.name for p in planes.planes if not np.isfinite(out[p.start:p.stop]).all()]}")
            # the encoder writes into whatever sequence it is given (a game imports no numpy)
            plain: MutableSequence[float] = [0.0] * planes.planes.width
            planes.encode(sim.state, seat, plain)
            wrong = np.flatnonzero(np.asarray(plain, dtype=np.float32) != out)
            assert not len(wrong), [(i, plain[i], out[i]) for i in wrong]
    assert seat_counts == set(range(spec.min_seats, spec.max_seats + 1))


@pytest.mark.parametrize("name", DECLARING)
def test_planes_read_the_seats_view_only(name):
    planes = registry.get(name).observation_planes()
    assert planes is not None
    found = leaks(name, planes)
    assert not found, f"{name}: the vector changed with what the seat cannot see: {found[:5]}"


@pytest.mark.parametrize("name", DECLARING)
def test_equal_views_give_equal_vectors(name):
    planes = registry.get(name).observation_planes()
    assert planes is not None
    found = view_clashes(name, planes)
    assert not found, f"{name}: {found[:5]}"


class _ReadsHidden(ObservationPlanes):
    """A game's planes plus one slot written from the full state's digest (everything hidden
    included): what an encoder that reads one hidden value looks like to the checks."""

    def __init__(self, inner: ObservationPlanes, game: Any):
        self.inner, self.game, self.planes = inner, game, inner.planes

    def encode(self, state: Any, seat: int, out: MutableSequence[float]) -> None:
        self.inner.encode(state, seat, out)
        out[0] += int(self.game.hash_state(state)[:6], 16) / 2**24


@pytest.mark.parametrize("name", DECLARING)
def test_the_checks_catch_an_encoder_that_reads_hidden_state(name):
    game = registry.get(name)
    planes = game.observation_planes()
    assert planes is not None
    leaky = _ReadsHidden(planes, game)
    assert leaks(name, leaky, count=20)
    assert view_clashes(name, leaky, count=40)


@pytest.mark.parametrize("name", DECLARING)
def test_environments_observe_through_the_planes_by_default(name):
    from referee_research.envs.aec import raw_env
    from referee_research.envs.encoding import encodings
    spec = registry.get(name).spec
    seats = min(max(3, spec.min_seats), spec.max_seats)
    planes = registry.get(name).observation_planes()
    assert planes is not None
    width = planes.planes.width
    env = raw_env(name, seats, seed=2)
    assert env.table.observations == "planes"
    assert env.observation_space(env.possible_agents[0])["observation"].shape == (width,)
    view = raw_env(name, seats, seed=2, observations="memoised")
    size = encodings(name).observations.size
    assert view.observation_space(view.possible_agents[0])["observation"].shape == (size,)
    env.reset(seed=3)
    view.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(30):
        agent = env.agent_selection
        obs, other = env.observe(agent), view.observe(agent)
        seat = env.possible_agents.index(agent)
        assert np.array_equal(obs["observation"], _encode(planes, env.table.sim, seat))
        assert other["observation"].shape == (size,)
        assert np.array_equal(obs["action_mask"], other["action_mask"])
        if math.isclose(float(obs["action_mask"].sum()), 0.0):
            break
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        view.step(action)
