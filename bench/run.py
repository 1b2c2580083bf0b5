"""`make bench`: how fast are the engines and the referee over gRPC? Writes bench/results.json.

Engine (one core, in-process, per registered game — new games join automatically)
    Random playouts: each decision is one ``GAME.decision(state)`` (which lists ALL legal moves),
    a uniform pick, and one ``GAME.apply(state, seat, move)``. No protobuf conversion.
    ``decisions_per_s`` = decisions / wall time; ``games_per_s`` = finished games / wall time;
    ``decisions_per_cpu_s`` = decisions / CPU time of the process (what one dedicated core does,
    useful when the machine is shared: compare it with the load average recorded alongside).
    Seat counts rotate over the game's range; each game's options are its defaults.

gRPC (loopback, against a real ``referee serve`` subprocess with its default settings)
    Moves: ``--concurrency`` Batavia matches at once (4 seats each, one Play stream per seat),
    random bots; when a match ends a new one is created. Client code is lean raw-stub code
    (no SDK legality check) spread over ``--clients`` processes, each one asyncio loop.
      move_per_s   accepted moves (MoveResult accepted) per second, over the measuring window.
      move latency time from writing a Submit to receiving the NEXT Decision of that match
                   (on whichever seat's stream it arrives): the full turn-around a bot sees —
                   decode, validate, apply, commit to SQLite, acknowledge, broadcast events to
                   the streams that asked for them (Join.events), build and push the next seat's view and every legal move. The last move of a
                   match (answered by GameOver) gives no sample.
    Combined moves (``grpc.combined``): the same move phase again on a fresh referee of its
    own (on ``--address``'s, when given), every seat joining with ``Join.combine_decision``: when a seat acts again its next Decision
    comes inside the MoveResult (one message instead of two). ``grpc.combined.move_per_s``,
    ``server_cpu_ms_per_move`` and ``server_messages_per_move`` against the plain phase's.
    By game (``grpc.by_game.<game>``; ``--by-game-seconds``): the plain move phase again for
    every other game, each on a fresh referee, shorter; the main game's figures are the plain
    phase's. Their views and state hashes are larger than Batavia's, so their server CPU per
    move shows what the views and the hash cost on the move path.
    Echo: the same number of concurrent streams (``--concurrency``) over the same client
    processes, each ping-ponging one ``EchoMessage`` at a time on the ``Echo`` bidi stream,
    with a payload as large as the mean Decision seen in the move phase (so the bytes on the
    wire are comparable). echo_per_s = round trips per second; latency = write → echo back.
    Both phases run against the same server process, one after the other, each with a warm-up
    that is not measured.
    Floor (``bench/floor.py``; ``--skip-floor``): the same two phases on a stub gRPC server
    that does no game work (raw bytes, no validation, storage or protobuf), in its own process
    with the referee's server options, whatever ``--address`` says. Its echo is the echo above;
    its relay follows an accepted move's message pattern: ``--concurrency`` groups of
    ``--seats`` streams, one token per group; a message from seat i makes the stub send a
    20-byte ack to seat i and a payload as large as the mean Decision to seat i+1. A move is
    1 message in and 2 out, an echo 1 in and 1 out, so ``floor.relay_to_echo_ratio`` (relay
    "moves" per second / echoes per second) is the ceiling of move_to_echo_ratio that the
    protocol's message pattern leaves on this machine, before any game work. Counting
    messages alone (3 per move against 2 per echo, on the server and on the clients) predicts
    2/3: the move/echo target can be met only if a move's game work costs nothing.

Tournament (``--tournament-matches`` Batavia matches through ``referee-tournament``'s runner)
    The whole path a competition takes: CreateMatch, one ``referee-bot random`` process per
    seat (Python start-up included), the Play streams, GetRecord, the SQLite store.
    ``tournament.matches_per_s`` and its ratio to the in-process ``engine.batavia.games_per_s``
    (how much of a match's cost is the platform rather than the rules).

Load (``bench/load.py``; ``--load-matches``, 0 skips it)
    ``grpc.load300``: 300 Batavia matches of 4 random bots at once on a fresh referee:
    ``moves_per_s``, move latency ``p50_ms`` / ``p99_ms`` (Submit to the next Decision), server
    CPU per move and the referee's RSS at start, after and at its peak; ``unfinished``: the
    matches it started that never ended (those under way at the end are played out), which must
    be 0. ``grpc.joins4000``: 1,000 matches x 4 seats opening their Play streams at once, how
    many joined.

Burst (``bench/burst.py``; ``--burst-matches``, 0 skips it)
    ``grpc.burst300``: 300 four-seat Batavia matches created at once, then all 1,200 seats
    joined at once by one process over ``--burst-channels`` (32) channels and played to the end
    (issue 31 item 8): ``finished``, ``unfinished`` (must be 0), moves per second over the
    burst, the slowest stream's wait for its Welcome (``welcome_s_max``), and how long a
    ListGames made meanwhile on a fresh channel took (``probe_s``).

Compiled build (``--compiled``, bench/compiled.py; after ``make compiled``)
    Only the engine phase and the plain gRPC move phase, run with the mypyc build present, merged
    into the results file beside the pure-Python figures it holds: ``engine_compiled.<game>``
    (``decisions_per_cpu_s`` and ``speedup_vs_python``, against ``engine.<game>``) and
    ``server_compiled`` (``cpu_ms_per_move``, ``python_cpu_ms_per_move`` = grpc's,
    ``to_floor_relay`` against ``grpc.floor``), and, unless their flags are 0, the research
    phase's environment steps (``research_compiled.<game>.env_steps_per_cpu_s``) and the
    search's iteration rate at the smallest table (``ismcts_compiled.<game>.iterations_per_cpu_s``),
    each with the pure-Python figure (``python``) the file holds. Without the flag, when
    the build is present it warns and lists the compiled modules in ``machine.compiled_build``
    (empty for the pure-Python reference's figures, which ``engine.*`` and ``grpc.*`` should be).

A phase with ``unfinished`` above 0 makes ``bench.run`` print FAILED and exit 1 (the results
are written first).

Persistent sessions (``bench/sessions.py``; ``--persistent-matches``)
    ``tournament.persistent.matches_per_s``: the gRPC phases' game and seats through the
    runner with one ``referee-bot session`` process per entrant, started once;
    ``tournament.move_path_matches_per_s`` = ``grpc.move_per_s`` / mean moves per match of those
    matches (same run); their ratio ``tournament.persistent_to_move_path`` (goal >= 0.5).

League (``bench/league.py``; ``--league-matches``, 0 skips it)
    ``league.matches_per_s``: the gRPC phases' game and seats played by the league runner
    (``referee-tournament league serve``) among remote entrants, one ``referee-bot session``
    process each; ``league.move_path_matches_per_s`` = ``grpc.move_per_s`` / mean moves per
    match of those matches (same run); their ratio ``league.league_to_move_path`` (goal >= 0.5).

Fair chance (``bench/fairness.py``; ``--fairness-pairs``, 0 skips it)
    ``fairness.<game>.shared_chance``: over duplicate pairs of in-process matches (same seed,
    only seat 0's play differs), the fraction of chance events (shared ones and those of seats
    other than 0) that drew alike; each edition of a game apart (``fairness.goa_2004``).

Search bot (``bench/ismcts.py``; ``--ismcts-matches``, 0 skips it)
    ``ismcts.<game>.win_rate_vs_greedy`` with ``ismcts.<game>.interval`` (95% Wilson) and
    ``ismcts.<game>.matches``: the ISMCTS bot against the greedy bots, in process, duplicate
    seeds with seats rotated; a few matches at a small iteration budget (``--ismcts-iterations``)
    to keep the bench short, so the interval is wide. ``ismcts.<game>.iterations_per_cpu_s``
    (``_min``: the slowest seat count; ``_strong``: the bot's default profile; ``_strong_late``:
    that profile late in a greedy game, where a duel's searches run, ``--ismcts-late-seconds``
    a search): search iterations per CPU second of the fast profile, every seat count. The long SPRT duels at one CPU second
    a move are ``make bench-sprt`` (``bench/sprt.py``), never part of this run.

CPU use of the server and of the client processes is recorded per phase (from /proc and
os.times), which shows which side is the bottleneck on this machine.

Store (``bench/store.py``; ``--store-seconds``, 0 skips it)
    ``store.<backend>.<durability>.moves_per_s`` / ``commit_batch_mean`` / ``cpu_ms_per_move``:
    ``--store-matches`` matches writing their moves at once through the store alone, SQLite and
    PostgreSQL (a throw-away cluster from Debian's binaries, or ``--store-pg-url``), and
    ``store.postgresql.grpc_moves_per_s``: the gRPC move phase on a referee with a PostgreSQL
    store (only when the bench starts the referee). With a cluster the bench starts:
    ``store.postgresql.<durability>.server_cpu_ms_per_move`` and
    ``store.postgresql.grpc_db_cpu_ms_per_move``, the database server's own CPU per move.

Forward model (``bench/sim.py``; ``--sim-seconds``, 0 skips it)
    ``sim.<game>.clones_per_s`` (``Game.clone``), ``sim.<game>.deepcopy_clones_per_s`` (the
    default clone, ``copy.deepcopy``) and their ratio ``clone_speedup`` (goal >= 10), and
    ``sim.<game>.samples_per_s`` (``Game.sample_state`` from the view of the seat to act), over
    positions of random games.

Research environments (``bench/research.py``; ``--research-seconds``, 0 skips it)
    ``research.<game>.env_steps_per_cpu_s``: PettingZoo AEC steps per CPU-second of random
    play at 3 seats, each step reading the agent's observation (the default mode: the game's
    feature planes where it declares them) and action mask (issue 36's goal: >= 10,000).

Memory (``bench/memory.py``)
    ``engine.<game>.state_kb_mean`` / ``state_kb_max``: the heap one game state takes (a
    ``copy.deepcopy`` traced with ``tracemalloc``, sampled along random playouts; the tables
    every match shares, derived from the component sheet, left out).
    ``grpc.memory``: the referee process's resident set size at start and after the move phase
    (``matches_held_after_moves`` finished matches are still held then: ``--keep-finished``
    defaults to 300 s), and ``kb_per_live_match`` from RSS before and after creating
    ``--idle-matches`` matches nobody plays, on a fresh referee process of its own (only when the
    bench starts the referee).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import platform
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python bench/run.py` as well as `python -m bench.run`
    sys.path.insert(0, str(ROOT))

from referee_client.tokens import add_token_flag, token_arg  # noqa: E402

from bench import compiled as compiled_build  # noqa: E402 - needs the path set above
from bench import fairness as fairness_bench  # noqa: E402
from bench import ismcts as ismcts_bench  # noqa: E402
from bench import league as league_bench  # noqa: E402
from bench import machine  # noqa: E402
from bench import research as research_bench  # noqa: E402
from bench import sessions as session_bench  # noqa: E402
from bench import sim as sim_bench  # noqa: E402
from bench import store as store_bench  # noqa: E402
from bench.grpc_phases import RefereeServer, run_phase  # noqa: E402
from bench.memory import engine_state_bytes, idle_match_cost  # noqa: E402

RESULTS = ROOT / "bench" / "results.json"
TARGET_DECISIONS_PER_S = 25_000
TARGET_MOVE_ECHO_RATIO = 2 / 3


# ============================================================================ goals
def floor_ratios(g: dict[str, Any]) -> dict[str, float]:
    """The per-move goals of issue 22 against the zero-work floor of the same run: server CPU
    per move over the floor's CPU per relay (goal <= 2) and moves per second over the floor's
    relays per second (goal >= 0.5), for plain Play streams and for combine_decision ones."""
    fl = g.get("floor") or {}
    cpu, relay = fl.get("server_cpu_ms_per_relay"), fl.get("relay_per_s")
    out: dict[str, float] = {}
    parts = [("", g), ("combined.", g.get("combined") or {}),
             *((f"by_game.{name}.", part) for name, part in (g.get("by_game") or {}).items()
               if name != g.get("game"))]
    for name, part in parts:
        if cpu and part.get("server_cpu_ms_per_move"):
            out[f"grpc.{name}server_cpu_to_floor_relay"] = round(
                part["server_cpu_ms_per_move"] / cpu, 3)
        if relay and part.get("move_per_s"):
            out[f"grpc.{name}move_to_floor_relay"] = round(part["move_per_s"] / relay, 3)
    return out


def _move_figures(phase: dict[str, Any]) -> dict[str, Any]:
    """A move phase's headline figures (``grpc.by_game.<game>``)."""
    return {"move_per_s": round(phase["per_s"], 1), "move_p99_ms": round(phase["p99_ms"], 3),
            "server_cpu_ms_per_move": round(phase["server_cpu_ms_per_op"], 4),
            "mean_decision_bytes": phase.get("mean_decision_bytes")}


