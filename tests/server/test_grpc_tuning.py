"""The gRPC experiments the referee's processes turn off (referee.cli.GRPC_EXPERIMENTS;
docs/benchmarks.md, "Wake-ups"): the constant names experiments this gRPC knows and that
change what it does, `referee` sets it before anything imports gRPC, and an operator's own
setting wins."""
from __future__ import annotations

import subprocess
import sys

import pytest

from referee import cli

# a gRPC server in a fresh process, 1,500 unary calls from a second one; prints the context
# switches of gRPC's EventEngine threads meanwhile (the threads that poll the sockets and hand
# each read to the event loop when the experiments are on)
PROBE = r'''
import asyncio, os, subprocess, sys
from pathlib import Path
if sys.argv[1] == "operator":
    os.environ["GRPC_EXPERIMENTS"] = ""  # gRPC's defaults, chosen by the operator
if sys.argv[1] in ("tuned", "operator"):
    from referee.cli import tune_grpc
    assert tune_grpc()
    # taken out once read, so that the processes this one starts inherit nothing of it
    assert os.environ.get("GRPC_EXPERIMENTS") == ("" if sys.argv[1] == "operator" else None)
import grpc
from grpc_health.v1 import health, health_pb2_grpc

def switches():
    total = 0
    for task in Path("/proc/self/task").iterdir():
        if (task / "comm").read_text().strip() == "event_engine":
            for line in (task / "status").read_text().splitlines():
                if "ctxt_switches" in line:
                    total += int(line.split()[1])
    return total

CLIENT = """
import sys, grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(sys.argv[1]))
for _ in range(1500):
    stub.Check(health_pb2.HealthCheckRequest())
"""

async def main():
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    before = switches()
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    client = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT,
                                                  f"127.0.0.1:{port}", env=env)
    assert await client.wait() == 0
    print(switches() - before)
    await server.stop(0)

asyncio.run(main())
'''


def _probe(mode: str) -> int:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", PROBE, mode], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_the_experiments_turned_off_take_the_event_engine_threads_off_every_read():
    plain, tuned = _probe("plain"), _probe("tuned")
    # with gRPC's defaults its EventEngine threads wake several times a call; with the
    # referee's setting the event loop polls the sockets itself: 8,152 against 70 on a quiet
    # machine, 4,842 against 741 under a full test run (the threads still wake now and then).
    # If gRPC renames or drops these experiments, the two come out alike (7,183 against 5,288
    # with the listener's experiment left on) and this fails.
    assert plain > 1500, plain
    assert tuned < plain / 3, (plain, tuned)


def test_an_operators_own_setting_wins():
    assert _probe("operator") > 1500


def test_referee_sets_it_before_anything_else(monkeypatch):
    calls: list[str] = []

    def parser():
        calls.append("parse")
        raise SystemExit(0)

    monkeypatch.setattr(cli, "tune_grpc", lambda: calls.append("tune"))
    monkeypatch.setattr(cli, "build_parser", parser)
    with pytest.raises(SystemExit):
        cli.main(["serve"])
    assert calls == ["tune", "parse"]
