"""``referee-bot llm``: play one seat with a chat model (see :mod:`.llm`)::

    OPENAI_API_KEY=K REFEREE_TOKEN=T referee-bot llm --base-url http://127.0.0.1:8080/v1 \\
        --model qwen2.5-7b-instruct --address 127.0.0.1:50051 --match M

or, with no match and no token, against a bot of the referee's lobby (a house bot of
``referee serve --house-bots``), challenged as an anonymous lobby player (:mod:`.lobby`), or
as the agent's own bot when a bot token is given (``--bot-token-file`` or
``$REFEREE_BOT_TOKEN``: the match then comes on the bot's Session)::

    referee-bot llm --base-url http://127.0.0.1:8080/v1 --model qwen2.5-7b-instruct \\
        --address 127.0.0.1:50051 --challenge house-greedy-goa --game goa

The API key is read from ``--api-key-file PATH`` or ``$OPENAI_API_KEY`` only: there is no flag
that takes the key itself, since a command line is readable by every user of the machine."""
from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from .bot import Backoff, play
from .tokens import add_token_flag, read_token_file, token_arg

EXIT_OK, EXIT_FAILED = 0, 1
KEY_ENV = "OPENAI_API_KEY"
#: --challenge's clock: a bank of 15 minutes and 10 s a move, for a model that answers in
#: seconds (the lobby's "rapid")
CHALLENGE_PRESET = "rapid"


