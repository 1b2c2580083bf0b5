"""The zero-work floor of the move/echo throughput ratio (used by ``make bench``).

An accepted move costs the referee one message in and two out: the ``MoveResult`` on the
mover's stream and the next ``Decision`` on the next seat's stream. An echo costs one in and
one out. This module measures what that message pattern alone allows, on a stub gRPC server
that does no game work at all:

``Echo``   every message received on the stream is sent back.
``Relay``  ``seats`` streams form a group (group id and seat in the call metadata). When seat
           i sends a message (a "move"), the stub puts a small ack (``ACK_BYTES``, about a
           MoveResult) on seat i's stream and a ``payload_bytes`` message (the "next
           Decision") on seat (i + 1) % seats's stream. When every seat of a group is
           connected the stub sends the first payload to seat 0. One token per group, as one
           Decision is pending per match.

The stub is shaped like the referee's ``Play`` handler (a reader task per stream feeding a
queue that an async generator drains, the same server options and gRPC experiments), with
raw-bytes serializers and no validation, storage or protobuf. Clients are spawned processes,
each one asyncio loop with one channel, the streams split over them as in ``bench/run.py``;
each phase has a warm-up that is not measured. ``relay_per_s`` counts acks (one per "move").

``measure_floor`` starts the stub in its own process (``StubServers`` of one), runs the echo
phase then the relay phase and always stops the stub.
"""
from __future__ import annotations

import asyncio
import functools
import multiprocessing as mp
import os
import queue
import secrets
import signal
import statistics
import time
from dataclasses import dataclass
from typing import Any

from bench.grpc_phases import _cpu_split_of, _percentile
from referee.cli import GRPC_EXPERIMENTS

SERVICE = "referee.bench.Floor"
ECHO_METHOD = f"/{SERVICE}/Echo"
RELAY_METHOD = f"/{SERVICE}/Relay"
ACK_BYTES = 20  # an accepted MoveResult in its ServerMessage is about this size
MOVE_BYTES = 32  # a Submit in its ClientMessage is about this size
ACK_TAG = b"A"
DECISION_TAG = b"D"
MD_GROUP, MD_SEAT, MD_SEATS = "x-floor-group", "x-floor-seat", "x-floor-seats"
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 32 * 1024 * 1024)]  # as bench/run.py
START_TIMEOUT = 60.0  # seconds for a spawned process to import grpc and connect
_CLOSE = object()


def _identity(data: bytes) -> bytes:
    return data


