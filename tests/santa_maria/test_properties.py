"""Property test: many random full games per seat count and option set. Invariants: every
decision lists at least one move; the game ends; every listed move is accepted; a move that is
not listed raises IllegalMove and leaves the state hash unchanged."""
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core.contract import IllegalMove

from .helpers import GAME, R, mv, new_state

# Moves that are never legal in some decisions: used as unlisted probes.
PROBES = [
    mv.END_TURN, mv.DECLINE, mv.retreat(4), mv.sell(4), mv.buy(2), mv.draft_lot(3),
    mv.place_tile(35, 3), mv.activate_building(0), mv.use_die(1, 6, 1, 1, -1),
    mv.religion(True, (0, 1, 0, 0, 0)), mv.recruit_monk(0), mv.ship(0, (1, 0, 0, 0, 0)),
    mv.exchange(5, (0, 0, 0, 0, 1)), mv.shift_ship(3), mv.place_die(0), mv.place_road(0),
    mv.recover_coins(0), mv.move_die(0, 1), mv.expand(9, (2, 1, 0, 0, 0)),
]


def run_game(n: int, seed: int, options: dict, check_every: int, patient: bool = False) -> int:
    """A random game; ``patient`` players rarely retreat, so colonies, ports and tracks grow and
    every rule gets exercised."""
    state = new_state(n, seed, **options)
    rnd = random.Random(seed)
    steps = 0
    while True:
        d = GAME.decision(state)
        if d is None:
            break
        assert d.moves, f"empty decision {d.kind}"
        assert len(set(d.moves)) == len(d.moves), f"duplicate moves in {d.kind}"
        if steps % check_every == 0:
            before = GAME.hash_state(state)
            for probe in PROBES:
                if probe not in d.moves:
                    with pytest.raises(IllegalMove):
                        GAME.apply(state, d.seat, probe)
                    assert GAME.hash_state(state) == before
                    break
            other = (d.seat + 1) % n
            if other != d.seat:
                with pytest.raises(IllegalMove):
                    GAME.apply(state, other, d.moves[0])
                assert GAME.hash_state(state) == before
        if patient:
            weights = [0.03 if type(m) is mv.Retreat else 0.3 if type(m) in (mv.Sell, mv.Buy) else 1.0
                       for m in d.moves]
            move = rnd.choices(d.moves, weights)[0]
        else:
            move = d.moves[rnd.randrange(len(d.moves))]
        GAME.apply(state, d.seat, move)
        steps += 1
        assert steps < 20000, "the game does not end"
    res = GAME.result(state)
    assert res is not None and len(res.scores) == n
    assert min(res.ranks) == 1 and res.winners
    return steps


OPTIONS = st.sampled_from([
    {}, {"setup": "advanced"}, {"shared_blue_dice": True},
    {"setup": "advanced", "shared_blue_dice": True}, {"colony_boards": "pick"},
])


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), options=OPTIONS, patient=st.booleans())
def test_random_full_games(n, seed, options, patient):
    run_game(n, seed, options, check_every=17, patient=patient)


def test_many_random_games_quick():
    """A wider, cheaper sweep (no hashing)."""
    for seed in range(60):
        for n in (1, 2, 3, 4):
            state = new_state(n, seed, setup="advanced" if seed % 3 == 0 else "standard",
                              shared_blue_dice=seed % 2 == 1,
                              colony_boards="pick" if seed % 4 == 1 else "random")
            rnd = random.Random(seed)
            while (d := R.decision(state)) is not None:
                assert d.moves
                R.apply(state, d.seat, d.moves[rnd.randrange(len(d.moves))])
            assert state.phase == R.OVER and state.year == 3


def test_proto_round_trip_of_listed_moves():
    for n in (1, 3):
        state = new_state(n, 7, setup="advanced")
        rnd = random.Random(7)
        while (d := R.decision(state)) is not None:
            for m in d.moves:
                msg = GAME.move_to_proto(m)
                back = GAME.move_from_proto(type(msg).FromString(msg.SerializeToString()))
                assert back == m and back is m
            R.apply(state, d.seat, d.moves[rnd.randrange(len(d.moves))])
