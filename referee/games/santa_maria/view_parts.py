"""The parts of Santa Maria's View that recur (goods, the content of a cell, a tile's cells),
built in one place for the view (view.py) and for the pending decisions that show themselves in
it (``pending_view`` of the tasks)."""
from __future__ import annotations

import weakref
from collections.abc import Sequence

from referee.v1 import santa_maria_pb2 as pb

from .catalog import GOODS_NAMES, Rules, tile_cells, tile_shape

_TERRAIN: dict[str | None, pb.Terrain] = {"road": pb.ROAD, "farm": pb.FARM, "forest": pb.FOREST, "mountain": pb.MOUNTAIN,
            "city": pb.CITY, "town_hall": pb.TOWN_HALL}
_FX = {"produce": pb.PRODUCE, "exchange": pb.EXCHANGE, "ship": pb.SHIP,
       "conquistador": pb.CONQUISTADOR, "religion": pb.RELIGION}


def goods(g: dict[str, int] | Sequence[int]) -> pb.Goods:
    """A 5-tuple (resources) or 7-tuple (goods) or a sheet dict as Goods."""
    if isinstance(g, dict):
        return pb.Goods(**g)
    return pb.Goods(**{GOODS_NAMES[i]: x for i, x in enumerate(g) if x})


_content_cache: weakref.WeakKeyDictionary[Rules, dict[int, pb.CellContent]] = weakref.WeakKeyDictionary()


def content(rules: Rules, kind: int) -> pb.CellContent:
    cache = _content_cache.get(rules)
    if cache is None:
        cache = _content_cache[rules] = {}
    c = cache.get(kind)
    if c is None:
        k = rules.cells[kind]
        spec = k.spec or {}
        c = pb.CellContent(
            terrain=_TERRAIN.get(spec.get("terrain"), pb.TERRAIN_UNSPECIFIED),
            building=k.building,
            colonists=k.colonists,
            end_points=k.end_points,
        )
        for e in k.effects:
            eff = rules.effects[e]
            spec_e = eff.spec
            msg = c.effects.add(kind=_FX[spec_e["kind"]])
            if "gain" in spec_e:
                msg.gain.CopyFrom(goods(spec_e["gain"]))
            for o in spec_e.get("options", ()):
                msg.options.add(pay=goods(o["pay"]), gain=goods(o["gain"]))
        cache[kind] = c
    return c


def tile_cells_view(rules: Rules, tile: int) -> list[pb.TileCell]:
    shape = tile_shape(rules, tile)
    return [pb.TileCell(dr=dr, dc=dc, content=content(rules, k))
            for (dr, dc), k in zip(shape, tile_cells(rules, tile))]
