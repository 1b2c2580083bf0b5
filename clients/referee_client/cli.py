"""``referee-bot``: run a reference bot in one seat, create a match, or watch one.

Bots are commands given the referee address, the match id and their seat token, the way a bot
in any language is run::

    referee-bot random         --address 127.0.0.1:50051 --match M --token T [--seed 7]
    referee-bot greedy-batavia --address 127.0.0.1:50051 --match M --token T

Tokens may also come from the environment (REFEREE_TOKEN, REFEREE_ADMIN_TOKEN) so they stay out
of process listings.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence

import structlog

from . import session_cli
from .bot import Backoff, Bot, BotError, WrongGame, run_bot
from .bots import BOTS
from .connection import RefereeError, TlsConfig
from .unary import ON_EXPIRY

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class SlowBot(Bot):
    """Wraps a bot and sleeps before each choice (simulated thinking time)."""

    def __init__(self, inner: Bot, delay_s: float):
        self.inner, self.delay_s = inner, delay_s
        self.name = inner.name

    def on_welcome(self, welcome) -> None:
        self.inner.on_welcome(welcome)

    def choose(self, decision):
        time.sleep(self.delay_s)
        return self.inner.choose(decision)

    def on_event(self, event) -> None:
        self.inner.on_event(event)

    def on_move_result(self, result) -> None:
        self.inner.on_move_result(result)

    def on_game_over(self, game_over) -> None:
        self.inner.on_game_over(game_over)


def configure_logging(level: str = "info", json_logs: bool = False) -> None:
    """structlog to stderr: readable key=value lines, or one JSON object per line."""
    renderer = (
        structlog.processors.JSONRenderer()
        if json_logs
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            getattr(logging, level.upper(), logging.INFO)
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def _uint32(text: str) -> int:
    """argparse type of a uint32 proto field (milliseconds, strikes)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {2**32 - 1}, "
                                         f"got {text!r}")
    return value


def _add_logging(p: argparse._ActionsContainer, default: str = "info") -> None:
    p.add_argument("--log-level", default=default, choices=["debug", "info", "warning", "error"],
                   help=f"least important log lines shown (default {default})")
    p.add_argument("--log-json", action="store_true", help="log one JSON object per line")


