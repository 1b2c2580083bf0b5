"""``referee-bot``: run a reference bot in one seat, create a match, or watch one.

Bots are commands given the referee address, the match id and their seat token, the way a bot
in any language is run::

    REFEREE_TOKEN=T referee-bot random --address 127.0.0.1:50051 --match M [--seed 7]
    referee-bot greedy-batavia --address 127.0.0.1:50051 --match M --token-file seat.token

A token comes from the environment (REFEREE_TOKEN, REFEREE_ADMIN_TOKEN) or a file
(``--token-file``, ``--admin-token-file``; ``-`` is standard input), so it stays out of process
listings; ``--token T`` also works but any user of the machine can read it in ``ps``.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence

from . import llm_cli, logs, session_cli
from .bot import FALLBACKS, REASKS, Backoff, Bot, BotError, WrongGame, run_bot
from .bots import BOTS
from .connection import RefereeError, TlsConfig
from .tokens import add_token_flag, token_arg
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
        self.inner._referee_note = ""
        move = self.inner.choose(decision)
        self.note(self.inner._referee_note)  # the inner bot's note goes with its move
        return move

    def on_event(self, event) -> None:
        self.inner.on_event(event)

    def on_move_result(self, result) -> None:
        self.inner.on_move_result(result)

    def on_refused(self, refusal) -> None:
        self.inner.on_refused(refusal)

    def on_game_over(self, game_over) -> None:
        self.inner.on_game_over(game_over)


def configure_logging(level: str = "info", json_logs: bool = False) -> None:
    """Log lines to stderr: readable key=value lines, or one JSON object per line."""
    logs.configure(level, json_logs)


def uint32_arg(text: str) -> int:
    """argparse type of a uint32 proto field (milliseconds, strikes)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {2**32 - 1}, "
                                         f"got {text!r}")
    return value


def add_logging_flags(p: argparse._ActionsContainer, default: str = "info") -> None:
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
    add_logging_flags(g)


def _tls(args: argparse.Namespace) -> TlsConfig | None:
    if not (args.tls or args.ca_cert or args.client_cert):
        return None
    return TlsConfig(
        ca_file=args.ca_cert,
        cert_file=args.client_cert,
        key_file=args.client_key,
        server_name=args.server_name,
    )


def build_parser(
    more_commands: Callable[[argparse._SubParsersAction], None] | None = None,
) -> argparse.ArgumentParser:
    """The ``referee-bot`` parser; ``more_commands(sub)`` adds sub-commands of tools built on
    the SDK (they set ``run``, called with the parsed arguments), after ``create-match``."""
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
        add_token_flag(p, "--token", "REFEREE_TOKEN", "this seat's secret token")
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
            help="exit 1 at the first move the referee refuses (default: log it and ask the "
                 f"bot again, at most {REASKS} times, then leave the decision to the time policy)",
        )
        p.add_argument(
            "--fallback", choices=FALLBACKS,
            help="play a substitute (the first legal move) for an answer that is not legal, "
                 "each use logged as an incident (default: none, the referee sees the answer)",
        )
        _add_connection(p)

    p = sub.add_parser(
        "create-match",
        help="create a match (admin token) and print its id and seat tokens as JSON",
        description="Create a match and print {match_id, seats: [{seat, token}]} as JSON.",
    )
    p.add_argument("--game", help="the game (see `referee games`; default batavia, or the "
                   "--start-record's)")
    p.add_argument("--seats", type=int, help="number of seats (required unless "
                   "--start-record gives it)")
    p.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE",
        help="game option, repeatable (e.g. --option setup=face_up)",
    )
    p.add_argument("--seed", type=int, help="match seed (random if absent)")
    p.add_argument("--name", action="append", default=[], help="seat display name, repeatable")
    p.add_argument("--request-id", metavar="ID",
                   help="make the call idempotent under this id (up to 128 printable ASCII "
                        "characters): the same command again prints the same match and "
                        "tokens instead of creating another (default: a fresh id, so the "
                        "command's own retries on UNAVAILABLE never create two)")
    s = p.add_argument_group(
        "start from a position", "Start where a recorded match stood after N moves instead of "
        "at the set-up; the game, seats and options default to the record's.")
    s.add_argument("--start-record", metavar="FILE", help="a record file (`referee replay`'s "
                   "input, or GetRecord's record_json)")
    s.add_argument("--start-move", type=uint32_arg, metavar="N",
                   help="how many of its moves to replay (0: its set-up)")
    s.add_argument("--redraw", action="store_true",
                   help="redraw what no seat could see there (deck orders, face-down tiles, "
                        "future chance) from this match's seed, consistently with every "
                        "seat's view")
    add_token_flag(p, "--admin-token", "REFEREE_ADMIN_TOKEN", "the referee's admin token")
    t = p.add_argument_group(
        "time policy", "A flag left out keeps the referee's default: no time limit, no bank, "
        "no grace, unlimited strikes, on expiry random_legal.")
    t.add_argument("--move-ms", type=uint32_arg, metavar="MS", help="per-move time limit (0: none)")
    t.add_argument("--bank-ms", type=uint32_arg, metavar="MS",
                   help="extra time per seat for the whole match, spent once a move has used "
                        "its --move-ms")
    t.add_argument("--increment-ms", type=uint32_arg, metavar="MS",
                   help="added to a seat's bank after each of its own moves (Fischer)")
    t.add_argument("--clock", metavar="PRESET",
                   help="a clock people know, which the flags above then adjust: bullet, "
                        "blitz, rapid, classical, bot, or M+S (M minutes of bank, S seconds "
                        "added per move; e.g. 5+3; docs/bot/lobby.md)")
    t.add_argument("--grace-ms", type=uint32_arg, metavar="MS",
                   help="network grace added to every deadline")
    t.add_argument("--strikes", type=uint32_arg, metavar="N",
                   help="timeouts a seat may have; the next one forfeits it (0: unlimited, "
                        "unless --on-expiry forfeit)")
    t.add_argument("--on-expiry", choices=list(ON_EXPIRY),
                   help="what the referee does when a seat's time runs out: play the game's "
                        "default move, a random legal move, or forfeit the seat")
    _add_connection(p)

    if more_commands is not None:  # commands of the layers above (referee_tools.bot_cli)
        more_commands(sub)

    p = sub.add_parser(
        "watch",
        help="follow a match as a spectator (public events) until it ends",
        description="Print the public events of a match, then the final scores.",
    )
    p.add_argument("--match", required=True, help="the match id")
    _add_connection(p)
    session_cli.add_parsers(sub, _add_connection)
    llm_cli.add_parser(sub, _add_connection)
    for sp in sub.choices.values():  # errors found after parsing show the sub-command's usage
        sp.set_defaults(usage_error=sp.error)
    return parser


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None,
         more_commands: Callable[[argparse._SubParsersAction], None] | None = None) -> int:
    parser = build_parser(more_commands)
    args = parser.parse_args(argv)
    configure_logging(args.log_level, args.log_json)
    log = logs.get_logger("referee-bot")
    # Stop cleanly on SIGTERM (a tournament runner ending the bot) as on Ctrl-C.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if args.command in BOTS:
            return _run_bot(args, log)
        if args.command == "create-match":
            return _create_match(args)
        if args.command == "watch":
            return _watch(args)
        if getattr(args, "run", None) is not None:
            return args.run(args)
        if args.command == "llm":
            return llm_cli.main(args, log, _tls(args))
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
    args.token = token_arg(args, "--token", "REFEREE_TOKEN")
    if not args.token:
        args.usage_error("no seat token: pass --token-file or set REFEREE_TOKEN")
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
        fallback=args.fallback,
    )
    log.info("finished", match=args.match, summary=game_over.summary)
    return EXIT_OK


