"""`make run`: a referee and four reference bots play one Batavia match, live.

What happens, step by step (everything is a separate process, the way a real event runs):

1. ``referee serve`` starts on 127.0.0.1 with a free port, a fresh random admin token and its
   store under ``runs/demo`` (``referee_tournament.procs.LocalReferee``, which waits for the
   port file the referee writes once it serves).
2. A 4-seat Batavia match is created (CreateMatch with the admin token and seat names).
3. Four bots are launched as commands — two ``greedy-batavia``, two ``random`` — each given only
   the referee address, the match id and its own seat token (``referee-bot ...``).
4. We follow the match as a spectator (Watch): round, moves, merchants, gold.
5. Final scores and ranks, the game record's path, and ``referee replay verify`` on it.
6. A static replay page of the record (``referee replay html``, no referee needed to open
   it) and, when a person is at the terminal, the referee's web viewer kept up (the link
   printed when the match began) until Enter or Ctrl-C; without a terminal (CI) it does not
   wait.
7. The referee is stopped cleanly (SIGTERM, then waited for).

Anything that goes wrong (the referee not starting in time, a bot crashing, the match
stalling) stops everything and exits 1 with the reason and the relevant log tail.
"""
from __future__ import annotations

import argparse
import json
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from referee_client import AdminClient
from referee_tournament.procs import LocalReferee, RefereeStartError, referee_command
from referee_tournament.sandbox import bot_env
from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from referee.v1 import batavia_pb2, referee_pb2, referee_pb2_grpc

from .local_play import replay_page, web_port

SEATS = [("greedy-1", "greedy-batavia"), ("random-1", "random"),
         ("greedy-2", "greedy-batavia"), ("random-2", "random")]
COMPANY = {1: "EN", 2: "DK", 3: "FR", 4: "NL", 5: "SE"}
PHASE = {1: "auction", 2: "actions", 3: "exchange", 4: "game over"}

console = Console()


class DemoError(RuntimeError):
    """Something broke; the message says what and where to look."""


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# ---------------------------------------------------------------------- bots
@dataclass
class BotProcess:
    seat: int
    name: str
    kind: str
    log_path: Path
    proc: subprocess.Popen

    def failed(self) -> bool:
        return self.proc.poll() not in (None, 0)


def launch_bots(address: str, match_id: str, tokens: list[str], run_dir: Path,
                delay_ms: int) -> list[BotProcess]:
    bots = []
    for seat, ((name, kind), token) in enumerate(zip(SEATS, tokens, strict=True)):
        log_path = run_dir / f"bot-{seat}-{name}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "referee_client.cli", kind, "--address", address,
                 "--match", match_id, "--seed", str(seat), "--delay-ms", str(delay_ms)],
                # the token stays out of `ps`; the caller's admin token stays out of the bot
                env=bot_env({"REFEREE_TOKEN": token}, sandboxed=False),
                stdout=log, stderr=subprocess.STDOUT,
            )
        bots.append(BotProcess(seat, name, kind, log_path, proc))
    return bots


def stop_bots(bots: list[BotProcess]) -> None:
    for b in bots:
        if b.proc.poll() is None:
            b.proc.terminate()
    for b in bots:
        try:
            b.proc.wait(5)
        except subprocess.TimeoutExpired:
            b.proc.kill()


# ---------------------------------------------------------------------- watching
@dataclass
class MatchState:
    version: int = 0
    view: batavia_pb2.View | None = None
    current_seat: int = -1
    kind: str = ""
    events: list[str] = field(default_factory=list)
    game_over: referee_pb2.GameOver | None = None


def render(state: MatchState, names: list[str], progress: Progress) -> Group:
    v = state.view
    if v is not None:
        road = max((p.merchant_space for p in v.players), default=0)
        progress.update(progress.task_ids[0], completed=min(road, 36),
                        description=f"round {v.round} · {PHASE.get(v.phase, '?')}")
    table = Table(expand=True, title=f"move {state.version}", title_justify="left")
    # at 80 columns (tests/test_tables_80.py): the figures whole, the bot's name folded, the
    # seals wrapped; "crates" are the crates placed
    for col in ("seat", "bot", "gold", "bills", "hand", "merchant", "seals", "tiles", "crates"):
        if col == "bot":
            table.add_column(col, overflow="fold", ratio=1, min_width=8)
        elif col == "seals":
            table.add_column(col, min_width=5)
        else:
            table.add_column(col, justify="right", no_wrap=True)
    if v is not None:
        for p in v.players:
            marker = "▶ " if p.seat == state.current_seat else "  "
            table.add_row(
                f"{marker}{p.seat}", names[p.seat], str(p.gold), str(p.bills), str(p.hand_size),
                "arrival" if p.merchant_space >= 36 else str(p.merchant_space),
                " ".join(COMPANY.get(c, "?") for c in p.seals),
                str(len(p.tiles)), str(12 - p.crates_left),
            )
    events = "\n".join(state.events[-6:]) or "waiting for the first move…"
    return Group(progress, table, Panel(events, title="latest events", border_style="dim"))


