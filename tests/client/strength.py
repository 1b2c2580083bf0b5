"""Shared harness of the reference bots' strength tests: the exact binomial tail, and the
Decision proto the server would push for an engine decision (legal moves and view wrapped in the
referee.v1 envelopes under the game's field, as the server's wire convention does)."""
from __future__ import annotations

import math
import random
import time
from fractions import Fraction

from referee.core.rng import Streams
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



def play_game(game, bot, options: dict, seats: int, greedy_seat: int, seed: int,
              timings: list[float] | None = None) -> list[int]:
    """One in-process game: ``bot`` (a referee_client Bot) at ``greedy_seat``, uniform random
    legal moves at every other seat. Returns the winners; ``timings`` collects the bot's
    choose() times (seconds)."""
    parsed = game.spec.parse_options(options)
    state = game.setup(parsed, seats, Streams(seed), game.default_components(parsed))
    rng = random.Random(seed)
    version = 0
    while (decision := game.decision(state)) is not None:
        if decision.seat == greedy_seat:
            proto = as_decision(game, state, decision, version)
            start = time.perf_counter()
            chosen = bot.choose(proto)
            if timings is not None:
                timings.append(time.perf_counter() - start)
            index = next(i for i, m in enumerate(proto.legal_moves) if m == chosen)
            move = decision.moves[index]
        else:
            move = decision.moves[rng.randrange(len(decision.moves))]
        game.apply(state, decision.seat, move)
        version += 1
        assert version < 20_000, "the game does not end"
    result = game.result(state)
    assert result is not None
    return result.winners