def floor_targets(g: dict[str, Any]) -> dict[str, bool | None]:
    r = floor_ratios(g)
    cpu, rate = r.get("grpc.server_cpu_to_floor_relay"), r.get("grpc.move_to_floor_relay")
    return {
        "grpc.server_cpu_ms_per_move <= 2x grpc.floor.server_cpu_ms_per_relay":
            cpu <= 2 if cpu is not None else None,
        "grpc.move_per_s >= 0.5 grpc.floor_relay_per_s": rate >= 0.5 if rate is not None else None,
    }


# ============================================================================ machine
def machine_info() -> dict[str, Any]:
    import google.protobuf
    import grpc

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        commit = ""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu_model": machine.cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "loadavg_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "grpcio": grpc.__version__,
        "protobuf": google.protobuf.__version__,
        "git_commit": commit,
    }


# ============================================================================ engine
def discover_games() -> tuple[dict[str, Any], dict[str, str]]:
    """Every game package under referee.games exposing GAME, plus registry extras; a game that
    fails to import is reported, not fatal (games are built in parallel)."""
    import referee.games as pkg
    from referee.core import registry
    from referee.core.contract import Game

    found: dict[str, Any] = {}
    broken: dict[str, str] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        try:
            module = importlib.import_module(f"referee.games.{info.name}")
        except Exception as exc:  # noqa: BLE001 - report and go on
            broken[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            found[game.spec.name] = game
    found.update(getattr(registry, "_extra", {}))
    return found, broken


@dataclass
class EngineResult:
    game: str
    decisions: int = 0
    games: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    seat_counts: list[int] = field(default_factory=list)
    error: str = ""

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds if self.seconds else 0.0

    @property
    def decisions_per_cpu_s(self) -> float:
        return self.decisions / self.cpu_seconds if self.cpu_seconds else 0.0

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds if self.seconds else 0.0


def bench_engine(game, seconds: float, progress=None, task=None) -> EngineResult:
    from referee.core.rng import Streams

    spec = game.spec
    seat_counts = list(range(spec.min_seats, spec.max_seats + 1))
    out = EngineResult(spec.name, seat_counts=seat_counts)
    options = spec.parse_options({})
    sheet = game.default_components(options)
    rng = random.Random(1)
    decision, apply = game.decision, game.apply
    start = time.perf_counter()
    cpu_start = time.process_time()
    deadline = start + seconds
    seed = 0
    try:
        while True:
            n = seat_counts[seed % len(seat_counts)]
            state = game.setup(options, n, Streams(seed), sheet)
            seed += 1
            count = 0
            while (d := decision(state)) is not None:
                moves = d.moves
                apply(state, d.seat, moves[rng.randrange(len(moves))])
                count += 1
                if count > 200_000:
                    raise RuntimeError(f"a {spec.name} game passed 200000 decisions (seed {seed})")
            out.decisions += count
            out.games += 1
            now = time.perf_counter()
            if progress is not None:
                progress.update(task, completed=min(now - start, seconds),
                                rate=f"{out.decisions / (now - start):,.0f} decisions/s")
            if now >= deadline:
                break
    except Exception as exc:  # noqa: BLE001 - an engine bug must not sink the whole bench
        out.error = f"{type(exc).__name__}: {exc}"
    out.seconds = time.perf_counter() - start
    out.cpu_seconds = time.process_time() - cpu_start
    return out


def measure_compiled(args: argparse.Namespace, console: Any) -> int:
    """``--compiled``: the engine, gRPC move, research and search-rate phases with the build
    present (bench/compiled.py), merged into the results file under ``engine_compiled`` and
    ``server_compiled``, with each figure's ratio to the pure-Python one the file already holds
    (a plain ``make bench`` run before ``make compiled``)."""
    from rich.progress import BarColumn, Progress, TextColumn

    old = compiled_build.stale()
    missing = [m for m in compiled_build.MODULES if not compiled_build.compiled(m)]
    if old or missing:
        raise SystemExit(f"bench --compiled: the build is {'stale' if old else 'missing'} "
                         f"({', '.join(old or missing)}): run `make compiled` first")
    out = Path(args.output)
    results: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    plain = results.get("engine", {})
    engine: dict[str, Any] = {}
    games, _ = discover_games()
    for name in [] if args.skip_engine else sorted(games):
        r = bench_engine(games[name], args.engine_seconds)
        base = plain.get(name, {}).get("decisions_per_cpu_s")
        engine[name] = {
            "decisions_per_cpu_s": round(r.decisions_per_cpu_s),
            "decisions_per_s": round(r.decisions_per_s),
            "cpu_seconds": round(r.cpu_seconds, 2),
            "speedup_vs_python": round(r.decisions_per_cpu_s / base, 2) if base else None,
            **({"error": r.error} if r.error else {}),
        }
        console.print(f"engine_compiled.{name}: {engine[name]['decisions_per_cpu_s']:,} "
                      f"decisions/CPU-s ({engine[name]['speedup_vs_python']}x python)")
    server: dict[str, Any] = {}
    if not args.skip_grpc:
        with tempfile.TemporaryDirectory(prefix="referee-bench-") as tmp:
            ref = RefereeServer(Path(tmp), args.address, args.admin_token)
            ref.start()
            try:
                with Progress(TextColumn("{task.description:<28}"), BarColumn(),
                              TextColumn("{task.fields[rate]:>24}"), console=console) as progress:
                    task = progress.add_task(f"gRPC moves ({args.game}), compiled",
                                             total=args.warmup + args.grpc_seconds, rate="")
                    moves = run_phase("moves", ref, clients=args.clients,
                                      concurrency=args.concurrency, seconds=args.grpc_seconds,
                                      warmup=args.warmup, game=args.game, seats=args.seats,
                                      payload_bytes=0, progress=progress, task=task)
            finally:
                ref.stop()
        g = results.get("grpc", {})
        floor = g.get("floor", {}).get("server_cpu_ms_per_relay")
        cpu = moves["server_cpu_ms_per_op"]
        server = {
            "game": args.game, "seats": args.seats, "concurrency": args.concurrency,
            "move_per_s": round(moves["per_s"], 1),
            "cpu_ms_per_move": round(cpu, 4),
            "python_cpu_ms_per_move": g.get("server_cpu_ms_per_move"),
            "to_floor_relay": round(cpu / floor, 2) if floor else None,
        }
        console.print(f"server_compiled.cpu_ms_per_move: {server['cpu_ms_per_move']} "
                      f"(python {server['python_cpu_ms_per_move']}, floor relay {floor})")
    # issue 36's items 1 and 2 with the build: environment steps and the search's iterations
    research: dict[str, Any] = {}
    for name, r in (research_bench.run_phase(games, args.research_seconds)
                    if args.research_seconds else {}).items():
        research[name] = {"env_steps_per_cpu_s": r["env_steps_per_cpu_s"],
                          "python": results.get("research", {}).get(name, {}).get(
                              "env_steps_per_cpu_s")}
    ismcts: dict[str, Any] = {}
    for name, r in (ismcts_bench.rate_phase(games, args.ismcts_rate_iterations)
                    if args.ismcts_rate_iterations else {}).items():
        if "by_seats" in r:
            ismcts[name] = {"iterations_per_cpu_s": r["by_seats"][0]["iterations_per_cpu_s"],
                            "seats": r["by_seats"][0]["seats"],
                            "python": results.get("summary", {}).get(
                                f"ismcts.{name}.iterations_per_cpu_s")}
    results["engine_compiled"] = engine
    results["server_compiled"] = server
    results["research_compiled"] = research
    results["ismcts_compiled"] = ismcts
    results["compiled_build"] = {"modules": list(compiled_build.MODULES),
                                 "generated_unix": int(time.time()),
                                 "machine": machine_info()}
    summary = results.setdefault("summary", {})
    for name, e in engine.items():
        summary[f"engine_compiled.{name}.decisions_per_cpu_s"] = e["decisions_per_cpu_s"]
    if server:
        summary["server_compiled.cpu_ms_per_move"] = server["cpu_ms_per_move"]
    for name, r in research.items():
        summary[f"research_compiled.{name}.env_steps_per_cpu_s"] = r["env_steps_per_cpu_s"]
    for name, r in ismcts.items():
        summary[f"ismcts_compiled.{name}.iterations_per_cpu_s"] = r["iterations_per_cpu_s"]
    out.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description="Measure engine speed (per registered game) and gRPC move vs echo "
                    "throughput/latency against a real referee; writes bench/results.json.",
    )
    parser.add_argument("--engine-seconds", type=float, default=8.0,
                        help="random playouts per game (default 8 s)")
    parser.add_argument("--grpc-seconds", type=float, default=15.0,
                        help="measured seconds per gRPC phase (default 15)")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured warm-up (s)")
    parser.add_argument("--clients", type=int, default=2,
                        help="client processes (default 2; see the docstring)")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="concurrent matches, and concurrent echo streams (default 16)")
    parser.add_argument("--game", default="batavia", help="game for the gRPC phases")
    parser.add_argument("--seats", type=int, default=4, help="seats per match (default 4)")
    parser.add_argument("--address", default="",
                        help="benchmark this running referee instead of starting one")
    add_token_flag(parser, "--admin-token", "REFEREE_ADMIN_TOKEN", "the admin token of --address")
    parser.add_argument("--skip-grpc", action="store_true", help="engine part only")
    parser.add_argument("--idle-matches", type=int, default=2000, metavar="N",
                        help="matches created (not played) on a fresh referee to measure its "
                             "memory per live match (default 2000; 0 skips)")
    parser.add_argument("--skip-floor", action="store_true",
                        help="skip the zero-work stub server phases (bench/floor.py)")
    parser.add_argument("--tournament-matches", type=int, default=12,
                        help="Batavia matches for the tournament phase (0 skips it)")
    parser.add_argument("--tournament-concurrency", type=int, default=4,
                        help="matches at once in the tournament phase")
    session_bench.add_arguments(parser)
    league_bench.add_arguments(parser)
    parser.add_argument("--skip-engine", action="store_true", help="gRPC part only")
    parser.add_argument("--load-matches", type=int, default=300, metavar="N",
                        help="Batavia matches at once in the load phase, bench/load.py "
                             "(default 300; 0 skips it)")
    parser.add_argument("--burst-matches", type=int, default=300, metavar="N",
                        help="Batavia matches created at once and all their seats joined at "
                             "once by one process, bench/burst.py (default 300; 0 skips it)")
    parser.add_argument("--burst-channels", type=int, default=32, metavar="N",
                        help="channels of the burst phase's one client process (default 32)")
    parser.add_argument("--cluster-matches", type=int, default=300, metavar="N",
                        help="Batavia matches at once against `referee serve --workers 2` "
                             "behind nginx and against one plain referee, bench/cluster.py "
                             "(default 300; 0 skips it; needs nginx)")
    parser.add_argument("--cluster-workers", default="1,2,4", metavar="N,N,...",
                        help="numbers of workers for cluster.cpu_per_move_by_workers: the "
                             "workers' CPU per move with each, under the cluster phase's load "
                             "(default 1,2,4; '' skips it)")
    parser.add_argument("--skip-web", action="store_true",
                        help="skip the web-viewer phases (bench/web.py: moves with --http-port "
                             "and open viewers against plain)")
    parser.add_argument("--web-viewers", type=int, default=2, help="viewers in the web phase")
    parser.add_argument("--fairness-pairs", type=int, default=20, metavar="N",
                        help="duplicate pairs of matches per game for fairness.<game>."
                             "shared_chance, bench/fairness.py (default 20; 0 skips it)")
    parser.add_argument("--ismcts-matches", type=int, default=ismcts_bench.MATCHES, metavar="N",
                        help="matches per game of the search bot against greedy for ismcts."
                             "<game>.win_rate_vs_greedy, bench/ismcts.py (default "
                             f"{ismcts_bench.MATCHES}; 0 skips it)")
    parser.add_argument("--ismcts-iterations", type=int, default=ismcts_bench.ITERATIONS,
                        metavar="K", help="the search bot's iterations per move in the bench "
                                          f"(default {ismcts_bench.ITERATIONS})")
    parser.add_argument("--ismcts-rate-iterations", type=int, default=ismcts_bench.RATE_ITERATIONS,
                        metavar="K", help="iterations a search for ismcts.<game>."
                                          "iterations_per_cpu_s (default "
                                          f"{ismcts_bench.RATE_ITERATIONS}; 0 skips it)")
    parser.add_argument("--by-game-seconds", type=float, default=8.0, metavar="S",
                        help="measured seconds of the move phase for each game besides --game "
                             "(grpc.by_game.<game>; default 8; 0 skips them)")
    parser.add_argument("--ismcts-late-seconds", type=float, default=ismcts_bench.LATE_SECONDS,
                        metavar="S", help="CPU seconds a search for ismcts.<game>."
                                          "iterations_per_cpu_s_strong_late, the strong profile "
                                          "late in a greedy game (default "
                                          f"{ismcts_bench.LATE_SECONDS}; 0 skips it)")
    parser.add_argument("--sim-seconds", type=float, default=2.0, metavar="S",
                        help="seconds per figure and game of the forward model's phase "
                             "(sim.<game>.clones_per_s, samples_per_s; bench/sim.py; default 2, "
                             "0 skips it)")
    parser.add_argument("--research-seconds", type=float, default=2.0, metavar="S",
                        help="CPU-seconds per game of the research environments' phase "
                             "(research.<game>.env_steps_per_cpu_s; bench/research.py; "
                             "default 2, 0 skips it)")
    store_bench.add_arguments(parser)
    parser.add_argument("--output", default=str(RESULTS), help="results file")
    parser.add_argument("--compiled", action="store_true",
                        help="measure the compiled build (make compiled) instead: the engine phase "
                             "and the gRPC move phase only, written into the results file's "
                             "engine_compiled and server_compiled keys beside the pure-Python "
                             "figures already there (bench/compiled.py)")
    args = parser.parse_args(argv)
    if args.compiled:
        return measure_compiled(args, Console())
    # engine.* and grpc.* are the pure-Python reference's figures: a build present is said
    # (machine.compiled_build, and on the terminal), so a run with it is never taken for those.
    built = [m for m in compiled_build.MODULES if compiled_build.extension(m) is not None]
    if built:
        Console().print("[yellow]the compiled build is present (make compiled): these figures "
                        "are not the pure-Python reference's; `make clean-compiled` first, or "
                        "--compiled to measure the build[/yellow]")
    args.usage_error = parser.error
    args.admin_token = token_arg(args, "--admin-token", "REFEREE_ADMIN_TOKEN") or ""

    console = Console()
    results: dict[str, Any] = {
        "generated_unix": int(time.time()),
        "machine": {**machine_info(), "compiled_build": built},
        "definitions": (__doc__ or "").strip(),
        "settings": {k: v for k, v in vars(args).items() if k not in ("output", "admin_token", "admin_token_file", "usage_error")},
        "engine": {},
        "grpc": {},
    }
    games, broken = discover_games()
    if broken:
        results["engine_skipped"] = broken

    columns = (TextColumn("{task.description:<28}"), BarColumn(), TextColumn("{task.fields[rate]:>24}"),
               TimeRemainingColumn())
    with Progress(*columns, console=console) as progress:
        tasks = {name: progress.add_task(f"engine {name}", total=args.engine_seconds, rate="")
                 for name in ([] if args.skip_engine else sorted(games))}
        if not args.skip_grpc:
            phase_total = args.warmup + args.grpc_seconds
            t_moves = progress.add_task(f"gRPC moves ({args.game})", total=phase_total, rate="")
            t_combined = progress.add_task("gRPC moves, combine_decision", total=phase_total,
                                           rate="")
            t_echo = progress.add_task("gRPC echo", total=phase_total, rate="")
            other_games = [] if args.address or not args.by_game_seconds \
                else sorted(g for g in games if g != args.game)
            t_by_game = {g: progress.add_task(f"gRPC moves ({g})",
                                              total=args.warmup + args.by_game_seconds, rate="")
                         for g in other_games}
            if args.load_matches:
                t_load = progress.add_task(f"gRPC load ({args.load_matches} matches)",
                                           total=5.0 + args.grpc_seconds, rate="")
            if args.burst_matches and not args.address:
                t_burst = progress.add_task(f"gRPC burst ({args.burst_matches} matches)",
                                            total=args.burst_matches, rate="")
            if not args.skip_floor:
                t_floor = progress.add_task("gRPC floor (stub server)", total=2 * phase_total,
                                            rate="")
        for name in [] if args.skip_engine else sorted(games):
            r = bench_engine(games[name], args.engine_seconds, progress, tasks[name])
            state_mem = engine_state_bytes(games[name]) if not r.error else {}
            results["engine"][name] = {
                "decisions_per_s": round(r.decisions_per_s),
                "games_per_s": round(r.games_per_s, 2),
                "decisions": r.decisions,
                "games": r.games,
                "seconds": round(r.seconds, 2),
                # CPU time of this process: the rate a dedicated core would give, even when
                # other work shares the machine (wall-clock rates drop under contention).
                "decisions_per_cpu_s": round(r.decisions_per_cpu_s),
                "cpu_seconds": round(r.cpu_seconds, 2),
                "seat_counts": r.seat_counts,
                # heap footprint of one game state (bench/memory.py)
                "state_kb_mean": state_mem.get("state_kb_mean"),
                "state_kb_max": state_mem.get("state_kb_max"),
                **({"error": r.error} if r.error else {}),
            }
        if not args.skip_grpc:
            with tempfile.TemporaryDirectory(prefix="referee-bench-") as tmp:
                server = RefereeServer(Path(tmp), args.address, args.admin_token)
                server.start()
                memory: dict[str, Any] = {}
                try:
                    memory["rss_mb_start"] = server.rss_mb()
                    moves = run_phase("moves", server, clients=args.clients,
                                      concurrency=args.concurrency, seconds=args.grpc_seconds,
                                      warmup=args.warmup, game=args.game, seats=args.seats,
                                      payload_bytes=0, progress=progress, task=t_moves)
                    memory["rss_mb_after_moves"] = server.rss_mb()
                    memory["matches_held_after_moves"] = moves.get("matches_started")
                    payload = int(moves.get("mean_decision_bytes") or 1024)
                    echo = run_phase("echo", server, clients=args.clients,
                                     concurrency=args.concurrency, seconds=args.grpc_seconds,
                                     warmup=args.warmup, game=args.game, seats=args.seats,
                                     payload_bytes=payload, progress=progress, task=t_echo)
                finally:
                    server.stop()
                # On a referee of its own, as fresh as the plain phase's (finished matches held
                # by the first one would make its cyclic GC walk them during this phase).
                (Path(tmp) / "combined").mkdir()
                second = RefereeServer(Path(tmp) / "combined", args.address, args.admin_token)
                second.start()
                try:
                    combined = run_phase("moves", second, clients=args.clients,
                                         concurrency=args.concurrency,
                                         seconds=args.grpc_seconds, warmup=args.warmup,
                                         game=args.game, seats=args.seats, payload_bytes=0,
                                         progress=progress, task=t_combined, combine=True)
                finally:
                    second.stop()
                # The same move phase for every other game, each on a referee of its own: the
                # move path's cost where views and state hashes are larger than Batavia's.
                by_game = {args.game: _move_figures(moves)}
                for g in other_games:
                    (Path(tmp) / g).mkdir()
                    ref = RefereeServer(Path(tmp) / g)
                    ref.start()
                    try:
                        by_game[g] = _move_figures(run_phase(
                            "moves", ref, clients=args.clients, concurrency=args.concurrency,
                            seconds=args.by_game_seconds, warmup=args.warmup, game=g,
                            seats=args.seats, payload_bytes=0, progress=progress,
                            task=t_by_game[g]))
                    finally:
                        ref.stop()
                if server.proc is not None and args.idle_matches:
                    # On a fresh referee of its own: in the one above, memory freed by finished
                    # matches is reused (RSS would understate a match), and idle matches held
                    # through the move phase would slow it (the cyclic GC walks them all).
                    (Path(tmp) / "memory").mkdir()
                    fresh = RefereeServer(Path(tmp) / "memory")
                    fresh.start()
                    assert fresh.proc is not None  # started, not external
                    try:
                        memory.update(idle_match_cost(
                            fresh.address, fresh.admin_token, fresh.proc.pid, game=args.game,
                            seats=args.seats, matches=args.idle_matches))
                    finally:
                        fresh.stop()
            results["grpc"] = {
                "game": args.game,
                "seats": args.seats,
                "client_processes": args.clients,
                "concurrency": args.concurrency,
                "echo_payload_bytes": payload,
                "move_per_s": round(moves["per_s"], 1),
                "move_p50_ms": round(moves["p50_ms"], 3),
                "move_p99_ms": round(moves["p99_ms"], 3),
                "echo_per_s": round(echo["per_s"], 1),
                "echo_p50_ms": round(echo["p50_ms"], 3),
                "echo_p99_ms": round(echo["p99_ms"], 3),
                "move_to_echo_ratio": round(moves["per_s"] / echo["per_s"], 3)
                if echo["per_s"] else None,
                "server_cpu_ms_per_move": round(moves["server_cpu_ms_per_op"], 4),
                "server_cpu_sys_ms_per_move": round(moves["server_cpu_sys_ms_per_op"], 4),
                "server_cpu_ms_per_echo": round(echo["server_cpu_ms_per_op"], 4),
                "combined": {
                    "move_per_s": round(combined["per_s"], 1),
                    "move_p50_ms": round(combined["p50_ms"], 3),
                    "move_p99_ms": round(combined["p99_ms"], 3),
                    "server_cpu_ms_per_move": round(combined["server_cpu_ms_per_op"], 4),
                    "server_messages_per_move": round(combined["server_messages_per_move"], 3),
                    "phase": combined,
                },
                "memory": memory,
                "by_game": by_game,
                "moves_phase": moves,
                "echo_phase": echo,
            }
            if args.load_matches and not args.address:
                from bench.load import measure_joins, measure_load

                results["grpc"][f"load{args.load_matches}"] = measure_load(
                    matches=args.load_matches, clients=args.clients, seats=args.seats,
                    seconds=args.grpc_seconds, warmup=5.0, progress=progress, task=t_load)
                results["grpc"]["joins4000"] = measure_joins(matches=1000, seats=4)
            if args.burst_matches and not args.address:
                from bench.burst import measure_burst

                def burst_progress(done: int, total: int) -> None:
                    progress.update(t_burst, completed=done, rate=f"{done} ended")

                results["grpc"][f"burst{args.burst_matches}"] = measure_burst(
                    matches=args.burst_matches, seats=args.seats, channels=args.burst_channels,
                    progress=burst_progress)
            if not args.skip_floor:
                # The protocol's own ceiling for move/echo: the message pattern of a move
                # (1 in, 2 out) against an echo (1 in, 1 out) on a stub doing no work.
                from bench.floor import measure_floor

                results["grpc"]["floor"] = measure_floor(
                    clients=args.clients, concurrency=args.concurrency, seats=args.seats,
                    seconds=args.grpc_seconds, warmup=args.warmup, payload_bytes=payload,
                    progress=progress, task=t_floor)

    if not args.skip_grpc and not args.skip_web and not args.address:
        from bench.web import measure_web

        with tempfile.TemporaryDirectory(prefix="referee-bench-web-") as tmp, \
                Progress(*columns, console=console) as progress:
            t_web = progress.add_task("gRPC moves, web viewers",
                                      total=args.warmup + args.grpc_seconds, rate="")
            results["web"] = measure_web(
                clients=args.clients, concurrency=args.concurrency, seconds=args.grpc_seconds,
                warmup=args.warmup, game=args.game, seats=args.seats, viewers=args.web_viewers,
                workdir=Path(tmp), progress=progress, task=t_web)

    if args.cluster_matches and not args.skip_grpc and not args.address:
        import shutil

        from bench.cluster import measure_by_workers, measure_cluster

        if shutil.which("nginx") or os.access("/usr/sbin/nginx", os.X_OK):
            with Progress(*columns, console=console) as progress:
                t_cluster = progress.add_task(
                    f"gRPC cluster vs plain ({args.cluster_matches} matches)",
                    total=2 * (args.warmup + args.grpc_seconds), rate="")
                results["cluster"] = measure_cluster(
                    matches=args.cluster_matches, clients=args.clients, seats=args.seats,
                    seconds=args.grpc_seconds, warmup=args.warmup, progress=progress,
                    task=t_cluster)
                if args.cluster_workers:
                    counts = tuple(int(n) for n in args.cluster_workers.split(","))
                    t_by = progress.add_task(
                        f"gRPC CPU per move by workers ({args.cluster_workers})",
                        total=len(counts) * (args.warmup + args.grpc_seconds), rate="")
                    results["cluster"]["cpu_per_move_by_workers"] = measure_by_workers(
                        counts=counts, matches=args.cluster_matches, clients=args.clients,
                        seats=args.seats, seconds=args.grpc_seconds, warmup=args.warmup,
                        progress=progress, task=t_by)
                    if not args.skip_floor:  # the same spread over processes, zero work
                        from bench.floor import measure_by_processes

                        t_fl = progress.add_task(
                            f"gRPC zero-work stub by processes ({args.cluster_workers})",
                            total=len(counts) * (args.warmup + args.grpc_seconds), rate="")
                        results["cluster"]["floor_by_processes"] = measure_by_processes(
                            counts=counts, clients=args.clients, concurrency=args.concurrency,
                            seats=args.seats, seconds=args.grpc_seconds, warmup=args.warmup,
                            payload_bytes=results.get("grpc", {}).get("floor", {}).get(
                                "payload_bytes", 872),
                            progress=progress, task=t_fl)
        else:
            console.print("cluster phase skipped: nginx is not installed (nginx-light)")

    if args.tournament_matches and not args.skip_grpc:
        # The whole tournament path: CreateMatch, one `referee-bot random` process per seat,
        # the Play streams, GetRecord; compared with in-process playouts of the same game.
        from referee_tournament.bench import matches_per_s

        console.print(f"tournament phase: {args.tournament_matches} Batavia matches, "
                      f"{args.tournament_concurrency} at once, bots as processes …")
        t = matches_per_s(game="batavia", matches=args.tournament_matches,
                          concurrency=args.tournament_concurrency)
        engine_gps = results["engine"].get("batavia", {}).get("games_per_s")
        t["ratio_to_engine_games_per_s"] = (
            round(t["matches_per_s"] / engine_gps, 5) if engine_gps else None)
        results["tournament"] = t

    session_bench.run_phase(results, args, console)
    league_bench.run_phase(results, args, console)
    if args.fairness_pairs:
        console.print(f"fairness phase: {args.fairness_pairs} duplicate pairs per game …")
        results["fairness"] = fairness_bench.run_phase(games, args.fairness_pairs)
    if args.ismcts_matches:
        console.print(f"ismcts phase: {args.ismcts_matches} matches per game vs greedy, "
                      f"{args.ismcts_iterations} iterations a move …")
        results["ismcts"] = ismcts_bench.run_phase(games, args.ismcts_matches,
                                                   args.ismcts_iterations,
                                                   args.ismcts_rate_iterations,
                                                   args.ismcts_late_seconds)
    if args.sim_seconds:
        console.print("forward model phase: clones and samples per second …")
        results["sim"] = sim_bench.run_phase(games, args.sim_seconds)
    if args.research_seconds:
        console.print("research phase: PettingZoo AEC steps per CPU-second …")
        results["research"] = research_bench.run_phase(games, args.research_seconds)
    if args.store_seconds:
        console.print("store phase: SQLite and PostgreSQL …")
        results["store"] = store_bench.run_store_phase(
            args, None if args.skip_grpc or args.address else store_bench.grpc_moves(args))

    results["machine"]["loadavg_at_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    batavia = results["engine"].get("batavia", {})
    g = results["grpc"]
    results["targets"] = {
        "engine.batavia.decisions_per_s >= 25000": (
            batavia.get("decisions_per_s", 0) >= TARGET_DECISIONS_PER_S if batavia else None),
        "grpc.move_per_s >= 2/3 grpc.echo_per_s": (
            g["move_to_echo_ratio"] >= TARGET_MOVE_ECHO_RATIO if g.get("move_to_echo_ratio")
            else None),
        **floor_targets(g),
        **session_bench.target(results),
        **league_bench.target(results),
        **fairness_bench.target(results),
        **sim_bench.target(results),
        **research_bench.target(results),
    }
    # Flat dotted names as well, for quick greps and dashboards.
    flat = {}
    for name, e in results["engine"].items():
        flat[f"engine.{name}.decisions_per_s"] = e["decisions_per_s"]
        flat[f"engine.{name}.games_per_s"] = e["games_per_s"]
        flat[f"engine.{name}.decisions_per_cpu_s"] = e["decisions_per_cpu_s"]
    for key in ("move_per_s", "move_p99_ms", "echo_per_s", "echo_p99_ms", "move_to_echo_ratio",
                "server_cpu_ms_per_move", "server_cpu_sys_ms_per_move"):
        if key in g:
            flat[f"grpc.{key}"] = g[key]
    for key in ("move_per_s", "move_p99_ms", "server_cpu_ms_per_move",
                "server_messages_per_move"):
        if key in g.get("combined", {}):
            flat[f"grpc.combined.{key}"] = g["combined"][key]
    for name, fig in (g.get("by_game") or {}).items():
        for key in ("move_per_s", "server_cpu_ms_per_move"):
            flat[f"grpc.by_game.{name}.{key}"] = fig[key]
    if "joins4000" in g:
        flat["grpc.joins4000.joined"] = g["joins4000"]["joined"]
    for key in ("moves_per_s", "p99_ms", "rss_mb_peak", "unfinished"):
        if f"load{args.load_matches}" in g:
            flat[f"grpc.load{args.load_matches}.{key}"] = g[f"load{args.load_matches}"][key]
    for key in ("finished", "unfinished", "moves_per_s", "welcome_s_max", "probe_s"):
        if f"burst{args.burst_matches}" in g:
            flat[f"grpc.burst{args.burst_matches}.{key}"] = g[f"burst{args.burst_matches}"][key]
    if "floor" in g:
        for key in ("echo_per_s", "relay_per_s", "relay_to_echo_ratio"):
            flat[f"grpc.floor_{key}"] = g["floor"][key]
        flat["grpc.floor.server_cpu_ms_per_relay"] = g["floor"]["server_cpu_ms_per_relay"]
        flat["grpc.floor.server_cpu_sys_ms_per_relay"] = g["floor"]["server_cpu_sys_ms_per_relay"]
        flat.update(floor_ratios(g))
    for name, e in results["engine"].items():
        if e.get("state_kb_mean") is not None:
            flat[f"memory.{name}.state_kb_mean"] = e["state_kb_mean"]
    for key in ("rss_mb_start", "rss_mb_after_moves", "kb_per_live_match"):
        if g.get("memory", {}).get(key) is not None:
            flat[f"memory.referee.{key}"] = g["memory"][key]
    if "matches_per_s" in results.get("tournament", {}):
        flat["tournament.matches_per_s"] = results["tournament"]["matches_per_s"]
        flat["tournament.ratio_to_engine_games_per_s"] = (
            results["tournament"]["ratio_to_engine_games_per_s"])
    if "web" in results:
        flat["web.move_per_s_ratio"] = results["web"]["move_per_s_ratio"]
    if "cluster" in results:
        for key in ("moves_per_s", "plain_moves_per_s", "speedup_vs_plain", "p99_ms",
                    "proxy_cpu_ms_per_move", "workers_cpu_ms_per_move"):
            flat[f"cluster.{key}"] = results["cluster"][key]
        for n, fig in results["cluster"].get("cpu_per_move_by_workers", {}).items():
            flat[f"cluster.cpu_per_move_by_workers.{n}"] = fig["cpu_ms_per_move"]
        for n, fig in results["cluster"].get("floor_by_processes", {}).get(
                "by_processes", {}).items():
            flat[f"cluster.floor_by_processes.{n}"] = fig["server_cpu_ms_per_relay"]
    flat.update(session_bench.flat(results))
    flat.update(league_bench.flat(results))
    flat.update(fairness_bench.flat(results))
    flat.update(ismcts_bench.flat(results))
    flat.update(sim_bench.flat(results))
    flat.update(research_bench.flat(results))
    flat.update(store_bench.flat(results))
    results["summary"] = flat
    Path(args.output).write_text(json.dumps(results, indent=2, default=str) + "\n")

    table = summary_table()
    for name, e in results["engine"].items():
        note = e.get("error", f"{e['games']} games, seats {e['seat_counts']}, one core; "
                              f"{e['decisions_per_cpu_s']:,}/CPU-s")
        table.add_row(f"engine.{name}.decisions_per_s", f"{e['decisions_per_s']:,}", note)
        table.add_row(f"engine.{name}.games_per_s", f"{e['games_per_s']:,.2f}", "")
    for name, why in broken.items():
        table.add_row(f"engine.{name}", "skipped", why[:80])
    if g:
        mp_, ep = g["moves_phase"], g["echo_phase"]
        table.add_row("grpc.move_per_s", f"{g['move_per_s']:,.0f}",
                      f"{g['concurrency']} matches x {g['seats']} seats, {g['client_processes']} "
                      f"client procs; server CPU {mp_['server_cpu_util']:.0%}, clients "
                      f"{mp_['client_cpu_util']:.0%}; "
                      f"{mp_['server_messages_per_move']:.1f} server msgs/move")
        table.add_row("grpc.move_p50_ms / p99_ms", f"{g['move_p50_ms']:.2f} / {g['move_p99_ms']:.2f}",
                      "Submit -> next Decision of the match")
        c = g["combined"]
        table.add_row("grpc.combined.move_per_s", f"{c['move_per_s']:,.0f}",
                      f"Join.combine_decision; server CPU {c['server_cpu_ms_per_move']:.3f} "
                      f"ms/move; {c['server_messages_per_move']:.2f} server msgs/move; p50 / p99 "
                      f"{c['move_p50_ms']:.2f} / {c['move_p99_ms']:.2f} ms")
        for name, fig in (g.get("by_game") or {}).items():
            table.add_row(f"grpc.by_game.{name}.move_per_s", f"{fig['move_per_s']:,.0f}",
                          f"server CPU {fig['server_cpu_ms_per_move']:.3f} ms/move, p99 "
                          f"{fig['move_p99_ms']:.2f} ms, Decision {fig['mean_decision_bytes']} B")
        table.add_row("grpc.echo_per_s", f"{g['echo_per_s']:,.0f}",
                      f"{g['concurrency']} streams, {g['echo_payload_bytes']} B payload; server "
                      f"CPU {ep['server_cpu_util']:.0%}, clients {ep['client_cpu_util']:.0%}")
        table.add_row("grpc.echo_p50_ms / p99_ms", f"{g['echo_p50_ms']:.2f} / {g['echo_p99_ms']:.2f}",
                      "write -> echo back")
        ratio = g["move_to_echo_ratio"]
        table.add_row("move / echo throughput", "n/a" if ratio is None else f"{ratio:.2f}",
                      "target >= 0.67")
        table.add_row("server CPU ms per move / echo",
                      f"{g['server_cpu_ms_per_move']:.3f} / {g['server_cpu_ms_per_echo']:.3f}",
                      "what bounds throughput on a dedicated core")
    load = g.get(f"load{args.load_matches}") if g else None
    if load:
        table.add_row(f"grpc.load{load['matches']}.moves_per_s / p99_ms",
                      f"{load['moves_per_s']:,.0f} / {load['p99_ms']:.1f}",
                      f"{load['matches']} Batavia matches at once x {load['seats']} random bots; "
                      f"p50 {load['p50_ms']:.1f} ms; server CPU {load['server_cpu_ms_per_move']:.3f}"
                      f" ms/move; RSS {load['rss_mb_start']} -> peak {load['rss_mb_peak']} MB")
    burst = g.get(f"burst{args.burst_matches}") if g else None
    if burst:
        table.add_row(f"grpc.burst{burst['matches']}.unfinished",
                      f"{burst['unfinished']} of {burst['matches']}",
                      f"created at once, {burst['matches'] * burst['seats']:,} Play streams "
                      f"from one process over {burst['channels']} channels; "
                      f"{burst['moves_per_s']:,.0f} moves/s, slowest Welcome "
                      f"{burst['welcome_s_max']} s, a ListGames meanwhile {burst['probe_s']} s; "
                      f"streams {burst['streams']}")
    if g and "joins4000" in g:
        j = g["joins4000"]
        table.add_row("grpc.joins4000.joined", f"{j['joined']:,} of {j['streams']:,}",
                      f"Play streams opened at once; failures {j['failures'] or 'none'}")
    if "floor" in g:
        fl = g["floor"]
        fe, fr = fl["echo_phase"], fl["relay_phase"]
        ratio = fl["relay_to_echo_ratio"]
        table.add_row("grpc.floor_echo / relay_per_s",
                      f"{fl['echo_per_s']:,.0f} / {fl['relay_per_s']:,.0f}",
                      f"stub server, zero work, {fl['payload_bytes']} B payload; server CPU "
                      f"{fe['server_cpu_util']:.0%} / {fr['server_cpu_util']:.0%}, clients "
                      f"{fe['client_cpu_util']:.0%} / {fr['client_cpu_util']:.0%}")
        table.add_row("zero-work relay / echo (stub server)",
                      f"{ratio:.2f}" if ratio is not None else "n/a",
                      "the protocol's ceiling for move/echo: 1 in + 2 out vs 1 in + 1 out")
        table.add_row("floor server CPU ms per echo / relay",
                      f"{fl['server_cpu_ms_per_echo']:.3f} / {fl['server_cpu_ms_per_relay']:.3f}",
                      f"p50 {fl['echo_p50_ms']:.2f} / {fl['relay_p50_ms']:.2f} ms; "
                      f"{fr['server_messages_per_relay']:.2f} server msgs per relay")
    states = {n: e["state_kb_mean"] for n, e in results["engine"].items()
              if e.get("state_kb_mean") is not None}
    if states:
        table.add_row("memory: game state (KB, mean)",
                      " / ".join(f"{v:g}" for v in states.values()),
                      " / ".join(states) + "; tracemalloc of a deep copy, shared tables left out")
    mem = g.get("memory") if g else None
    if mem and mem.get("rss_mb_start") is not None:
        table.add_row("memory: referee RSS (MB)",
                      f"{mem['rss_mb_start']} -> {mem.get('rss_mb_after_moves')}",
                      f"at start -> after the move phase ({mem.get('matches_held_after_moves')} "
                      "finished matches still held, --keep-finished)")
        if mem.get("kb_per_live_match") is not None:
            table.add_row("memory: per live match (KB)", f"{mem['kb_per_live_match']:g}",
                          f"RSS growth over {mem['idle_matches']} created, unplayed matches")
    if "web" in results:
        w = results["web"]
        table.add_row("web: move/s with viewers / plain", f"{w['move_per_s_ratio']}",
                      f"--http-port + {w['viewers']} viewers following live matches: "
                      f"{w['move_per_s_with_viewers']:,} vs {w['move_per_s_plain']} move/s; "
                      f"{w['viewer_updates']} updates seen (target >= 0.9)")
    if "cluster" in results:
        c = results["cluster"]
        table.add_row("cluster.moves_per_s (2 workers + nginx)", f"{c['moves_per_s']:,}",
                      f"one plain referee {c['plain_moves_per_s']:,} under the same load of "
                      f"{c['matches']} matches (x{c['speedup_vs_plain']}); p99 "
                      f"{c['p99_ms']} ms; CPU per move: nginx {c['proxy_cpu_ms_per_move']} ms, "
                      f"workers {c['workers_cpu_ms_per_move']} ms; {c['notes']}")
        by = c.get("cpu_per_move_by_workers")
        if by:
            table.add_row("cluster.cpu_per_move_by_workers (ms)",
                          " / ".join(f"{n}: {f['cpu_ms_per_move']}" for n, f in by.items()),
                          "the workers' CPU per move (nginx apart) with 1, 2, 4 workers "
                          "under the same load; vs one: "
                          + ", ".join(f"{n}: x{f['vs_one']}" for n, f in by.items()))
        fl = c.get("floor_by_processes", {}).get("by_processes")
        if fl:
            table.add_row("cluster.floor_by_processes (ms)",
                          " / ".join(f"{n}: {f['server_cpu_ms_per_relay']}"
                                     for n, f in fl.items()),
                          "the zero-work stub's CPU per relay with its load spread over 1, 2, "
                          "4 processes: what splitting costs with no referee work; vs one: "
                          + ", ".join(f"{n}: x{f['vs_one']}" for n, f in fl.items()))
    if "matches_per_s" in results.get("tournament", {}):
        t = results["tournament"]
        table.add_row("tournament.matches_per_s", f"{t['matches_per_s']:.2f}",
                      f"{t['matches']} Batavia matches, {t['concurrency']} at once, bots as "
                      f"processes; {t['ratio_to_engine_games_per_s']} x in-process games/s")
    session_bench.table_rows(results, table)
    league_bench.table_rows(results, table)
    fairness_bench.table_rows(results, table)
    ismcts_bench.table_rows(results, table)
    sim_bench.table_rows(results, table)
    research_bench.table_rows(results, table)
    store_bench.table_rows(results, table)
    m = results["machine"]
    table.add_row("machine", f"{m['cpu_count']} CPUs",
                  f"{m['cpu_model']}; load {m['loadavg_at_start']}")
    console.print(table)
    for target, ok in results["targets"].items():
        mark = "[green]met[/]" if ok else ("[red]NOT met[/]" if ok is False else "n/a")
        console.print(f"  {target}: {mark}")
    console.print(f"wrote {Path(args.output).resolve().relative_to(ROOT) if Path(args.output).resolve().is_relative_to(ROOT) else args.output}")
    stalled = unfinished_matches(flat)
    for key, count in stalled.items():
        console.print(f"[bold red]FAILED: {key} = {count}: matches the phase started never "
                      "ended (a stall; see the phase's figures in the results file)[/]")
    return 1 if stalled else 0


def summary_table() -> Any:
    """The table of the measures ``python -m bench`` prints (its rows added by ``main``)."""
    from rich.table import Table

    table = Table(title="referee bench", title_justify="left")
    # at 80 columns (tests/test_tables_80.py) the measure's dotted name folds (it is one word
    # to rich, which would cut it to an ellipsis), the notes wrap and take what is left
    table.add_column("measure", overflow="fold", max_width=28)
    table.add_column("value", justify="right", overflow="fold", max_width=18)
    table.add_column("notes", overflow="fold", ratio=1)
    return table


def unfinished_matches(flat: dict[str, Any]) -> dict[str, Any]:
    """The phases' ``*.unfinished`` figures that are not 0: every match a load or burst phase
    starts must reach its end (issue 31 item 8)."""
    return {k: v for k, v in flat.items() if k.endswith(".unfinished") and v != 0}


if __name__ == "__main__":
    sys.exit(main())
