"""``referee-bot play``: the local dev loop in one line.

    referee-bot play --game goa --me "python mybot.py" --vs greedy-goa --vs random

Starts a private referee (SQLite store and web viewer in a fresh folder under ``runs/play/``),
creates one match with your bot in one seat and the ``--vs`` opponents in the others, runs every
bot as its own process, and prints the result, each seat's incidents (crash, timeouts, refused
moves, with the bot's real error line), the record path and a static replay page. A bot that
crashes or never joins is given up on at once (its seat is played by the time policy), so a
broken bot fails in seconds, not after a whole match of timeouts.

Your command gets ``--address A --match M`` appended, unless it has ``{address}`` ``{match}``
``{seat}`` ``{seed}`` placeholders; its seat token is in $REFEREE_TOKEN (set in that bot's
environment only, never on a command line, where any process could read it), with
$REFEREE_ADDRESS and $REFEREE_MATCH. An opponent is a reference bot name (``random``,
``greedy-goa``..., or ``greedy`` for the game's greedy bot) or a command like ``--me``.

The match itself is played by the tournament runner's ``play_match`` (the same fail-fast and
incident code as a tournament) on a ``LocalReferee``; the referee is a separate process, so this
module imports nothing of the referee but its protocol.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from referee_client.bots import BOTS, GREEDY_FOR_GAME
from referee_tournament.play import MatchJob, play_match
from referee_tournament.procs import LocalReferee, referee_command, resolve

EXIT_OK, EXIT_FAILED = 0, 1
#: how play_match reports a CreateMatch the referee refused as bad input
REFUSED_MATCH = re.compile(r"CreateMatch failed: (?:INVALID_ARGUMENT|NOT_FOUND): (.*)", re.DOTALL)
#: appended to a command without placeholders (a reference bot gets the same)
#: (no seat token: a bot reads it from $REFEREE_TOKEN; a command line is public)
CONNECT_ARGS = ["--address", "{address}", "--match", "{match}"]


class PlayUsageError(Exception):
    """Bad arguments found before or right after the referee started (exit status 2)."""


@dataclass
class Player:
    label: str  # what the result table calls it ("me", "greedy-goa", "random#2", ...)
    argv: list[str]  # command template (placeholders not yet filled)
    mine: bool = False


@dataclass
class PlayOptions:
    game: str
    me: str
    vs: list[str]
    seat: int = 0
    seed: int | None = None
    options: dict[str, str] = field(default_factory=dict)
    move_ms: int = 10_000
    bank_ms: int = 0
    grace_ms: int = 1_000
    on_expiry: str = "random_legal"
    join_timeout_s: float = 20.0
    match_wall_s: float = 1800.0
    workdir: Path | None = None
    http: bool = True
    keep_open: bool = False  # keep the viewer up until Ctrl-C (else until Enter, on a terminal)
    cwd: str | None = None


def _referee_bot() -> list[str]:
    try:
        return [resolve("referee-bot")]
    except FileNotFoundError:
        return [sys.executable, "-m", "referee_client.cli"]


def _command(text: str, what: str, cwd: str | None) -> list[str]:
    """``text`` split into argv, its program checked, the connection flags appended unless it
    has placeholders."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise PlayUsageError(f"{what}: cannot split {text!r} into a command: {exc}") from None
    if not argv:
        raise PlayUsageError(f"{what}: an empty command")
    try:
        program = Path(resolve(argv[0], cwd))
    except FileNotFoundError as exc:
        raise PlayUsageError(f"{what}: {exc}") from None
    if not program.is_file():
        raise PlayUsageError(f"{what}: {program} does not exist")
    if argv[0] in ("python", "python3"):  # the Python that runs us: it has the SDK
        argv[0] = sys.executable
    if any("{" in part for part in argv):
        return argv
    return [*argv, *CONNECT_ARGS]