def parse_options(args: argparse.Namespace) -> dict[str, str]:
    """The --option NAME=VALUE flags as a dict."""
    options = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            args.usage_error(f"argument --option: expected NAME=VALUE, got {item!r}")
        options[name] = value
    return options


#: create-match's time policy flags, by TimePolicy field
TIME_POLICY_FLAGS = ("move_ms", "bank_ms", "increment_ms", "grace_ms", "strikes", "on_expiry")


def _start_record(args: argparse.Namespace) -> dict | None:
    """--start-record's record (None without it), the flags that go with it checked."""
    if args.start_record is None:
        if args.start_move is not None or args.redraw:
            args.usage_error("--start-move and --redraw go with --start-record")
        return None
    if args.start_move is None:
        args.usage_error("--start-record needs --start-move N (0: the record's set-up)")
    try:
        with open(args.start_record, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError) as exc:
        args.usage_error(f"--start-record: cannot read a record from {args.start_record}: {exc}")
    if not isinstance(record, dict):
        args.usage_error(f"--start-record: {args.start_record} holds no record")
    return record


def _create_match(args: argparse.Namespace) -> int:
    from .unary import AdminClient, start_position, time_policy_proto

    args.admin_token = token_arg(args, "--admin-token", "REFEREE_ADMIN_TOKEN")
    if not args.admin_token:
        args.usage_error("no admin token: pass --admin-token-file or set REFEREE_ADMIN_TOKEN")
    record = _start_record(args)
    options = parse_options(args)
    game, seats = args.game, args.seats
    if record is not None:  # the record's game, seats and options unless given
        game = game or str(record.get("game") or "")
        seats = seats or int(record.get("seats") or 0)
        options = {**{k: str(v).lower() if isinstance(v, bool) else str(v)
                      for k, v in (record.get("options") or {}).items()}, **options}
    if not seats:
        args.usage_error("the following arguments are required: --seats")
    given = {f: getattr(args, f) for f in TIME_POLICY_FLAGS if getattr(args, f) is not None}
    if args.clock is not None:
        from .clocks import preset_policy

        try:
            clock = preset_policy(args.clock)
        except ValueError as exc:
            args.usage_error(f"argument --clock: {exc}")
        given = {"move_ms": clock.move_ms, "bank_ms": clock.bank_ms,
                 "increment_ms": clock.increment_ms, "grace_ms": clock.grace_ms,
                 "on_expiry": "random_legal", **given}
    with AdminClient(args.address, args.admin_token, tls=_tls(args)) as admin:
        created = admin.create_match(
            game or "batavia", seats, options=options, seed=args.seed, seat_names=args.name,
            time_policy=time_policy_proto(given) if given else None,
            start=start_position(record, args.start_move, args.redraw)
            if record is not None else None, request_id=args.request_id,
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
