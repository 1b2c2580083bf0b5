"""Santa Maria's compact observation planes (referee/games/santa_maria/planes.py; issue 36,
item 1): one width at every seat count and option, planes that tile the vector under unique
names, a function of the seat's view alone (the leak test: redraw what the seat may not see and
the vector stays; equal views give equal vectors), and facts read back from known states."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import random

import numpy as np
import pytest

from referee.core import registry
from referee.games.santa_maria import rules as R
from referee.games.santa_maria.catalog import N_CELLS, TERRAIN_FARM
from referee.games.santa_maria.sheet import GRID_SIDE, N_DOCKS
from referee.sim.model import Simulation
from tests.research.helpers import positions
from tests.santa_maria.hooks import OPTION_SETS, rerandomise

NAME = "santa_maria"


@pytest.fixture(scope="module")
def planes():
    return registry.get(NAME).observation_planes()


@pytest.fixture(scope="module")
def sample():
    """Random positions over every seat count and the tests' option sets (with game ends),
    each a copy (the helper plays on in the one it yields)."""
    return [Simulation(sim.game, sim.game.clone(sim.state), sim.options, sim.components)
            for sim in positions(NAME, 160, 11, every=5)]


@pytest.fixture(scope="module")
def rare_steps():
    """Positions whose pending step shows details in the View (a tile to place, an exchange's
    building, a die's line, a ship's dock): some are rare, so every decision of 3,000 is read."""
    shown = {"santa_maria.place_tile", "santa_maria.exchange", "santa_maria.place_die",
             "santa_maria.astronomy"}
    return [Simulation(sim.game, sim.game.clone(sim.state), sim.options, sim.components)
            for sim in positions(NAME, 3000, 11, every=1)
            if sim.decision() is not None and sim.decision().kind in shown]


def encode(planes, state, seat):
    out = np.zeros(planes.planes.width, np.float32)
    planes.encode(state, seat, out)
    return out


def plane(planes, vector, name):
    p = planes.planes[name]
    return vector[p.start:p.stop]


def test_declared_once_and_cached(planes):
    assert registry.get(NAME).observation_planes() is planes


def test_planes_tile_the_vector_under_unique_names(planes):
    at = 0
    names = set()
    for p in planes.planes:
        assert p.start == at, p.name
        assert p.name not in names
        assert p.meaning.strip()
        names.add(p.name)
        at = p.stop
    assert at == planes.planes.width
    assert len(names) == len(planes.planes)


def test_one_width_at_every_seat_count_and_option(planes):
    """Every seat count with every option set: the vector fits the width (a write past it
    would raise), holds finite values of a learner's scale, and shows the seats in play."""
    width = planes.planes.width
    spec = registry.get(NAME).spec
    for seats in range(spec.min_seats, spec.max_seats + 1):
        for k, options in enumerate(OPTION_SETS):
            sim = Simulation.new(NAME, seats, 100 + k, options)
            rnd = random.Random(k)
            for _ in range(60):
                for seat in range(seats):
                    vector = encode(planes, sim.state, seat)
                    assert vector.shape == (width,)
                    assert np.isfinite(vector).all() and abs(vector).max() <= 10
                    points = planes.planes["seat.points"]  # the one plane that may go below 0
                    rest = np.delete(vector, np.s_[points.start:points.stop])
                    assert rest.min() >= 0
                    assert plane(planes, vector, "seat.present").sum() == seats
                d = sim.decision()
                if d is None:
                    break
                sim.apply(d.moves[rnd.randrange(len(d.moves))])


def test_a_plain_list_and_a_float64_array_get_the_same_vector(planes, sample):
    for sim in sample[::10]:
        want = encode(planes, sim.state, 0)
        as_list = [0.0] * planes.planes.width
        planes.encode(sim.state, 0, as_list)
        wide = np.zeros(planes.planes.width)
        planes.encode(sim.state, 0, wide)
        assert np.array_equal(np.array(as_list, np.float32), want)
        assert np.array_equal(wide.astype(np.float32), want)


