"""The forward model's speed (issue 21; ``make bench``'s sim phase, ``--sim-seconds``, 0 skips it).

Per game, over positions taken every few decisions of seeded random games (seat counts
cycling over the game's range, default options):

``sim.<game>.clones_per_s``
    ``Game.clone(state)`` calls per second (what a search bot's every iteration pays).
``sim.<game>.deepcopy_clones_per_s``
    ``copy.deepcopy(state)`` per second on the same positions: the contract's default clone,
    the baseline of issue 21's goal of a clone >= 10x faster (``sim.<game>.clone_speedup``).
``sim.<game>.samples_per_s``
    ``Game.sample_state`` per second from the view of the seat to act and the public events so
    far (None while the game has no sampler).

``python -m bench.sim --engine-against DIR`` also compares the engines' decisions per CPU-second
with another checkout's (e.g. ``/path/to/main``), the two measured in turns (``--rounds``) in
subprocesses, so a noisy machine slows both alike; issue 21's bar is >= 0.9 of today's."""
from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from referee.core.contract import Event, Game
from referee.core.rng import Rng, Streams

ROOT = Path(__file__).resolve().parents[1]
#: issue 21: a clone >= 10x faster than deepcopy; engines keep >= 90% of their speed
CLONE_SPEEDUP_GOAL = 10.0
ENGINE_KEEP_GOAL = 0.9


def positions(game: Game, count: int, seed: int = 1) -> list[tuple[Any, list[Event], int]]:
    """(state, public events so far, seat to act) at ``count`` live positions of random games."""
    spec = game.spec
    options = spec.parse_options({})
    sheet = game.default_components(options)
    rnd = random.Random(seed)
    out: list[tuple[Any, list[Event], int]] = []
    k = 0
    while len(out) < count:
        seats = spec.min_seats + k % (spec.max_seats - spec.min_seats + 1)
        state = game.setup(options, seats, Streams(seed + k), sheet)
        history: list[Event] = []
        every = rnd.randint(5, 40)
        step = 0
        while (d := game.decision(state)) is not None and len(out) < count:
            if step % every == 0:
                out.append((game.clone(state), list(history), d.seat))
            history.extend(game.apply(state, d.seat, d.moves[rnd.randrange(len(d.moves))]))
            step += 1
        k += 1
    return out


def _rate(fn: Any, items: list[Any], seconds: float) -> float:
    """Calls of ``fn(item)`` per second, cycling over ``items`` for about ``seconds``."""
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for item in items:
            fn(item)
        done += len(items)
        if time.perf_counter() >= deadline:
            return done / (time.perf_counter() - start)


def measure(game: Game, seconds: float, count: int = 60) -> dict[str, Any]:
    spec = game.spec
    options = spec.parse_options({})
    sheet = game.default_components(options)
    pos = positions(game, count)
    states = [p[0] for p in pos]
    clones = _rate(game.clone, states, seconds)
    deep = _rate(copy.deepcopy, states, seconds)
    samples: float | None = None
    error = ""
    views = [(game.view(s, seat), history, game.seat_count(s), seat) for s, history, seat in pos]
    draws = Rng(7)

    def sample(item: tuple[Any, list[Event], int, int]) -> None:
        view, history, seats, seat = item
        game.sample_state({seat: view}, history, draws, options, seats, sheet)

    try:
        sample(views[0])
        samples = _rate(sample, views, seconds)
    except NotImplementedError as exc:
        error = str(exc)
    return {
        "positions": len(pos),
        "clones_per_s": round(clones),
        "deepcopy_clones_per_s": round(deep),
        "clone_speedup": round(clones / deep, 2) if deep else None,
        "samples_per_s": round(samples) if samples is not None else None,
        **({"samples_skipped": error} if error else {}),
    }


def run_phase(games: dict[str, Game], seconds: float) -> dict[str, Any]:
    """``results["sim"]``: per game, the figures above."""
    return {name: measure(games[name], seconds) for name in sorted(games)}


def flat(results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, r in results.get("sim", {}).items():
        for key in ("clones_per_s", "deepcopy_clones_per_s", "clone_speedup", "samples_per_s"):
            out[f"sim.{name}.{key}"] = r[key]
    return out


def target(results: dict[str, Any]) -> dict[str, Any]:
    return {f"sim.{name}.clone_speedup >= {CLONE_SPEEDUP_GOAL:g}": (
        r["clone_speedup"] >= CLONE_SPEEDUP_GOAL if r["clone_speedup"] is not None else None)
        for name, r in results.get("sim", {}).items()}


def table_rows(results: dict[str, Any], table: Any) -> None:
    for name, r in results.get("sim", {}).items():
        table.add_row(f"sim.{name}.clones_per_s", f"{r['clones_per_s']:,}",
                      f"deepcopy {r['deepcopy_clones_per_s']:,}/s: x{r['clone_speedup']} "
                      f"(goal x{CLONE_SPEEDUP_GOAL:g})")
        samples = r["samples_per_s"]
        table.add_row(f"sim.{name}.samples_per_s",
                      f"{samples:,}" if samples is not None else "-",
                      r.get("samples_skipped", f"over {r['positions']} positions"))


# ---------------------------------------------------------------- engines against another tree
_ENGINE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bench.run import bench_engine, discover_games
games, _ = discover_games()
print(json.dumps({n: bench_engine(games[n], float(sys.argv[2])).decisions_per_cpu_s
                  for n in sorted(games)}))
"""


def engine_cpu_rates(tree: Path, seconds: float) -> dict[str, float]:
    """Each game's engine decisions per CPU-second, measured with the code of ``tree`` (its
    ``referee`` package and generated ``referee/v1``) in a subprocess."""
    out = subprocess.run([sys.executable, "-c", _ENGINE, str(tree), str(seconds)],
                         capture_output=True, text=True, check=True, cwd=tree,
                         env={**os.environ, "PYTHONPATH": str(tree)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def engine_against(other: Path, rounds: int, seconds: float) -> dict[str, Any]:
    """This tree's engines against ``other``'s, measured in turns; per game the best of each
    (the least disturbed run) and their ratio."""
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    for _ in range(rounds):
        for tree, into in ((other, theirs), (ROOT, ours)):
            for name, rate in engine_cpu_rates(tree, seconds).items():
                into.setdefault(name, []).append(rate)
    return {name: {"decisions_per_cpu_s": round(max(ours[name])),
                   "other_decisions_per_cpu_s": round(max(theirs[name])),
                   "ratio": round(max(ours[name]) / max(theirs[name]), 3),
                   "goal": ENGINE_KEEP_GOAL}
            for name in sorted(ours) if name in theirs}


def main(argv: list[str] | None = None) -> int:
    import argparse

    from referee.core import registry

    parser = argparse.ArgumentParser(prog="python -m bench.sim", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="seconds per figure and game (default 2)")
    parser.add_argument("--engine-against", metavar="DIR", type=Path,
                        help="also compare engine decisions per CPU-second with this checkout")
    parser.add_argument("--rounds", type=int, default=3, help="turns of that comparison")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"sim": run_phase(registry.games(), args.seconds)}
    if args.engine_against:
        out["engine_against"] = engine_against(args.engine_against, args.rounds, args.seconds)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
