"""The parts of Batavia's View that recur (company counts, a stall tile), built in one place for
the view (view.py) and for the phase decisions that show themselves in it (``pending_view``)."""
from __future__ import annotations

from collections.abc import Iterable

from referee.v1 import batavia_pb2 as pb

from .catalog import N_GOODS


def counts(values: Iterable[int]) -> pb.CompanyCounts:
    return pb.CompanyCounts(count=values)


def stall_tile(t: int) -> pb.Tile:
    """Stall tile ``t`` (company * N_GOODS + good) with its company and good, 1-based."""
    return pb.Tile(company=t // N_GOODS + 1, good=t % N_GOODS + 1)  # type: ignore[arg-type]