def _server_options() -> list[tuple[str, int]]:
    """The channel options of ``referee.server.app.RefereeServer`` with its defaults."""
    from referee.server.config import DEFAULT_MAX_MESSAGE_BYTES

    return [
        ("grpc.max_receive_message_length", DEFAULT_MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
        ("grpc.so_reuseport", 0),
    ]


# ============================================================================ stub server
class _Stub:
    def __init__(self, payload_bytes: int):
        self.ack = ACK_TAG + secrets.token_bytes(ACK_BYTES - 1)
        self.payload = DECISION_TAG + secrets.token_bytes(max(0, payload_bytes - 1))
        self.groups: dict[str, list[asyncio.Queue | None]] = {}

    @staticmethod
    async def _drain(q: asyncio.Queue):
        get, get_nowait = q.get, q.get_nowait
        while True:
            # one wake-up per burst, as the referee's Play handler does
            item = get_nowait() if q.qsize() else await get()
            if item is _CLOSE:
                return
            yield item

    async def echo(self, request_iterator, context):
        async for msg in request_iterator:
            yield msg

    async def relay(self, request_iterator, context):
        import grpc

        md = dict(context.invocation_metadata())
        try:
            group_id, seat, seats = md[MD_GROUP], int(md[MD_SEAT]), int(md[MD_SEATS])
            if not 0 <= seat < seats:
                raise ValueError(f"seat {seat} of {seats}")
        except (KeyError, ValueError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad floor metadata: {exc}")
            return
        group = self.groups.setdefault(group_id, [None] * seats)
        if len(group) != seats or group[seat] is not None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "seat taken or seats differ")
            return
        mine: asyncio.Queue = asyncio.Queue()
        group[seat] = mine
        nxt = (seat + 1) % seats
        ack, payload = self.ack, self.payload

        async def reader() -> None:
            try:
                async for _move in request_iterator:
                    mine.put_nowait(ack)
                    q = group[nxt]
                    if q is not None:
                        q.put_nowait(payload)
            except Exception:  # noqa: BLE001 - the stream is going away: just close it
                pass
            finally:
                mine.put_nowait(_CLOSE)

        task = asyncio.ensure_future(reader())
        try:
            first = group[0]
            if first is not None and all(q is not None for q in group):
                first.put_nowait(payload)  # the first Decision of the "match"
            async for item in self._drain(mine):
                yield item
        finally:
            task.cancel()
            group[seat] = None
            if all(q is None for q in group) and self.groups.get(group_id) is group:
                del self.groups[group_id]


def _serve(payload_bytes: int, parent_pid: int, port_q) -> None:
    """Entry point of the stub server process (spawned)."""
    try:
        asyncio.run(_serve_async(payload_bytes, parent_pid, port_q))
    except BaseException as exc:  # reported to the parent if it still waits for the port
        port_q.put(("error", f"{type(exc).__name__}: {exc}"))
        raise


async def _serve_async(payload_bytes: int, parent_pid: int, port_q) -> None:
    import grpc

    stub = _Stub(payload_bytes)
    server = grpc.aio.server(options=_server_options())
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {
        "Echo": grpc.stream_stream_rpc_method_handler(stub.echo, _identity, _identity),
        "Relay": grpc.stream_stream_rpc_method_handler(stub.relay, _identity, _identity),
    }),))
    port = server.add_insecure_port("127.0.0.1:0")
    if not port:
        raise OSError("cannot bind 127.0.0.1:0")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    port_q.put(("port", port))
    # Never outlive the bench: stop when told to, or when the parent has gone.
    while not stop.is_set() and os.getppid() == parent_pid:
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass
    await server.stop(0)


class StubServer:
    """The stub server process: ``start()`` spawns it and waits for its port."""

    def __init__(self, payload_bytes: int):
        self.payload_bytes = payload_bytes
        self.proc: Any = None
        self.port = 0

    def start(self, timeout: float = START_TIMEOUT) -> None:
        ctx = mp.get_context("spawn")  # never fork a process that has gRPC state
        port_q = ctx.Queue()
        proc = ctx.Process(target=_serve, args=(self.payload_bytes, os.getpid(), port_q),
                           name="bench-floor-stub", daemon=True)
        # the referee's gRPC settings (referee.cli.tune_grpc), read by the stub's gRPC when the
        # spawned process imports it: the floor is the same transport, doing no work
        own = "GRPC_EXPERIMENTS" in os.environ  # an operator's own setting wins, as there
        if not own:
            os.environ["GRPC_EXPERIMENTS"] = GRPC_EXPERIMENTS
        try:
            proc.start()
        finally:
            if not own:
                del os.environ["GRPC_EXPERIMENTS"]
        self.proc = proc  # only once started: stop() joins it
        deadline = time.monotonic() + timeout
        while True:
            try:
                kind, value = port_q.get(timeout=0.1)
                break
            except queue.Empty:
                if not self.proc.is_alive():
                    raise SystemExit(f"bench: the floor stub server exited with code "
                                     f"{self.proc.exitcode} before reporting its port") from None
                if time.monotonic() > deadline:
                    raise SystemExit("bench: the floor stub server did not start within "
                                     f"{timeout:.0f} s") from None
        if kind != "port":
            raise SystemExit(f"bench: the floor stub server failed: {value}")
        self.port = int(value)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    def cpu_split(self) -> tuple[float, float]:
        """(user, system) CPU seconds of the stub process."""
        return _cpu_split_of(self.proc.pid)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.is_alive():
            self.proc.terminate()  # SIGTERM: the stub stops its server and returns
            self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)


