"""Shared harness of the reference bots' strength tests: the exact binomial tail, and the
Decision proto the server would push for an engine decision (legal moves and view wrapped in the
referee.v1 envelopes under the game's field, as the server's wire convention does)."""
from __future__ import annotations

import math
from fractions import Fraction

from referee.v1 import referee_pb2


def binomial_upper_tail(k: int, n: int, p: Fraction) -> float:
    """P[X >= k] for X ~ Binomial(n, p), exactly (rational arithmetic), as a float."""
    q = 1 - p
    return float(sum(math.comb(n, i) * p**i * q ** (n - i) for i in range(k, n + 1)))


def as_decision(game, state, decision, version: int) -> referee_pb2.Decision:
    """The Decision proto the server pushes to the seat to act."""
    field = game.spec.name
    return referee_pb2.Decision(
        match_id="in-process",
        state_version=version,
        seat=decision.seat,
        kind=decision.kind,
        prompt=decision.prompt,
        view=referee_pb2.View(**{field: game.view(state, decision.seat)}),
        legal_moves=[referee_pb2.Move(**{field: game.move_to_proto(m)}) for m in decision.moves],
    )

