"""A referee runs for weeks and bots send whatever they like: no cache in a game may grow without
bound. Move constructors are interned for speed, and ``move_from_proto`` builds moves from what
a client sends, so an unbounded intern cache is a memory leak any bot can drive (Santa Maria's
``expand`` alone admits 10^12 distinct made-up moves). Every functools cache in every game
package must have a maxsize, except those whose keys are finite by construction (listed here
with the reason)."""
from __future__ import annotations

import importlib
import pkgutil
import random

import referee.games as games_pkg
from referee.core import registry

#: module.function -> why its key space is finite
FINITE_BY_CONSTRUCTION = {
    "referee.games.santa_maria.geometry.orientations": "keyed by the tile shapes of the sheet",
}


def _caches():
    for info in pkgutil.walk_packages(games_pkg.__path__, prefix="referee.games."):
        module = importlib.import_module(info.name)
        for attr, obj in vars(module).items():
            if callable(getattr(obj, "cache_info", None)) and getattr(
                    obj, "__module__", None) == module.__name__:
                yield f"{info.name}.{attr}", obj


def test_every_game_cache_is_bounded():
    found = dict(_caches())
    assert found, "no caches found: the walk is broken"
    unbounded = [name for name, fn in found.items()
                 if fn.cache_info().maxsize is None and name not in FINITE_BY_CONSTRUCTION]
    assert not unbounded, f"unbounded caches: {unbounded}"


def test_a_flood_of_made_up_moves_leaves_the_intern_caches_bounded():
    from referee.games.santa_maria import moves as sm_moves
    from referee.v1 import santa_maria_pb2 as pb

    game = registry.get("santa_maria")
    rnd = random.Random(5)
    for _ in range(20_000):
        msg = pb.Move(expand=pb.Expand(slot=rnd.randrange(100), pay=pb.Goods(
            wood=rnd.randrange(100), wheat=rnd.randrange(100), sugar=rnd.randrange(100))))
        game.move_from_proto(msg)
    info = sm_moves.expand.cache_info()
    assert info.maxsize is not None and info.currsize <= info.maxsize
