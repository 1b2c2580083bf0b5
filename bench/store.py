"""The store phase of ``make bench`` (issue 22): what the store costs a move, per backend.

``store.<backend>.<durability>.*`` (backend ``sqlite`` or ``postgresql``): ``matches`` matches
at once, each writing its moves one after the other as a referee does (a move's write is
awaited before the next), through the store alone (``Store.insert_move`` with the lease check
of several referees on one store; no gRPC, no game): ``moves_per_s``, ``commit_batch_mean``
(writes per group commit) and ``cpu_ms_per_move`` (this process's CPU, writer thread
included). ``store.postgresql.grpc_moves_per_s`` / ``grpc_server_cpu_ms_per_move``: the gRPC
move phase (bench/grpc_phases.py, short) against a referee on PostgreSQL, to set beside
``grpc.move_per_s`` on SQLite. PostgreSQL is a throw-away cluster started from Debian's
``postgresql`` binaries (bench/pgserver.py, fsync on) unless ``--store-pg-url`` names one; it
is skipped, saying why, when neither is there.
"""
from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.pgserver import PgServer, binaries, skip_reason
from referee.server.store.opening import open_store
from referee.server.store.sqlite import MatchRow, MoveRow, Store

MATCHES = 64
SECONDS = 3.0


def add_arguments(parser) -> None:
    parser.add_argument("--store-seconds", type=float, default=SECONDS, metavar="S",
                        help=f"seconds per store figure (default {SECONDS:g}; 0 skips the store "
                             "phase, bench/store.py)")
    parser.add_argument("--store-matches", type=int, default=MATCHES, metavar="N",
                        help=f"matches writing at once in the store phase (default {MATCHES})")
    parser.add_argument("--store-pg-url", default="", metavar="URL",
                        help="measure this PostgreSQL database (no password in it: use "
                             "$PGPASSWORD) instead of a throw-away cluster")


def measure_store(store: Store, matches: int, seconds: float,
                  server_cpu: Callable[[], float] | None = None) -> dict[str, Any]:
    """One figure; ``server_cpu`` (PostgreSQL started here): the database server's CPU
    seconds so far, read at both ends of the measured time for ``server_cpu_ms_per_move``."""
    store.enable_leases("bench", 600_000, lambda mid: None)
    store.start()
    ids = [f"bench{i:04d}" for i in range(matches)]
    moves = 0

    async def run() -> float:
        nonlocal moves
        await asyncio.gather(*(store.insert_match(MatchRow(
            id=mid, game="batavia", options={}, seats=4, seed=1, components_name="bench",
            components_sha256="0" * 64, time_policy={}, token_hashes=[f"{mid}:{s}" for s in
                                                                          range(4)],
            names=["a", "b", "c", "d"], status="running", created_ms=0, finished_ms=None,
            forfeited=None, result=None)) for mid in ids))
        batches0, ops0 = store.batches, store.ops
        server0 = server_cpu() if server_cpu else 0.0
        cpu0, t0 = time.process_time(), time.perf_counter()
        t_end = t0 + seconds

        async def one(mid: str) -> None:
            nonlocal moves
            n = 0
            while time.perf_counter() < t_end:
                n += 1
                await store.insert_move(mid, MoveRow(n, n % 4, n - 1, {"bid": {"amount": n}},
                                                     "f" * 64, 3, False, None))
                moves += 1

        await asyncio.gather(*(one(mid) for mid in ids))
        wall = time.perf_counter() - t0
        measure["cpu"] = time.process_time() - cpu0
        measure["server_cpu"] = (server_cpu() - server0) if server_cpu else float("nan")
        measure["batches"] = store.batches - batches0
        measure["ops"] = store.ops - ops0
        return wall

    measure: dict[str, float] = {}
    try:
        wall = asyncio.run(run())
    finally:
        store.close()
    out = {
        "moves_per_s": round(moves / wall),
        "commit_batch_mean": round(measure["ops"] / max(1, measure["batches"]), 2),
        "cpu_ms_per_move": round(measure["cpu"] / max(1, moves) * 1000, 4),
        "matches": matches,
    }
    if server_cpu is not None:
        out["server_cpu_ms_per_move"] = round(measure["server_cpu"] / max(1, moves) * 1000, 4)
    return out


