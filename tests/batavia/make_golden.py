"""Regenerate the Batavia golden records (tests/batavia/golden/*.json):
`python -m tests.batavia.make_golden`. Only do this on purpose,
when a rule change is meant to change recorded games; say so in the commit."""
from __future__ import annotations

import json
import random
from pathlib import Path

from referee.core.match import Match
from referee.core.registry import get

HERE = Path(__file__).parent / "golden"

CASES = [
    ("batavia", 3, 101, {"setup": "face_down"}),
    ("batavia", 4, 202, {"setup": "face_up"}),
    ("batavia", 5, 303, {"setup": "face_down", "min_bid": "0", "pirates_repeat": "true"}),
]


def play(game: str, seats: int, seed: int, options: dict) -> dict:
    m = Match.create(get(game), options, seats, seed)
    rnd = random.Random(seed)
    while (d := m.decision()) is not None:
        m.submit(d.seat, rnd.choice(d.moves), m.version)
    return m.record()


def main() -> None:
    for game, seats, seed, options in CASES:
        path = HERE / f"{game}-{seats}p-{seed}.json"
        path.write_text(json.dumps(play(game, seats, seed, options), indent=1) + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
