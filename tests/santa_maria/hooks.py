"""Santa Maria's hooks for the game-independent contract tests
(tests/contract/test_game_contract.py): the option sets random games cover, how to redraw what a
seat cannot see, and the conservation laws that hold after every move."""
from __future__ import annotations

import copy
import random

from referee.core.rng import Streams
from referee.games.santa_maria import rules as R

OPTION_SETS = [
    {},
    {"setup": "advanced"},
    {"shared_blue_dice": True},
    {"setup": "advanced", "shared_blue_dice": True},
    {"colony_boards": "pick"},
]


def rerandomise(state: R.State, seat: int | None, rnd: random.Random) -> R.State:
    """A copy with everything ``seat`` cannot see drawn anew: the face-down development and ship
    piles, the Scholars and Bishops left in the box, the ships in other seats' ports (placed face
    down, 'Transport maritime', until the final scoring shows them), the RNG."""
    other = copy.deepcopy(state)
    other.cache = None
    rnd.shuffle(other.pile_d)
    rnd.shuffle(other.pile_t)
    rnd.shuffle(other.set_aside)
    other.rng = Streams.from_root(rnd.getrandbits(64))
    pool = other.ship_pile
    rnd.shuffle(pool)
    for s, p in enumerate(other.players):
        if s == seat or other.phase == R.OVER:  # the final scoring turns every port face up
            continue
        for dock in p.port:
            for i in range(len(dock)):
                if pool:
                    j = rnd.randrange(len(pool))
                    dock[i], pool[j] = pool[j], dock[i]
    return other


def check_invariants(state: R.State) -> None:
    """Ships, dice and monks are conserved; stores stay within the storage limit; the occupancy
    bitmasks agree with the colony grid, the dice and the coins on it."""
    rules = state.rules
    ships = [x for x in state.ship_slots if x >= 0] + list(state.ship_pile)
    ships += [x for p in state.players for dock in p.port for x in dock]
    assert sorted(ships) == list(range(len(rules.ships))), "every ship tile is somewhere, once"
    if state.phase != R.OVER:
        used = sum(p.white_used for p in state.players)
        assert len(state.white) + used == rules.white_per_player * state.n, "white dice"
        if state.shared:
            assert len(state.shared_blue) + sum(p.blue_used for p in state.players) <= sum(
                p.blue_unlocked for p in state.players), "shared blue dice"
        for p in state.players:
            if not state.shared:
                assert len(p.blue) + p.blue_used <= p.blue_unlocked, "own blue dice"
        for s, p in enumerate(state.players):
            if p.retreat >= 0:
                assert state.retreat_occ[p.retreat] == s, "retreat space and marker agree"
        assert sum(1 for o in state.retreat_occ if o >= 0) == sum(
            1 for p in state.players if p.retreat >= 0)
    assert state.roads_left >= 0
    for s, p in enumerate(state.players):
        placed = sum(1 for seats in state.monks if s in seats)
        assert p.monks_left + placed == rules.monks, "monks are conserved"
        assert p.coins >= 0
        assert all(0 <= x <= rules.limit for x in p.res), "storage limit"
        assert p.occ == sum(1 << c for c in range(36) if p.grid[c]), "occupied cells"
        assert p.bld & ~p.occ == 0
        covered = sum(1 << c for c in range(36) if p.die_on[c] or p.coins_on[c])
        assert p.blocked == covered, "a building is blocked exactly by a die or coins on it"
        assert covered & ~p.bld == 0, "dice and coins lie on buildings only"
