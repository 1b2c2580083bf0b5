"""``referee-tournament``: run, resume and report bot tournaments on the referee.

    referee-tournament run examples/tournaments/batavia.toml
    referee-tournament run FILE --address 10.0.0.5:50051 --admin-token-file F  # a running one
    referee-tournament run FILE --backend ray --ray-address auto             # a Ray cluster
    referee-tournament resume runs/batavia-demo         # or the same `run FILE` again
    referee-tournament report runs/batavia-demo         # rebuild reports, print leaderboard
    referee-tournament check FILE                       # validate, show the schedule
    referee-tournament demo                             # a quick tournament per hosted game
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from referee_client.tokens import add_token_flag, token_arg
from rich.console import Console

from .aio import run_async as _run_async
from .config import ConfigError, TournamentConfig, load, parse, with_overrides

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

EPILOG = """\
tournament file (TOML), minimal:

  name = "batavia-demo"
  [game]
  name = "batavia"
  seats = 3
  [[entrants]]
  name = "random"
  command = "referee-bot random --address {address} --match {match} --seed {seed}"
  [[entrants]]
  name = "greedy"
  command = "referee-bot greedy-batavia --address {address} --match {match}"
  [format]
  type = "round_robin"   # or "gauntlet" (challenger = NAME) or "pairs"
  rounds = 2             # seeds per table; every seating is played on each seed
  # events: type = "swiss" (rounds), "knockout" (advance, best_of, seeding) or "arena"
  # (duration_s); see examples/tournaments/{swiss,knockout,arena}.toml

