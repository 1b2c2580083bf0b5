"""The search bot against the greedy bots (``make bench``; ``--ismcts-matches``, 0 skips it).

``ismcts.<game>.win_rate_vs_greedy``: the ISMCTS bot (``referee_research``, sampling from its
seat's view, with its own settings ``ismcts.STRONG``: greedy-guided rollouts, paired root
evaluation) against the game's greedy bot in every other seat, in process, on duplicate seeds
with the seats rotated (``referee_research.duel``), at the game's smallest table of two seats
or more; with its 95% Wilson ``interval``, its ``matches`` and ``iterations`` per move. The bench
keeps it short (a few matches, a small iteration budget): the figure is a smoke reading with a
wide interval; docs/research/search-bot.md and docs/research/ismcts-duels.json have the long
runs. A game whose sampler is missing is reported as skipped.

``ismcts.<game>.iterations_per_cpu_s``: the search with the ``fast`` profile
(``ismcts.FAST``, an iteration budget) at a few positions of a random game at the game's
smallest table, iterations over the CPU seconds (``time.process_time``) they took;
``..._min`` the slowest seat count's; ``..._strong`` the bot's default profile
(``ismcts.STRONG``, greedy rollouts to the end) at the smallest table, a few iterations;
``..._strong_late`` the same profile where a duel's searches run, late in a greedy game
(``late_rate``: a second of CPU at 100 and 60 moves before the end). Figures of this machine
and its load, asserted in no test."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from referee_research import heuristics
from referee_research.duel import duel
from referee_research.ismcts import FAST, STRONG, Budget, Search, Settings, from_views

from referee.core.contract import Decision, Game
from referee.core.rng import Rng
from referee.sim import Simulation
from referee.sim.model import uniform

#: bench defaults: matches per game (rounded up to whole seeds) and iterations per move
MATCHES = 4
ITERATIONS = 4


#: the iteration-rate figure: iterations a search, and after how many random moves each
#: position is taken (a decision with a choice at or after that move)
RATE_ITERATIONS = 200
RATE_POSITIONS = (10, 40, 80, 120)
#: the strong profile's iterations a search (each a greedy rollout to the end)
STRONG_ITERATIONS = 4
#: the strong profile where a duel's searches run: CPU seconds a search, and how many moves
#: before the end of a greedy game each position is taken (on seeds 1, 2, ...)
LATE_SECONDS = 1.0
LATE_POSITIONS = (100, 60)


def _searched(name: str, seats: int, sim: Simulation, run: Settings, seed: int,
              prior: Callable[[Simulation, Decision], Any]) -> tuple[int, float]:
    """Search ``sim``'s next decision with a choice (forced moves are played, not searched)
    from the deciding seat's view, as the bot does: (iterations, CPU seconds), (0, 0.0) when
    the game ends first. ``prior`` gives the search's prior move."""
    d = sim.decision()
    while d is not None and len(d.moves) < 2:
        sim.apply(d.moves[0], d.seat)
        d = sim.decision()
    if d is None:
        return 0, 0.0
    determinize = from_views(name, d.seat, sim.view(d.seat), seats, (), sim.options)
    first = prior(sim, d)
    start = time.process_time()
    result = Search(determinize, d.seat, list(d.moves), run, first).run(seed)
    return result.iterations, time.process_time() - start


def _rate(seats: int, searched: list[tuple[int, float]]) -> dict[str, Any]:
    done = sum(n for n, _ in searched)
    cpu = sum(c for _, c in searched)
    return {"seats": seats, "iterations": done, "cpu_seconds": round(cpu, 4),
            "iterations_per_cpu_s": round(done / cpu, 1) if cpu > 0 else 0.0}


def iteration_rate(name: str, seats: int, settings: Settings | None = None,
                   iterations: int = RATE_ITERATIONS,
                   positions: tuple[int, ...] = RATE_POSITIONS) -> dict[str, Any]:
    """Iterations per CPU second of the search (``settings``: the fast profile's) on ``name`` at
    ``seats`` seats, summed over a search at each position of ``positions`` (random play on
    seeds 1, 2, ...). The determinizations come from the deciding seat's view, as the bot's."""
    run = replace(settings or FAST, budget=Budget(iterations=iterations, seconds=None))
    searched = []
    for k, at in enumerate(positions):
        sim = Simulation.new(name, seats, 1 + k)
        choose = uniform(Rng(k))
        for _ in range(at):
            if (d := sim.decision()) is None:
                break
            sim.apply(choose(d), d.seat)
        searched.append(_searched(name, seats, sim, run, k, lambda _sim, d: d.moves[0]))
    return _rate(seats, searched)


def late_rate(name: str, seats: int, settings: Settings | None = None,
              seconds: float = LATE_SECONDS,
              positions: tuple[int, ...] = LATE_POSITIONS) -> dict[str, Any]:
    """Iterations per CPU second of the search (``settings``: the strong profile's) late in a
    game, where the strong profile searches (its horizon: whole rollouts of at most 120 moves):
    for each of ``positions``, a game every seat plays as the greedy bot (on the engine's copy,
    seed 1, 2, ...) is replayed to that many moves before its end and searched for ``seconds``
    of CPU from the deciding seat's view."""
    run = replace(settings or STRONG, budget=Budget(iterations=None, seconds=seconds, cpu=True))
    searched = []
    for k, back in enumerate(positions):
        seed = 1 + k
        sim = Simulation.new(name, seats, seed)
        policy = heuristics.prior_policy(name, seats, Rng(seed))
        assert policy is not None
        played = []
        while (d := sim.decision()) is not None:
            move = policy(sim, d)
            played.append((move, d.seat))
            sim.apply(move, d.seat)
        sim = Simulation.new(name, seats, seed)
        for move, seat in played[:max(0, len(played) - back)]:
            sim.apply(move, seat)
        searched.append(_searched(name, seats, sim, run, k, policy))
    return _rate(seats, searched)


