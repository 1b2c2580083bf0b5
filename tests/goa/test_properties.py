"""Property tests over many random full games (2, 3 and 4 seats, both editions, the variants):
invariants, complete legal-move lists, termination, illegal moves rejected without change. Views
that leak nothing a seat cannot see: the contract tests with tests/goa/hooks.py."""
from __future__ import annotations

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core.contract import IllegalMove
from referee.games.goa import moves
from referee.games.goa.catalog import TILE_MISSION
from referee.games.goa.scoring import final_scoring
from referee.games.goa.state import OVER, State
from tests.goa.helpers import GAME, new_game
from tests.goa.hooks import OPTION_SETS, check_invariants

ILLEGAL_POOL = [
    moves.bid(9999), moves.PASS, moves.KEEP_LOT, moves.END_TURN, moves.DONE, moves.RECRUIT, moves.DECLINE, moves.TAXES,
    moves.PLACE_SPICE[11][4], moves.PAY_SPICE[10][0], moves.PLACE_FLAG[0], moves.PLACE_TOKEN[0],
    moves.PLAY_EXTRA, moves.PASS_EXTRA, moves.draw(7), moves.play_card(29), moves.use_tile(0), moves.QUICK_DUCATS,
    moves.CHOOSE_COLUMN[0], moves.SWAP_TAKE[0],
]


def run_game(seed: int, n: int, options: dict, check_every: int = 0) -> State:
    state = new_game(n, seed, **options)
    rnd = random.Random(seed)
    steps = 0
    while True:
        d = GAME.decision(state)
        if d is None:
            break
        assert d.moves, f"empty decision {d.kind}"
        assert len(set(d.moves)) == len(d.moves), f"duplicate moves in {d.kind}"
        if check_every and steps % check_every == 0:
            check_invariants(state)
            before = GAME.hash_state(state)
            for bad in ILLEGAL_POOL:
                if bad not in d.moves:
                    try:
                        GAME.apply(state, d.seat, bad)
                    except IllegalMove:
                        pass
                    else:
                        raise AssertionError(f"{bad!r} accepted in {d.kind}")
                    break
            try:
                GAME.apply(state, (d.seat + 1) % n, d.moves[0])
            except IllegalMove as exc:
                assert exc.code == "NOT_YOUR_TURN"
            else:
                raise AssertionError("a move by the wrong seat was accepted")
            assert GAME.hash_state(state) == before, "a rejected move changed the state"
            for m in d.moves:  # every listed move is accepted
                trial = copy.deepcopy(state)
                GAME.apply(trial, d.seat, m)
        GAME.apply(state, d.seat, rnd.choice(d.moves))
        steps += 1
        assert steps < 20_000, "the game does not terminate"
    check_invariants(state)
    assert state.round == 8
    res = GAME.result(state)
    assert res is not None and len(res.scores) == n and res.winners
    return state


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 3, 4]),
       options=st.sampled_from(OPTION_SETS))
def test_random_games_keep_invariants(seed, n, options):
    run_game(seed, n, options)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 3, 4]),
       options=st.sampled_from(OPTION_SETS))
def test_every_listed_move_is_accepted_and_illegal_ones_change_nothing(seed, n, options):
    run_game(seed, n, options, check_every=37)


def test_same_seed_same_moves_same_state():
    a = run_game(7, 3, {})
    b = run_game(7, 3, {})
    assert GAME.hash_state(a) == GAME.hash_state(b)


# ---------------------------------------------------------------- hidden information
# (a view leaking what a seat cannot see: tests/contract, with tests/goa/hooks.py)


def test_spectator_view_has_no_hidden_holdings():
    state = new_game(3, 5)
    view = GAME.view(state, None)
    assert view.seat == -1 and not view.my_hand and view.my_ducats == 0


def test_others_mission_tiles_are_face_down():
    """Mission (B): "Acquired Mission tiles are placed, face down, in your play area" — the owner
    sees its value, the others and spectators see a face-down Mission tile; the final scoring
    reveals it."""
    state = new_game(3, 7)
    mission = next(t for t in range(len(state.rules.tiles))
                   if state.rules.tiles[t].type == TILE_MISSION)
    state.kept[1].append(mission)
    own = GAME.view(state, 1).players[1].tiles[-1]
    assert own.id == mission and own.vp in (2, 3)
    for viewer in (0, 2, None):
        other = GAME.view(state, viewer).players[1].tiles[-1]
        assert other.type == own.type and other.id == 0 and other.vp == 0
    final_scoring(state)
    assert state.phase == OVER
    assert GAME.view(state, 0).players[1].tiles[-1].vp == own.vp