placeholders in commands: {address} {match} {seat} {seed} {name} {game} {python}; a bot
finds its seat token in $REFEREE_TOKEN ({token} puts it on a command line, which is public)
results go to runs/<name>/ in the current directory unless `output` (relative to the file)
or --out says otherwise.
exit status: 0 every match played (or skipped by the early stop) and every entrant played;
1 some match failed, some entrant crashed in every match it played (it crashed, was given up
on - exited early or never joined - or never made a move of its own, in each of its seats; it
is marked "crashed in every match"), or the run could not go on; 2 bad usage or tournament
file; 130 interrupted (resumable). check: 0 all good, 1 an entrant failed its smoke start,
2 bad file, game or option.
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="referee-tournament",
        description="Run bot tournaments on the board-game referee: any-language bots, seat "
                    "rotation with duplicate seeds, OpenSkill ratings, resumable results.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common_run(sp: argparse.ArgumentParser) -> None:
        g = sp.add_argument_group("where to play")
        g.add_argument("--address", help="use this running referee (host:port; several, "
                       "comma-separated, are used round-robin) instead of starting one")
        add_token_flag(g, "--admin-token", "REFEREE_ADMIN_TOKEN",
                       "the running referee's admin token")
        g.add_argument("--referees", type=int, metavar="N",
                       help="start N local referee processes (overrides [run] referees)")
        g.add_argument("--concurrency", "-j", type=int, metavar="N",
                       help="matches played at once (overrides [run] concurrency)")
        g.add_argument("--backend", choices=("local", "ray"),
                       help="local processes (default) or one Ray task per match")
        g.add_argument("--ray-address", metavar="ADDR",
                       help="Ray cluster to join (e.g. 'auto'); default: a local Ray instance")
        o = sp.add_argument_group("output")
        o.add_argument("--out", metavar="DIR", help="results folder (default: the file's "
                       "`output`, else runs/<name> in the current directory)")
        o.add_argument("--no-progress", action="store_true", help="no live progress bar")
        o.add_argument("--log-json", action="store_true",
                       help="print the runner's structured log (JSON lines, also in "
                       "<out>/runner.log) on stderr instead of the progress bar")
        o.add_argument("--retry-failed", action="store_true",
                       help="play again the matches that failed (wall-clock limit, errors)")
        o.add_argument("--max-matches", type=int, metavar="N",
                       help="play at most N more matches this time (resume later)")

    r = sub.add_parser("run", help="run a tournament file (resumes if its results exist)",
                       description="Run the tournament described by FILE. If its results "
                       "folder already holds a run of the same schedule, resume it: finished "
                       "matches are kept, interrupted ones are replayed.",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    r.add_argument("file", metavar="FILE", help="the tournament TOML file")
    common_run(r)

    s = sub.add_parser("resume", help="resume an interrupted tournament (FILE or results DIR)",
                       description="Resume from a tournament FILE or from its results DIR "
                       "(the file's text is kept in DIR/tournament.sqlite).")
    s.add_argument("target", metavar="FILE|DIR")
    common_run(s)

    rep = sub.add_parser("report", help="rebuild the reports and print the leaderboard",
                         description="Recompute ratings and rewrite results.json, matches.csv, "
                         "leaderboard.txt, index.html and plots from a results folder.")
    rep.add_argument("target", metavar="FILE|DIR")
    rep.add_argument("--out", metavar="DIR", help="results folder (with FILE)")
    rep.add_argument("--sensitivity", type=int, default=0, metavar="N",
                     help="then play the event again under N copies of the game's component "
                     "sheet with its provisional values varied within what the sheet documents "
                     "(`referee sheet vary`), and a control run under the unchanged sheet, and "
                     "say which places change and how often (DIR/sensitivity.json; the runs in "
                     "DIR/sensitivity/, resumable)")
    rep.add_argument("--sensitivity-seed", type=int, default=1, metavar="S",
                     help="the seed of the sheets' draw (default 1)")

    lad = sub.add_parser("ladder", help="match the file's bots continuously (rating-aware), "
                         "keeping their ratings across runs",
                         description="Run FILE as a ladder: keep [run] concurrency matches "
                         "going among its entrants, pairing the least-played with its "
                         "neighbours in rating; OpenSkill ratings live in the results folder "
                         "and the leaderboard (leaderboard.txt, ladder.json) is rewritten after "
                         "every match. Run it again to go on.")
    lad.add_argument("file", metavar="FILE")
    common_run(lad)
    lad.add_argument("--duration", type=float, metavar="S",
                     help="stop starting matches after S seconds (the last ones finish)")

    c = sub.add_parser("check", help="validate a tournament file against the referee's games "
                       "and smoke-start every entrant",
                       description="Show the schedule of FILE, check its game, seats and "
                       "options against the games the referee hosts (a private referee, or "
                       "--address), then start every entrant the way a run would (per match, "
                       "persistent or sandboxed) for one seat of a throwaway match and check "
                       "that it joins. Exit status: 0 all good, 1 an entrant failed to start or "
                       "join (its error line is shown), 2 a bad file, game, seat count or "
                       "option.")
    c.add_argument("file", metavar="FILE")
    cg = c.add_argument_group("where to check")
    cg.add_argument("--address", help="use this running referee (host:port) instead of "
                    "starting a private one")
    add_token_flag(cg, "--admin-token", "REFEREE_ADMIN_TOKEN", "the running referee's admin token")
    c.add_argument("--join-timeout", type=float, default=20.0, metavar="S",
                   help="an entrant that has neither moved nor joined after S seconds fails "
                   "(default 20)")
    c.add_argument("--no-smoke", action="store_true",
                   help="only check the file against the referee's games; start no entrant")
    c.add_argument("--no-progress", action="store_true", help="no progress output")

    from .league.cli import add_parser as add_league_parser

    add_league_parser(sub)
    d = sub.add_parser("demo", help="a quick tournament of the reference bots on every "
                       "game the referee hosts (well under a minute)")
    d.add_argument("--out", metavar="DIR", default="runs/tournament-demo",
                   help="results root; each demo writes DIR/<UTC time>/<game>/ "
                   "(default runs/tournament-demo)")
    d.add_argument("--games", metavar="A,B", help="only these games")
    d.add_argument("--no-progress", action="store_true", help="no live progress bars")
    for name, sp in sub.choices.items():  # errors found after parsing show their own usage
        sp.set_defaults(usage_error=sp.error, command_parser=name)
    return p


#: (argument, its option strings, lowest value allowed, what is expected) checked after parsing
_POSITIVE = (("concurrency", "--concurrency/-j", 1, "a positive integer"),
             ("referees", "--referees", 1, "a positive integer"),
             ("max_matches", "--max-matches", 0, "an integer >= 0"),
             ("duration", "--duration", 1e-9, "a positive number of seconds"),
             ("join_timeout", "--join-timeout", 1e-9, "a positive number of seconds"))


def _check_args(args: argparse.Namespace) -> None:
    """Usage errors argparse cannot see; reported with the sub-command's usage (exit 2)."""
    for dest, flags, lo, expected in _POSITIVE:
        value = getattr(args, dest, None)
        if value is not None and value < lo:
            args.usage_error(f"argument {flags}: expected {expected}, got {value:g}")
    if hasattr(args, "admin_token"):
        args.admin_token = token_arg(args, "--admin-token", "REFEREE_ADMIN_TOKEN")
    if getattr(args, "address", None) and args.command != "check" and not args.admin_token:
        args.usage_error("argument --address: a running referee needs its admin token "
                         "(--admin-token-file, or $REFEREE_ADMIN_TOKEN)")


def _load_target(target: str) -> tuple[TournamentConfig, Path | None]:
    path = Path(target)
    if path.is_dir():
        db = path / "tournament.sqlite"
        if not db.exists():
            raise ConfigError("target", f"{path} is not a results folder (no tournament.sqlite)")
        con = sqlite3.connect(db)
        try:
            meta = dict(con.execute("SELECT key, value FROM meta"))
        except sqlite3.OperationalError:  # a ladder folder from before it kept its file
            meta = {}
        finally:
            con.close()
        base = meta.get("base_dir", ".")
        if "toml" in meta:
            cfg = replace(parse(tomllib.loads(meta["toml"]), base_dir=base),
                          source=meta["toml"])
        elif "input_json" in meta:
            cfg = parse(json.loads(meta["input_json"]), base_dir=base)
        else:
            raise ConfigError("target", f"{db} does not keep the tournament file; pass FILE "
                              f"with --out {path}")
        if meta.get("format") == "ladder":  # run with `ladder FILE`, whatever FILE's format
            cfg = replace(cfg, format=replace(cfg.format, type="ladder"))
        return cfg, path
    return load(path), None


def _overrides(cfg: TournamentConfig, args: argparse.Namespace) -> TournamentConfig:
    return with_overrides(cfg, concurrency=args.concurrency, referees=args.referees,
                          backend=args.backend, ray_address=args.ray_address)


def _run(cfg: TournamentConfig, out: Path | None, args, console: Console) -> int:
    from .runner import BadTournament, RunError, Runner

    if cfg.format.type == "ladder":
        return _ladder(cfg, out, args, console)

    runner = Runner(cfg, out=out, address=args.address, admin_token=args.admin_token,
                    console=console, progress=not args.no_progress,
                    retry_failed=args.retry_failed, max_matches=args.max_matches,
                    log_json=args.log_json)
    try:
        data = _run_async(runner.run())
    except BadTournament as exc:
        console.print(f"[red]bad tournament file[/]: {exc}")
        return EXIT_USAGE
    except RunError as exc:
        console.print(f"[red]error[/]: {exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted[/]: run `referee-tournament resume {runner.out}` "
                      "(or the same command again) to go on")
        return EXIT_INTERRUPTED
    st = data["status"]
    code = _report_dead(data, console)
    if st.get("failed"):
        console.print(f"[yellow]{st['failed']} match(es) failed[/] (see incidents in "
                      f"{runner.out / 'index.html'}; --retry-failed plays them again)")
        return EXIT_FAILED
    if code != EXIT_OK:
        return code
    if st.get("pending") and args.max_matches is None:
        return EXIT_FAILED
    return EXIT_OK


def _ladder(cfg: TournamentConfig, out: Path | None, args, console: Console) -> int:
    from .ladder import run_ladder
    from .runner import BadTournament, RunError

    try:
        data = _run_async(run_ladder(
            cfg, out=out, address=args.address, admin_token=args.admin_token,
            max_matches=args.max_matches, duration_s=getattr(args, "duration", None),
            console=console, log_json=args.log_json))
    except BadTournament as exc:
        console.print(f"[red]bad tournament file[/]: {exc}")
        return EXIT_USAGE
    except RunError as exc:
        console.print(f"[red]error[/]: {exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: the ratings are kept; run the ladder again to "
                      "go on")
        return EXIT_INTERRUPTED
    for e in data["leaderboard"]:
        console.print(f"{e['place']:>3}  {e['name']:<24} {e['ordinal']:>8.2f}  "
                      f"({e['matches']} matches)")
    return _report_dead(data, console)


def _sensitivity(cfg: TournamentConfig, folder: Path, args, console: Console,
                 out_console: Console) -> int:
    from . import sensitivity
    from .runner import RunError

    if cfg.format.type == "ladder" or args.sensitivity < 1:
        console.print("[red]error[/]: --sensitivity N needs N >= 1 and a tournament or event "
                      "folder (not a ladder's)")
        return EXIT_USAGE
    try:
        data = _run_async(sensitivity.run(cfg, folder, args.sensitivity,
                                          args.sensitivity_seed, console))
    except (RunError, sensitivity.SensitivityError) as exc:
        console.print(f"[red]error[/]: {exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: run the same command again to go on")
        return EXIT_INTERRUPTED
    from .runner import report_only

    report_only(cfg, folder, Console(quiet=True))  # index.html shows the findings too
    out_console.print(sensitivity.table(data))
    out_console.print(f"details in {folder / 'sensitivity.json'}")
    return EXIT_OK


def _report_dead(data: dict, console: Console) -> int:
    """Name every entrant that crashed in every match it played; EXIT_FAILED if any did."""
    for d in data.get("crashed_in_every_match", []):
        console.print(f"[red]{d['entrant']} crashed in every match[/] it played ({d['seats']} "
                      "seat(s): it crashed, never joined or never moved)"
                      + (f": {d['error']}" if d.get("error") else ""))
    return EXIT_FAILED if data.get("crashed_in_every_match") else EXIT_OK


def cmd_check(args, console: Console, out_console: Console) -> int:
    from .check import print_schedule, run_check

    cfg = load(args.file)
    try:
        print_schedule(cfg, out_console)
    except ValueError as exc:
        console.print(f"[red]bad tournament file[/]: {exc}")
        return EXIT_USAGE
    try:
        return _run_async(run_check(
            cfg, address=args.address, admin_token=args.admin_token
            or os.environ.get("REFEREE_ADMIN_TOKEN"), smoke=not args.no_smoke,
            join_timeout=args.join_timeout, console=console, out=out_console,
            progress=not args.no_progress))
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]")
        return EXIT_INTERRUPTED