def resolve_players(opts: PlayOptions) -> list[Player]:
    """The players in seat order: ``--me`` at ``opts.seat``, the ``--vs`` opponents around it.
    Raises :class:`PlayUsageError` for a reference bot of another game or a bad seat."""
    if not opts.vs:
        raise PlayUsageError("give at least one opponent with --vs (e.g. --vs random)")
    opponents: list[Player] = []
    used: dict[str, int] = {}
    for text in opts.vs:
        name = GREEDY_FOR_GAME.get(opts.game, text) if text == "greedy" else text
        if name in BOTS:
            games = BOTS[name](None).games
            if games and opts.game not in games:
                right = GREEDY_FOR_GAME.get(opts.game)
                hint = f" (for {opts.game} use {right})" if right else ""
                raise PlayUsageError(f"--vs {text}: {name} plays {' and '.join(games)} only, "
                                     f"not {opts.game}{hint}")
            argv = [*_referee_bot(), name, *CONNECT_ARGS, "--seed", "{seed}"]
            label = name
        else:
            known = ", ".join(sorted({*BOTS, "greedy"}))
            argv = _command(text, f"--vs {text!r} (not a reference bot: {known})", opts.cwd)
            label = Path(argv[0]).name
        used[label] = used.get(label, 0) + 1
        if used[label] > 1:
            label = f"{label}#{used[label]}"
        opponents.append(Player(label, argv))
    seats = len(opponents) + 1
    if not 0 <= opts.seat < seats:
        raise PlayUsageError(f"--seat {opts.seat}: there are {seats} seats (0..{seats - 1})")
    players = list(opponents)
    players.insert(opts.seat, Player("me", _command(opts.me, "--me", opts.cwd), mine=True))
    return players


def web_port(log_path: Path) -> int | None:
    """The web viewer's port, from the referee's JSON log line ``web_serving``."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        if "web_serving" in line:
            try:
                return int(json.loads(line)["port"])
            except (ValueError, KeyError, TypeError):
                continue
    return None


def _shown(argv: list[str]) -> str:
    """A command as typed, without the connection flags we appended."""
    if argv[-len(CONNECT_ARGS):] == CONNECT_ARGS:
        argv = argv[:-len(CONNECT_ARGS)]
    return shlex.join(argv)


def _default_workdir() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = Path("runs") / "play" / stamp
    path, n = base, 1
    while path.exists():
        n += 1
        path = Path(f"{base}-{n}")
    return path


def replay_page(record: Path, out_dir: Path) -> Path | None:
    """A static replay page of the record, written by ``referee replay html`` (a separate
    process: the tools do not import the referee's code)."""
    try:
        done = subprocess.run(
            [*referee_command(), "replay", "html", str(record), "--out-dir", str(out_dir)],
            capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    page = out_dir / (record.stem + ".html")
    return page if done.returncode == 0 and page.exists() else None


async def _play(opts: PlayOptions, players: list[Player], out) -> int:
    workdir = opts.workdir or _default_workdir()
    workdir.mkdir(parents=True, exist_ok=True)
    extra = ("--http-port", "0") if opts.http else ()
    referee = LocalReferee(workdir / "data", extra_args=extra)
    referee.launch()  # from the event loop's thread: the parent-death signal follows it
    try:
        await asyncio.to_thread(referee.wait_ready)
        web = web_port(referee.log_path) if opts.http else None
        seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4)) >> 1

        def on_created(match_id: str) -> None:  # the referee took the game and options
            print(f"referee-bot play: {opts.game}, {len(players)} seats, seed {seed}", file=out)
            print(f"  referee {referee.address}, data in {workdir}", file=out)
            for seat, p in enumerate(players):
                shown = _shown(p.argv) if p.mine else ""
                print(f"  seat {seat}  {p.label:<14} {shown}".rstrip(), file=out)
            if web:
                print(f"  watch live: http://127.0.0.1:{web}/matches/{match_id}", file=out)
            print("playing... (Ctrl-C stops)", file=out, flush=True)

        job = MatchJob(
            idx=0, game=opts.game, seats=len(players), options=dict(opts.options), seed=seed,
            seating=[p.label for p in players], commands=[p.argv for p in players],
            cwds=[opts.cwd] * len(players), envs=[{} for _ in players],
            time_policy={"move_ms": opts.move_ms, "bank_ms": opts.bank_ms,
                         "grace_ms": opts.grace_ms, "on_expiry": opts.on_expiry},
            address=referee.address, admin_token=referee.admin_token,
            bot_seeds=[seed + 1 + seat for seat in range(len(players))],
            match_wall_s=opts.match_wall_s, join_timeout_s=opts.join_timeout_s,
            log_dir=str(workdir / "logs"), unix_socket=referee.unix_socket,
        )
        result = await play_match(job, on_created=on_created)
        refused = REFUSED_MATCH.match(result.get("error") or "")
        if refused:  # the referee's word on the game, the seats or an option
            raise PlayUsageError(refused.group(1))
        code = _report(result, players, workdir, out)
        if web and result.get("match_id"):
            await _keep_viewer(f"http://127.0.0.1:{web}/matches/{result['match_id']}",
                               opts.keep_open, out)
        return code
    except PlayUsageError:
        if opts.workdir is None:  # nothing was played: leave no folder behind
            await asyncio.to_thread(referee.stop)
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    finally:
        await asyncio.to_thread(referee.stop)