def follow(address: str, match_id: str, names: list[str], bots: list[BotProcess],
           stall_timeout: float) -> MatchState:
    """Watch the match until GameOver; raise DemoError if a bot dies or nothing happens."""
    state = MatchState()
    failure: list[str] = []
    last_progress = [time.monotonic()]
    channel = grpc.insecure_channel(address)
    stub = referee_pb2_grpc.RefereeStub(channel)
    call = stub.Watch(referee_pb2.WatchRequest(match_id=match_id))

    done = threading.Event()

    def guard() -> None:  # a bot crash or a stalled match cancels the watch
        while not done.is_set():
            for b in bots:
                if b.failed():
                    failure.append(f"bot {b.name} (seat {b.seat}, {b.kind}) exited with status "
                                   f"{b.proc.returncode}; its log ({b.log_path}):\n"
                                   f"{tail(b.log_path)}")
            if not failure and time.monotonic() - last_progress[0] > stall_timeout:
                failure.append(f"no move for {stall_timeout:.0f}s; bot logs in "
                               f"{bots[0].log_path.parent}")
            if failure:
                call.cancel()
                return
            time.sleep(0.2)

    threading.Thread(target=guard, daemon=True).start()
    progress = Progress(TextColumn("{task.description:<22}"), BarColumn(),
                        TextColumn("space {task.completed:.0f}/36 (arrival)"), console=console)
    progress.add_task("starting", total=36)
    try:
        with Live(render(state, names, progress), console=console, refresh_per_second=12) as live:
            for message in call:
                last_progress[0] = time.monotonic()
                which = message.WhichOneof("msg")
                if which == "update":
                    u = message.update
                    state.version, state.current_seat = u.state_version, u.current_seat
                    state.kind = u.decision_kind
                    if u.view.HasField("batavia"):
                        state.view = u.view.batavia
                elif which == "event":
                    e = message.event
                    state.version = max(state.version, e.state_version)
                    who = names[e.seat] if 0 <= e.seat < len(names) else "referee"
                    state.events.append(f"[dim]v{e.state_version:<4}[/] {who:>9}: {e.text}")
                elif which == "game_over":
                    state.game_over = message.game_over
                live.update(render(state, names, progress))
                if state.game_over is not None:
                    break
    except grpc.RpcError as err:
        if failure:
            raise DemoError(failure[0]) from None
        raise DemoError(f"lost the Watch stream: {err.code().name}: {err.details()}") from None
    finally:
        done.set()
        call.cancel()
        channel.close()
    if failure and state.game_over is None:
        raise DemoError(failure[0])
    if state.game_over is None:
        raise DemoError("the Watch stream ended before the game was over")
    return state


# ---------------------------------------------------------------------- results
def print_results(game_over: referee_pb2.GameOver, bots: list[BotProcess]) -> None:
    console.print()
    console.print(results_table(game_over, bots))


def results_table(game_over: referee_pb2.GameOver, bots: list[BotProcess]) -> Table:
    """The final scores, one row a seat, its score's parts in words."""
    table = Table(title=f"Final scores — {game_over.summary}", title_justify="left")
    for col in ("rank", "seat", "name", "bot", "gold", "breakdown"):  # 80 columns: see above
        if col in ("rank", "seat", "gold"):
            table.add_column(col, justify="right", no_wrap=True)
        else:
            table.add_column(col, overflow="fold", ratio=2 if col == "breakdown" else 1)
    kinds = {b.seat: b.kind for b in bots}
    for s in sorted(game_over.seats, key=lambda s: (s.rank, s.seat)):
        try:
            details = json.loads(s.details_json) if s.details_json else {}
        except json.JSONDecodeError:
            details = {}
        parts = []
        for key, value in details.items():
            if key == "total" or not value:
                continue
            if isinstance(value, dict):  # e.g. goods: {house: gold}
                parts.append(f"{key} " + "+".join(f"{v} {k}" for k, v in value.items() if v))
            elif isinstance(value, int):
                parts.append(f"{key} {value}")
        breakdown = ", ".join(parts)
        style = "bold green" if s.rank == 1 else ""
        table.add_row(str(s.rank), str(s.seat), s.name, kinds.get(s.seat, "?"), str(s.score),
                      breakdown, style=style)
    return table