class StubServers:
    """``count`` stub server processes serving one load together, as a cluster's workers do:
    client process i connects to stub i mod ``count``, so each relay group (all on one client's
    channel) is served by one stub. ``cpu_split`` sums the stubs."""

    def __init__(self, payload_bytes: int, count: int):
        if count < 1:
            raise ValueError(f"at least one stub, not {count}")
        self.stubs = [StubServer(payload_bytes) for _ in range(count)]

    def start(self, timeout: float = START_TIMEOUT) -> None:
        for stub in self.stubs:
            stub.start(timeout)

    def address_for(self, client: int) -> str:
        return self.stubs[client % len(self.stubs)].address

    def alive(self) -> bool:
        return all(stub.alive() for stub in self.stubs)

    def cpu_split(self) -> tuple[float, float]:
        splits = [stub.cpu_split() for stub in self.stubs]
        return sum(u for u, _ in splits), sum(s for _, s in splits)

    def stop(self) -> None:
        for stub in self.stubs:
            stub.stop()


# ============================================================================ clients
@dataclass
class _ClientArgs:
    kind: str  # "echo" | "relay"
    address: str
    streams: int  # echo streams, or relay groups of `seats` streams
    seats: int
    payload_bytes: int
    warmup: float
    seconds: float
    group_prefix: str


def _client_main(args: _ClientArgs, counter, start, go, results) -> None:
    """Entry point of one client process (spawned). Puts ("ready", pid) once connected, waits
    for ``go`` (the parent then has set ``start``), runs, and puts ("done", dict)."""
    cpu0 = sum(os.times()[:2])
    try:
        out = asyncio.run(_client(args, counter, start, go, results))
        out["error"] = ""
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        err: Any = exc
        if callable(getattr(err, "code", None)) and callable(getattr(err, "details", None)):
            why = f"{type(err).__name__} {err.code().name}: {err.details()}"  # a grpc.RpcError
        else:
            why = f"{type(exc).__name__}: {exc}"
        out = {"error": why, "samples": [], "count": 0}
    out["cpu_s"] = sum(os.times()[:2]) - cpu0
    results.put(("done", out))


async def _client(a: _ClientArgs, counter, start, go, results) -> dict[str, Any]:
    import grpc

    clock = time.monotonic
    channel = grpc.aio.insecure_channel(a.address, options=CLIENT_OPTIONS)
    try:
        await asyncio.wait_for(channel.channel_ready(), START_TIMEOUT)
        results.put(("ready", os.getpid()))
        if not await asyncio.to_thread(go.wait, START_TIMEOUT):
            raise RuntimeError("no start signal from the bench")
        t_start = start.value
        t_measure = t_start + a.warmup
        t_end = t_measure + a.seconds
        samples: list[float] = []
        stats = {"count": 0, "messages": 0, "cpu_window_s": 0.0}
        pending = 0

        def tick(now: float) -> None:
            nonlocal pending
            if t_measure <= now < t_end:
                stats["count"] += 1
                pending += 1
                if pending >= 50:
                    with counter.get_lock():
                        counter.value += pending
                    pending = 0

        async def echo_stream(_index: int) -> None:
            payload = secrets.token_bytes(a.payload_bytes)
            call = channel.stream_stream(ECHO_METHOD, _identity, _identity)()
            try:
                while True:
                    t0 = clock()
                    await call.write(payload)
                    reply = await call.read()
                    now = clock()
                    if reply is grpc.aio.EOF:
                        raise RuntimeError("the stub server ended an Echo stream")
                    if t_measure <= t0 and now < t_end:
                        samples.append(now - t0)
                    tick(now)
            finally:
                call.cancel()

        async def relay_group(index: int) -> None:
            group = ((MD_GROUP, f"{a.group_prefix}-{index}"), (MD_SEATS, str(a.seats)))
            method = channel.stream_stream(RELAY_METHOD, _identity, _identity)
            calls = [method(metadata=(*group, (MD_SEAT, str(s)))) for s in range(a.seats)]
            move = secrets.token_bytes(MOVE_BYTES)
            last_move = [0.0]  # one token per group: the next payload answers the last move

            async def seat(call) -> None:
                while True:
                    msg = await call.read()
                    now = clock()
                    if msg is grpc.aio.EOF:
                        raise RuntimeError("the stub server ended a Relay stream")
                    if t_measure <= now < t_end:
                        stats["messages"] += 1
                    if msg[:1] == DECISION_TAG:
                        t0 = last_move[0]
                        if t_measure <= t0 and now < t_end:
                            samples.append(now - t0)
                        last_move[0] = clock()
                        await call.write(move)
                    else:
                        tick(now)  # the ack: one accepted "move"

            try:
                await asyncio.gather(*(seat(c) for c in calls))
            finally:
                for call in calls:
                    call.cancel()

        await asyncio.sleep(max(0.0, t_start - clock()))
        cpu_at_measure: list[float] = []  # this process's CPU time when the window opens
        loop = asyncio.get_running_loop()
        loop.call_later(max(0.0, t_measure - clock()),
                        lambda: cpu_at_measure.append(sum(os.times()[:2])))
        job = echo_stream if a.kind == "echo" else relay_group
        tasks = [asyncio.ensure_future(job(i)) for i in range(a.streams)]
        done, _ = await asyncio.wait(tasks, timeout=max(0.0, t_end - clock()),
                                     return_when=asyncio.FIRST_EXCEPTION)
        if cpu_at_measure:
            stats["cpu_window_s"] = sum(os.times()[:2]) - cpu_at_measure[0]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for t in done:
            if not t.cancelled() and (exc := t.exception()) is not None:
                raise exc
        with counter.get_lock():
            counter.value += pending
        return {"samples": samples, **stats}
    finally:
        await channel.close()


