"""The engine's speed (the project bench measures engine.goa.decisions_per_s with random
playouts: decision() with every legal move, then apply()). Measured in CPU time so a busy machine
does not fail it; the target is 25,000/s on one core, the guard here is looser."""
from __future__ import annotations

import random
import time

from tests.goa.helpers import GAME, new_game


def test_random_playouts_are_fast():
    rnd = random.Random(5)
    decisions = 0
    start = time.process_time()
    games = 0
    while time.process_time() - start < 1.0:
        state = new_game(2 + games % 3, games)
        while (d := GAME.decision(state)) is not None:
            GAME.apply(state, d.seat, d.moves[rnd.randrange(len(d.moves))])
            decisions += 1
        games += 1
    rate = decisions / (time.process_time() - start)
    assert rate > 15_000, f"{rate:.0f} decisions/s"