def verify(record_path: str) -> str:
    out = subprocess.run([*referee_command(), "replay", "verify", record_path],
                         capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        raise DemoError(f"the record does not verify: {out.stdout}{out.stderr}")
    return out.stdout.strip()


def display_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def keep_viewer(link: str) -> None:
    """Keep the referee, and so its viewer, up until the person at the terminal is done; with
    no terminal (CI, a pipe) nobody can open the link: say so, and do not wait."""
    if not sys.stdin.isatty():
        console.print("the viewer stops with the referee (no terminal to wait on); the replay "
                      "page above stays")
        return
    lobby = link.split("/matches/")[0] + "/lobby"
    console.print(f"[bold]the viewer stays up:[/] {link}\n"
                  f"[bold]play the reference bots yourself:[/] {lobby}\n"
                  "press Enter (or Ctrl-C) to stop the referee")
    try:
        sys.stdin.readline()
    except KeyboardInterrupt:
        pass


# ---------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m referee_tools.demo",
        description="Start a referee, play one 4-seat Batavia match among reference bots "
                    "(2 greedy-batavia, 2 random) as separate processes, and show it live.",
    )
    parser.add_argument("--data-dir", default="runs/demo", help="referee store (default runs/demo)")
    parser.add_argument("--seed", type=int, help="match seed (random if absent)")
    parser.add_argument("--setup", choices=("face_down", "face_up"), default="face_down")
    parser.add_argument("--delay-ms", type=int, default=25,
                        help="bots' simulated thinking time per move (default 25, so the match "
                             "can be followed; 0 = full speed)")
    parser.add_argument("--start-timeout", type=float, default=30.0,
                        help="seconds to wait for the referee to start (default 30)")
    parser.add_argument("--stall-timeout", type=float, default=60.0,
                        help="fail if no move happens for this many seconds (default 60)")
    parser.add_argument("--no-web", action="store_true",
                        help="no web viewer (by default the referee serves one, its link is "
                             "printed, and it stays up after the match until Enter when run "
                             "from a terminal)")
    args = parser.parse_args(argv)

    data_dir = Path(args.data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    # the house bots (referee serve --house-bots): a person who opens the lobby page while the
    # viewer stays up finds the reference bots there to play (docs/bot/lobby.md)
    referee = LocalReferee(data_dir, secrets.token_hex(24), log_path=data_dir / "server.log",
                           extra_args=() if args.no_web else ("--http-port", "0",
                                                              "--house-bots"))
    bots: list[BotProcess] = []
    try:
        with console.status("starting the referee…"):
            try:
                referee.start(args.start_timeout)
            except RefereeStartError as exc:
                raise DemoError(str(exc)) from None
        console.print(f"[bold]referee[/] serving on {referee.address} "
                      f"(store {display_path(str(data_dir))}, log {referee.log_path.name})")
        names = [name for name, _ in SEATS]
        with AdminClient(referee.address, referee.admin_token) as admin:
            created = admin.create_match("batavia", len(SEATS), seed=args.seed,
                                         options={"setup": args.setup}, seat_names=names)
        tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
        console.print(f"[bold]match[/] {created.match_id}: batavia, 4 seats, setup {args.setup}")
        port = None if args.no_web else web_port(referee.log_path)
        link = f"http://127.0.0.1:{port}/matches/{created.match_id}" if port else None
        if link:
            console.print(f"[bold]watch live:[/] {link}")
        bots = launch_bots(referee.address, created.match_id, tokens, data_dir, args.delay_ms)
        for b in bots:
            console.print(f"  seat {b.seat}: {b.name:<9} referee-bot {b.kind} (pid {b.proc.pid})")
        state = follow(referee.address, created.match_id, names, bots, args.stall_timeout)
        for b in bots:
            try:
                b.proc.wait(30)
            except subprocess.TimeoutExpired:
                raise DemoError(f"bot {b.name} did not exit after the game ended; "
                                f"log: {b.log_path}") from None
            if b.proc.returncode != 0:
                raise DemoError(f"bot {b.name} exited with status {b.proc.returncode}:\n"
                                f"{tail(b.log_path)}")
        game_over = state.game_over
        assert game_over is not None
        print_results(game_over, bots)
        record = game_over.record_path
        if record:
            console.print(f"record: [bold]{display_path(record)}[/]")
            console.print(f"verify: [cyan]referee replay verify {display_path(record)}[/]  →  "
                          f"{verify(record)}")
            page = replay_page(Path(record), data_dir / "replay")
            if page is not None:
                console.print(f"replay: [bold]{display_path(str(page))}[/] (a static page: "
                              "open it in a browser, no referee needed)")
        else:
            console.print("[yellow]the referee reported no record path[/]")
        if link:
            keep_viewer(link)
        return 0
    except DemoError as exc:
        console.print(f"[bold red]demo failed:[/] {exc}")
        return 1
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]")
        return 130
    finally:
        stop_bots(bots)
        if referee.stop(grace=15):
            console.print("[yellow]the referee did not stop within 15 s; it was killed[/]")
        if referee.returncode not in (0, None, -signal.SIGTERM):
            console.print(f"[yellow]the referee exited with status {referee.returncode}; "
                          f"log: {referee.log_path}[/]")


if __name__ == "__main__":
    sys.exit(main())
