"""The one place where the search bot knows anything about a particular game.

``PRIORS`` names, per game, the SDK reference bot whose choice is the search's prior (the move
it keeps unless the search finds a clearly better one; ``Settings.prior_weight``).

``SCORE_ESTIMATES`` maps a game's name to a function giving every seat's estimated score in an
unfinished state, read from the public (spectator) view only. A search with a rollout depth cap
(``Settings.rollout_depth``) uses it where a rollout stops early; a game without an entry is
always played out to its end, the result being the only evaluation the contract gives.
"""
from __future__ import annotations

from collections.abc import Callable

from referee_client.bot import Bot
from referee_client.bots import BOTS, GREEDY_FOR_GAME

from referee.sim import Simulation

ScoreEstimate = Callable[[Simulation], list[float]]


def _batavia(sim: Simulation) -> list[float]:
    """Gold on the score track (the counting houses' majorities and seals pay at the end)."""
    view = sim.view(None)
    gold = [0.0] * sim.seat_count
    for player in view.players:  # type: ignore[attr-defined]
        gold[player.seat] = float(player.gold)
    return gold


SCORE_ESTIMATES: dict[str, ScoreEstimate] = {
    "batavia": _batavia,
}


def score_estimate(sim: Simulation) -> list[float] | None:
    """Every seat's estimated score now, or None for a game without an estimate."""
    estimate = SCORE_ESTIMATES.get(sim.game.spec.name)
    return None if estimate is None else estimate(sim)


#: The reference bot (``referee_client.bots.BOTS``) whose move is the prior, per game.
PRIORS: dict[str, str] = dict(GREEDY_FOR_GAME)


def prior_bot(game: str, seed: int) -> Bot | None:
    """A fresh prior bot for one seat of a match of ``game``, or None for a game without one."""
    name = PRIORS.get(game)
    return None if name is None else BOTS[name](seed)
