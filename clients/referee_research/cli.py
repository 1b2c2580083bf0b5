"""``referee-research``: the search bot's commands (docs/research/search-bot.md).

    referee-research duel GAME --seats N --matches M --iterations K [--jobs J] [--json FILE]
    REFEREE_TOKEN=T referee-research ismcts --match M [--seconds 0.2 | --iterations K]

``duel`` plays the ISMCTS bot against the game's greedy bot in process (no referee), on
duplicate seeds with the seats rotated, and prints its win rate with a 95% Wilson interval;
``ismcts`` plays one seat of a match through a referee (as ``python -m
referee_research.ismcts_bot``).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import duel as duel_mod
from . import ismcts_bot
from .ismcts import PROFILES
from .ismcts_bot import add_search_flags, search_knobs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee-research",
        description="The ISMCTS search bot: duels against the greedy bots, and play through a "
                    "referee.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser(
        "duel", help="ISMCTS against the game's greedy bot, in process, duplicate seeds",
        description="Play the ISMCTS bot against the greedy reference bot of GAME in every "
                    "other seat, each seed once with the bot in each seat, and report its "
                    "share of wins with a 95%% Wilson interval.")
    p.add_argument("game", help="the game (batavia, goa, santa_maria)")
    p.add_argument("--seats", type=int, required=True, help="seats per match")
    p.add_argument("--matches", type=int, default=200,
                   help="matches to play, rounded up to whole seeds (default 200)")
    p.add_argument("--iterations", type=int,
                   help="search iterations per move (default 20 unless --seconds)")
    p.add_argument("--seconds", type=float,
                   help="thinking time per move (with --iterations: whichever ends first)")
    p.add_argument("--cpu", action="store_true",
                   help="--seconds of CPU time (time.process_time), not wall time: a budget "
                        "the machine's load does not shorten")
    add_search_flags(p)
    p.add_argument("--sprt", action="store_true",
                   help="stop as soon as Wald's SPRT decides between H0 (an equal player's "
                        "win rate, 1/seats) and H1 (that plus --sprt-delta)")
    p.add_argument("--sprt-delta", type=float, default=0.15,
                   help="H1's win rate above an equal player's (default 0.15)")
    p.add_argument("--sprt-alpha", type=float, default=0.05,
                   help="SPRT: chance of accepting H1 when H0 holds (default 0.05)")
    p.add_argument("--sprt-beta", type=float, default=0.05,
                   help="SPRT: chance of accepting H0 when H1 holds (default 0.05)")
    p.add_argument("--first-seed", type=int, default=1, help="the first seed (default 1)")
    p.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    p.add_argument("--json", metavar="FILE",
                   help="also write the report as JSON (rewritten after every match)")
    p.set_defaults(run=_duel)
    p = sub.add_parser("ismcts", help="play one seat of a match through a referee",
                       description=ismcts_bot.build_parser().description)
    ismcts_bot.add_bot_flags(p)
    p.set_defaults(run=ismcts_bot.run)
    return parser


def _duel(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from referee.core import registry

    if args.game not in registry.games():
        print(f"unknown game {args.game!r}; games: {', '.join(sorted(registry.games()))}",
              file=sys.stderr)
        return 2
    spec = registry.get(args.game).spec
    if not spec.min_seats <= args.seats <= spec.max_seats or args.seats < 2:
        print(f"{args.game} duels take {max(2, spec.min_seats)} to {spec.max_seats} seats",
              file=sys.stderr)
        return 2
    if args.iterations is None and args.seconds is None:
        args.iterations = 20
    if (args.matches < 1 or args.jobs < 1 or (args.iterations is not None and args.iterations < 1)
            or (args.seconds is not None and args.seconds <= 0)):
        print("--matches, --iterations and --jobs must be at least 1, --seconds positive",
              file=sys.stderr)
        return 2
    knobs: dict[str, Any] = search_knobs(args)
    try:
        replace(PROFILES[args.profile], **knobs)  # checks the knobs
        sprt = duel_mod.sprt_for(args.seats, args.sprt_delta, args.sprt_alpha,
                                 args.sprt_beta) if args.sprt else None
    except ValueError as exc:
        print(f"bad settings: {exc}", file=sys.stderr)
        return 2
    total = -(-args.matches // args.seats) * args.seats
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeElapsedColumn()) as progress:
        task = progress.add_task(f"{args.game} x{args.seats}", total=total, rate="")

        def tick(report: duel_mod.DuelReport) -> None:
            lo, hi = report.interval
            progress.update(task, completed=report.matches,
                            rate=f"wins {report.win_rate:.1%} [{lo:.1%}, {hi:.1%}]")
            if args.json:  # a long run stopped early still leaves its figures
                _write(args.json, report)

        report = duel_mod.duel(args.game, args.seats, args.matches, args.iterations,
                               args.seconds, jobs=args.jobs, first_seed=args.first_seed,
                               progress=tick, sprt=sprt, profile=args.profile, cpu=args.cpu,
                               **knobs)
    print(report.line())
    if args.json:
        _write(args.json, report)
    return 0


def _write(path: str, report: duel_mod.DuelReport) -> None:
    Path(path).write_text(json.dumps(report.as_dict(), indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.usage_error = parser.error
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
