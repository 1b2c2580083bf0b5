"""The search bot against greedy at a fixed second of CPU a move, SPRT at every seat count of
every game (``make bench-sprt``; long: hours, never part of ``make test`` or ``make bench``).

For each game and seat count, ``referee_research.duel`` plays the bot (``--profile``, default
the bot's) in one seat and the game's greedy bot in the others, on duplicate seeds with the
seats rotated, each search given ``--seconds`` of CPU time (``Budget(cpu=True)``), until Wald's
SPRT decides between H0 (an equal player's share of first place, 1/seats) and H1 (that plus
``--delta``) or ``--matches`` are played. Progress goes to stdout after every match; the JSON
(``--json``, rewritten after every match so a stopped run keeps its figures) lists each duel's
report: win rate with its 95% Wilson interval, the SPRT's log-likelihood ratio and verdict,
seconds and iterations a searched move."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from referee_research.duel import DuelReport, duel, sprt_for
from referee_research.ismcts import PROFILES
from referee_research.ismcts_bot import DEFAULT_PROFILE

from referee.core import registry


def tables(games: list[str]) -> list[tuple[str, int]]:
    """Every (game, seat count) a duel can be played at: two seats or more."""
    out: list[tuple[str, int]] = []
    for name in games:
        spec = registry.get(name).spec
        out.extend((name, seats) for seats in range(max(2, spec.min_seats), spec.max_seats + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sprt", description=__doc__)
    parser.add_argument("--games", nargs="*", default=sorted(registry.games()),
                        help="games (default: every game)")
    parser.add_argument("--seats", type=int, nargs="*",
                        help="only these seat counts (default: every one)")
    parser.add_argument("--profile", choices=sorted(PROFILES), default=DEFAULT_PROFILE)
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds a move")
    parser.add_argument("--matches", type=int, default=400, help="at most, per table")
    parser.add_argument("--delta", type=float, default=0.15,
                        help="H1's share of first place above an equal player's")
    parser.add_argument("--jobs", type=int, default=1, help="processes per duel")
    parser.add_argument("--json", default="sprt.json", help="where the reports go")
    args = parser.parse_args(argv)
    done: list[dict[str, Any]] = []
    path = Path(args.json)
    for name, seats in tables(args.games):
        if args.seats and seats not in args.seats:
            continue

        def tick(report: DuelReport) -> None:
            print(report.line(), flush=True)
            path.write_text(json.dumps([*done, report.as_dict()], indent=1) + "\n",
                            encoding="utf-8")

        report = duel(name, seats, args.matches, None, args.seconds, jobs=args.jobs,
                      progress=tick, sprt=sprt_for(seats, args.delta), profile=args.profile,
                      cpu=True)
        done.append(report.as_dict())
        path.write_text(json.dumps(done, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