async def _keep_viewer(link: str, keep_open: bool, out) -> None:
    """Keep the referee, and so its viewer, up after the match: until Ctrl-C with
    ``--keep-open``, else until Enter when a person is at the terminal. Without one (stdin not
    a terminal: CI, a pipe) nobody can open the link in time: say so and what keeps it."""
    if keep_open:
        print(f"the viewer stays up: {link}  (Ctrl-C stops the referee)", file=out, flush=True)
        await _wait_forever()
    elif _interactive():
        print(f"the viewer stays up: {link}  (press Enter to stop the referee)", file=out,
              flush=True)
        await asyncio.to_thread(sys.stdin.readline)
    else:
        print("the match is over and the viewer stops with the referee; --keep-open keeps it up "
              "(until Ctrl-C); the replay page above needs no referee", file=out, flush=True)


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


async def _wait_forever() -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        pass


def _report(result: dict, players: list[Player], workdir: Path, out) -> int:
    seats = {s["seat"]: s for s in (result.get("outcome") or {}).get("seats", [])}
    if result.get("error") or result.get("ranks") is None:
        print(f"the match did not finish: {result.get('error') or 'no result'}", file=out)
        for seat, p in enumerate(players):
            s = seats.get(seat) or {}
            if s.get("error"):
                print(f"  seat {seat} {p.label}: {s['error']}", file=out)
        print(f"bot logs: {workdir / 'logs'}", file=out)
        return EXIT_FAILED
    ranks, scores = result["ranks"], result["scores"]
    print(f"result ({result.get('seconds', 0):.1f} s):", file=out)
    for seat in sorted(range(len(players)), key=lambda s: (ranks[s], s)):
        p, s = players[seat], seats.get(seat) or {}
        notes = []
        if s.get("forfeited"):
            notes.append("forfeited")
        if s.get("crashed"):
            notes.append(f"crashed: {s.get('error') or 'see its log'}")
        if s.get("timeouts"):
            notes.append(f"{s['timeouts']} of {s.get('moves', 0)} moves by the time policy")
        if s.get("rejected"):
            notes.append(f"{s['rejected']} move(s) refused by the referee")
        note = f"  ({'; '.join(notes)})" if notes else ""
        print(f"  #{ranks[seat]} seat {seat} {p.label:<14} {scores[seat]:>5}{note}", file=out)
    record = workdir / "data" / "records" / f"{result['match_id']}.json"
    if not record.exists() and result.get("record_json"):
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(result["record_json"], encoding="utf-8")
    print(f"record: {record}", file=out)
    page = replay_page(record, workdir)
    if page is not None:
        print(f"replay: {page}", file=out)
    print(f"bot logs: {workdir / 'logs'}", file=out)
    mine = next(seat for seat, p in enumerate(players) if p.mine)
    me = seats.get(mine) or {}
    if me.get("rejected"):
        # the refused-move incident: the referee's reason and the rule's message, as the bot
        # logged them (every kit and the Python SDK log "move rejected" with both)
        print(f"incident: the referee refused {me['rejected']} move(s) of your bot", file=out)
        if me.get("refusal"):
            print(f"  first: {me['refusal']}", file=out)
    if me.get("crashed") or me.get("timeouts") or me.get("rejected") or me.get("forfeited"):
        why = (f"crashed: {me.get('error') or 'see its log'}" if me.get("crashed")
               else "did not play every move itself")
        print(f"your bot {why}\n  its log: {me.get('log') or ''}", file=out)
        return EXIT_FAILED
    return EXIT_OK


def run(opts: PlayOptions, out=None) -> int:
    """Play the match; the exit status. Raises :class:`PlayUsageError` for bad arguments (found
    before or right after the referee started), for the caller to report as usage errors."""
    out = out or sys.stdout
    players = resolve_players(opts)
    try:
        return asyncio.run(_play(opts, players, out))
    except RuntimeError as exc:  # the referee did not start (RefereeStartError)
        print(f"referee-bot play: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_FAILED