def add_parser(sub, add_connection: Callable[[argparse.ArgumentParser], None]) -> None:
    from .llm import REASKS

    p = sub.add_parser(
        "llm", help="play one seat with a chat model (any OpenAI-compatible server)",
        description="Play one seat by asking a chat model served with the OpenAI-compatible "
                    "chat-completions API (llama.cpp, vLLM, Ollama, hosted). Each decision is "
                    "sent as text (DescribeSeat) in the prompt template; the answer's move id is "
                    "played with the model's reason as the move's note, after a first line "
                    "'llm tokens=N asks=K reasks=R illegal=I'. An answer naming no legal move, or none "
                    f"within the move clock, is asked again (at most --reasks times, default "
                    f"{REASKS}); then the referee's time policy plays the decision (an "
                    "incident). Needs httpx (the 'llm' extra).",
        epilog="The API key: --api-key-file PATH or $OPENAI_API_KEY (no key: none is sent, as "
               "local servers want). The seat token: --token-file or $REFEREE_TOKEN.")
    p.add_argument("--base-url", required=True, metavar="URL",
                   help="the API's base URL, before /chat/completions (e.g. "
                        "http://127.0.0.1:8080/v1)")
    p.add_argument("--model", required=True, metavar="NAME", help="the model's name")
    p.add_argument("--api-key-file", metavar="PATH",
                   help=f"read the API key from PATH (default: ${KEY_ENV})")
    p.add_argument("--prompt", metavar="FILE",
                   help="a prompt template of your own (string.Template: $view, $prompt, $moves, "
                        "$events, $feedback, $game, $seat, $kind, $result)")
    p.add_argument("--system", metavar="FILE", help="a system message, read from FILE")
    p.add_argument("--reasks", type=int, default=REASKS, metavar="N",
                   help=f"asks after a first answer that names no legal move (default {REASKS})")
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the "
                   "server's)")
    p.add_argument("--max-tokens", type=int, default=256, metavar="N",
                   help="most tokens of one answer (default 256)")
    p.add_argument("--usage-file", metavar="PATH",
                   help="append the match's token usage to PATH as one JSON line at its end")
    p.add_argument("--match", help="play this match's seat (from CreateMatch); without it "
                   "(and without --challenge), open a bot Session and play every match the "
                   "referee assigns to the bot (a league's remote bot)")
    p.add_argument("--challenge", metavar="BOT",
                   help="challenge BOT through the referee's lobby (e.g. house-random, "
                        "house-greedy-goa on a referee with --house-bots) and play the match, "
                        "as an anonymous lobby player named after the model, or as the bot "
                        "of --bot-token-file / $REFEREE_BOT_TOKEN when one is given "
                        "(docs/bot/play-a-model.md)")
    p.add_argument("--game", default="goa",
                   help="with --challenge: the game (default goa)")
    p.add_argument("--preset", default=CHALLENGE_PRESET, metavar="CLOCK",
                   help="with --challenge: the clock, a lobby preset (bullet, blitz, rapid, "
                        "classical, bot, or M+S: M minutes and S seconds a move; default "
                        f"{CHALLENGE_PRESET}: a model's answers take seconds)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="with --challenge: a game option (repeatable, e.g. edition=2004)")
    add_token_flag(p, "--token", "REFEREE_TOKEN", "this seat's secret token")
    p.add_argument("--bot-token-file", metavar="PATH",
                   help="without --match: the bot's token (default: $REFEREE_BOT_TOKEN); "
                        "with --challenge, the bot that challenges")
    p.add_argument("--capacity", type=int, default=1, metavar="N",
                   help="without --match: matches played at once (default 1)")
    p.add_argument("--max-matches", type=int, metavar="N",
                   help="without --match: stop after N matches")
    p.add_argument("--give-up-after", type=float, default=120.0, metavar="S",
                   help="stop retrying after S seconds without reaching the referee "
                        "(default 120; 0 = never)")
    add_connection(p)


def main(args: argparse.Namespace, log, tls) -> int:
    from .llm import ChatClient, ChatModelBot, load_template, usage_json

    token = bot_token = None
    options: dict[str, str] = {}
    if args.challenge:
        if args.match:
            args.usage_error("give --match or --challenge, not both")
        for item in args.option:
            key, eq, value = item.partition("=")
            if not eq or not key:
                args.usage_error(f"argument --option: expected KEY=VALUE, got {item!r}")
            options[key] = value
        # with a bot token the model challenges as that bot (its seat comes on the bot's
        # Session); without one, as an anonymous lobby player
        bot_token = _bot_token(args, required=False)
    elif args.match:
        token = token_arg(args, "--token", "REFEREE_TOKEN")
        if not token:
            args.usage_error("no seat token: pass --token-file or set REFEREE_TOKEN")
            return 2
    else:
        bot_token = _bot_token(args, required=True)
        if not bot_token:
            return 2
    key = os.environ.get(KEY_ENV) or None
    if args.api_key_file:
        try:
            key = read_token_file(args.api_key_file)
        except (OSError, ValueError) as exc:
            args.usage_error(f"argument --api-key-file: {exc}")
    if not 0 <= args.reasks <= 10:
        args.usage_error(f"argument --reasks: expected 0 to 10, got {args.reasks}")
    try:
        template = load_template(args.prompt)
        system = Path(args.system).read_text(encoding="utf-8") if args.system else None
    except (OSError, ValueError) as exc:
        args.usage_error(f"argument --prompt/--system: {exc}")
    chat = ChatClient(args.base_url, args.model, key, temperature=args.temperature,
                      max_tokens=args.max_tokens)
    if bot_token is not None:
        if args.challenge:
            return _session(args, log, tls, chat, bot_token, template, system,
                            challenge=options)
        return _session(args, log, tls, chat, bot_token, template, system)
    if args.challenge:
        from .lobby import LobbyRefused, challenge

        try:
            got = asyncio.run(challenge(args.address, args.challenge, args.game,
                                        preset=args.preset, options=options,
                                        name=f"llm {args.model}", tls=tls))
        except LobbyRefused as exc:
            log.error("challenge refused", bot=args.challenge, reason=exc.reason,
                      message=exc.message)
            asyncio.run(chat.close())
            return EXIT_FAILED
        log.info("challenge accepted", bot=args.challenge, match=got.match_id, seat=got.seat)
        args.match, token = got.match_id, got.token
    assert token is not None
    bot = ChatModelBot(chat, args.address, token, template=template, reasks=args.reasks,
                       tls=tls, system=system)

    async def run():
        try:
            return await play(bot, args.address, args.match, token, tls=tls,
                              backoff=Backoff(give_up_after=args.give_up_after))
        finally:
            await bot.close()

    game_over, stats = asyncio.run(run())
    if args.usage_file:
        with open(args.usage_file, "a", encoding="utf-8") as f:
            f.write(usage_json(bot.usage, args.match) + "\n")
    log.info("finished", match=args.match, summary=game_over.summary, gave_up=stats.gave_up,
             **bot.usage.as_dict())
    return EXIT_OK


def _bot_token(args: argparse.Namespace, required: bool) -> str | None:
    """The bot token of --bot-token-file or $REFEREE_BOT_TOKEN (never a command-line value);
    a usage error when ``required`` and there is none."""
    bot_token = os.environ.get("REFEREE_BOT_TOKEN") or None
    if args.bot_token_file:
        try:
            bot_token = read_token_file(args.bot_token_file)
        except (OSError, ValueError) as exc:
            args.usage_error(f"argument --bot-token-file: {exc}")
    if required and not bot_token:
        args.usage_error("give --match (and its seat token), or a bot token for a "
                         "session: --bot-token-file or $REFEREE_BOT_TOKEN")
    return bot_token


def _session(args: argparse.Namespace, log, tls, chat, bot_token: str, template,
             system: str | None, challenge: dict[str, str] | None = None) -> int:
    """Every match the referee assigns to the bot, one ChatModelBot each (one chat client).
    With ``challenge`` (the game's options), the bot challenges ``args.challenge`` through the
    lobby as its Session opens, and the session ends after that one match."""
    from .llm import ChatModelBot, usage_json
    from .session import session

    def over(assignment, game_over) -> None:
        log.info("match over", match=assignment.match_id, summary=game_over.summary)

    bots: list = []

    def made(assignment):
        bot = ChatModelBot(chat, args.address, assignment.seat_token, template=template,
                           reasks=args.reasks, tls=tls, system=system)
        bot.match_id = assignment.match_id
        bots.append(bot)
        return bot

    async def run():
        try:
            playing = asyncio.ensure_future(session(
                made, args.address, bot_token, capacity=args.capacity, tls=tls,
                max_matches=1 if challenge is not None else args.max_matches,
                agent=f"referee-bot llm {args.model}", on_game_over=over,
                backoff=Backoff(give_up_after=args.give_up_after)))
            if challenge is not None:
                from .lobby import LobbyRefused
                from .lobby import challenge as challenge_bot

                try:
                    got = await challenge_bot(args.address, args.challenge, args.game,
                                              preset=args.preset, options=challenge,
                                              name=f"llm {args.model}", tls=tls,
                                              bot_token=bot_token)
                except LobbyRefused as exc:
                    playing.cancel()
                    log.error("challenge refused", bot=args.challenge, reason=exc.reason,
                              message=exc.message)
                    return None
                log.info("challenge accepted, as the bot", bot=args.challenge,
                         match=got.match_id)
            return await playing
        finally:
            await chat.close()

    stats = asyncio.run(run())
    if stats is None:
        return EXIT_FAILED
    if args.usage_file:
        with open(args.usage_file, "a", encoding="utf-8") as f:
            for bot in bots:
                f.write(usage_json(bot.usage, bot.match_id) + "\n")
    log.info("session over", finished=stats.finished, failed=stats.failed,
             tokens=sum(b.usage.tokens for b in bots))
    return EXIT_OK