def rate_phase(games: dict[str, Game], iterations: int = RATE_ITERATIONS,
               late_seconds: float = LATE_SECONDS) -> dict[str, Any]:
    """Per game, the search's iteration rate at every seat count of two or more, and the strong
    profile's late in a game (``late_seconds`` a search; 0 skips it)."""
    out: dict[str, Any] = {}
    for name, game in sorted(games.items()):
        per = []
        try:
            for seats in range(max(2, game.spec.min_seats), game.spec.max_seats + 1):
                per.append(iteration_rate(name, seats, iterations=iterations))
        except NotImplementedError as exc:
            out[name] = {"skipped": str(exc)}
            continue
        strong = iteration_rate(name, per[0]["seats"], STRONG, STRONG_ITERATIONS,
                                RATE_POSITIONS[:2])
        out[name] = {"by_seats": per,
                     "iterations_per_cpu_s": min(r["iterations_per_cpu_s"] for r in per),
                     "strong": strong}
        if late_seconds:
            out[name]["strong_late"] = late_rate(name, per[0]["seats"], seconds=late_seconds)
    return out


def run_phase(games: dict[str, Game], matches: int = MATCHES, iterations: int = ITERATIONS,
              rate_iterations: int = RATE_ITERATIONS,
              late_seconds: float = LATE_SECONDS) -> dict[str, Any]:
    """``results["ismcts"]``: per game, the duel's report (or why it was skipped) and the
    search's iteration rate (``rate``; ``rate_iterations`` a search, 0 skips it)."""
    out: dict[str, Any] = {}
    rates = rate_phase(games, rate_iterations, late_seconds) if rate_iterations else {}
    for name, game in sorted(games.items()):
        seats = max(2, game.spec.min_seats)
        try:
            out[name] = duel(name, seats, matches, iterations).as_dict()
        except NotImplementedError as exc:
            out[name] = {"skipped": str(exc)}
        if name in rates:
            out[name]["rate"] = rates[name]
    return out


def flat(results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, r in results.get("ismcts", {}).items():
        if "win_rate" in r:
            out[f"ismcts.{name}.win_rate_vs_greedy"] = r["win_rate"]
            out[f"ismcts.{name}.interval"] = r["interval"]
            out[f"ismcts.{name}.matches"] = r["matches"]
        rate = r.get("rate", {})
        if "by_seats" in rate:
            out[f"ismcts.{name}.iterations_per_cpu_s_min"] = rate["iterations_per_cpu_s"]
            # the figure of the issue: the game's smallest table (as the duel's)
            out[f"ismcts.{name}.iterations_per_cpu_s"] = rate["by_seats"][0][
                "iterations_per_cpu_s"]
            out[f"ismcts.{name}.iterations_per_cpu_s_strong"] = rate["strong"][
                "iterations_per_cpu_s"]
            if "strong_late" in rate:
                out[f"ismcts.{name}.iterations_per_cpu_s_strong_late"] = rate["strong_late"][
                    "iterations_per_cpu_s"]
    return out


def table_rows(results: dict[str, Any], table) -> None:
    for name, r in results.get("ismcts", {}).items():
        rate = r.get("rate", {})
        if "by_seats" in rate:
            table.add_row(f"ismcts.{name}.iterations_per_cpu_s",
                          f"{rate['by_seats'][0]['iterations_per_cpu_s']:.0f}",
                          "search iterations per CPU second, fast profile; by seats: "
                          + ", ".join(f"{x['seats']}: {x['iterations_per_cpu_s']:.0f}"
                                      for x in rate["by_seats"])
                          + f"; strong profile {rate['strong']['iterations_per_cpu_s']:.0f}"
                          + (f", late in a game {rate['strong_late']['iterations_per_cpu_s']:.0f}"
                             if "strong_late" in rate else ""))
        if "win_rate" not in r:
            table.add_row(f"ismcts.{name}.win_rate_vs_greedy", "skipped", r["skipped"][:80])
            continue
        lo, hi = r["interval"]
        table.add_row(f"ismcts.{name}.win_rate_vs_greedy", f"{r['win_rate']:.3f}",
                      f"95% [{lo:.2f}, {hi:.2f}] over {r['matches']} matches, {r['seats']} "
                      f"seats, {r['iterations']} iterations/move, "
                      f"{r.get('seconds_per_move', 0.0):.2f} s/move (equal player "
                      f"{r['baseline']:.2f})")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    from referee.core import registry

    parser = argparse.ArgumentParser(prog="python -m bench.ismcts", description=__doc__)
    parser.add_argument("--matches", type=int, default=MATCHES, help="matches per game")
    parser.add_argument("--iterations", type=int, default=ITERATIONS, help="iterations a move")
    args = parser.parse_args(argv)
    print(json.dumps(run_phase(registry.games(), args.matches, args.iterations), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
