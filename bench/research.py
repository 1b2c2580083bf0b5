"""The research environments' speed (issue 36, item 1; ``make bench``'s research phase,
``--research-seconds``, 0 skips it).

``research.<game>.env_steps_per_cpu_s``
    PettingZoo AEC steps per CPU-second (``time.process_time``) of random play at 3 seats (the
    game's nearest seat count when it cannot seat 3), default options, through the raw
    environment in its default observation mode (the game's feature planes where it declares
    them, else its View encoded; ``observations`` in the results): each step reads the agent's
    observation and action mask (``env.last()``, as a learner does) and plays a uniformly
    random legal action; a finished match resets. Issue 36's goal: >= 10,000 in every game.

``python -m bench.research [--seconds S] [--profile GAME]`` prints the figures (and a cProfile
of one game's loop)."""
from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np

#: issue 36, item 1
STEPS_GOAL = 10_000
SEATS = 3


def _env(name: str, observations: str | None = None) -> Any:
    from referee_research.envs.aec import raw_env

    from referee.core import registry
    spec = registry.get(name).spec
    seats = min(max(SEATS, spec.min_seats), spec.max_seats)
    if observations is None:
        return raw_env(name, seats, seed=1)
    return raw_env(name, seats, seed=1, observations=observations)


def steps(env: Any, count: int, rng: np.random.Generator) -> int:
    """Plays ``count`` random steps (resetting finished matches); the steps played."""
    env.reset(seed=int(rng.integers(2**31)))
    for _ in range(count):
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.reset(seed=int(rng.integers(2**31)))
            continue
        # the mask's legal indices: through a bool view, as numpy finds the non-zeros of a
        # bool array fast and of an int8 one item by item (9 against 2 us at 3,000 actions:
        # the random player's cost, not the environment's)
        legal = obs["action_mask"].view(np.bool_).nonzero()[0]
        env.step(int(legal[rng.integers(len(legal))]))
        del agent
    return count


def measure(name: str, seconds: float, observations: str | None = None) -> dict[str, Any]:
    env = _env(name, observations)
    rng = np.random.default_rng(7)
    steps(env, 200, rng)  # warm-up: caches, first allocations
    done = 0
    start = time.process_time()
    while (spent := time.process_time() - start) < seconds:
        done += steps(env, 500, rng)
    return {"seats": len(env.possible_agents), "steps": done,
            "env_steps_per_cpu_s": round(done / spent),
            "observations": env.table.observations,
            "observation_size": int(env.observation_space(env.possible_agents[0])[
                "observation"].shape[0]),
            "action_size": int(env.action_space(env.possible_agents[0]).n)}


def run_phase(games: dict[str, Any], seconds: float) -> dict[str, Any]:
    """``results["research"]``: per game, the figures above."""
    return {name: measure(name, seconds) for name in sorted(games)}


def flat(results: dict[str, Any]) -> dict[str, Any]:
    return {f"research.{name}.env_steps_per_cpu_s": r["env_steps_per_cpu_s"]
            for name, r in results.get("research", {}).items()}


def target(results: dict[str, Any]) -> dict[str, Any]:
    return {f"research.{name}.env_steps_per_cpu_s >= {STEPS_GOAL:,}": (
        r["env_steps_per_cpu_s"] >= STEPS_GOAL) for name, r in results.get("research", {}).items()}


def table_rows(results: dict[str, Any], table: Any) -> None:
    for name, r in results.get("research", {}).items():
        table.add_row(f"research.{name}.env_steps_per_cpu_s", f"{r['env_steps_per_cpu_s']:,}",
                      f"{r['seats']} seats, observation ({r.get('observations', 'memoised')}) "
                      f"{r['observation_size']:,} wide, "
                      f"{r['action_size']:,} actions (goal {STEPS_GOAL:,})")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import cProfile
    import pstats

    from referee.core import registry

    parser = argparse.ArgumentParser(prog="python -m bench.research", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU-seconds per game")
    parser.add_argument("--observations", default=None,
                        help="the environments' observation mode: planes, memoised or "
                             "reflective (default: theirs, planes where the game declares them)")
    parser.add_argument("--profile", metavar="GAME", help="print a cProfile of GAME's loop")
    args = parser.parse_args(argv)
    if args.profile:
        env = _env(args.profile, args.observations)
        rng = np.random.default_rng(7)
        steps(env, 200, rng)
        profile = cProfile.Profile()
        profile.runcall(steps, env, 5000, rng)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(35)
        return 0
    print(json.dumps({name: measure(name, args.seconds, args.observations)
                      for name in sorted(registry.games())}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
