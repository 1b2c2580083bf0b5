"""``referee-tournament demo``: a short tournament of the reference bots on every game the
referee hosts (for ``make run``). One referee subprocess; per game a round robin over every
seat rotation on one seed: two random bots (with different seeds), plus greedy-batavia on
Batavia. Results under ``<out>/<UTC time>/<game>/`` (a fresh folder each time). Takes ~10-30 s
on two cores."""
from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path
from typing import Any

import grpc
from rich.console import Console

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from .config import parse
from .procs import LocalReferee
from .runner import Runner

BOT = ("referee-bot {kind} --address {{address}} --match {{match}} --token={{token}} "
       "--seed {{seed}} --log-level warning")


def demo_config(game: str, seats: int, out: Path) -> dict[str, Any]:
    entrants = [{"name": "random-a", "command": BOT.format(kind="random")},
                {"name": "random-b", "command": BOT.format(kind="random")}]
    if game == "batavia":
        entrants.append({"name": "greedy-batavia", "command": BOT.format(kind="greedy-batavia")})
    return {
        "name": f"demo-{game}", "seed": 7, "output": str(out / game),
        "game": {"name": game, "seats": seats},
        "entrants": entrants,
        "format": {"type": "round_robin", "seating": "rotate", "rounds": 1},
        "time": {"move_ms": 2000, "match_wall_s": 45, "bot_grace_s": 2},
        "run": {"concurrency": 3},
    }


def _list_games(address: str) -> list[pb.GameSpec]:
    with grpc.insecure_channel(address) as ch:
        return list(pb_grpc.RefereeStub(ch).ListGames(pb.ListGamesRequest(), timeout=15).games)


def run_demo(out: Path, games: list[str] | None = None, progress: bool = True,
             console: Console | None = None) -> dict[str, Any]:
    """Play the demo tournaments; returns {game: report data}."""
    console = console or Console(stderr=True)
    out = Path(out).resolve() / time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out.mkdir(parents=True, exist_ok=True)
    ref = LocalReferee(out / "referee" / secrets.token_hex(4))
    ref.start()
    results: dict[str, Any] = {}
    try:
        specs = _list_games(ref.address)
        for g in specs:
            if games and g.name not in games:
                continue
            seats = max(2, g.min_seats)
            if seats > g.max_seats:
                continue
            cfg = parse(demo_config(g.name, seats, out), base_dir=str(out))
            console.rule(f"{g.title} ({g.name}), {seats} seats")
            runner = Runner(cfg, address=ref.address, admin_token=ref.admin_token,
                            console=console, progress=progress)
            results[g.name] = asyncio.run(runner.run())
    finally:
        ref.stop()
    console.rule("demo results")
    for game, data in results.items():
        board = data["leaderboard"]
        top = board[0] if board else None
        st = data["status"]
        first = f"; first: {top['name']} (μ−3σ {top['ordinal']:.2f})" if top else ""
        console.print(f"  {game:<12} {st.get('done', 0)} match(es) done, "
                      f"{st.get('failed', 0)} failed{first}")
    console.print(f"  reports: {out}/<game>/index.html")
    return results