def test_the_vector_reads_the_seats_view_only(planes, sample):
    """The leak test: redraw everything the seat may not see (the contract tests' hook: the
    piles' order, the box, other seats' ship faces, the RNG) and the seat's vector stays."""
    rnd = random.Random(7)
    changed = checked = 0
    for sim in sample:
        for seat in range(sim.seat_count):
            other = rerandomise(sim.state, seat, rnd)
            assert np.array_equal(encode(planes, sim.state, seat),
                                  encode(planes, other, seat)), (
                f"seat {seat}'s planes changed with what it cannot see")
            checked += 1
            changed += Simulation(sim.game, other, sim.options, sim.components).hash() != sim.hash()
    assert changed > checked // 2, f"the redraw changed nothing ({changed}/{checked})"


def test_equal_views_give_equal_vectors(planes, sample):
    game = registry.get(NAME)
    seen: dict[bytes, bytes] = {}
    for sim in sample:
        for seat in range(sim.seat_count):
            view = game.view_bytes(sim.state, seat)
            vector = encode(planes, sim.state, seat).tobytes()
            assert seen.setdefault(view, vector) == vector, "one view, two vectors"
    assert len(seen) > 300


def test_the_decision_planes_name_the_pending_decision(planes, sample):
    for sim in sample:
        d = sim.decision()
        for seat in range(sim.seat_count):
            v = encode(planes, sim.state, seat)
            kind, to_act = plane(planes, v, "decision.kind"), plane(planes, v, "seat.to_act")
            if d is None:
                assert kind.sum() == 0 and to_act.sum() == 0
                assert plane(planes, v, "phase")[2] == 1
                continue
            assert planes.kinds[int(np.flatnonzero(kind)[0])] == d.kind and kind.sum() == 1
            assert np.flatnonzero(to_act).tolist() == [(d.seat - seat) % sim.seat_count]


def test_known_facts_read_back(planes):
    """From a known state: each seat slot's coins, stores and colony, the seats relative to
    the observer, a die and coins on a building, the own ships' faces only."""
    sim = Simulation.new(NAME, 3, 5, {})
    state = copy.deepcopy(sim.state)
    r = state.rules
    state.cache = None
    state.players[1].coins = 7
    state.players[1].res = [1, 0, 3, 0, 2]
    state.players[2].coins = 12
    seat = 1
    v = encode(planes, state, seat)
    assert plane(planes, v, "seat.coins")[:3].tolist() == pytest.approx([0.7, 1.2, state.players[0].coins / 10])
    assert plane(planes, v, "seat.resources")[:5].tolist() == pytest.approx(
        [1 / r.limit, 0, 3 / r.limit, 0, 2 / r.limit])
    assert plane(planes, v, "seat.present").tolist() == [1, 1, 1, 0]
    # the colony: the observer's farms where its grid has them
    farms = [float(r.cells[k].terrain == TERRAIN_FARM) for k in state.players[1].grid]
    assert plane(planes, v, "colony0.farm").tolist() == farms and sum(farms) > 0
    nxt = [float(r.cells[k].terrain == TERRAIN_FARM) for k in state.players[2].grid]
    assert plane(planes, v, "colony1.farm").tolist() == nxt
    # a white die and coins on buildings of the seat after the observer
    p = state.players[2]
    a, b = [c for c in range(N_CELLS) if p.bld >> c & 1][:2]
    p.die_on[a] = 1  # WHITE (moves.py)
    p.coins_on[b] = 2
    p.blocked |= 1 << a | 1 << b
    v = encode(planes, state, seat)
    assert np.flatnonzero(plane(planes, v, "colony1.die_white")).tolist() == [a]
    assert plane(planes, v, "colony1.coins")[b] == 2
    assert plane(planes, v, "colony1.die_blue").sum() == 0
    # ships in ports: counts for all, faces (points) for the observer's own only
    ship = state.ship_pile.pop()
    mine = state.ship_pile.pop()
    state.players[2].port[1].append(ship)
    state.players[1].port[3].append(mine)
    v = encode(planes, state, seat)
    ships = plane(planes, v, "seat.port_ships").reshape(4, N_DOCKS)
    points = plane(planes, v, "seat.port_points").reshape(4, N_DOCKS)
    assert ships[0, 3] == 1 and ships[1, 1] == 1 and ships.sum() == 2
    assert points[0, 3] == pytest.approx(r.ships[mine][1] / 10) and points[1].sum() == 0
    # the display: a tile's slot shows it, and its cells' terrains add up to its cell count
    slot = next(i for i, t in enumerate(state.display) if t >= 0)
    terrain = sum(plane(planes, v, f"display.{t}")[slot]
                  for t in ("road", "farm", "forest", "mountain", "city", "town_hall"))
    assert plane(planes, v, "display.present")[slot] == 1
    assert terrain == (2 if slot < r.display_doubles else 3)
    assert len(plane(planes, v, "colony0.farm")) == GRID_SIDE * GRID_SIDE


