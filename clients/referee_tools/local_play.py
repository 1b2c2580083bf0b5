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
import webbrowser
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode

from referee_client.bots import BOTS, GREEDY_FOR_GAME
from referee_tournament.play import MatchJob, play_match
from referee_tournament.procs import LocalReferee, referee_command, resolve

from .delay_proxy import DelayProxy

EXIT_OK, EXIT_FAILED = 0, 1
#: how play_match reports a CreateMatch the referee refused as bad input
REFUSED_MATCH = re.compile(r"CreateMatch failed: (?:INVALID_ARGUMENT|NOT_FOUND): (.*)", re.DOTALL)
#: appended to a command without placeholders (a reference bot gets the same)
#: (no seat token: a bot reads it from $REFEREE_TOKEN; a command line is public)
CONNECT_ARGS = ["--address", "{address}", "--match", "{match}"]


class PlayUsageError(Exception):
    """Bad arguments found before or right after the referee started (exit status 2)."""


#: ``--me human``: the seat is yours, played from the browser's play page
HUMAN = "human"
#: the move clock of a bots-only match by default (``--move-ms``)
BOT_MOVE_MS = 10_000
#: a match with a person in it, or held back by ``--delay-ms``, is not cut short by the runner's
#: wall clock before this (a person may think as long as they like: Ctrl-C stops)
SLOW_MATCH_WALL_S = 24 * 3600.0


@dataclass
class Player:
    label: str  # what the result table calls it ("me", "you", "greedy-goa", "random#2", ...)
    argv: list[str]  # command template (placeholders not yet filled); [] for a person
    mine: bool = False
    person: bool = False  # played from the browser (``--me human``): no process


@dataclass
class PlayOptions:
    game: str
    me: str
    vs: list[str]
    seat: int = 0
    seed: int | None = None
    options: dict[str, str] = field(default_factory=dict)
    #: None: BOT_MOVE_MS with bots only, 0 (no move clock) with a person (``--me human``)
    move_ms: int | None = None
    bank_ms: int = 0
    grace_ms: int = 1_000
    on_expiry: str = "random_legal"
    join_timeout_s: float = 20.0
    match_wall_s: float = 1800.0
    workdir: Path | None = None
    http: bool = True
    keep_open: bool = False  # keep the viewer up until Ctrl-C (else until Enter, on a terminal)
    cwd: str | None = None
    delay_ms: int = 0  # every bot's answer held back this long (a person's pace)
    keep_going: bool = False  # a bot that gives up on a refused decision does not stop play
    open_page: bool | None = None  # open the seat's page in a browser (None: if a display)

    @property
    def person(self) -> bool:
        return self.me == HUMAN

    def time_policy(self) -> dict[str, object]:
        """The match's time policy: ``--move-ms`` or its default (none with a person: people
        think at their own pace), lengthened by ``--delay-ms`` so that the hold is not taken
        out of a bot's own time."""
        move_ms = self.move_ms if self.move_ms is not None else (
            0 if self.person else BOT_MOVE_MS)
        if move_ms and self.delay_ms:
            move_ms += self.delay_ms
        return {"move_ms": move_ms, "bank_ms": self.bank_ms, "grace_ms": self.grace_ms,
                "on_expiry": self.on_expiry}


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
    if opts.person:
        if not opts.http:
            raise PlayUsageError("--me human plays in the browser: drop --no-web")
        players.insert(opts.seat, Player("you", [], mine=True, person=True))
    else:
        players.insert(opts.seat, Player("me", _command(opts.me, "--me", opts.cwd), mine=True))
    return players


def seat_page(web_base: str, match_id: str, token: str, watch: bool = False) -> str:
    """The browser's play page of one seat. The seat token is in the fragment, which a
    browser never sends to the server (so it reaches no request line and no log);
    ``watch``: the seat's view and its notes, live, read-only (a bot author's own seat)."""
    fragment = urlencode({"token": token, **({"watch": "1"} if watch else {})})
    return f"{web_base}/play/{quote(match_id)}#{fragment}"


