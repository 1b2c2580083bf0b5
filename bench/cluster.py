"""Cluster phase of ``make bench`` (issue 22): ``referee serve --workers 2`` behind nginx against
one plain referee, under the same client load.

``cluster``: ``matches`` (default 300) Batavia matches of random bots at once, as in the load
phase (bench/load.py), first against one plain referee, then against a fresh two-worker
cluster. Reported: moves per second and move latency p50/p99 of each, their ratio, and the
CPU per move of the cluster's workers (together) and of its proxy (nginx, all its processes).

What a 2-core machine can show: the cost the proxy adds per move, and whether two workers still
serve the load. What it cannot: the scaling of N workers over N free cores (the issue's ~0.8·N),
because the client processes generating the load run on the same two cores as the referees and
nginx, so every figure is of a machine already saturated by its own load generator. The
``notes`` member of the result says the same, with the core count of the machine it ran on.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.grpc_phases import RefereeServer, _cpu_split_of


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        children.setdefault(int(stat.rpartition(")")[2].split()[1]), []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def switches(pid: int) -> int:
    """The context switches of every thread of ``pid`` so far, voluntary (a thread waits: an
    idle event loop's epoll, a lock) and not (the scheduler takes the core), from /proc."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if "ctxt_switches:" in line:
                total += int(line.rsplit(None, 1)[1])
    return total


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


class ClusterServer:
    """A ``referee serve --workers N`` process in ``workdir``, with the interface the gRPC
    phases use (``address``, ``admin_token``, ``cpu_seconds``). Each ``cpu_seconds`` call also
    keeps the split between workers and proxy (``parts``), so a phase's two readings give both."""

    def __init__(self, workdir: Path, workers: int = 2):
        self.workdir = workdir
        self.workers = workers
        self.admin_token = secrets.token_hex(24)
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.log_path = workdir / "cluster.log"
        self.parts: list[dict[str, float]] = []

    def start(self, timeout: float = 120.0) -> ClusterServer:
        token = self.workdir / "admin.token"
        fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.admin_token + "\n")
        port_file = self.workdir / "port"
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "referee.cli", "serve", "--workers", str(self.workers),
                 "--port", "0", "--port-file", str(port_file), "--data-dir",
                 str(self.workdir / "data"), "--admin-token-file", str(token), "--log-level",
                 "warning", "--log-format", "json"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"bench: the cluster did not start; its log: {self.log_path}")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        assert self.proc is not None
        parts = {"proxy": 0.0, "workers": 0.0, "workers_sys": 0.0, "switches": 0.0}
        for pid in descendants(self.proc.pid):
            try:
                user, system = _cpu_split_of(pid)
            except (OSError, IndexError, ValueError):
                continue
            if _comm(pid) == "nginx":
                parts["proxy"] += user + system
            else:
                parts["workers"] += user + system
                parts["workers_sys"] += system
                with contextlib.suppress(OSError, ValueError):
                    parts["switches"] += switches(pid)
        self.parts.append(parts)
        return parts["proxy"] + parts["workers"]

    def stop(self) -> None:
        if self.proc is not None:
            terminate(self.proc)


