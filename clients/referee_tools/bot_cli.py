"""``referee-bot``: the SDK's command line (``referee_client.cli``: reference bots,
``create-match``, ``watch``, ``session``) with the two developer tools that sit above the SDK and
the tournament runner: ``play`` (:mod:`referee_tools.local_play`) and ``conformance``
(:mod:`referee_tools.conformance`), and a league entrant's ``register``, ``upload`` and ``pack``
(:mod:`referee_tools.entrant_cli`). Their modules are imported only when run, so a reference
bot starts as fast as from the SDK alone.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from referee_client import cli as sdk_cli
from referee_client.bots import BOTS
from referee_client.cli import add_logging_flags, uint32_arg
from referee_client.unary import ON_EXPIRY


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The ``conformance`` and ``play`` sub-commands, and an entrant's ``register``,
    ``upload`` and ``pack`` (:mod:`referee_tools.entrant_cli`)."""
    from . import entrant_cli

    entrant_cli.add_commands(sub)
    p = sub.add_parser(
        "conformance",
        help="put any bot command through a checklist against a local referee",
        description=(
            "Start a local referee and play one match per game, every seat a copy of the bot: "
            "checks it joins, plays only legal moves, handles a refused move, survives a "
            "referee restart, keeps the deadline and exits on GameOver. The command gets "
            "--address A --match M appended, unless it has {address} {match} {seat} {seed} "
            "placeholders, and its seat token in $REFEREE_TOKEN (never on a command line)."
        ),
        epilog="example: referee-bot conformance --game batavia -- node clients/node/bot.js",
    )
    p.set_defaults(run=_conformance)
    p.add_argument("--game", action="append", default=[],
                   help="game to play, repeatable (default: every game the referee hosts)")
    p.add_argument("--seats", type=int, default=0, help="seats per match (default: the game's "
                   "minimum, at least 2)")
    p.add_argument("--move-ms", type=uint32_arg, default=5000, metavar="MS",
                   help="per-move time limit (default 5000)")
    p.add_argument("--seed", type=int, default=1, help="match seed (default 1)")
    p.add_argument("--workdir", help="keep the referee data and bot logs here (default: a "
                   "temporary folder)")
    p.add_argument("bot_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                   help="the bot command")
    add_logging_flags(p, "warning")

    p = sub.add_parser(
        "play",
        help="play one match of your bot against reference bots on a private local referee",
        description=(
            "The local dev loop: start a private referee (SQLite store, web viewer) in a fresh "
            "folder, play one match of your bot (--me) against the --vs opponents, print the "
            "result, each seat's incidents, the record and a static replay page. Your command "
            "gets --address A --match M appended, unless it has {address} {match} {seat} {seed} "
            "placeholders; its seat token is in $REFEREE_TOKEN, never on a command line "
            "($REFEREE_ADDRESS and $REFEREE_MATCH are set too). A bot that crashes or does not "
            "join is given up on at once: its seat is played by the time policy. A bot that "
            "gives up on a decision after the referee refused its answers stops the match at "
            "once (exit 1, naming the referee's reason and rule), unless --keep-going.\n\n"
            "--me human: you play the seat yourself, in the browser: play prints the address of "
            "your seat's page (its token is in the part after #, which the browser never sends "
            "to the server) and opens it when a display is available (--open, --no-open), waits "
            "for the match to end and prints the result. With a person the default time policy "
            "has no move clock (--move-ms 0): take your time; Ctrl-C stops.\n\n"
            "With a bot, play prints a link that shows your bot's seat live (its view and its "
            "notes); --delay-ms holds every bot's answer back so that you can follow it."
        ),
        epilog=(
            'example: referee-bot play --game goa --me "python mybot.py" --vs greedy-goa '
            "--vs random\n"
            "         referee-bot play --game goa --me human --vs greedy\n"
            "exit status: 0 the match ended and your bot played every move itself, 1 it "
            "crashed, timed out, had a move refused by the referee (the incident names the "
            "reason and the rule), gave up on a decision or the match did not end, 2 bad "
            "usage.\n"
            "After the match the viewer stays up until Enter (from a terminal) or Ctrl-C "
            "(--keep-open)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(run=_play)
    p.add_argument("--game", required=True, help="the game to play (see `referee games`)")
    p.add_argument("--me", required=True, metavar="COMMAND",
                   help='your bot\'s command, one quoted string (e.g. "python mybot.py"), or '
                        "human to play the seat yourself in the browser")
    p.add_argument("--vs", action="append", default=[], metavar="BOT",
                   help="an opponent, repeatable, one seat each: a reference bot ("
                        + ", ".join(sorted(BOTS)) + ", or greedy for the game's greedy bot) "
                        "or a command like --me")
    p.add_argument("--seat", type=int, default=0,
                   help="your bot's seat (default 0; the opponents fill the others in order)")
    p.add_argument("--seed", type=int, help="match seed (default: random, printed)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="game option, repeatable (e.g. --option edition=2004)")
    p.add_argument("--move-ms", type=uint32_arg, default=None, metavar="MS",
                   help="per-move time limit (default 10000 with bots only; 0, none, with "
                        "--me human; 0: none)")
    p.add_argument("--delay-ms", type=uint32_arg, default=0, metavar="MS",
                   help="hold every bot's answer back MS ms before it reaches the referee, to "
                        "watch a match at a person's pace (any language: the bots connect "
                        "through a local proxy); the move clock is lengthened by MS so that "
                        "the hold is not taken from a bot's own time (default 0)")
    p.add_argument("--keep-going", action="store_true",
                   help="when your bot gives up on a decision after refused answers, let the "
                        "time policy play it and the match go on (default: stop, exit 1)")
    p.add_argument("--open", dest="open_page", action="store_true", default=None,
                   help="open your seat's page in a browser (default with --me human when a "
                        "display is available)")
    p.add_argument("--no-open", dest="open_page", action="store_false",
                   help="only print the page's address")
    p.add_argument("--on-expiry", choices=list(ON_EXPIRY), default="random_legal",
                   help="what the referee does when a bot's time runs out (default random_legal)")
    p.add_argument("--join-timeout", type=float, default=20.0, metavar="S",
                   help="give up on a bot that has not joined after S seconds (default 20)")
    p.add_argument("--workdir", metavar="DIR",
                   help="where the referee data, bot logs and replay go (default "
                        "runs/play/<UTC time>)")
    p.add_argument("--no-web", action="store_true", help="do not start the web viewer")
    p.add_argument("--keep-open", action="store_true",
                   help="after the match, keep the referee and its viewer up until Ctrl-C "
                        "(default: until Enter when run from a terminal, else stop at once)")
    add_logging_flags(p, "warning")


def _conformance(args: argparse.Namespace) -> int:
    from .conformance import Options, main

    command = list(args.bot_command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        args.usage_error("give the bot command after -- (e.g. -- node clients/node/bot.js)")
    return main(Options(
        command=command, games=args.game, seats=args.seats, move_ms=args.move_ms,
        seed=args.seed, workdir=Path(args.workdir) if args.workdir else None,
    ))


def _play(args: argparse.Namespace) -> int:
    from .local_play import PlayOptions, PlayUsageError, run

    try:
        return run(PlayOptions(
            game=args.game, me=args.me, vs=args.vs, seat=args.seat, seed=args.seed,
            options=sdk_cli.parse_options(args), move_ms=args.move_ms,
            on_expiry=args.on_expiry, join_timeout_s=args.join_timeout,
            workdir=Path(args.workdir) if args.workdir else None,
            http=not args.no_web, keep_open=args.keep_open, delay_ms=args.delay_ms,
            keep_going=args.keep_going, open_page=args.open_page,
        ))
    except PlayUsageError as exc:
        args.usage_error(str(exc))
    return sdk_cli.EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    return sdk_cli.build_parser(add_commands)


def main(argv: Sequence[str] | None = None) -> int:
    return sdk_cli.main(argv, add_commands)


if __name__ == "__main__":
    sys.exit(main())