def display_available() -> bool:
    """Whether a browser can be shown here: a graphical session (X11, Wayland), macOS or
    Windows, or a browser named in $BROWSER (what :mod:`webbrowser` would use)."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("BROWSER") or sys.platform in ("darwin", "win32"))


def open_in_browser(url: str, workdir: Path) -> Path | None:
    """Open ``url`` with :mod:`webbrowser` without putting it on a command line (a browser is
    started with its address as an argument, which every process of the machine can read, and
    this address holds a seat token): a private file (mode 0600) in ``workdir`` that sends the
    browser on is opened instead. The file (None when no browser could be started) is removed
    when ``play`` ends; the token dies with the private referee anyway."""
    page = workdir / "open-seat.html"
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    target = json.dumps(url).replace("<", "\\u003c")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("<!doctype html><meta charset=utf-8><title>referee-bot play</title>"
                f"<script>location.replace({target});</script>"
                "<p>Opening your seat's page...</p>")
    try:
        opened = webbrowser.open(page.resolve().as_uri())
    except webbrowser.Error:
        opened = False
    if not opened:
        page.unlink(missing_ok=True)
        return None
    return page


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
    proxy: DelayProxy | None = None
    opened: Path | None = None
    try:
        await asyncio.to_thread(referee.wait_ready)
        web = web_port(referee.log_path) if opts.http else None
        seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4)) >> 1
        if opts.delay_ms:
            proxy = DelayProxy(referee.address, opts.delay_ms)
            await proxy.start()
        mine = next(seat for seat, p in enumerate(players) if p.mine)
        tokens: dict[int, str] = {}
        policy = opts.time_policy()

        def on_created(match_id: str) -> None:  # the referee took the game and options
            nonlocal opened
            print(f"referee-bot play: {opts.game}, {len(players)} seats, seed {seed}", file=out)
            print(f"  referee {referee.address}, data in {workdir}", file=out)
            clock = (f"{policy['move_ms']} ms a move" if policy["move_ms"]
                     else "no move clock")
            held = f", every bot's answer held back {opts.delay_ms} ms" if opts.delay_ms else ""
            print(f"  time policy: {clock}{held}", file=out)
            for seat, p in enumerate(players):
                shown = ("(you, in your browser)" if p.person
                         else _shown(p.argv) if p.mine else "")
                print(f"  seat {seat}  {p.label:<14} {shown}".rstrip(), file=out)
            if web:
                base = f"http://127.0.0.1:{web}"
                print(f"  watch live: {base}/matches/{match_id}", file=out)
                page = seat_page(base, match_id, tokens[mine], watch=not players[mine].person)
                if players[mine].person:
                    print(f"  your seat's page (play here): {page}", file=out)
                else:
                    print(f"  your bot's seat live (its view and notes): {page}", file=out)
                want = opts.open_page if opts.open_page is not None else (
                    players[mine].person and display_available())
                if want:
                    opened = open_in_browser(page, workdir)
                    if opened is None:
                        print("  (no browser could be opened: open the address above)",
                              file=out)
            print("playing... (Ctrl-C stops)", file=out, flush=True)

        def on_tokens(_match_id: str, seat_tokens: dict[int, str]) -> None:
            tokens.update(seat_tokens)  # kept here: no command line or bot of another seat

        slow = players[mine].person or opts.delay_ms > 0
        job = MatchJob(
            idx=0, game=opts.game, seats=len(players), options=dict(opts.options), seed=seed,
            seating=[p.label for p in players], commands=[p.argv for p in players],
            cwds=[opts.cwd] * len(players), envs=[{} for _ in players],
            time_policy=policy,
            address=referee.address, admin_token=referee.admin_token,
            bot_seeds=[seed + 1 + seat for seat in range(len(players))],
            match_wall_s=max(opts.match_wall_s, SLOW_MATCH_WALL_S) if slow
            else opts.match_wall_s,
            join_timeout_s=opts.join_timeout_s,
            log_dir=str(workdir / "logs"), unix_socket=referee.unix_socket,
            people=[seat for seat, p in enumerate(players) if p.person],
            bot_address=proxy.address if proxy else None,
            stop_on_give_up=[] if opts.keep_going or players[mine].person else [mine],
        )
        result = await play_match(job, on_created=on_created, on_tokens=on_tokens)
        refused = REFUSED_MATCH.match(result.get("error") or "")
        if refused:  # the referee's word on the game, the seats or an option
            raise PlayUsageError(refused.group(1))
        code = _report(result, players, workdir, out)
        if web and result.get("match_id") and not result.get("gave_up"):
            await _keep_viewer(f"http://127.0.0.1:{web}/matches/{result['match_id']}",
                               opts.keep_open, out)
        return code
    except PlayUsageError:
        if opts.workdir is None:  # nothing was played: leave no folder behind
            await asyncio.to_thread(referee.stop)
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    finally:
        if opened is not None:
            opened.unlink(missing_ok=True)
        if proxy is not None:
            await proxy.stop()
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
    mine = next(seat for seat, p in enumerate(players) if p.mine)
    stop = result.get("gave_up")
    if stop:  # the runner stopped the match: the bot gave up on a refused decision
        print(f"stopped: your bot gave up on a decision: {stop['why']}", file=out)
        refusal = stop.get("refusal") or (
            f"the referee refused {stop.get('refused', 1)} answer(s) of seat {stop['seat']} "
            "(its log has no \"move rejected\" line with the reason)")
        print(f"  refused: {refusal}", file=out)
        print("  --keep-going lets the time policy play its decisions and the match go on",
              file=out)
        print(f"  its log: {(seats.get(mine) or {}).get('log') or workdir / 'logs'}", file=out)
        return EXIT_FAILED
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
    if players[mine].person:
        return EXIT_OK  # your own moves: the page showed each refusal as it came
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
