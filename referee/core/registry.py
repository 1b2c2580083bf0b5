"""The game registry. The server knows no game by name: it asks here. A game is a package under
``referee.games`` exposing ``GAME`` (a :class:`~referee.core.contract.Game`)."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .contract import Game

_extra: dict[str, Game] = {}


def register(game: Game) -> None:
    """Register a game that does not live under referee.games (tests, plugins)."""
    _extra[game.spec.name] = game


@lru_cache(maxsize=1)
def _discovered() -> dict[str, Game]:
    import referee.games as pkg

    found: dict[str, Game] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        module = importlib.import_module(f"referee.games.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            found[game.spec.name] = game
    return found


def games() -> dict[str, Game]:
    return {**_discovered(), **_extra}


def get(name: str) -> Game:
    try:
        return games()[name]
    except KeyError:
        raise KeyError(
            f"unknown game {name!r}; this referee hosts {', '.join(sorted(games()))}"
        ) from None
