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
    _add_mcp(sub)


def _add_mcp(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="a Model Context Protocol server that seats a language-model agent",
        description=(
            "Serve MCP tools (register_bot, list_matches, wait_for_match, accept_match, "
            "get_seat, wait_for_turn, submit_move, and the lobby's list_seeks, open_seek, "
            "challenge, join_seek, cancel_seek) and resources (referee://games, "
            "referee://games/<game>/rules, referee://games/<game>/rulings) to an MCP client, "
            "over stdio (the client starts this command) or streamable HTTP on 127.0.0.1. "
            "It plays the matches its bot is assigned (bot token: $REFEREE_BOT_TOKEN or "
            "--bot-token-file; register_bot needs the admin token: $REFEREE_ADMIN_TOKEN or "
            "--admin-token-file) and/or one seat (--match with $REFEREE_TOKEN or "
            "--token-file). In the lobby it is its bot, or without a bot token an anonymous "
            "lobby player named --lobby-name. Tokens stay inside this process: no tool result "
            "carries one."),
        epilog="example (an MCP client's configuration): command referee-bot, args [mcp, "
               "--address, 127.0.0.1:50051], env {REFEREE_BOT_TOKEN: ...}",
    )
    p.set_defaults(run=_mcp)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default) or streamable HTTP")
    p.add_argument("--host", default="127.0.0.1",
                   help="HTTP: the loopback address to listen on (default 127.0.0.1; the "
                        "endpoint has no authentication of its own, so only loopback)")
    p.add_argument("--port", type=int, default=8765,
                   help="HTTP: the port (default 8765; 0: an ephemeral one, see --port-file)")
    p.add_argument("--port-file", metavar="PATH",
                   help="HTTP: write the port listened on to PATH once it listens")
    p.add_argument("--match", help="also play this match's seat (token: $REFEREE_TOKEN or "
                   "--token-file)")
    p.add_argument("--token-file", metavar="PATH", help="the --match seat's token")
    p.add_argument("--bot-token-file", metavar="PATH",
                   help="this bot's token (default: $REFEREE_BOT_TOKEN)")
    p.add_argument("--admin-token-file", metavar="PATH",
                   help="the referee's admin token, for register_bot (default: "
                        "$REFEREE_ADMIN_TOKEN)")
    p.add_argument("--capacity", type=int, default=4, metavar="N",
                   help="matches assigned at once (default 4)")
    p.add_argument("--lobby-name", default="agent", metavar="NAME",
                   help="without a bot token: the name of the anonymous lobby player the agent "
                        "is in the lobby (default agent; at most 40 characters)")
    sdk_cli._add_connection(p)


def _secret(args: argparse.Namespace, path: str | None, env: str, flag: str) -> str | None:
    import os

    from referee_client.tokens import read_token_file

    if path:
        try:
            return read_token_file(path)
        except (OSError, ValueError) as exc:
            args.usage_error(f"argument {flag}: {exc}")
    return os.environ.get(env) or None


def _mcp(args: argparse.Namespace) -> int:
    import asyncio
    import ipaddress

    from .mcp_server import Agent, build, serve_http

    try:
        loopback = ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    if not loopback:
        args.usage_error(f"argument --host: {args.host} is not a loopback address (the MCP "
                         "endpoint has no authentication; put a proxy with one in front)")
    if not 1 <= args.capacity <= 64:
        args.usage_error(f"argument --capacity: expected 1 to 64, got {args.capacity}")
    agent = Agent(args.address, tls=sdk_cli._tls(args),
                  bot_token=_secret(args, args.bot_token_file, "REFEREE_BOT_TOKEN",
                                    "--bot-token-file"),
                  admin_token=_secret(args, args.admin_token_file, "REFEREE_ADMIN_TOKEN",
                                      "--admin-token-file"),
                  capacity=args.capacity, lobby_name=args.lobby_name[:40])
    if args.match:
        token = _secret(args, args.token_file, "REFEREE_TOKEN", "--token-file")
        if not token:
            args.usage_error("--match needs its seat token: --token-file or $REFEREE_TOKEN")
        agent.add_seat(args.match, token or "")
    server = build(agent, args.host)

    async def run() -> None:
        try:
            if args.transport == "stdio":
                await server.run_stdio_async()
            else:
                await serve_http(server, args.host, args.port, args.port_file,
                                 lambda url: print(f"MCP endpoint: {url}", file=sys.stderr,
                                                   flush=True))
        finally:
            await agent.close()

    asyncio.run(run())
    return sdk_cli.EXIT_OK


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
