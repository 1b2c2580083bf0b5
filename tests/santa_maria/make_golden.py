"""Writes the Santa Maria golden records (tests/santa_maria/golden/*.json).

Run: .venv/bin/python -m tests.santa_maria.make_golden — only when a rule change is meant; say why
in the commit. Seats play a fixed pseudo-random policy that rarely retreats, so the records reach
far into the rules (tiles, dice, ships, monks, Scholars)."""
from __future__ import annotations

import json
import random
from pathlib import Path

from referee.core.match import Match
from referee.core.registry import get
from referee.games.santa_maria import moves as mv

OUT = Path(__file__).parent / "golden"
CASES = [
    ("santa_maria-1p-solo-11.json", 1, {}, 11),
    ("santa_maria-2p-standard-22.json", 2, {}, 22),
    ("santa_maria-3p-advanced-33.json", 3, {"setup": "advanced"}, 33),
    ("santa_maria-4p-shared-pick-44.json", 4, {"shared_blue_dice": True, "colony_boards": "pick"}, 44),
]


def play(n: int, options: dict, seed: int) -> dict:
    game = get("santa_maria")
    m = Match.create(game, options, n, seed)
    rnd = random.Random(seed)
    while (d := m.decision()) is not None:
        weights = [0.03 if type(x) is mv.Retreat else 0.3 if type(x) in (mv.Sell, mv.Buy) else 1.0
                   for x in d.moves]
        m.submit(d.seat, rnd.choices(d.moves, weights)[0], m.version)
    return m.record()


if __name__ == "__main__":
    for name, n, options, seed in CASES:
        (OUT / name).write_text(json.dumps(play(n, options, seed), indent=0) + "\n")
        print("wrote", name)