def _add_connection(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("connection")
    g.add_argument(
        "--address",
        default=os.environ.get("REFEREE_ADDRESS", "127.0.0.1:50051"),
        help="referee host:port (default: $REFEREE_ADDRESS or 127.0.0.1:50051)",
    )
    g.add_argument("--tls", action="store_true", help="connect with TLS (system root CAs)")
    g.add_argument("--ca-cert", metavar="PEM", help="trust this CA / self-signed cert (implies --tls)")
    g.add_argument("--client-cert", metavar="PEM", help="client certificate for mutual TLS")
    g.add_argument("--client-key", metavar="PEM", help="client private key for mutual TLS")
    g.add_argument("--server-name", help="name to check in the server certificate")
    _add_logging(g)


def _tls(args: argparse.Namespace) -> TlsConfig | None:
    if not (args.tls or args.ca_cert or args.client_cert):
        return None
    return TlsConfig(
        ca_file=args.ca_cert,
        cert_file=args.client_cert,
        key_file=args.client_key,
        server_name=args.server_name,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee-bot",
        description=(
            "Reference bots and small tools for the board-game referee. A bot plays one seat of "
            "one match: give it the referee address, the match id and that seat's token "
            "(from CreateMatch). It reconnects by itself if the referee restarts."
        ),
        epilog="Exit status: 0 the match ended, 1 the bot failed, 2 bad usage.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name, helptext in (
        ("random", "play uniformly random legal moves (any game)"),
        ("greedy-batavia", "play Batavia with a one-ply greedy heuristic"),
        ("greedy-goa", "play Goa with a one-ply greedy heuristic"),
        ("greedy-santa-maria", "play Santa Maria with a one-ply greedy heuristic"),
    ):
        p = sub.add_parser(name, help=helptext, description=helptext)
        p.add_argument("--match", required=True, help="match id (from CreateMatch)")
        p.add_argument(
            "--token",
            default=os.environ.get("REFEREE_TOKEN"),
            help="this seat's secret token (default: $REFEREE_TOKEN)",
        )
        p.add_argument("--seed", type=int, help="seed the bot's own randomness (reproducible)")
        p.add_argument(
            "--give-up-after",
            type=float,
            default=120.0,
            metavar="S",
            help="stop retrying after S seconds without reaching the referee (default 120; 0 = never)",
        )
        p.add_argument(
            "--delay-ms",
            type=int,
            default=0,
            metavar="MS",
            help="wait MS milliseconds before each move (simulated thinking; demos and tests)",
        )
        p.add_argument(
            "--strict",
            action="store_true",
            help="fail if the bot picks an illegal move (default: log it, play the first legal one)",
        )
        _add_connection(p)

    p = sub.add_parser(
        "create-match",
        help="create a match (admin token) and print its id and seat tokens as JSON",
        description="Create a match and print {match_id, seats: [{seat, token}]} as JSON.",
    )
    p.add_argument("--game", default="batavia", help="the game (see `referee games`; default "
                   "batavia)")
    p.add_argument("--seats", type=int, required=True, help="number of seats")
    p.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE",
        help="game option, repeatable (e.g. --option setup=face_up)",
    )
    p.add_argument("--seed", type=int, help="match seed (random if absent)")
    p.add_argument("--name", action="append", default=[], help="seat display name, repeatable")
    p.add_argument(
        "--admin-token",
        default=os.environ.get("REFEREE_ADMIN_TOKEN"),
        help="the referee's admin token (default: $REFEREE_ADMIN_TOKEN)",
    )
    t = p.add_argument_group(
        "time policy", "A flag left out keeps the referee's default: no time limit, no bank, "
        "no grace, unlimited strikes, on expiry random_legal.")
    t.add_argument("--move-ms", type=_uint32, metavar="MS", help="per-move time limit (0: none)")
    t.add_argument("--bank-ms", type=_uint32, metavar="MS",
                   help="extra time per seat for the whole match, spent once a move has used "
                        "its --move-ms")
    t.add_argument("--grace-ms", type=_uint32, metavar="MS",
                   help="network grace added to every deadline")
    t.add_argument("--strikes", type=_uint32, metavar="N",
                   help="timeouts a seat may have; the next one forfeits it (0: unlimited, "
                        "unless --on-expiry forfeit)")
    t.add_argument("--on-expiry", choices=list(ON_EXPIRY),
                   help="what the referee does when a seat's time runs out: play the game's "
                        "default move, a random legal move, or forfeit the seat")
    _add_connection(p)

    p = sub.add_parser(
        "conformance",
        help="put any bot command through a checklist against a local referee",
        description=(
            "Start a local referee and play one match per game, every seat a copy of the bot: "
            "checks it joins, plays only legal moves, handles a refused move, survives a "
            "referee restart, keeps the deadline and exits on GameOver. The command gets "
            "--address A --match M --token=T appended, unless it has {address} {match} "
            "{token} {seat} {seed} placeholders."
        ),
        epilog="example: referee-bot conformance --game batavia -- node clients/node/bot.js",
    )
    p.add_argument("--game", action="append", default=[],
                   help="game to play, repeatable (default: every game the referee hosts)")
    p.add_argument("--seats", type=int, default=0, help="seats per match (default: the game's "
                   "minimum, at least 2)")
    p.add_argument("--move-ms", type=_uint32, default=5000, metavar="MS",
                   help="per-move time limit (default 5000)")
    p.add_argument("--seed", type=int, default=1, help="match seed (default 1)")
    p.add_argument("--workdir", help="keep the referee data and bot logs here (default: a "
                   "temporary folder)")
    p.add_argument("bot_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                   help="the bot command")
    _add_logging(p, "warning")

    p = sub.add_parser(
        "play",
        help="play one match of your bot against reference bots on a private local referee",
        description=(
            "The local dev loop: start a private referee (SQLite store, web viewer) in a fresh "
            "folder, play one match of your bot (--me) against the --vs opponents, print the "
            "result, each seat's incidents, the record and a static replay page. Your command "
            "gets --address A --match M --token=T appended, unless it has {address} {match} "
            "{token} {seat} {seed} placeholders ($REFEREE_ADDRESS, $REFEREE_MATCH and "
            "$REFEREE_TOKEN are set too). A bot that crashes or does not join is given up on at "
            "once: its seat is played by the time policy."
        ),
        epilog=(
            'example: referee-bot play --game goa --me "python mybot.py" --vs greedy-goa '
            "--vs random\n"
            "exit status: 0 the match ended and your bot played every move itself, 1 it "
            "crashed, timed out, had a move refused or the match did not end, 2 bad usage."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--game", required=True, help="the game to play (see `referee games`)")
    p.add_argument("--me", required=True, metavar="COMMAND",
                   help='your bot\'s command, one quoted string (e.g. "python mybot.py")')
    p.add_argument("--vs", action="append", default=[], metavar="BOT",
                   help="an opponent, repeatable, one seat each: a reference bot ("
                        + ", ".join(sorted(BOTS)) + ", or greedy for the game's greedy bot) "
                        "or a command like --me")
    p.add_argument("--seat", type=int, default=0,
                   help="your bot's seat (default 0; the opponents fill the others in order)")
    p.add_argument("--seed", type=int, help="match seed (default: random, printed)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="game option, repeatable (e.g. --option edition=2004)")
    p.add_argument("--move-ms", type=_uint32, default=10_000, metavar="MS",
                   help="per-move time limit (default 10000; 0: none)")
    p.add_argument("--on-expiry", choices=list(ON_EXPIRY), default="random_legal",
                   help="what the referee does when a bot's time runs out (default random_legal)")
    p.add_argument("--join-timeout", type=float, default=20.0, metavar="S",
                   help="give up on a bot that has not joined after S seconds (default 20)")
    p.add_argument("--workdir", metavar="DIR",
                   help="where the referee data, bot logs and replay go (default "
                        "runs/play/<UTC time>)")
    p.add_argument("--no-web", action="store_true", help="do not start the web viewer")
    p.add_argument("--keep-open", action="store_true",
                   help="after the match, keep the referee and its viewer up until Ctrl-C")
    _add_logging(p, "warning")

    p = sub.add_parser(
        "watch",
        help="follow a match as a spectator (public events) until it ends",
        description="Print the public events of a match, then the final scores.",
    )
    p.add_argument("--match", required=True, help="the match id")
    _add_connection(p)
    session_cli.add_parsers(sub, _add_connection)
    for sp in sub.choices.values():  # errors found after parsing show the sub-command's usage
        sp.set_defaults(usage_error=sp.error)
    return parser


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level, args.log_json)
    log = structlog.get_logger("referee-bot")
    # Stop cleanly on SIGTERM (a tournament runner ending the bot) as on Ctrl-C.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if args.command in BOTS:
            return _run_bot(args, log)
        if args.command == "create-match":
            return _create_match(args)
        if args.command == "watch":
            return _watch(args)
        if args.command == "conformance":
            return _conformance(args)
        if args.command == "play":
            return _play(args)
        if session_cli.handles(args.command):
            return session_cli.main(args, log, _tls(args))
    except KeyboardInterrupt:
        log.warning("interrupted")
        return EXIT_FAILED
    except WrongGame as exc:
        log.error("wrong game", error=str(exc))
        return EXIT_USAGE
    except (BotError, RefereeError) as exc:
        log.error("failed", error=str(exc))
        return EXIT_FAILED
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


def _run_bot(args: argparse.Namespace, log) -> int:
    if not args.token:
        args.usage_error("no seat token: pass --token or set REFEREE_TOKEN")
    bot = BOTS[args.command](args.seed)
    if args.delay_ms > 0:
        bot = SlowBot(bot, args.delay_ms / 1000)
    game_over = run_bot(
        bot,
        args.address,
        args.match,
        args.token,
        tls=_tls(args),
        backoff=Backoff(give_up_after=args.give_up_after),
        strict=args.strict,
    )
    log.info("finished", match=args.match, summary=game_over.summary)
    return EXIT_OK


def _options(args: argparse.Namespace) -> dict[str, str]:
    """The --option NAME=VALUE flags as a dict."""
    options = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            args.usage_error(f"argument --option: expected NAME=VALUE, got {item!r}")
        options[name] = value
    return options


#: create-match's time policy flags, by TimePolicy field
TIME_POLICY_FLAGS = ("move_ms", "bank_ms", "grace_ms", "strikes", "on_expiry")


def _create_match(args: argparse.Namespace) -> int:
    from .unary import AdminClient, time_policy_proto

    if not args.admin_token:
        args.usage_error("no admin token: pass --admin-token or set REFEREE_ADMIN_TOKEN")
    options = _options(args)
    given = {f: getattr(args, f) for f in TIME_POLICY_FLAGS if getattr(args, f) is not None}
    with AdminClient(args.address, args.admin_token, tls=_tls(args)) as admin:
        created = admin.create_match(
            args.game, args.seats, options=options, seed=args.seed, seat_names=args.name,
            time_policy=time_policy_proto(given) if given else None,
        )
    print(
        json.dumps(
            {
                "match_id": created.match_id,
                "seats": [{"seat": s.seat, "token": s.token} for s in created.seats],
            },
            indent=2,
        )
    )
    return EXIT_OK


def _conformance(args: argparse.Namespace) -> int:
    from pathlib import Path

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
    from pathlib import Path

    from .local_play import PlayOptions, PlayUsageError, run

    try:
        return run(PlayOptions(
            game=args.game, me=args.me, vs=args.vs, seat=args.seat, seed=args.seed,
            options=_options(args), move_ms=args.move_ms, on_expiry=args.on_expiry,
            join_timeout_s=args.join_timeout, workdir=Path(args.workdir) if args.workdir else None,
            http=not args.no_web, keep_open=args.keep_open,
        ))
    except PlayUsageError as exc:
        args.usage_error(str(exc))  # exits
        raise


def _watch(args: argparse.Namespace) -> int:
    from .unary import watch

    for message in watch(args.address, args.match, tls=_tls(args)):
        which = message.WhichOneof("msg")
        if which == "event":
            e = message.event
            print(f"v{e.state_version:<5} seat {e.seat:>2}  {e.kind:<28} {e.text}", flush=True)
        elif which == "game_over":
            g = message.game_over
            print(f"game over: {g.summary}")
            for s in sorted(g.seats, key=lambda s: s.rank):
                print(f"  #{s.rank} seat {s.seat} {s.name or '':<12} {s.score:>4}")
            if g.record_path:
                print(f"record: {g.record_path}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
