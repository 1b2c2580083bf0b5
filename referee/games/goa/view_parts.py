"""The parts of Goa's View that recur (a tile), built in one place for the view (view.py) and
for the phase decisions that show themselves in it (``pending_view``).

protoc's stubs type enum fields as their enum class; the enum numbers written as ints carry
``type: ignore[arg-type]``.
"""
from __future__ import annotations

from referee.v1 import goa_pb2 as pb

from .catalog import Rules


def tile_info(rules: Rules, t: int) -> pb.TileInfo:
    tl = rules.tiles[t]
    return pb.TileInfo(id=t, name=tl.name, type=tl.type + 1, phase=tl.phase,  # type: ignore[arg-type]
                       spice=tl.spice + 1, fields=tl.fields, n=tl.n, vp=tl.vp)  # type: ignore[arg-type]
