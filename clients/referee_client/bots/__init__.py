"""Reference bots. ``BOTS`` maps the command-line name to a factory taking ``seed``.

Game-specific bots are imported on first use, so a bot for one game never slows or breaks
another's command."""
from __future__ import annotations

import importlib
from collections.abc import Callable

from ..bot import Bot
from .greedy_batavia import GreedyBataviaBot
from .random_bot import RandomBot


def _lazy(module: str, cls: str) -> Callable[[int | None], Bot]:
    def make(seed: int | None) -> Bot:
        return getattr(importlib.import_module(f"{__name__}.{module}"), cls)(seed)

    return make


BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": lambda seed: RandomBot(seed),
    "greedy-batavia": lambda seed: GreedyBataviaBot(seed),
    "greedy-goa": _lazy("greedy_goa", "GreedyGoaBot"),
    "greedy-santa-maria": _lazy("greedy_santa_maria", "GreedySantaMariaBot"),
}

#: The greedy reference bot of each game (used by `make run`'s tournament).
GREEDY_FOR_GAME = {
    "batavia": "greedy-batavia",
    "goa": "greedy-goa",
    "santa_maria": "greedy-santa-maria",
}

__all__ = ["BOTS", "GREEDY_FOR_GAME", "GreedyBataviaBot", "RandomBot"]
