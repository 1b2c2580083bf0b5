"""Clocks people know, by name (issue 33): "5+3" is a bank of 5 minutes and 3 seconds added
after each of the seat's own moves (Fischer), as a ``TimePolicy``. The referee's lobby takes
the same names (``OpenSeekRequest.preset``); this is the SDK's copy, for command lines that
create matches (``create-match``, ``play``), held to the referee's by
``tests/lobby/test_presets.py``.
"""
from __future__ import annotations

import re

from referee.v1 import referee_pb2

#: name -> (bank minutes, increment seconds)
PRESETS: dict[str, tuple[int, int]] = {
    "bullet": (1, 0), "blitz": (5, 3), "rapid": (15, 10), "classical": (30, 20),
}
#: network grace of a preset's clock (a browser's round trip)
PRESET_GRACE_MS = 1_000
_PAIR = re.compile(r"([0-9]{1,3})\+([0-9]{1,3})")


def preset_policy(name: str) -> referee_pb2.TimePolicy:
    """The time policy of a preset: ``bullet``, ``blitz``, ``rapid``, ``classical``, ``bot``
    (2 s a move and a 10 s bank) or ``M+S`` (M minutes of bank, 1 to 180, and an increment of S
    seconds, 0 to 120). ValueError for anything else."""
    if name == "bot":
        return referee_pb2.TimePolicy(move_ms=2_000, bank_ms=10_000, grace_ms=500,
                                      on_expiry=referee_pb2.RANDOM_LEGAL)
    pair = PRESETS.get(name)
    if pair is None and (m := _PAIR.fullmatch(name)):
        pair = (int(m.group(1)), int(m.group(2)))
    if pair is None or not 1 <= pair[0] <= 180 or pair[1] > 120:
        raise ValueError(f"unknown clock {name!r}: {', '.join([*PRESETS, 'bot'])}, or M+S "
                         "(M minutes of bank, 1 to 180, S seconds added per move, 0 to 120)")
    return referee_pb2.TimePolicy(bank_ms=pair[0] * 60_000, increment_ms=pair[1] * 1_000,
                                  grace_ms=PRESET_GRACE_MS, on_expiry=referee_pb2.RANDOM_LEGAL)


__all__ = ["PRESETS", "preset_policy"]
