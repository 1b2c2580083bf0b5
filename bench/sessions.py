"""Bench phase: matches per second with persistent bot sessions, against the move path.

``tournament.persistent.matches_per_s``
    ``--persistent-matches`` matches of the gRPC phases' game and seat count (Batavia, 4 seats)
    played through ``referee-tournament``'s runner with ``seats`` persistent entrants, each one
    ``referee-bot session random`` process started once (capacity: every match at once) and fed
    its matches over a bot session; ``--persistent-concurrency`` matches at once (default: the
    gRPC phases' ``--concurrency``). Wall-clock of the match loop (the runner's
    ``play_seconds``: bot start-up included, referee start-up and reports excluded).
``tournament.move_path_matches_per_s``
    ``grpc.move_per_s`` of the same ``make bench`` run divided by the mean number of moves per
    match of the persistent phase's matches (same game, seats and random bots): the matches per
    second the bare move path would give if matches cost nothing but their moves.
``tournament.persistent_to_move_path``
    Their ratio (issue 12's goal: at least 0.5).
"""
from __future__ import annotations

import asyncio
import json
import secrets
import tempfile
from pathlib import Path
from typing import Any

SESSION_BOT = ("referee-bot session random --address {address} "
               "--capacity {capacity} --log-level warning")
GOAL = 0.5


def add_arguments(parser) -> None:
    parser.add_argument("--persistent-matches", type=int, default=48,
                        help="matches for the persistent-session phase (0 skips it)")
    parser.add_argument("--persistent-concurrency", type=int, default=0,
                        help="matches at once in that phase (default: --concurrency)")


def persistent_matches_per_s(game: str = "batavia", seats: int = 4, matches: int = 48,
                             concurrency: int = 16) -> dict[str, Any]:
    from referee_tournament.config import parse
    from referee_tournament.procs import LocalReferee
    from referee_tournament.runner import Runner
    from rich.console import Console

    with tempfile.TemporaryDirectory(prefix="sessions-bench-") as tmp:
        cfg = parse({
            "name": f"bench-sessions-{game}",
            "game": {"name": game, "seats": seats},
            "entrants": [{"name": f"session-{chr(97 + i)}", "command": SESSION_BOT,
                          "persistent": True} for i in range(seats)],
            "format": {"type": "round_robin", "seating": "rotate",
                       "matches_per_pairing": max(1, matches)},
            "time": {"move_ms": 10000, "match_wall_s": 300},
            "run": {"concurrency": concurrency},
        }, base_dir=tmp)
        ref = LocalReferee(Path(tmp) / "referee", secrets.token_hex(16))
        ref.start()
        try:
            runner = Runner(cfg, out=Path(tmp) / "out", address=ref.address,
                            admin_token=ref.admin_token, progress=False,
                            console=Console(quiet=True))
            data = asyncio.run(runner.run())
            seconds = runner.play_seconds
        finally:
            ref.stop()
        moves = []
        timeouts = 0
        for m in data.get("matches", []):
            if m.get("record"):
                rec = json.loads((Path(tmp) / "out" / m["record"]).read_text())
                moves.append(len(rec["moves"]))
                timeouts += sum(1 for mv in rec["moves"] if mv.get("timeout"))
    done = data["status"].get("done", 0)
    return {
        "game": game, "seats": seats, "matches": done,
        "failed": data["status"].get("failed", 0), "concurrency": concurrency,
        "seconds": round(seconds, 3),
        "matches_per_s": round(done / seconds, 4) if seconds > 0 and done else None,
        "mean_moves_per_match": round(sum(moves) / len(moves), 2) if moves else None,
        "timeouts": timeouts,
        "note": f"{seats} persistent entrants (one `referee-bot session random` process each, "
                "started once), every match's seats bound to them; runner wall-clock",
    }


def run_phase(results: dict[str, Any], args, console) -> None:
    """The persistent phase of ``make bench`` (after the gRPC phases, whose figures it uses)."""
    if not args.persistent_matches or args.skip_grpc:
        return
    g = results.get("grpc") or {}
    concurrency = args.persistent_concurrency or args.concurrency
    console.print(f"persistent-session phase: {args.persistent_matches} {args.game} matches, "
                  f"{concurrency} at once, {args.seats} session bots …")
    p = persistent_matches_per_s(game=args.game, seats=args.seats,
                                 matches=args.persistent_matches, concurrency=concurrency)
    t = results.setdefault("tournament", {})
    t["persistent"] = p
    mean = p.get("mean_moves_per_match")
    move_path = round(g["move_per_s"] / mean, 4) if g.get("move_per_s") and mean else None
    t["move_path_matches_per_s"] = move_path
    t["persistent_to_move_path"] = (round(p["matches_per_s"] / move_path, 3)
                                    if move_path and p.get("matches_per_s") else None)
    results.setdefault("targets", {})


def target(results: dict[str, Any]) -> dict[str, bool | None]:
    ratio = (results.get("tournament") or {}).get("persistent_to_move_path")
    return {"tournament.persistent.matches_per_s >= 0.5 move_path_matches_per_s":
            (ratio >= GOAL) if ratio is not None else None}


def flat(results: dict[str, Any]) -> dict[str, Any]:
    t = results.get("tournament") or {}
    if "persistent" not in t:
        return {}
    return {"tournament.persistent.matches_per_s": t["persistent"]["matches_per_s"],
            "tournament.move_path_matches_per_s": t["move_path_matches_per_s"],
            "tournament.persistent_to_move_path": t["persistent_to_move_path"]}


def table_rows(results: dict[str, Any], table) -> None:
    t = results.get("tournament") or {}
    p = t.get("persistent")
    if not p:
        return
    table.add_row("tournament.persistent.matches_per_s", f"{p['matches_per_s']:.2f}",
                  f"{p['matches']} {p['game']} matches x {p['seats']} seats, "
                  f"{p['concurrency']} at once, one session process per entrant")
    mp = t.get("move_path_matches_per_s")
    table.add_row("tournament.move_path_matches_per_s", f"{mp:.2f}" if mp else "n/a",
                  f"grpc.move_per_s / {p['mean_moves_per_match']} moves per match")
    r = t.get("persistent_to_move_path")
    table.add_row("persistent / move path", f"{r:.2f}" if r else "n/a", f"goal >= {GOAL}")


if __name__ == "__main__":
    import sys

    opts = dict(a.split("=", 1) for a in sys.argv[1:])
    print(json.dumps(persistent_matches_per_s(
        game=opts.get("game", "batavia"), seats=int(opts.get("seats", 4)),
        matches=int(opts.get("matches", 48)),
        concurrency=int(opts.get("concurrency", 16))), indent=2))
