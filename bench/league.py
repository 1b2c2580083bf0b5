"""Bench phase: a league's matches per second with persistent (session) bots, against the
move path of the same run.

``league.matches_per_s``
    ``--league-matches`` matches of the gRPC phases' game and seat count (Batavia, 4 seats)
    played by ``referee-tournament league serve``'s runner (:class:`LeagueRunner`) on a fresh
    referee: ``seats`` remote entrants registered into the league, each one
    ``referee-bot session random`` process started once and connected over a bot session
    (capacity: every match at once); ``--league-concurrency`` matches at once (default: the gRPC
    phases' ``--concurrency``), no rate limit. Wall-clock from the first match's creation to the
    last match's end, as the league runs them: pairing, CreateMatch with the league's fields,
    following each match to its end, rating, the SQLite commit and the coalesced
    ``PublishStandings``.
``league.move_path_matches_per_s``
    ``grpc.move_per_s`` of the same ``make bench`` run divided by the mean number of moves per
    match of the league's matches.
``league.league_to_move_path``
    Their ratio (issue 19's goal: at least 0.5).
"""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL = 0.5


def add_arguments(parser) -> None:
    parser.add_argument("--league-matches", type=int, default=48,
                        help="matches for the league phase (0 skips it)")
    parser.add_argument("--league-concurrency", type=int, default=0,
                        help="matches at once in that phase (default: --concurrency)")


def league_matches_per_s(game: str = "batavia", seats: int = 4, matches: int = 48,
                         concurrency: int = 16) -> dict[str, Any]:
    import grpc
    from referee_tournament.league.config import parse
    from referee_tournament.league.serve import LeagueRunner
    from referee_tournament.procs import LocalReferee, die_with_parent_prefix, resolve

    from referee.v1 import referee_pb2 as pb
    from referee.v1 import referee_pb2_grpc as pb_grpc

    with tempfile.TemporaryDirectory(prefix="league-bench-") as tmp:
        ref = LocalReferee(Path(tmp) / "referee", secrets.token_hex(16))
        ref.start()
        procs: list[subprocess.Popen] = []
        try:
            name = f"bench-{game}"
            cfg = parse({"league": {"name": name, "registration": "closed"},
                         "referee": {"address": ref.address},
                         "games": [{"name": game, "seats": seats}],
                         "time": {"move_ms": 10000, "join_ms": 10000, "first_move_ms": 0},
                         "schedule": {"matches_per_minute": 1e9, "concurrency": concurrency,
                                      "per_bot": concurrency, "poll_s": 0.05,
                                      "max_matches": matches, "match_wall_s": 300}},
                        base_dir=tmp)
            admin = (("authorization", f"Bearer {ref.admin_token}"),)
            with grpc.insecure_channel(ref.address) as ch:
                stub = pb_grpc.RefereeStub(ch)
                stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
                    name=name, games=[game], registration=pb.REGISTRATION_CLOSED)),
                    metadata=admin, timeout=30)
                for i in range(seats):
                    bot = f"session-{chr(97 + i)}"
                    token = stub.RegisterBot(pb.RegisterBotRequest(
                        name=bot, league=name, kind=pb.BOT_KIND_REMOTE), metadata=admin,
                        timeout=30).bot_token
                    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
                    env["REFEREE_BOT_TOKEN"] = token
                    procs.append(subprocess.Popen(
                        [*die_with_parent_prefix(), resolve("referee-bot"), "session", "random",
                         "--address", ref.address, "--capacity", str(concurrency),
                         "--log-level", "warning"],
                        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True))
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:  # every session connected
                    bots = stub.ListLeagueBots(pb.ListLeagueBotsRequest(league=name),
                                               metadata=admin, timeout=30).bots
                    if sum(b.connected for b in bots) == seats:
                        break
                    time.sleep(0.1)
            from rich.console import Console

            runner = LeagueRunner(cfg, ref.admin_token, out=Path(tmp) / "out",
                                  console=Console(quiet=True))
            data = asyncio.run(runner.run())
            seconds = ((runner.last_end or 0) - (runner.first_start or 0))
            moves: list[int] = []
            timeouts = 0
            for rec_path in sorted((Path(tmp) / "out" / "records").glob("*.json")):
                rec = json.loads(rec_path.read_text())
                moves.append(len(rec["moves"]))
                timeouts += sum(1 for mv in rec["moves"] if mv.get("timeout"))
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
            ref.stop()
    done = data["done"]
    return {
        "game": game, "seats": seats, "matches": done, "failed": data["failed"],
        "concurrency": concurrency, "seconds": round(seconds, 3),
        "matches_per_s": round(done / seconds, 4) if seconds > 0 and done else None,
        "mean_moves_per_match": round(sum(moves) / len(moves), 2) if moves else None,
        "timeouts": timeouts,
        "note": f"a league of {seats} remote entrants (one `referee-bot session random` "
                "process each, connected once); league runner wall-clock, first match "
                "created to last match rated",
    }


def run_phase(results: dict[str, Any], args, console) -> None:
    """The league phase of ``make bench`` (after the gRPC phases, whose figures it uses)."""
    if not args.league_matches or args.skip_grpc or args.address:
        return
    concurrency = args.league_concurrency or args.concurrency
    console.print(f"league phase: {args.league_matches} {args.game} matches, {concurrency} at "
                  f"once, {args.seats} session bots …")
    p = league_matches_per_s(game=args.game, seats=args.seats, matches=args.league_matches,
                             concurrency=concurrency)
    g = results.get("grpc") or {}
    mean = p.get("mean_moves_per_match")
    move_path = round(g["move_per_s"] / mean, 4) if g.get("move_per_s") and mean else None
    results["league"] = {
        **p, "move_path_matches_per_s": move_path,
        "league_to_move_path": (round(p["matches_per_s"] / move_path, 3)
                                if move_path and p.get("matches_per_s") else None)}


def target(results: dict[str, Any]) -> dict[str, bool | None]:
    ratio = (results.get("league") or {}).get("league_to_move_path")
    return {"league.matches_per_s >= 0.5 league.move_path_matches_per_s":
            (ratio >= GOAL) if ratio is not None else None}


def flat(results: dict[str, Any]) -> dict[str, Any]:
    lg = results.get("league")
    if not lg:
        return {}
    return {"league.matches_per_s": lg["matches_per_s"],
            "league.move_path_matches_per_s": lg["move_path_matches_per_s"],
            "league.league_to_move_path": lg["league_to_move_path"]}


def table_rows(results: dict[str, Any], table) -> None:
    lg = results.get("league")
    if not lg:
        return
    mps = lg.get("matches_per_s")
    table.add_row("league.matches_per_s", f"{mps:.2f}" if mps else "n/a",
                  f"{lg['matches']} {lg['game']} matches x {lg['seats']} seats, "
                  f"{lg['concurrency']} at once, league runner, session bots")
    mp = lg.get("move_path_matches_per_s")
    table.add_row("league.move_path_matches_per_s", f"{mp:.2f}" if mp else "n/a",
                  f"grpc.move_per_s / {lg['mean_moves_per_match']} moves per match")
    r = lg.get("league_to_move_path")
    table.add_row("league / move path", f"{r:.2f}" if r else "n/a", f"goal >= {GOAL}")


if __name__ == "__main__":
    opts = dict(a.split("=", 1) for a in sys.argv[1:])
    print(json.dumps(league_matches_per_s(
        game=opts.get("game", "batavia"), seats=int(opts.get("seats", 4)),
        matches=int(opts.get("matches", 48)),
        concurrency=int(opts.get("concurrency", 16))), indent=2))