# ============================================================================ phases
def _phase(kind: str, server: StubServers, *, clients: int, concurrency: int, seats: int,
           seconds: float, warmup: float, payload_bytes: int, progress, task,
           offset: float) -> dict[str, Any]:
    ctx = mp.get_context("spawn")  # never fork a process that has gRPC state
    counter = ctx.Value("q", 0)
    start = ctx.Value("d", 0.0)
    go = ctx.Event()
    results = ctx.Queue()
    per = [concurrency // clients + (1 if i < concurrency % clients else 0) for i in range(clients)]
    procs: list[Any] = []
    outs: list[dict[str, Any]] = []
    ready = 0

    def drain(timeout: float = 0.0) -> int:
        """Read queued messages (a child cannot exit before its queued data is read)."""
        nonlocal ready
        got = 0
        while True:
            try:
                what, value = results.get(timeout=timeout) if timeout else results.get_nowait()
            except queue.Empty:
                return got
            got += 1
            if what == "ready":
                ready += 1
            else:
                outs.append(value)
                if value.get("error"):
                    raise SystemExit(f"bench: floor {kind} client failed: {value['error']}")

    def check_alive() -> None:
        if not server.alive():
            raise SystemExit(f"bench: the floor stub server died during the {kind} phase")
        dead = [p for p in procs if p.exitcode is not None]
        if len(dead) > len(outs):
            drain(timeout=1.0)  # a child that finished normally has put its result first
            if len([p for p in procs if p.exitcode is not None]) > len(outs):
                codes = [p.exitcode for p in dead]
                raise SystemExit(f"bench: a floor {kind} client process died (exit codes "
                                 f"{codes})")

    try:
        for i, streams in enumerate(per):
            if not streams:
                continue
            ca = _ClientArgs(kind, server.address_for(i), streams, seats, payload_bytes,
                             warmup, seconds, group_prefix=f"{kind}-c{i}")
            p = ctx.Process(target=_client_main, args=(ca, counter, start, go, results),
                            name=f"bench-floor-{kind}-{i}", daemon=True)
            p.start()
            procs.append(p)
        deadline = time.monotonic() + START_TIMEOUT
        while ready < len(procs):
            drain(timeout=0.1)
            check_alive()
            if time.monotonic() > deadline:
                raise SystemExit(f"bench: floor {kind} clients did not connect within "
                                 f"{START_TIMEOUT:.0f} s")
        t_start = time.monotonic() + 0.05
        t_measure = t_start + warmup
        t_end = t_measure + seconds
        start.value = t_start
        go.set()
        cpu: dict[str, tuple[float, float]] = {}  # (user, system) seconds
        while True:
            drain()
            now = time.monotonic()
            if "measure" not in cpu and now >= t_measure:
                cpu["measure"] = server.cpu_split()
            if "end" not in cpu and now >= t_end:
                cpu["end"] = server.cpu_split()
            if len(outs) == len(procs) and "end" in cpu:
                break
            if now > t_end + 30:
                raise SystemExit(f"bench: floor {kind} clients did not finish")
            check_alive()
            if progress is not None:
                measured = max(0.0, min(now, t_end) - t_measure)
                rate = counter.value / measured if measured > 0.2 else 0.0
                label = f"{kind} warming up" if now < t_measure else f"{kind} {rate:,.0f}/s"
                progress.update(task, completed=offset + min(max(0.0, now - t_start),
                                                              warmup + seconds), rate=label)
            # wake up on time for the CPU readings at the window's edges
            edge = next((t for k, t in (("measure", t_measure), ("end", t_end))
                         if k not in cpu), now + 0.1)
            time.sleep(min(0.1, max(0.002, edge - now)))
    finally:
        for p in procs:
            p.join(5 if go.is_set() else 0)
            if p.is_alive():
                p.kill()
                p.join(5)
    samples = [s for o in outs for s in o["samples"]]
    count = sum(o["count"] for o in outs)
    cpu_sys = cpu["end"][1] - cpu["measure"][1]
    server_cpu = cpu["end"][0] - cpu["measure"][0] + cpu_sys
    client_cpu = sum(o["cpu_window_s"] for o in outs)
    out: dict[str, Any] = {
        "per_s": count / seconds,
        "count": count,
        "seconds": seconds,
        "p50_ms": _percentile(samples, 0.50) * 1000,
        "p99_ms": _percentile(samples, 0.99) * 1000,
        "mean_ms": (statistics.fmean(samples) * 1000) if samples else float("nan"),
        "latency_samples": len(samples),
        "server_cpu_util": server_cpu / seconds,
        "server_cpu_ms_per_op": server_cpu / count * 1000 if count else float("nan"),
        "server_cpu_sys_ms_per_op": cpu_sys / count * 1000 if count else float("nan"),
        # over the measured window only (bench/run.py's phases include start-up)
        "client_cpu_util": client_cpu / seconds,
        "client_cpu_ms_per_op": client_cpu / count * 1000 if count else float("nan"),
    }
    if kind == "relay":
        out["server_messages_per_relay"] = (
            sum(o["messages"] for o in outs) / count if count else 0.0)
    return out


def measure_floor(*, clients: int, concurrency: int, seats: int, seconds: float, warmup: float,
                  payload_bytes: int, progress=None, task=None) -> dict[str, Any]:
    """Echo then relay throughput on the zero-work stub; ``progress``/``task`` (rich) span
    both phases (total ``2 * (warmup + seconds)``)."""
    if clients < 1 or concurrency < 1 or seats < 1 or seconds <= 0 or warmup < 0:
        raise SystemExit("bench: the floor needs clients, concurrency, seats >= 1, seconds > 0")
    payload_bytes = max(1, int(payload_bytes))
    server = StubServers(payload_bytes, 1)
    try:
        server.start()
        phase = functools.partial(
            _phase, server=server, clients=clients, concurrency=concurrency, seats=seats,
            seconds=seconds, warmup=warmup, payload_bytes=payload_bytes, progress=progress,
            task=task)
        echo = phase("echo", offset=0.0)
        relay = phase("relay", offset=warmup + seconds)
    finally:
        server.stop()
    if progress is not None:
        progress.update(task, completed=2 * (warmup + seconds),
                        rate=f"relay/echo {relay['per_s'] / echo['per_s']:.2f}"
                        if echo["per_s"] else "")
    return {
        "echo_per_s": round(echo["per_s"], 1),
        "relay_per_s": round(relay["per_s"], 1),
        "relay_to_echo_ratio": round(relay["per_s"] / echo["per_s"], 3) if echo["per_s"] else None,
        "payload_bytes": payload_bytes,
        "ack_bytes": ACK_BYTES,
        "move_bytes": MOVE_BYTES,
        "streams_echo": concurrency,
        "groups_relay": concurrency,
        "seats": seats,
        "client_processes": clients,
        "echo_p50_ms": round(echo["p50_ms"], 3),
        "echo_p99_ms": round(echo["p99_ms"], 3),
        "relay_p50_ms": round(relay["p50_ms"], 3),
        "relay_p99_ms": round(relay["p99_ms"], 3),
        "server_cpu_ms_per_echo": round(echo["server_cpu_ms_per_op"], 4),
        "server_cpu_ms_per_relay": round(relay["server_cpu_ms_per_op"], 4),
        "server_cpu_sys_ms_per_relay": round(relay["server_cpu_sys_ms_per_op"], 4),
        "client_cpu_ms_per_echo": round(echo["client_cpu_ms_per_op"], 4),
        "client_cpu_ms_per_relay": round(relay["client_cpu_ms_per_op"], 4),
        "echo_phase": echo,
        "relay_phase": relay,
    }


def measure_by_processes(*, counts: tuple[int, ...] = (1, 2, 4), clients: int = 4,
                         concurrency: int = 16, seats: int = 4, seconds: float = 15.0,
                         warmup: float = 3.0, payload_bytes: int = 872, progress=None,
                         task=None) -> dict[str, Any]:
    """``cluster.floor_by_processes``: the relay phase of the zero-work stub with its load
    spread over 1, 2, 4... stub processes (``StubServers``), the same load each time, and the
    stubs' CPU per relay for each count against one stub's. The share of
    ``cluster.cpu_per_move_by_workers``' rise that no work of the referee's causes: a process
    that serves part of a load goes idle between messages and pays the transport's wake-up
    for each, where one process serving all of it finds the next message waiting
    (docs/benchmarks.md, "Wake-ups"). ``clients`` is raised to a multiple of the largest count
    so every stub gets the same number of client processes and relay groups."""
    if not counts or min(counts) < 1:
        raise SystemExit("bench: the floor by processes needs counts >= 1")
    top = max(counts)
    clients = -(-max(clients, top) // top) * top
    payload_bytes = max(1, int(payload_bytes))
    out: dict[str, Any] = {}
    for k, n in enumerate(counts):
        servers = StubServers(payload_bytes, n)
        try:
            servers.start()
            relay = _phase("relay", servers, clients=clients, concurrency=concurrency,
                           seats=seats, seconds=seconds, warmup=warmup,
                           payload_bytes=payload_bytes, progress=progress, task=task,
                           offset=k * (warmup + seconds))
        finally:
            servers.stop()
        out[str(n)] = {"server_cpu_ms_per_relay": round(relay["server_cpu_ms_per_op"], 4),
                       "server_cpu_sys_ms_per_relay": round(relay["server_cpu_sys_ms_per_op"], 4),
                       "server_cpu_util": round(relay["server_cpu_util"], 3),
                       "relay_per_s": round(relay["per_s"], 1)}
    one = out.get("1", {}).get("server_cpu_ms_per_relay")
    for fig in out.values():
        fig["vs_one"] = round(fig["server_cpu_ms_per_relay"] / one, 3) if one else None
        fig["added_ms_per_relay"] = (round(fig["server_cpu_ms_per_relay"] - one, 4)
                                     if one else None)
    return {"counts": list(counts), "client_processes": clients, "groups_relay": concurrency,
            "seats": seats, "by_processes": out}


if __name__ == "__main__":
    import json

    print(json.dumps(measure_floor(clients=2, concurrency=16, seats=4, seconds=5, warmup=1,
                                   payload_bytes=872), indent=2))
