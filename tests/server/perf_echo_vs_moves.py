"""Quick throughput check (not a test): bare Echo round trips vs accepted moves of random bots
playing full Batavia matches over Play streams, same concurrency, against a `referee serve`
subprocess on loopback.

    .venv/bin/python -m tests.server.perf_echo_vs_moves [--concurrency 8] [--seconds 5]

Prints both rates, their ratio, and the CPU seconds the server and this client used per phase
(which side is the bottleneck). PERF_SKIP_ECHO=1 measures moves only; PERF_SERVER="path.py"
runs another entry point instead of `-m referee.cli` (e.g. a profiling wrapper).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

ADMIN = "perf-admin"
MSGS: dict[str, int] = {}


async def echo_worker(stub, stop_at: float, counter: list[int]) -> None:
    q: asyncio.Queue = asyncio.Queue()
    seq = 0

    async def reqs():
        while (m := await q.get()) is not None:
            yield m

    call = stub.Echo(reqs())
    q.put_nowait(pb.EchoMessage(seq=seq, payload=b"x" * 64))
    async for _ in call:
        counter[0] += 1
        if time.monotonic() >= stop_at:
            break
        seq += 1
        q.put_nowait(pb.EchoMessage(seq=seq, payload=b"x" * 64))
    q.put_nowait(None)
    call.cancel()


async def bot(stub, mid: str, token: str, rnd: random.Random, stop_at: float,
              counter: list[int]) -> None:
    q: asyncio.Queue = asyncio.Queue()
    q.put_nowait(pb.ClientMessage(join=pb.Join(match_id=mid)))

    async def reqs():
        while (m := await q.get()) is not None:
            yield m

    call = stub.Play(reqs(), metadata=(("authorization", f"Bearer {token}"),))
    async for msg in call:
        which = msg.WhichOneof("msg")
        if which == "decision":
            if time.monotonic() >= stop_at:
                break
            d = msg.decision
            q.put_nowait(pb.ClientMessage(submit=pb.Submit(
                state_version=d.state_version, move=rnd.choice(d.legal_moves))))
        elif which == "move_result":
            if msg.move_result.accepted:
                counter[0] += 1
        else:
            MSGS[which] = MSGS.get(which, 0) + 1
        if which == "game_over":
            break
    q.put_nowait(None)
    call.cancel()


async def match_worker(stub, seats: int, stop_at: float, counter: list[int], rnd) -> None:
    while time.monotonic() < stop_at:
        resp = await stub.CreateMatch(
            pb.CreateMatchRequest(game="batavia", seats=seats),
            metadata=(("authorization", f"Bearer {ADMIN}"),))
        await asyncio.gather(*(bot(stub, resp.match_id, s.token, random.Random(rnd.random()),
                                   stop_at, counter) for s in resp.seats))


async def measure(target: str, kind: str, concurrency: int, seconds: float, seats: int):
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        counter = [0]
        # warm-up
        await echo_worker(stub, time.monotonic() + 0.3, [0])
        start = time.monotonic()
        stop_at = start + seconds + 3600  # workers are cancelled below
        rnd = random.Random(1)
        if kind == "echo":
            tasks = [asyncio.ensure_future(echo_worker(stub, stop_at, counter))
                     for _ in range(concurrency)]
        else:
            tasks = [asyncio.ensure_future(match_worker(stub, seats, stop_at, counter, rnd))
                     for _ in range(concurrency)]
        await asyncio.sleep(seconds)
        done = counter[0]
        elapsed = time.monotonic() - start
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return done / elapsed


def cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--durability", default="normal")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        proc = subprocess.Popen(
            [sys.executable, *os.environ.get("PERF_SERVER", "-m referee.cli").split(), "serve", "--port", "0", "--port-file",
             str(port_file), "--data-dir", tmp, "--admin-token", ADMIN, "--log-level", "warning",
             "--rate", "0", "--durability", args.durability],
            env={**os.environ},
        )
        try:
            for _ in range(200):
                if port_file.exists():
                    break
                time.sleep(0.05)
            target = f"127.0.0.1:{port_file.read_text().strip()}"
            c0 = cpu(proc.pid)
            p0 = time.process_time()
            echo = (asyncio.run(measure(target, "echo", args.concurrency, args.seconds, args.seats))
                    if not os.environ.get("PERF_SKIP_ECHO") else 1.0)
            c1 = cpu(proc.pid)
            p1 = time.process_time()
            moves = asyncio.run(measure(target, "moves", args.concurrency, args.seconds,
                                        args.seats))
            c2 = cpu(proc.pid)
            p2 = time.process_time()
            print(f"client CPU seconds: echo phase {p1 - p0:.2f}, moves phase {p2 - p1:.2f}")
            print(f"server CPU seconds: echo phase {c1 - c0:.2f}, moves phase {c2 - c1:.2f} "
                  f"(each phase ~{args.seconds + 0.3:.1f} s wall)")
        finally:
            proc.terminate()
            proc.wait(10)
    print("client messages received besides decisions:", MSGS)
    print(f"concurrency {args.concurrency}: echo {echo:,.0f} round trips/s, "
          f"moves {moves:,.0f} accepted moves/s, ratio {moves / echo:.2f}")


if __name__ == "__main__":
    main()
