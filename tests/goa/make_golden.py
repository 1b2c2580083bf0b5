"""Regenerate Goa's golden records: `python -m tests.goa.make_golden`. Only do this on purpose,
when a rule or sheet change is meant to change recorded games; say so in the commit."""
from __future__ import annotations

import json
import random
from pathlib import Path

from referee.core.match import Match
from referee.core.registry import get

HERE = Path(__file__).parent / "golden"

CASES = [
    (2, 101, {}),
    (3, 202, {"edition": "2004"}),
    (4, 303, {"quick_starter": "true", "bonanza": "true"}),
]


def play(seats: int, seed: int, options: dict) -> dict:
    m = Match.create(get("goa"), options, seats, seed)
    rnd = random.Random(seed)
    while (d := m.decision()) is not None:
        m.submit(d.seat, rnd.choice(d.moves), m.version)
    return m.record()


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for seats, seed, options in CASES:
        path = HERE / f"goa-{seats}p-{seed}.json"
        path.write_text(json.dumps(play(seats, seed, options), indent=1) + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
