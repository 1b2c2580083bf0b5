"""The search bot against the greedy bots (``make bench``; ``--ismcts-matches``, 0 skips it).

``ismcts.<game>.win_rate_vs_greedy``: the ISMCTS bot (``referee_research``, sampling from its
seat's view, with its own settings ``ismcts.STRONG``: greedy-guided rollouts, paired root
evaluation) against the game's greedy bot in every other seat, in process, on duplicate seeds
with the seats rotated (``referee_research.duel``), at the game's smallest table of two seats
or more; with its 95% Wilson ``interval``, its ``matches`` and ``iterations`` per move. The bench
keeps it short (a few matches, a small iteration budget): the figure is a smoke reading with a
wide interval; docs/research/search-bot.md and docs/research/ismcts-duels.json have the long
runs. A game whose sampler is missing is reported as skipped."""
from __future__ import annotations

from typing import Any

from referee_research.duel import duel

from referee.core.contract import Game

#: bench defaults: matches per game (rounded up to whole seeds) and iterations per move
MATCHES = 4
ITERATIONS = 4


def run_phase(games: dict[str, Game], matches: int = MATCHES,
              iterations: int = ITERATIONS) -> dict[str, Any]:
    """``results["ismcts"]``: per game, the duel's report (or why it was skipped)."""
    out: dict[str, Any] = {}
    for name, game in sorted(games.items()):
        seats = max(2, game.spec.min_seats)
        try:
            out[name] = duel(name, seats, matches, iterations).as_dict()
        except NotImplementedError as exc:
            out[name] = {"skipped": str(exc)}
    return out


def flat(results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, r in results.get("ismcts", {}).items():
        if "win_rate" in r:
            out[f"ismcts.{name}.win_rate_vs_greedy"] = r["win_rate"]
            out[f"ismcts.{name}.interval"] = r["interval"]
            out[f"ismcts.{name}.matches"] = r["matches"]
    return out


def table_rows(results: dict[str, Any], table) -> None:
    for name, r in results.get("ismcts", {}).items():
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
