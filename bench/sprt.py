"""The search bot against greedy at a fixed second of CPU a move, SPRT at every seat count of
every game (``make bench-sprt``; long: hours, never part of ``make test`` or ``make bench``).

For each game and seat count, ``referee_research.duel`` plays the bot (``--profile``, default
the bot's) in one seat and the game's greedy bot in the others, on duplicate seeds with the
seats rotated, each search given ``--seconds`` of CPU time (``Budget(cpu=True)``), until Wald's
SPRT decides between H0 (an equal player's share of first place, 1/seats) and H1 (that plus
``--delta``) or ``--matches`` are played. Progress goes to stdout after every match; the JSON
(``--json``, rewritten after every match so a stopped run keeps its figures) lists each duel's
report: win rate with its 95% Wilson interval, the SPRT's log-likelihood ratio and verdict,
seconds and iterations a searched move, and every match played (``played``).

Each of the search's flags (``--horizon``, ``--rollout-depth``, ``--prior-margin``..., as the
bot's and ``referee-research duel``'s) changes one knob of the profile: an experiment, played as
tables of their own in the same JSON (each report names its whole ``settings``).

``--resume`` reads that JSON and goes on where it stopped: a table the SPRT decided is kept as it
is, an undecided one counts its matches again and plays only the rest of its schedule, so the
hours a complete run needs may be spread over several sittings (``commits`` lists the checkouts
that played each table's matches: a search made faster between two sittings plays the later
matches with more iterations a move; ``machines`` the CPUs they were played on, as a second of
CPU buys fewer iterations on a slower one)."""
from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

from referee_research.duel import DuelReport, duel, effective_settings, sprt_for
from referee_research.ismcts_bot import add_search_flags, search_knobs

from bench import machine
from referee.core import registry


def tables(games: list[str]) -> list[tuple[str, int]]:
    """Every (game, seat count) a duel can be played at: two seats or more."""
    out: list[tuple[str, int]] = []
    for name in games:
        spec = registry.get(name).spec
        out.extend((name, seats) for seats in range(max(2, spec.min_seats), spec.max_seats + 1))
    return out


def checkout() -> str:
    """The commit this run plays with ("unknown" outside a git checkout)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, check=True, cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def same_duel(old: dict[str, Any], name: str, seats: int, settings: dict[str, Any],
              p1: float, options: dict[str, str] | None = None) -> bool:
    """Whether a stored report is of this table's duel: same game, options, seats, search
    settings (``duel.effective_settings``: the profile, the budget and every knob; a knob a
    report older than it does not name is taken as the same) and H1. A report of other terms
    is never resumed: its table is played again, beside it."""
    stored = old.get("settings") or {}
    return (old.get("game") == name and old.get("seats") == seats
            and (old.get("options") or {}) == (options or {})
            and all(stored.get(k) == v for k, v in settings.items()
                    if k in stored or k in ("profile", "seconds", "cpu"))
            and abs(((old.get("sprt") or {}).get("p1") or -1) - p1) < 1e-3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sprt", description=__doc__)
    parser.add_argument("--games", nargs="*", default=sorted(registry.games()),
                        help="games (default: every game)")
    parser.add_argument("--seats", type=int, nargs="*",
                        help="only these seat counts (default: every one)")
    add_search_flags(parser)  # --profile, and a flag a knob (a table of its own)
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds a move")
    parser.add_argument("--matches", type=int, default=400, help="at most, per table")
    parser.add_argument("--delta", type=float, default=0.15,
                        help="H1's share of first place above an equal player's")
    parser.add_argument("--jobs", type=int, default=1, help="processes per duel")
    parser.add_argument("--json", default="sprt.json", help="where the reports go")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a game option for every table (repeatable; e.g. edition=2004 "
                             "for Goa's first edition: its own tables in the same JSON)")
    parser.add_argument("--resume", action="store_true",
                        help="go on from the reports already in --json (see above)")
    args = parser.parse_args(argv)
    knobs = search_knobs(args)
    try:
        settings = effective_settings(args.seconds, args.profile, cpu=True, **knobs)
    except ValueError as exc:
        parser.error(f"bad settings: {exc}")
    options: dict[str, str] = {}
    for item in args.option:
        key, eq, value = item.partition("=")
        if not eq or not key:
            parser.error(f"argument --option: expected KEY=VALUE, got {item!r}")
        options[key] = value
    path = Path(args.json)
    earlier: list[dict[str, Any]] = []
    if args.resume and path.exists():
        earlier = json.loads(path.read_text(encoding="utf-8"))
    commit = checkout()
    here = machine.label()
    done: list[dict[str, Any]] = []
    for name, seats in tables(args.games):
        if args.seats and seats not in args.seats:
            continue
        sprt = sprt_for(seats, args.delta)
        old = next((r for r in earlier
                    if same_duel(r, name, seats, settings, sprt.p1, options)), None)
        if old is not None:
            earlier.remove(old)
        commits = list((old or {}).get("commits", []))
        machines = list((old or {}).get("machines", []))
        label = name + "".join(f" {k}={v}" for k, v in sorted(options.items())) + "".join(
            f" --{k.replace('_', '-')} {v}" for k, v in sorted(knobs.items()))
        if old is not None and (old.get("sprt") or {}).get("decision"):
            print(f"{label} {seats} seats: decided earlier ({old['sprt']['decision']}), kept",
                  flush=True)
            done.append(old)
            continue
        resume = (old or {}).get("played", [])
        if resume:
            print(f"{label} {seats} seats: resuming after {len(resume)} matches", flush=True)

        def tick(report: DuelReport, commits: list[str] = commits,
                 machines: list[str] = machines) -> None:
            print(report.line(), flush=True)
            if commit not in commits:
                commits.append(commit)
            if here not in machines:
                machines.append(here)
            path.write_text(json.dumps([*done, {**report.as_dict(), "commits": commits,
                                                "machines": machines},
                                        *earlier], indent=1) + "\n", encoding="utf-8")

        report = duel(name, seats, args.matches, None, args.seconds, jobs=args.jobs,
                      progress=tick, sprt=sprt, profile=args.profile, cpu=True, resume=resume,
                      options=options, **knobs)
        done.append({**report.as_dict(), "commits": commits, "machines": machines})
        path.write_text(json.dumps([*done, *earlier], indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
