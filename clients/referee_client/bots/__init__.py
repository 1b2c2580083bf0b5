"""Reference bots. ``BOTS`` maps the command-line name to a factory taking ``seed``."""
from __future__ import annotations

from collections.abc import Callable

from ..bot import Bot
from .greedy_batavia import GreedyBataviaBot
from .random_bot import RandomBot

BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": lambda seed: RandomBot(seed),
    "greedy-batavia": lambda seed: GreedyBataviaBot(seed),
}

__all__ = ["BOTS", "GreedyBataviaBot", "RandomBot"]
