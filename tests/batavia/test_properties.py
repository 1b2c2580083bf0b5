"""Thousands of random legal Batavia games (hypothesis drives the seeds and the move choices):
every listed move is accepted, an unlisted move is rejected without changing the state, the
game's conservation laws hold after every move, and every game ends."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core.contract import IllegalMove
from referee.games.batavia import GAME
from referee.games.batavia import moves as mv
from referee.games.batavia import rules as R

from .helpers import new_state
from .hooks import check_invariants

ALL_MOVES = (
    [mv.PASS_BID, mv.DRAW_CARDS, mv.TAKE_ARRIVAL, mv.EXCHANGE_TILES, mv.KEEP_TILES]
    + list(mv.PLAY_CARD)
    + list(mv.ADVANCE)
    + [mv.bid(a) for a in range(80)]
)


def play_random_game(n: int, seed: int, setup: str, probe: bool) -> R.State:
    s = new_state(n, seed=seed, setup=setup)
    rnd = random.Random(seed)
    steps = 0
    while (d := R.decision(s)) is not None:
        assert d.moves, "every decision has a legal move"
        assert d.seat == s.current
        assert len(set(d.moves)) == len(d.moves)
        if probe and steps % 7 == 0:
            legal = set(d.moves)
            bad = [m for m in ALL_MOVES if m not in legal]
            if bad:
                m = rnd.choice(bad)
                before = GAME.hash_state(s)
                try:
                    R.apply(s, d.seat, m)
                except IllegalMove:
                    pass
                else:
                    raise AssertionError(f"unlisted move {m} was accepted")
                assert GAME.hash_state(s) == before
            other = (d.seat + 1) % n
            try:
                R.apply(s, other, d.moves[0])
            except IllegalMove as exc:
                assert exc.code == "NOT_YOUR_TURN"
            else:
                raise AssertionError("a seat acted out of turn")
        R.apply(s, d.seat, rnd.choice(d.moves))
        check_invariants(s)
        steps += 1
        assert steps < 20_000, "game does not terminate"
    res = GAME.result(s)
    assert res is not None and len(res.scores) == n
    assert max(res.scores) == res.scores[res.winners[0]]
    return s


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(3, 5),
    seed=st.integers(0, 2**32),
    setup=st.sampled_from(["face_down", "face_up"]),
)
def test_random_games_keep_invariants(n, seed, setup):
    play_random_game(n, seed, setup, probe=True)


def test_two_thousand_random_games_end():
    """2,000 more full games without the probing, for breadth."""
    ends = {"arrival": 0, "other": 0}
    for i in range(2000):
        s = play_random_game(3 + i % 3, 10_000 + i, ("face_down", "face_up")[i % 2], probe=False)
        ends["arrival" if s.arrival_holder >= 0 else "other"] += 1
    assert ends["arrival"] > 1900


def test_replay_is_deterministic():
    """Same seed and same moves give the same state (docs/ARCHITECTURE.md, The game contract: deterministic)."""
    a = play_random_game(4, 99, "face_down", probe=False)
    b = play_random_game(4, 99, "face_down", probe=False)
    assert GAME.hash_state(a) == GAME.hash_state(b)