def _console(stderr: bool) -> Console:
    """A console; not a terminal (CI, a pipe): wide enough for the leaderboard."""
    c = Console(stderr=stderr)
    return c if c.is_terminal else Console(stderr=stderr, width=150)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_args(args)
    console = _console(stderr=True)
    out_console = _console(stderr=False)
    try:
        if args.command == "run":
            cfg = _overrides(load(args.file), args)
            out = Path(args.out) if args.out else None
            return _run(cfg, out, args, console)
        if args.command == "ladder":
            cfg = _overrides(load(args.file), args)
            cfg = replace(cfg, format=replace(cfg.format, type="ladder"))
            return _run(cfg, Path(args.out) if args.out else None, args, console)
        if args.command == "resume":
            cfg, out = _load_target(args.target)
            cfg = _overrides(cfg, args)
            out = Path(args.out) if args.out else out
            return _run(cfg, out, args, console)
        if args.command == "report":
            from . import ladder
            from .league import report as league_report
            from .runner import RunError, report_only

            if league_report.is_league_folder(Path(args.target)):
                try:
                    league_report.report_only(Path(args.target), out_console)
                except RunError as exc:
                    console.print(f"[red]error[/]: {exc}")
                    return EXIT_FAILED
                return EXIT_OK
            cfg, out = _load_target(args.target)
            out = Path(args.out) if args.out else out
            folder = out or cfg.output_dir()
            try:
                if cfg.format.type == "ladder" or ladder.is_ladder_folder(folder):
                    ladder.report_only(cfg, folder, out_console)
                else:
                    report_only(cfg, out, out_console)
            except RunError as exc:
                console.print(f"[red]error[/]: {exc}")
                return EXIT_FAILED
            if args.sensitivity:
                return _sensitivity(cfg, folder, args, console, out_console)
            return EXIT_OK
        if args.command == "check":
            return cmd_check(args, console, out_console)
        if args.command == "league":
            from .league.cli import main as league_main

            return league_main(args, console, out_console)
        if args.command == "demo":
            from .demo import run_demo

            games = args.games.split(",") if args.games else None
            try:
                run_demo(Path(args.out), games=games, progress=not args.no_progress,
                         console=console)
            except KeyboardInterrupt:
                return EXIT_INTERRUPTED
            return EXIT_OK
    except ConfigError as exc:
        console.print(f"[red]bad tournament file[/]: {exc}")
        return EXIT_USAGE
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
