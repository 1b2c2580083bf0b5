"""The greedy Batavia bot beats random bots clearly.

200 games are played in-process. The greedy seat receives exactly what the server would send it:
a referee.v1.Decision with the engine's legal moves wrapped in referee.v1.Move(batavia=...) and its
seat's view in referee.v1.View(batavia=...). Random seats draw uniformly from the engine's moves
(the same distribution as RandomBot over the converted list, without the conversion cost).

Statistics: under the null hypothesis "greedy wins no more than its fair share", a game with k
players is won (alone or shared) with probability at most 1/k plus ties. We use the largest fair
share, 1/3, for every game: mixing 3, 4 and 5 players makes the true null share about 0.26, so
1/3 is a conservative bound that also absorbs the few shared wins. The exact binomial upper tail
P[X >= wins | n=200, p=1/3] must be below 1e-3.
"""
from __future__ import annotations

import math
from fractions import Fraction

from referee_client.bots import GreedyBataviaBot

from referee.games.batavia import GAME

from .strength import binomial_upper_tail
from .strength import play_game as play_one

GAMES = 200
ALPHA = 1e-3




def play_game(seats: int, greedy_seat: int, seed: int, setup: str) -> list[int]:
    """Play one game; return its winners."""
    return play_one(GAME, GreedyBataviaBot(seed=seed), {"setup": setup}, seats, greedy_seat,
                    seed)



def test_greedy_beats_random_over_200_games():
    wins = 0
    played: dict[int, int] = {3: 0, 4: 0, 5: 0}
    for game in range(GAMES):
        seats = 3 + game % 3  # 3, 4, 5 players in turn
        greedy_seat = (game // 3) % seats  # every seat in rotation
        setup = "face_up" if game % 2 else "face_down"
        winners = play_game(seats, greedy_seat, seed=20_000 + game, setup=setup)
        wins += greedy_seat in winners  # shared wins count as wins
        played[seats] += 1
    fair = sum(n / k for k, n in played.items())
    p_value = binomial_upper_tail(wins, GAMES, Fraction(1, 3))
    print(f"greedy won {wins}/{GAMES} (fair share {fair:.0f}); p = {p_value:.3g}")
    assert p_value < ALPHA, (
        f"greedy won {wins} of {GAMES} games against random bots (fair share about "
        f"{fair:.0f}); P[X >= {wins}] under Binomial({GAMES}, 1/3) = {p_value:.3g} is not "
        f"below {ALPHA}"
    )


def test_binomial_tail_is_exact():
    assert binomial_upper_tail(0, 10, Fraction(1, 3)) == 1.0
    assert math.isclose(binomial_upper_tail(10, 10, Fraction(1, 2)), 1 / 1024)
    assert math.isclose(binomial_upper_tail(2, 2, Fraction(1, 3)), 1 / 9)
