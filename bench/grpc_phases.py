"""The gRPC phases of ``make bench`` (what they measure: ``bench/run.py``'s docstring): the
referee under test, the spawned client processes and one timed phase over them. ``bench.run``,
``bench.load`` and ``bench.web`` drive it; ``bench.floor`` shares its statistics."""
from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import random
import secrets
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from referee_tournament.procs import LocalReferee, RefereeStartError

from bench.memory import rss_kb


# ============================================================================ gRPC clients
def _percentile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cpu_seconds_of(pid: int) -> float:
    """utime + stime of a process, from /proc (Linux)."""
    return sum(_cpu_split_of(pid))


def _cpu_split_of(pid: int) -> tuple[float, float]:
    """(utime, stime) of a process in seconds, from /proc (Linux): the kernel's share (stime)
    is mostly the sockets' work, the same for the referee as for the floor's stub per message."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


@dataclass
class WorkerArgs:
    kind: str  # "moves" | "echo"
    address: str
    admin_token: str
    game: str
    seats: int
    streams: int  # concurrent matches (moves) or echo streams
    t_start: float  # time.monotonic() values (system-wide clock on Linux)
    t_measure: float
    t_end: float
    seed: int
    payload_bytes: int = 0
    combine: bool = False  # moves: Join.combine_decision (the next Decision in the MoveResult)
    # moves: the matches started before t_end are played to their end (up to finish_s more
    # seconds) instead of being cut off, and those that never end are counted (the load phase)
    finish_s: float = 0.0


def worker_main(args: WorkerArgs, counter, results, ready=None, go=None) -> None:
    """Entry point of one client process (spawned). With ``ready`` and ``go`` (shared values):
    once connected it counts itself in ``ready`` and waits for the parent to write the common
    start time in ``go``, to which its phase times are moved, so that a slow start (a loaded
    machine importing grpc) shortens no phase."""
    cpu0 = sum(os.times()[:2])
    try:
        out = asyncio.run(_worker(args, counter, ready, go))
        out["error"] = ""
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out = {"error": f"{type(exc).__name__}: {exc}", "samples": [], "count": 0}
    out["cpu_s"] = sum(os.times()[:2]) - cpu0
    results.put(out)


def _wait_for_start(go) -> None:
    while go.value <= 0:
        time.sleep(0.01)


async def _worker(a: WorkerArgs, counter, ready=None, go=None) -> dict[str, Any]:
    import grpc

    from referee.v1 import referee_pb2 as pb
    from referee.v1 import referee_pb2_grpc

    channel = grpc.aio.insecure_channel(
        a.address, options=[("grpc.max_receive_message_length", 32 * 1024 * 1024)]
    )
    stub = referee_pb2_grpc.RefereeStub(channel)
    await channel.channel_ready()
    if ready is not None and go is not None:
        with ready.get_lock():
            ready.value += 1
        await asyncio.to_thread(_wait_for_start, go)
        shift = go.value - a.t_start
        a.t_start, a.t_measure, a.t_end = a.t_start + shift, a.t_measure + shift, a.t_end + shift
    rng = random.Random(a.seed)
    samples: list[float] = []
    stats = {"count": 0, "decision_bytes": 0, "decisions": 0, "matches": 0, "finished": 0,
             "errors": 0, "messages": 0}
    clock = time.monotonic
    pending_count = 0

    def tick(now: float) -> None:
        nonlocal pending_count
        if a.t_measure <= now < a.t_end:
            stats["count"] += 1
            pending_count += 1
            if pending_count >= 50:
                with counter.get_lock():
                    counter.value += pending_count
                pending_count = 0

    await asyncio.sleep(max(0.0, a.t_start - clock()))

    async def play_matches() -> None:
        admin = (("authorization", f"Bearer {a.admin_token}"),)
        while clock() < a.t_end:
            created = await stub.CreateMatch(
                pb.CreateMatchRequest(game=a.game, seats=a.seats), metadata=admin
            )
            stats["matches"] += 1
            sent: dict[int, float] = {}

            async def seat(token: str, match_id: str, sent: dict[int, float]) -> bool:
                """Play one seat; True once its GameOver came."""
                call = stub.Play(metadata=(("authorization", f"Bearer {token}"),))
                await call.write(pb.ClientMessage(join=pb.Join(match_id=match_id,
                                                               combine_decision=a.combine)))

                async def decide(d, now: float) -> bool:
                    """Answer the Decision ``d``; False when time is up."""
                    t0 = sent.pop(d.state_version - 1, None)
                    if t0 is not None and a.t_measure <= t0 < a.t_end:
                        samples.append(now - t0)
                    stats["decisions"] += 1
                    stats["decision_bytes"] += d.ByteSize()
                    if now >= a.t_end and not a.finish_s:
                        return False
                    move = d.legal_moves[rng.randrange(len(d.legal_moves))]
                    sent[d.state_version] = clock()
                    await call.write(pb.ClientMessage(submit=pb.Submit(
                        state_version=d.state_version, move=move)))
                    return True

                try:
                    while True:
                        msg = await call.read()
                        if msg is grpc.aio.EOF:
                            return False
                        which = msg.WhichOneof("msg")
                        now = clock()
                        if a.t_measure <= now < a.t_end:
                            stats["messages"] += 1
                        if which == "decision":
                            if not await decide(msg.decision, now):
                                return False
                        elif which == "move_result":
                            r = msg.move_result
                            if r.accepted:
                                tick(now)
                                if r.HasField("next") and not await decide(r.next, now):
                                    return False
                            else:
                                stats["errors"] += 1
                        elif which == "game_over":
                            return True
                        if clock() >= a.t_end and not a.finish_s:
                            return False
                finally:
                    call.cancel()

            over = await asyncio.gather(*(seat(s.token, created.match_id, sent)
                                          for s in created.seats))
            stats["finished"] += any(over)

    async def echo_stream() -> None:
        payload = secrets.token_bytes(a.payload_bytes)
        call = stub.Echo()
        seq = 0
        try:
            while clock() < a.t_end:
                t0 = clock()
                await call.write(pb.EchoMessage(seq=seq, payload=payload))
                reply = await call.read()
                now = clock()
                if reply is grpc.aio.EOF:
                    return
                if t0 >= a.t_measure:
                    samples.append(now - t0)
                tick(now)
                seq += 1
            await call.done_writing()
        finally:
            call.cancel()

    job = play_matches if a.kind == "moves" else echo_stream
    jobs = asyncio.gather(*(job() for _ in range(a.streams)))
    try:
        # Seats that are not to act when time is up would wait forever: cut them off (with
        # finish_s, once the matches started have had that long to end).
        await asyncio.wait_for(jobs, timeout=max(0.0, a.t_end - clock()) + 1.0 + a.finish_s)
    except TimeoutError:
        pass
    with counter.get_lock():
        counter.value += pending_count
    await channel.close()
    return {"samples": samples, **stats}


# ============================================================================ gRPC phases
class RefereeServer(LocalReferee):
    """The referee the gRPC phases measure: ``referee serve`` (the project's launcher, with its
    default settings and ``--log-level warning``) in ``workdir``, or the running referee at
    ``address`` (then nothing is started)."""

    def __init__(self, workdir: Path, address: str = "", admin_token: str = "",
                 extra_args: tuple[str, ...] = ()):
        super().__init__(workdir / "data", admin_token or secrets.token_hex(24),
                         ("--log-level", "warning", *extra_args),
                         log_path=workdir / "server.log")
        self.workdir = workdir
        self.external = address

    def start(self, timeout: float = 30.0) -> Self:
        if self.external:
            return self
        try:
            return super().start(timeout)
        except RefereeStartError as exc:
            raise SystemExit(f"bench: {exc}") from None

    @property
    def address(self) -> str:
        return self.external or super().address

    def rss_mb(self) -> float | None:
        kb = rss_kb(self.proc.pid) if self.proc is not None else None
        return round(kb / 1024, 1) if kb is not None else None

    def cpu_seconds(self) -> float:
        return sum(self.cpu_split())

    def cpu_split(self) -> tuple[float, float]:
        """(user, system) CPU seconds of the referee process."""
        if self.proc is None:
            return float("nan"), float("nan")  # an external referee: not ours to see
        return _cpu_split_of(self.proc.pid)

    def stop(self, grace: float = 15.0) -> bool:
        return super().stop(grace)


def _server_cpu(server: Any) -> tuple[float, float]:
    """(all, system) CPU seconds of the server under test; system is NaN for one that tells
    only its total (``bench.cluster.ClusterServer``)."""
    split = getattr(server, "cpu_split", None)
    if split is None:
        return server.cpu_seconds(), float("nan")
    user, system = split()
    return user + system, system


def run_phase(kind: str, server: RefereeServer, *, clients: int, concurrency: int,
              seconds: float, warmup: float, game: str, seats: int, payload_bytes: int,
              progress, task, combine: bool = False, finish_s: float = 0.0) -> dict[str, Any]:
    """One timed phase over ``clients`` spawned client processes. ``finish_s`` (moves): the
    matches started before the end are played on to their end, up to that many seconds more,
    and the result counts those that did not end (``unfinished``)."""
    ctx = mp.get_context("spawn")  # never fork a process that has gRPC state
    counter = ctx.Value("q", 0)
    results = ctx.Queue()
    ready, go = ctx.Value("q", 0), ctx.Value("d", 0.0)
    spawned = t_start = time.monotonic()  # t_start moves to when every client is connected
    t_measure = t_start + warmup
    t_end = t_measure + seconds
    per = [concurrency // clients + (1 if i < concurrency % clients else 0) for i in range(clients)]
    procs = []
    for i, streams in enumerate(per):
        if not streams:
            continue
        wa = WorkerArgs(kind, server.address, server.admin_token, game, seats, streams,
                        t_start, t_measure, t_end, seed=1000 + i, payload_bytes=payload_bytes,
                        combine=combine, finish_s=finish_s)
        p = ctx.Process(target=worker_main, args=(wa, counter, results, ready, go), daemon=True)
        p.start()
        procs.append(p)
    # spawned interpreters import grpc and connect first: the phase starts when all have
    started = time.monotonic()
    while ready.value < len(procs):
        if time.monotonic() - started > 120 or not all(p.is_alive() for p in procs):
            for p in procs:
                p.kill()
            raise SystemExit(f"bench: {kind} clients did not start\nserver log: {server.log_path}")
        progress.update(task, completed=0.0, rate="starting clients")
        time.sleep(0.05)
    shift = time.monotonic() + 0.05 - t_start
    t_start, t_measure, t_end = t_start + shift, t_measure + shift, t_end + shift
    go.value = t_start
    server_cpu0: tuple[float, float] | None = None  # (all, system) seconds
    server_cpu1: tuple[float, float] | None = None
    outs: list[dict[str, Any]] = []
    while True:
        # Drain results while waiting: a child cannot exit before its queued data is read.
        while len(outs) < len(procs):
            try:
                outs.append(results.get_nowait())
            except Exception:  # noqa: BLE001 - queue.Empty
                break
        now = time.monotonic()
        if server_cpu0 is None and now >= t_measure:
            server_cpu0 = _server_cpu(server)
        if server_cpu1 is None and now >= t_end:
            server_cpu1 = _server_cpu(server)
        measured = max(0.0, min(now, t_end) - t_measure)
        rate = counter.value / measured if measured > 0.2 else 0.0
        label = "warming up" if now < t_measure else f"{rate:,.0f} {kind}/s"
        progress.update(task, completed=min(max(0.0, now - t_start), warmup + seconds),
                        rate=label)
        if now >= t_end + 0.05 and len(outs) == len(procs):
            break
        if now > t_end + finish_s + 30:
            for p in procs:
                p.kill()
            raise SystemExit(f"bench: {kind} clients did not finish")
        time.sleep(0.1)
    for p in procs:
        p.join(5)
    errors = [o["error"] for o in outs if o.get("error")]
    if errors:
        raise SystemExit(f"bench: {kind} client failed: {errors[0]}\nserver log: {server.log_path}")
    samples = [s for o in outs for s in o["samples"]]
    count = sum(o["count"] for o in outs)
    decisions = sum(o.get("decisions", 0) for o in outs)
    server_cpu, cpu_sys = ((b - a for a, b in zip(server_cpu0, server_cpu1, strict=True))
                           if server_cpu0 and server_cpu1 else (0.0, 0.0))
    out = {
        "per_s": count / seconds,
        "count": count,
        "seconds": seconds,
        "p50_ms": _percentile(samples, 0.50) * 1000,
        "p99_ms": _percentile(samples, 0.99) * 1000,
        "mean_ms": (statistics.fmean(samples) * 1000) if samples else float("nan"),
        "latency_samples": len(samples),
        "server_cpu_util": server_cpu / seconds,
        # Server CPU per operation: the cost that sets the ceiling on a dedicated core,
        # whatever else runs on the machine; and its part in the kernel (system time)
        "server_cpu_ms_per_op": server_cpu / count * 1000 if count else float("nan"),
        "server_cpu_sys_ms_per_op": cpu_sys / count * 1000 if count else float("nan"),
        "client_cpu_util": sum(o["cpu_s"] for o in outs) / (t_end - spawned),
    }
    if kind == "moves":
        out["matches_started"] = sum(o.get("matches", 0) for o in outs)
        if finish_s:
            out["matches_finished"] = sum(o.get("finished", 0) for o in outs)
            out["unfinished"] = out["matches_started"] - out["matches_finished"]
        out["rejected"] = sum(o.get("errors", 0) for o in outs)
        out["server_messages_per_move"] = (
            sum(o.get("messages", 0) for o in outs) / count if count else 0
        )
        out["mean_decision_bytes"] = (
            sum(o.get("decision_bytes", 0) for o in outs) / decisions if decisions else 0
        )
    return out


# ============================================================================ main
