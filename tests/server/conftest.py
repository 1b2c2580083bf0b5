"""In-process referee servers for the gRPC tests: each server runs grpc.aio on its own event
loop in a background thread, bound to 127.0.0.1 on an ephemeral port. Tests talk to it with
asyncio.run(...) clients (no pytest plugin needed)."""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from bench.pgserver import PgServer, binaries, skip_reason
from referee.server import RefereeServer, ServerConfig
from referee.server.base import logs

ADMIN = "test-admin-token"


async def _drain() -> None:
    """Cancel the loop's other tasks and wait until they have ended; close its async
    generators."""
    me = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not me]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class ServerHandle:
    def __init__(self, data_dir: Path, **overrides):
        self.data_dir = data_dir
        self.overrides = overrides
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server: RefereeServer | None = None
        self.port = 0

    def call(self, coro, timeout: float = 20.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> int:
        cfg = ServerConfig(host="127.0.0.1", port=0, data_dir=str(self.data_dir),
                           admin_token=ADMIN, **self.overrides)
        self.server = RefereeServer(cfg)
        self.port = self.call(self.server.start())
        return self.port

    def stop(self) -> None:
        if self.server is not None:
            self.call(self.server.stop(0.2))
            self.server = None

    def close(self) -> None:
        """Stop the server, then let every task still on the loop (a stream's handler, a
        callback grpc scheduled while stopping) finish or cancel before the loop closes: closing
        it under them raised "Event loop is closed" at teardown on a loaded machine."""
        try:
            self.stop()
        finally:
            self.call(_drain(), timeout=60)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(60)
            if not self.thread.is_alive():
                self.loop.close()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def service(self):
        assert self.server is not None
        return self.server.service


@pytest.fixture(scope="session", autouse=True)
def _quiet_logs():
    logs.configure("warning")


@pytest.fixture
def make_server(tmp_path):
    handles: list[ServerHandle] = []

    def make(data_dir: Path | None = None, **overrides) -> ServerHandle:
        h = ServerHandle(data_dir or tmp_path / "data", **overrides)
        h.start()
        handles.append(h)
        return h

    yield make
    for h in handles:
        h.close()


@pytest.fixture
def server(make_server) -> ServerHandle:
    return make_server()


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL cluster for the session (bench/pgserver.py), or the test is skipped with
    the reason."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    bin_dir = binaries()
    assert bin_dir is not None
    srv = PgServer(bin_dir)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request) -> str:
    """The two-store matrix: "" (the embedded SQLite store in the data directory), then a
    fresh PostgreSQL database of its own."""
    if request.param == "sqlite":
        return ""
    return request.getfixturevalue("pg_server").new_database()
