"""A real cluster for the tests: ``referee serve --workers 2`` as a process, nginx included.

Skipped, saying why, where nginx is missing (tests/debian-packages.txt lists nginx-light, which
``make test`` installs as root)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.cluster import terminate

ADMIN = "cluster-test-admin-token"


def _nginx() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def log_events(path: Path, name: str) -> list[dict]:
    """The lines of a JSON log (``--log-format json``) whose event is ``name``."""
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if doc.get("event") == name:
            out.append(doc)
    return out


class ClusterHandle:
    """One ``referee serve --workers N`` process and what it logs."""

    def __init__(self, folder: Path, workers: int = 2, *extra: str):
        self.folder = folder
        self.data = folder / "data"
        folder.mkdir(parents=True, exist_ok=True)
        token_file = folder / "admin.token"
        token_file.write_text(ADMIN + "\n")
        token_file.chmod(0o600)
        self.port_file = folder / "port"
        self.log_path = folder / "supervisor.log"
        self.argv = [sys.executable, "-m", "referee.cli", "serve", "--workers", str(workers),
                     "--port", "0", "--port-file", str(self.port_file), "--data-dir",
                     str(self.data), "--admin-token-file", str(token_file), "--log-format",
                     "json", *extra]
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not self.port_file.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the cluster exited {self.proc.returncode}:\n"
                                   f"{self.log_path.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not start within 120 s")
            time.sleep(0.05)
        self.port = int(self.port_file.read_text())

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def events(self, name: str) -> list[dict]:
        return log_events(self.log_path, name)

    def pid(self, child: str) -> int:
        """The current pid of ``w1``, ``w2``, … or ``nginx``."""
        pid = self.events("cluster_serving")[0]["pids"][child]
        for doc in self.events("cluster_child_restarted"):
            if doc["child"] == child:
                pid = doc["pid"]
        return pid

    def wait_restarted(self, child: str, times: int = 1, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len([d for d in self.events("cluster_child_restarted")
                   if d["child"] == child]) < times:
            assert time.monotonic() < deadline, f"{child} was not restarted"
            time.sleep(0.05)

    def stop(self) -> int:
        return terminate(self.proc)


@pytest.fixture
def make_cluster(tmp_path) -> Iterator:
    if _nginx() is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light; `make test` "
                    "installs it as root)")
    handles: list[ClusterHandle] = []

    def make(*extra: str, workers: int = 2) -> ClusterHandle:
        # a short folder: the workers' Unix sockets live in it
        h = ClusterHandle(tmp_path / f"c{len(handles)}", workers, *extra)
        handles.append(h)
        return h

    yield make
    for h in handles:
        h.stop()


@pytest.fixture
def cluster(make_cluster) -> ClusterHandle:
    return make_cluster()
