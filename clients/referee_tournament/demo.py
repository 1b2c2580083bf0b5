"""``referee-tournament demo``: a short tournament of the reference bots on every game the
referee hosts (for ``make run``). One referee subprocess; per game a round robin over every
seat rotation on one seed: two random bots (with different seeds), plus the game's greedy
reference bot when ``referee-bot`` has one (greedy-batavia, greedy-goa, ...). Results under ``<out>/<UTC time>/<game>/`` (a fresh folder each time). Takes ~10-30 s
on two cores."""
from __future__ import annotations

import asyncio
import re
import secrets
import subprocess
import time
from pathlib import Path
from typing import Any

import grpc
from rich.console import Console

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from .config import parse
from .procs import LocalReferee, resolve
from .runner import Runner

BOT = ("referee-bot {kind} --address {{address}} --match {{match}} "
       "--seed {{seed}} --log-level warning")


def reference_bots() -> set[str]:
    """The bot kinds `referee-bot --help` lists (random, greedy-batavia, greedy-goa, ...)."""
    try:
        text = subprocess.run([resolve("referee-bot"), "--help"], capture_output=True,
                              text=True, timeout=60, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return {"random"}
    return set(re.findall(r"^\s{4}(random|greedy-[\w-]+)\b", text, re.MULTILINE)) | {"random"}


def demo_config(game: str, seats: int, out: Path, bots: set[str] | None = None,
                ) -> dict[str, Any]:
    entrants = [{"name": "random-a", "command": BOT.format(kind="random")},
                {"name": "random-b", "command": BOT.format(kind="random")}]
    greedy = "greedy-" + game.replace("_", "-")
    if greedy in (bots if bots is not None else {"greedy-batavia"}):
        entrants.append({"name": greedy, "command": BOT.format(kind=greedy)})
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
        bots = reference_bots()
        for g in specs:
            if games and g.name not in games:
                continue
            seats = max(2, g.min_seats)
            if seats > g.max_seats:
                continue
            cfg = parse(demo_config(g.name, seats, out, bots), base_dir=str(out))
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
    # each report is a static page linking every match's replay page: no referee needed
    console.print("reports, each with its matches' replays (open in a browser):")
    for game in results:
        report = out / game / "index.html"
        if report.exists():
            console.print(f"  {report}", soft_wrap=True)
    return results
