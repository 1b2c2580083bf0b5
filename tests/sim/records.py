"""Records of random matches, for the tests of starts from a position and of the Simulator."""
from __future__ import annotations

import json
import random
from typing import Any

from referee.core import registry
from referee.core.match import Match


def finish(m: Match, seed: int, note: str = "") -> dict[str, Any]:
    """Play ``m`` to its end, each move uniform at random from ``seed``; its record as a file
    holds it (JSON round trip)."""
    rnd = random.Random(seed)
    while (d := m.decision()) is not None:
        m.submit(d.seat, d.moves[rnd.randrange(len(d.moves))], note=note)
    return json.loads(json.dumps(m.record()))


def played(game: str = "batavia", seats: int = 3, seed: int = 5,
           options: dict | None = None, note: str = "") -> dict[str, Any]:
    """The record of a finished random match of ``game`` on ``seed``."""
    return finish(Match.create(registry.get(game), options or {}, seats, seed), seed, note)