def test_a_sheet_of_another_shape_is_refused(planes):
    sim = Simulation.new(NAME, 2, 3, {})
    state = copy.deepcopy(sim.state)
    state.rules = dataclasses.replace(state.rules, display_doubles=state.rules.display_doubles + 1)
    with pytest.raises(ValueError, match="another shape"):
        encode(planes, state, 0)


def test_over_shows_every_port(planes, sample):
    ended = [sim for sim in sample if sim.state.phase == R.OVER]
    assert ended
    for sim in ended:
        v = encode(planes, sim.state, 0)
        ships = plane(planes, v, "seat.port_ships").reshape(4, N_DOCKS)
        points = plane(planes, v, "seat.port_points").reshape(4, N_DOCKS)
        assert ((ships > 0) == (points > 0)).all()


def test_the_planes_read_back_as_the_view_shows(planes, sample, rare_steps):
    """On random positions, at every seat: the planes say what the seat's View message says
    (built by view.py, apart from the planes' code and caches), concept by concept. A stale
    cached block or a misplaced seat shows here."""
    from referee.v1 import santa_maria_pb2 as pb
    game = registry.get(NAME)
    ms = planes.seats
    seen_kinds: set[str] = set()
    for sim in sample + rare_steps:
        n = sim.seat_count
        for seat in range(n):
            view = pb.View.FromString(game.view_bytes(sim.state, seat))
            v = encode(planes, sim.state, seat)

            def get(name, shape=None, v=v):
                got = plane(planes, v, name)
                return got.reshape(shape) if shape else got

            if view.current_seat >= 0:
                assert get("seat.to_act")[(view.current_seat - seat) % n] == 1
                assert planes.kinds[int(np.argmax(get("decision.kind")))] == view.pending.kind
            assert get("decision.main_action_done")[0] == view.main_action_done
            pending = view.pending
            kind = pending.kind.rsplit(".", 1)[-1]
            tile = get("pending.tile", (planes.max_tile_cells, -1))
            if kind == "place_tile":
                assert np.flatnonzero(get("pending.tile_slot")).tolist() == [pending.slot]
                for i, c in enumerate(pending.tile):
                    name = pb.Terrain.Name(c.content.terrain).lower()
                    assert tile[i, planes.feature_index(name)] == 1
                    assert tile[i, planes.feature_index("building")] == c.content.building
                assert tile[len(pending.tile):].sum() == 0
                seen_kinds.add(kind)
            else:
                assert tile.sum() == 0 and get("pending.tile_slot").sum() == 0
            building = get("pending.building")
            if kind == "exchange":
                cell = (pending.row - 1) * GRID_SIDE + pending.col - 1
                assert np.flatnonzero(building).tolist() == [cell]
                assert get("pending.second_exchange")[0] == pending.second
                seen_kinds.add(kind)
            else:
                assert building.sum() == 0
            line = get("pending.line", (2, GRID_SIDE))
            if kind == "place_die":
                want = (0, pending.row - 1) if pending.row else (1, pending.col - 1)
                assert list(zip(*np.nonzero(line))) == [want]
                seen_kinds.add(kind)
            else:
                assert line.sum() == 0
            dock = get("pending.dock")
            if kind == "astronomy":
                assert np.flatnonzero(dock).tolist() == [pending.dock]
                seen_kinds.add(kind)
            else:
                assert dock.sum() == 0
            assert get("seat.first_player")[(view.first_player - seat) % n] == 1
            for p in view.players:
                k = (p.seat - seat) % n
                assert get("seat.coins")[k] == pytest.approx(p.coins / 10)
                assert get("seat.points")[k] == pytest.approx(p.points / 10)
                res = [p.resources.wood, p.resources.wheat, p.resources.sugar, p.resources.gem,
                       p.resources.gold]
                assert get("seat.resources", (ms, 5))[k] == pytest.approx(
                    [x / sim.state.rules.limit for x in res])
                assert get("seat.conquistador_rank")[k] == p.conquistador_rank
                assert get("seat.port_ships", (ms, N_DOCKS))[k].tolist() == list(
                    p.port.ships_per_dock)
                own = [0.0] * N_DOCKS
                for x in p.port.own_ships:
                    own[x.dock] += x.ship.points / 10
                assert get("seat.port_points", (ms, N_DOCKS))[k] == pytest.approx(own)
                terrain = {t: get(f"colony{k}.{pb.Terrain.Name(t).lower()}")
                           for t in range(1, 7)}
                die = {1: get(f"colony{k}.die_white"), 2: get(f"colony{k}.die_blue")}
                cells = {(c.row - 1) * GRID_SIDE + c.col - 1: c for c in p.colony}
                for cell in range(N_CELLS):
                    c = cells.get(cell)
                    want = c.content.terrain if c else 0
                    assert [t for t in terrain if terrain[t][cell]] == ([want] if want else [])
                    assert get(f"colony{k}.building")[cell] == (c.content.building if c else 0)
                    assert [d for d in die if die[d][cell]] == ([c.die] if c and c.die else [])
                    assert get(f"colony{k}.coins")[cell] == (c.coins if c else 0)
            present = get("display.present").tolist()
            assert present == [float(d.present) for d in view.display]
            assert get("ship_slot.present").tolist() == [float(s.present) for s in view.ship_slots]
            assert get("ship_slot.points").tolist() == pytest.approx(
                [s.ship.points / 10 for s in view.ship_slots])
            occupants = get("retreat.occupant", (-1, ms))
            for space in view.retreat_spaces:
                want = [(space.occupant - seat) % n] if space.occupant >= 0 else []
                assert np.flatnonzero(occupants[space.space]).tolist() == want
            monks = get("monk_space.monks", (-1, ms))
            for space in view.monk_spaces:
                want = [0.0] * ms
                for s in space.monks:
                    want[(s - seat) % n] += 1
                assert monks[space.space].tolist() == want
            assert get("supply.white_dice").tolist() == [
                float(list(view.white_dice).count(f)) for f in range(1, GRID_SIDE + 1)]
    assert seen_kinds == {"place_tile", "exchange", "place_die", "astronomy"}, seen_kinds


def test_pickles_small_and_encodes_the_same(planes, sample):
    """A pickled declaration (inside a pickled environment) carries its rules, not its caches."""
    for sim in sample[:40]:
        encode(planes, sim.state, 0)
    assert planes._colony_cache and planes._board_cache
    data = pickle.dumps(planes)
    again = pickle.loads(data)
    assert len(data) < 60_000, len(data)  # the sheet the rules pickle as: 27 kB
    assert again.planes.width == planes.planes.width
    assert [p.name for p in again.planes] == [p.name for p in planes.planes]
    for sim in sample[:40]:
        assert np.array_equal(encode(again, sim.state, 0), encode(planes, sim.state, 0))
