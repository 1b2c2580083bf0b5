"""Load phase of ``make bench``: many Batavia matches at once on one referee.

``grpc.load300``: ``matches`` (default 300) Batavia matches of 4 random bots each run at the
same time against a fresh referee process (each finished match is replaced by a new one, so the
count stays constant), spread over the client processes. When the measured time is up no match
is started any more and those under way are played to their end (up to ``FINISH_S``):
``unfinished`` counts the started matches that never ended, which must be 0 (``bench.run``
fails loudly otherwise; issue 31 item 8). Reported: accepted moves per second,
the move latency (a bot's Submit to the next Decision of that match, as in the move phase)
p50/p99, the referee's CPU per move and its resident set size at start, after the phase and
at its peak while the phase ran. Under load the p99 is set by queueing in the referee's one
event loop, which is what later work should lower.

``grpc.joins4000``: 1,000 matches x 4 seats open their Play streams at the same moment (one
client channel) against a fresh referee: how many got their Welcome, how many failed and how
(gRPC core's pending-call queue used to refuse about a quarter of them).
"""
from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any

#: How long the matches under way when the load phase ends have to finish (a Batavia match of
#: random bots is a few seconds of play; a stalled one never ends)
FINISH_S = 120.0


def measure_load(*, matches: int = 300, clients: int = 2, seats: int = 4, seconds: float = 15.0,
                 warmup: float = 5.0, progress=None, task=None) -> dict[str, Any]:
    from bench.grpc_phases import RefereeServer, run_phase

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
                              payload_bytes=0, progress=progress, task=task, finish_s=FINISH_S)
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
        "matches_finished": phase.get("matches_finished"),
        "unfinished": phase.get("unfinished"),
        "rejected": phase.get("rejected"),
        "latency_samples": phase["latency_samples"],
        "seconds": seconds,
        "wall_seconds": round(wall, 1),
    }


def measure_joins(matches: int = 1000, seats: int = 4) -> dict[str, Any]:
    import asyncio

    from bench.grpc_phases import RefereeServer

    async def joins(address: str, admin_token: str) -> tuple[dict[str, int], float]:
        import grpc

        from referee.v1 import referee_pb2 as pb
        from referee.v1 import referee_pb2_grpc

        async with grpc.aio.insecure_channel(address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            admin = (("authorization", f"Bearer {admin_token}"),)
            todo = []
            for _ in range(matches):
                r = await stub.CreateMatch(pb.CreateMatchRequest(game="batavia", seats=seats),
                                           metadata=admin)
                todo += [(r.match_id, s.token) for s in r.seats]
            outcomes: dict[str, int] = {}

            async def join(match_id: str, token: str):
                call = stub.Play(metadata=(("authorization", f"Bearer {token}"),))
                try:
                    await call.write(pb.ClientMessage(join=pb.Join(match_id=match_id)))
                    msg = await call.read()
                    key = "welcome" if msg is not grpc.aio.EOF and msg.HasField("welcome") \
                        else "eof"
                except grpc.aio.AioRpcError as err:
                    key = err.code().name
                outcomes[key] = outcomes.get(key, 0) + 1
                return call

            t0 = time.monotonic()
            calls = await asyncio.gather(*(join(m, t) for m, t in todo))
            took = time.monotonic() - t0
            for c in calls:
                c.cancel()
            return outcomes, took

    with tempfile.TemporaryDirectory(prefix="referee-joins-") as tmp:
        server = RefereeServer(Path(tmp))
        server.start()
        try:
            outcomes, took = asyncio.run(joins(server.address, server.admin_token))
        finally:
            server.stop()
    ok = outcomes.pop("welcome", 0)
    return {"streams": matches * seats, "joined": ok, "failed": sum(outcomes.values()),
            "failures": outcomes, "seconds": round(took, 2)}


if __name__ == "__main__":  # python -m bench.load [MATCHES]: this phase alone
    import json
    import sys

    from rich.progress import Progress

    with Progress() as p:
        t = p.add_task("load", total=20.0, rate="")
        out = measure_load(matches=int(sys.argv[1]) if len(sys.argv) > 1 else 300,
                           progress=p, task=t)
    out["joins"] = measure_joins()
    print(json.dumps(out, indent=2))