def run_store_phase(args, grpc_phase=None) -> dict[str, Any]:
    """Every store figure; ``grpc_phase(extra_args)`` (optional) runs the gRPC move phase on a
    referee started with those arguments and returns its result."""
    seconds, matches = args.store_seconds, args.store_matches
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="referee-bench-store-") as tmp:
        for durability in ("normal", "full"):
            store = open_store("", Path(tmp) / f"sqlite-{durability}", durability)
            out[f"sqlite.{durability}"] = measure_store(store, matches, seconds)
    pg: PgServer | None = None
    url = args.store_pg_url
    if not url:
        reason = skip_reason()
        bin_dir = binaries()
        if reason or bin_dir is None:
            out["postgresql_skipped"] = reason
            return out
        pg = PgServer(bin_dir, fsync=True)
        pg.start()
    try:
        for durability in ("normal", "full"):
            db = pg.new_database() if pg else url
            out[f"postgresql.{durability}"] = measure_store(
                open_store(db, "", durability), matches, seconds,
                pg.cpu_seconds if pg else None)
        if grpc_phase is not None:
            db = pg.new_database() if pg else url
            moves = grpc_phase(("--store", db), pg.cpu_seconds if pg else None)
            out["postgresql.grpc_moves_per_s"] = round(moves["per_s"], 1)
            out["postgresql.grpc_server_cpu_ms_per_move"] = round(
                moves["server_cpu_ms_per_op"], 4)
            if "db_server_cpu_ms_per_op" in moves:  # the database server's own CPU
                out["postgresql.grpc_db_cpu_ms_per_move"] = round(
                    moves["db_server_cpu_ms_per_op"], 4)
    finally:
        if pg is not None:
            pg.stop()
    return out


def grpc_moves(args):
    """The gRPC move phase against a referee started with extra arguments (a ``--store``),
    short (``--store-seconds``), for ``run_store_phase``."""
    from bench.grpc_phases import RefereeServer, run_phase

    class Quiet:
        def update(self, *a: Any, **k: Any) -> None:
            pass

    class Metered(RefereeServer):
        """The referee, with the database server's CPU read at the same moments as its own
        (``run_phase`` reads it at the start and the end of the measured time)."""

        db_cpu: Callable[[], float] | None = None
        db_readings: list[float]

        def cpu_split(self) -> tuple[float, float]:
            if self.db_cpu is not None:
                self.db_readings.append(self.db_cpu())
            return super().cpu_split()

    def phase(extra: tuple[str, ...],
              db_cpu: Callable[[], float] | None = None) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="referee-bench-store-grpc-") as tmp:
            server = Metered(Path(tmp), extra_args=extra)
            server.db_cpu, server.db_readings = db_cpu, []
            server.start()
            try:
                res = run_phase("moves", server, clients=args.clients,
                                concurrency=args.concurrency, seconds=args.store_seconds,
                                warmup=args.warmup, game=args.game, seats=args.seats,
                                payload_bytes=0, progress=Quiet(), task=None)
            finally:
                server.stop()
            if len(server.db_readings) >= 2:
                res["db_server_cpu_ms_per_op"] = ((server.db_readings[-1]
                                                   - server.db_readings[-2])
                                                  / max(1, res["count"]) * 1000)
            return res

    return phase


def flat(results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, r in results.get("store", {}).items():
        if isinstance(r, dict):
            for key in ("moves_per_s", "commit_batch_mean", "cpu_ms_per_move",
                        "server_cpu_ms_per_move"):
                if key in r:
                    out[f"store.{name}.{key}"] = r[key]
        elif name != "postgresql_skipped":
            out[f"store.{name}"] = r
    return out


def table_rows(results: dict[str, Any], table) -> None:
    for name, r in results.get("store", {}).items():
        if isinstance(r, dict):
            table.add_row(f"store.{name}.moves_per_s", f"{r['moves_per_s']:,}",
                          f"{r['matches']} matches writing at once, the store alone; "
                          f"{r['commit_batch_mean']} writes a commit, "
                          f"{r['cpu_ms_per_move']} CPU ms a move"
                          + (f", database server {r['server_cpu_ms_per_move']}"
                             if 'server_cpu_ms_per_move' in r else ""))
        elif name == "postgresql_skipped":
            table.add_row("store.postgresql", "skipped", str(r)[:80])
        elif name == "postgresql.grpc_moves_per_s":
            table.add_row("store.postgresql.grpc_moves_per_s", f"{r:,.0f}",
                          "the gRPC move phase on a referee with --store postgresql://...")


def main() -> None:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m bench.store", description=__doc__)
    add_arguments(parser)
    parser.add_argument("--grpc", action="store_true",
                        help="also the gRPC move phase on a referee with --store postgresql")
    for flag, default in (("--clients", 2), ("--concurrency", 16), ("--warmup", 2.0),
                          ("--seats", 4)):
        parser.add_argument(flag, type=type(default), default=default)
    parser.add_argument("--game", default="batavia")
    args = parser.parse_args()
    print(json.dumps(run_store_phase(args, grpc_moves(args) if args.grpc else None), indent=2))


if __name__ == "__main__":
    main()
