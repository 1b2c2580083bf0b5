"""Bench hook: how many matches per second the runner sustains (random bots, real processes).

>>> from referee_tournament.bench import matches_per_s
>>> matches_per_s(game="batavia", matches=12, concurrency=4)
{'game': 'batavia', 'matches': 12, 'concurrency': 4, 'seconds': ..., 'matches_per_s': ...}

Every match is the full path a tournament takes: CreateMatch, one ``referee-bot random``
process per seat (Python start-up included), the Play streams, GetRecord, the SQLite store.
The referee is started before the clock starts and stopped after it stops; writing the reports
is not timed.
"""
from __future__ import annotations

import asyncio
import secrets
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from .config import parse
from .procs import LocalReferee
from .runner import Runner

DEFAULT_SEATS = {"batavia": 3, "goa": 2, "santa_maria": 2}


def bench_config(game: str, seats: int, matches: int, concurrency: int, referees: int = 1,
                 base_dir: str = ".", move_ms: int = 5000) -> dict[str, Any]:
    bot = ("referee-bot random --address {address} --match {match} "
           "--seed {seed} --log-level warning")
    return {
        "name": f"bench-{game}",
        "game": {"name": game, "seats": seats},
        "entrants": [{"name": f"random-{chr(97 + i)}", "command": bot} for i in range(seats)],
        "format": {"type": "round_robin", "seating": "rotate",
                   "matches_per_pairing": max(1, matches)},
        "time": {"move_ms": move_ms, "match_wall_s": 120},
        "run": {"concurrency": concurrency, "referees": referees},
    }


def matches_per_s(game: str = "batavia", matches: int = 12, concurrency: int = 4,
                  seats: int | None = None, referees: int = 1) -> dict[str, Any]:
    """Play ``matches`` (rounded up to whole seat rotations) of random bots on ``game``
    through the runner; returns matches per second and the details."""
    seats = seats or DEFAULT_SEATS.get(game, 2)
    with tempfile.TemporaryDirectory(prefix="tournament-bench-") as tmp:
        cfg = parse(bench_config(game, seats, matches, concurrency, referees), base_dir=tmp)
        token = secrets.token_hex(16)
        refs = [LocalReferee(Path(tmp) / f"referee-{i}", token) for i in range(referees)]
        for r in refs:
            r.launch()
        try:
            for r in refs:
                r.wait_ready()
            address = ",".join(r.address for r in refs)
            runner = Runner(cfg, out=Path(tmp) / "out", address=address,
                            admin_token=refs[0].admin_token, progress=False,
                            console=Console(quiet=True))
            data = asyncio.run(runner.run())
            seconds = runner.play_seconds
        finally:
            for r in refs:
                r.stop()
    done = data["status"].get("done", 0)
    return {
        "game": game, "seats": seats, "matches": done,
        "failed": data["status"].get("failed", 0), "concurrency": concurrency,
        "referees": referees, "seconds": round(seconds, 3),
        "matches_per_s": round(done / seconds, 4) if seconds > 0 else None,
        "mean_match_s": data.get("mean_match_seconds"),
        "note": "wall-clock of the match loop only (referee start-up and reports excluded); "
                "every bot is a separate Python process",
    }


if __name__ == "__main__":
    import json
    import sys

    args = dict(a.split("=", 1) for a in sys.argv[1:])
    res = matches_per_s(game=args.get("game", "batavia"), matches=int(args.get("matches", 12)),
                        concurrency=int(args.get("concurrency", 4)),
                        referees=int(args.get("referees", 1)))
    print(json.dumps(res, indent=2))
