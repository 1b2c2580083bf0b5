"""Does the web viewer slow the gRPC path? (``make bench``; ``--skip-web`` skips it.)

The move phase of ``bench/run.py`` (same clients, concurrency and game) runs three times, each on
a fresh ``referee serve``: plain, then with ``--http-port`` and ``viewers`` open viewers, then
plain again. A viewer behaves like a browser on a live match page: it reads the match list,
follows the newest running match on its server-sent event feed until the GameOver, fetches the
replay (what the page does then), and moves on to the next running match. The result is
``web.move_per_s_ratio`` = move/s with viewers / mean move/s of the two plain runs (the issue's
bar: at least 0.9), with the updates the viewers received and the referee's CPU per move."""
from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import socket
import time
from pathlib import Path
from typing import Any

from bench.grpc_phases import RefereeServer, run_phase


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebReferee(RefereeServer):
    """``referee serve`` with ``--http-port``."""

    def __init__(self, workdir: Path):
        super().__init__(workdir)
        self.http_port = _free_port()
        self.extra_args = (*self.extra_args, "--http-port", str(self.http_port))


def viewer_main(base: str, t_end: float, results) -> None:
    """One viewer process (spawned)."""
    try:
        out = asyncio.run(_viewer(base, t_end))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out = {"error": f"{type(exc).__name__}: {exc}"}
    results.put(out)


async def _viewer(base: str, t_end: float) -> dict[str, Any]:
    import httpx

    stats: dict[str, Any] = {"matches_followed": 0, "updates": 0, "replays_fetched": 0,
                             "error": ""}
    clock = time.monotonic
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        while clock() < t_end:
            matches = (await c.get("/api/matches")).json()["matches"]
            running = [m for m in matches if m["state"] == "running"]
            if not running:
                await asyncio.sleep(0.2)
                continue
            mid = running[0]["id"]
            stats["matches_followed"] += 1
            await c.get(f"/api/matches/{mid}")  # the page loads the frames so far
            try:
                async with c.stream("GET", f"/api/matches/{mid}/live") as r:
                    async for line in r.aiter_lines():
                        if clock() >= t_end:
                            break
                        if line.startswith("data: "):
                            msg = json.loads(line[6:])
                            stats["updates"] += msg["type"] == "update"
                            if msg["type"] in ("game_over", "resync"):
                                break
            except httpx.HTTPError:
                continue
            if clock() < t_end:
                await c.get(f"/api/matches/{mid}")  # at GameOver the page reloads the replay
                stats["replays_fetched"] += 1
    return stats


def measure_web(*, clients: int, concurrency: int, seconds: float, warmup: float, game: str,
                seats: int, viewers: int, workdir: Path, progress, task) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    viewer_stats: list[dict[str, Any]] = []
    for i, with_web in enumerate((False, True, False)):
        sub = workdir / f"web-{i}"
        sub.mkdir()
        server = WebReferee(sub) if with_web else RefereeServer(sub)
        server.start()
        procs = []
        results = None
        try:
            if with_web:
                ctx = mp.get_context("spawn")
                results = ctx.Queue()
                t_end = time.monotonic() + 2.5 + warmup + seconds
                for _ in range(viewers):
                    assert isinstance(server, WebReferee)
                    p = ctx.Process(target=viewer_main, daemon=True, args=(
                        f"http://127.0.0.1:{server.http_port}", t_end, results))
                    p.start()
                    procs.append(p)
            progress.reset(task, total=warmup + seconds)
            progress.update(task, description=f"gRPC moves {'+ web viewers' if with_web else 'plain'}")
            runs.append(run_phase("moves", server, clients=clients, concurrency=concurrency,
                                  seconds=seconds, warmup=warmup, game=game, seats=seats,
                                  payload_bytes=0, progress=progress, task=task))
            if results is not None:
                for _ in procs:
                    viewer_stats.append(results.get(timeout=60))
        finally:
            for p in procs:
                p.join(5)
                if p.is_alive():
                    p.kill()
            server.stop()
    errors = [v["error"] for v in viewer_stats if v.get("error")]
    plain = (runs[0]["per_s"] + runs[2]["per_s"]) / 2
    return {
        "viewers": viewers,
        "move_per_s_plain": [round(runs[0]["per_s"], 1), round(runs[2]["per_s"], 1)],
        "move_per_s_with_viewers": round(runs[1]["per_s"], 1),
        "move_per_s_ratio": round(runs[1]["per_s"] / plain, 3) if plain else None,
        "server_cpu_ms_per_move_plain": round(
            (runs[0]["server_cpu_ms_per_op"] + runs[2]["server_cpu_ms_per_op"]) / 2, 4),
        "server_cpu_ms_per_move_with_viewers": round(runs[1]["server_cpu_ms_per_op"], 4),
        "viewer_updates": sum(v.get("updates", 0) for v in viewer_stats),
        "viewer_matches_followed": sum(v.get("matches_followed", 0) for v in viewer_stats),
        "viewer_errors": errors,
    }
