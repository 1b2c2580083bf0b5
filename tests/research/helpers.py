"""Positions of seeded random games, for the research tests."""
from __future__ import annotations

import random
from collections.abc import Iterator

from referee.core import registry
from referee.sim.model import Simulation
from tests.contract import hooks


def positions(name: str, count: int, seed: int, every: int = 7) -> Iterator[Simulation]:
    """``count`` positions (every ``every``-th decision, and each game's end) of random games of
    ``name``, cycling its seat counts and its tests' option sets; do not change them."""
    spec = registry.get(name).spec
    option_sets = getattr(hooks.for_game(name), "OPTION_SETS", [{}])
    rnd = random.Random(seed)
    found = 0
    k = 0
    while True:
        seats = spec.min_seats + k % (spec.max_seats - spec.min_seats + 1)
        sim = Simulation.new(name, seats, seed + k, option_sets[k % len(option_sets)])
        step = 0
        while True:
            d = sim.decision()
            if step % every == 0 or d is None:
                yield sim
                found += 1
                if found == count:
                    return
            if d is None:
                break
            sim.apply(d.moves[rnd.randrange(len(d.moves))])
            step += 1
        k += 1