def terminate(proc: subprocess.Popen, grace: float = 60.0) -> int:
    """SIGTERM (the cluster stops its processes in order), SIGKILL after ``grace``."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def _summary(phase: dict[str, Any]) -> dict[str, Any]:
    return {
        "moves_per_s": round(phase["per_s"], 1),
        "p50_ms": round(phase["p50_ms"], 2),
        "p99_ms": round(phase["p99_ms"], 2),
        "cpu_ms_per_move": round(phase["server_cpu_ms_per_op"], 4),
        "rejected": phase.get("rejected"),
    }


class _Counted(RefereeServer):
    """The plain referee of ``measure_by_workers``, also counting its context switches at each
    CPU reading (a phase reads the CPU at its measured part's start and end)."""

    def __init__(self, workdir: Path):
        super().__init__(workdir)
        self.switches: list[int] = []

    def cpu_split(self) -> tuple[float, float]:
        assert self.proc is not None
        self.switches.append(switches(self.proc.pid))
        return super().cpu_split()


def measure_by_workers(*, counts: tuple[int, ...] = (1, 2, 4), matches: int = 300,
                       clients: int = 2, seats: int = 4, seconds: float = 15.0,
                       warmup: float = 5.0, progress=None, task=None) -> dict[str, Any]:
    """``cluster.cpu_per_move_by_workers``: the CPU per move of the referee processes (nginx
    apart) with each number of workers in ``counts``, under the same load. One worker is the
    plain referee (``referee serve`` runs no supervisor nor nginx for ``--workers 1``), so the
    figure for N workers against the one for 1 is what a move costs more for being served by
    one of N processes sharing the machine and the store."""
    from bench.grpc_phases import run_phase

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="referee-workers-") as tmp:
        for n in counts:
            work = Path(tmp) / f"w{n}"
            work.mkdir()
            server: Any = _Counted(work) if n == 1 else ClusterServer(work, n)
            server.start()
            try:
                res = run_phase("moves", server, clients=clients, concurrency=matches,
                                seconds=seconds, warmup=warmup, game="batavia", seats=seats,
                                payload_bytes=0, progress=progress, task=task)
            finally:
                server.stop()
            count = res["count"] or 1
            if n == 1:
                cpu = res["server_cpu_ms_per_op"]
                sys_ms = res.get("server_cpu_sys_ms_per_op", float("nan"))
                switched = server.switches[-1] - server.switches[-2]
            else:
                first, last = server.parts[-2], server.parts[-1]
                per = 1000 / count
                cpu = (last["workers"] - first["workers"]) * per
                sys_ms = (last["workers_sys"] - first["workers_sys"]) * per
                switched = last["switches"] - first["switches"]
            # sys: the kernel's share (sockets, wake-ups), which grows with the processes;
            # switches: the referee threads' context switches, each mostly an event loop that
            # ran out of work and slept in epoll (docs/benchmarks.md, the model)
            out[str(n)] = {"cpu_ms_per_move": round(cpu, 4), "sys_ms_per_move": round(sys_ms, 4),
                           "switches_per_move": round(switched / count, 3),
                           "moves_per_s": round(res["per_s"], 1)}
    one = out.get("1", {}).get("cpu_ms_per_move")
    for fig in out.values():
        fig["vs_one"] = round(fig["cpu_ms_per_move"] / one, 3) if one else None
    return out


def measure_cluster(*, matches: int = 300, clients: int = 2, seats: int = 4,
                    seconds: float = 15.0, warmup: float = 5.0, workers: int = 2,
                    progress=None, task=None) -> dict[str, Any]:
    from bench.grpc_phases import RefereeServer, run_phase

    def phase(server) -> dict[str, Any]:
        return run_phase("moves", server, clients=clients, concurrency=matches,
                         seconds=seconds, warmup=warmup, game="batavia", seats=seats,
                         payload_bytes=0, progress=progress, task=task)

    with tempfile.TemporaryDirectory(prefix="referee-cluster-") as tmp:
        (Path(tmp) / "plain").mkdir()
        (Path(tmp) / "cluster").mkdir()
        plain_server = RefereeServer(Path(tmp) / "plain")
        plain_server.start()
        try:
            plain = phase(plain_server)
        finally:
            plain_server.stop()
        cluster_server = ClusterServer(Path(tmp) / "cluster", workers)
        cluster_server.start()
        try:
            clustered = phase(cluster_server)
        finally:
            cluster_server.stop()
    first, last = cluster_server.parts[-2], cluster_server.parts[-1]
    count = clustered["count"] or 1
    cores = os.cpu_count() or 0
    return {
        "workers": workers,
        "matches": matches,
        "seats": seats,
        "client_processes": clients,
        "seconds": seconds,
        "moves_per_s": round(clustered["per_s"], 1),
        "p50_ms": round(clustered["p50_ms"], 2),
        "p99_ms": round(clustered["p99_ms"], 2),
        "plain_moves_per_s": round(plain["per_s"], 1),
        "plain_p99_ms": round(plain["p99_ms"], 2),
        "speedup_vs_plain": round(clustered["per_s"] / plain["per_s"], 3)
        if plain["per_s"] else None,
        "workers_cpu_ms_per_move": round((last["workers"] - first["workers"]) / count * 1000, 4),
        "proxy_cpu_ms_per_move": round((last["proxy"] - first["proxy"]) / count * 1000, 4),
        "plain_cpu_ms_per_move": round(plain["server_cpu_ms_per_op"], 4),
        "plain": _summary(plain),
        "cluster": _summary(clustered),
        "cores": cores,
        "notes": (f"{cores} cores shared by {clients} load-generating client processes, "
                  f"{workers} referee workers and nginx: with no core free per worker this "
                  "shows the proxy's cost per move and that the cluster carries the load, not "
                  "how throughput scales with workers (the issue's 0.8*N needs a free core per "
                  "worker plus the clients' own)."),
    }
