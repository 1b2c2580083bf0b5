"""The baseline: a move drawn uniformly from the legal moves. Works for every game."""
from __future__ import annotations

import random

from referee.v1 import referee_pb2

from ..bot import Bot


class RandomBot(Bot):
    """Plays a uniformly random legal move. ``seed`` makes its choices reproducible (given the
    same sequence of decisions)."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)

    def choose(self, decision: referee_pb2.Decision) -> referee_pb2.Move:
        return decision.legal_moves[self.rng.randrange(len(decision.legal_moves))]
