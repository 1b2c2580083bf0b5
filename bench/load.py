"""Load phase of ``make bench``: many Batavia matches at once on one referee.

``grpc.load300``: ``matches`` (default 300) Batavia matches of 4 random bots each run at the
same time against a fresh referee process (each finished match is replaced by a new one, so the
count stays constant), spread over the client processes. Reported: accepted moves per second,
the move latency (a bot's Submit to the next Decision of that match, as in the move phase)
p50/p99, the referee's CPU per move and its resident set size at start, after the phase and
at its peak while the phase ran. Under load the p99 is set by queueing in the referee's one
event loop, which is what later work should lower.
"""
from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def measure_load(*, matches: int = 300, clients: int = 2, seats: int = 4, seconds: float = 15.0,
                 warmup: float = 5.0, progress=None, task=None) -> dict[str, Any]:
    from bench.run import RefereeServer, run_phase

    with tempfile.TemporaryDirectory(prefix="referee-load-") as tmp:
        server = RefereeServer(Path(tmp))
        server.start()
        peak = [server.rss_mb() or 0.0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.5):
                peak[0] = max(peak[0], server.rss_mb() or 0.0)

        sampler = threading.Thread(target=sample, daemon=True)
        try:
            rss_start = server.rss_mb()
            sampler.start()
            t0 = time.monotonic()
            phase = run_phase("moves", server, clients=clients, concurrency=matches,
                              seconds=seconds, warmup=warmup, game="batavia", seats=seats,
                              payload_bytes=0, progress=progress, task=task)
            wall = time.monotonic() - t0
            rss_after = server.rss_mb()
        finally:
            done.set()
            server.stop()
    return {
        "matches": matches,
        "seats": seats,
        "client_processes": clients,
        "moves_per_s": round(phase["per_s"], 1),
        "p50_ms": round(phase["p50_ms"], 2),
        "p99_ms": round(phase["p99_ms"], 2),
        "server_cpu_ms_per_move": round(phase["server_cpu_ms_per_op"], 4),
        "server_cpu_util": round(phase["server_cpu_util"], 3),
        "rss_mb_start": rss_start,
        "rss_mb_after": rss_after,
        "rss_mb_peak": max(peak[0], rss_after or 0.0),
        "matches_started": phase.get("matches_started"),
        "rejected": phase.get("rejected"),
        "latency_samples": phase["latency_samples"],
        "seconds": seconds,
        "wall_seconds": round(wall, 1),
    }


if __name__ == "__main__":  # python -m bench.load [MATCHES]: this phase alone
    import json
    import sys

    from rich.progress import Progress

    with Progress() as p:
        t = p.add_task("load", total=20.0, rate="")
        out = measure_load(matches=int(sys.argv[1]) if len(sys.argv) > 1 else 300,
                           progress=p, task=t)
    print(json.dumps(out, indent=2))
