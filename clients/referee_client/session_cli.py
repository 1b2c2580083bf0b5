"""``referee-bot session`` and ``referee-bot register-bot`` (see :mod:`.session`)::

    referee-bot register-bot --name alice --admin-token-file data/admin.token  # prints a token
    REFEREE_BOT_TOKEN=T referee-bot session random --capacity 4   # plays every assignment
"""
from __future__ import annotations

import argparse
import zlib
from collections.abc import Callable

from .bot import Backoff
from .tokens import add_token_flag, token_arg

EXIT_OK = 0


def add_parsers(sub, add_connection: Callable[[argparse.ArgumentParser], None]) -> None:
    from .bots import BOTS

    p = sub.add_parser(
        "session",
        help="a persistent bot session: connect once, play every match the referee assigns",
        description="Open a Session with a bot token (from RegisterBot / register-bot) and play "
                    "every seat the referee assigns to this bot, CAPACITY matches at once, "
                    "until interrupted (or --max-matches).")
    p.add_argument("bot", choices=sorted(BOTS), help="the reference bot to play with")
    add_token_flag(p, "--bot-token", "REFEREE_BOT_TOKEN", "this bot's token")
    p.add_argument("--capacity", type=int, default=1, metavar="N",
                   help="matches played at once (default 1)")
    p.add_argument("--seed", type=int,
                   help="seed the bot's randomness (each match: this seed with its id and seat)")
    p.add_argument("--max-matches", type=int, metavar="N", help="stop after N matches")
    p.add_argument("--accept-challenges", action="store_true",
                   help="take challenges from the referee's lobby, and seats in seeks that let "
                        "bots join, while the session is open (docs/bot/lobby.md)")
    p.add_argument("--games", metavar="G,G", default=None,
                   help="with --accept-challenges: the games accepted (default: a greedy bot's "
                        "own game, every game for the others)")
    p.add_argument("--max-challenges", type=int, default=0, metavar="N",
                   help="with --accept-challenges: lobby matches at once (default: --capacity)")
    p.add_argument("--give-up-after", type=float, default=120.0, metavar="S",
                   help="stop retrying after S seconds without reaching the referee "
                        "(default 120; 0 = never)")
    add_connection(p)

    p = sub.add_parser(
        "register-bot", help="register a bot name (admin token) and print its bot token",
        description="Register NAME for persistent sessions; prints its new bot token (a name "
                    "registered again gets a new token, the old one stops opening sessions).")
    p.add_argument("--name", required=True,
                   help="the bot's name (1-64 letters, digits, '.', '_', '+' or '-')")
    add_token_flag(p, "--admin-token", "REFEREE_ADMIN_TOKEN", "the referee's admin token")
    add_connection(p)


def handles(command: str) -> bool:
    return command in ("session", "register-bot")


def main(args: argparse.Namespace, log, tls) -> int:
    from .session import register_bot, run_session

    if args.command == "register-bot":
        args.admin_token = token_arg(args, "--admin-token", "REFEREE_ADMIN_TOKEN")
        if not args.admin_token:
            args.usage_error("no admin token: pass --admin-token-file or set "
                             "REFEREE_ADMIN_TOKEN")
        print(register_bot(args.address, args.admin_token, args.name, tls=tls))
        return EXIT_OK
    args.bot_token = token_arg(args, "--bot-token", "REFEREE_BOT_TOKEN")
    if not args.bot_token:
        args.usage_error("no bot token: pass --bot-token-file or set REFEREE_BOT_TOKEN")
    if not 1 <= args.capacity <= 256:
        args.usage_error(f"argument --capacity: expected 1 to 256, got {args.capacity}")
    from .bots import BOTS, GREEDY_FOR_GAME

    make = BOTS[args.bot]
    if args.games is not None:
        games = [g.strip() for g in args.games.split(",") if g.strip()]
    else:
        games = [g for g, b in GREEDY_FOR_GAME.items() if b == args.bot]
    if not 0 <= args.max_challenges <= 256:
        args.usage_error(f"argument --max-challenges: expected 0 to 256, got "
                         f"{args.max_challenges}")

    def factory(assignment):
        seed = None
        if args.seed is not None:
            seed = args.seed ^ zlib.crc32(f"{assignment.match_id}:{assignment.seat}".encode())
        return make(seed)

    stats = run_session(factory, args.address, args.bot_token, args.capacity, tls=tls,
                        max_matches=args.max_matches, agent=f"referee-bot {args.bot}",
                        accept_challenges=args.accept_challenges, challenge_games=games,
                        max_challenges=args.max_challenges,
                        backoff=Backoff(give_up_after=args.give_up_after))
    log.info("session over", finished=stats.finished, failed=stats.failed,
             reconnects=stats.reconnects)
    return EXIT_OK
