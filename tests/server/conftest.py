"""In-process referee servers for the gRPC tests: each server runs grpc.aio on its own event
loop in a background thread, bound to 127.0.0.1 on an ephemeral port. Tests talk to it with
asyncio.run(...) clients (no pytest plugin needed)."""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from referee.server import RefereeServer, ServerConfig, logs

ADMIN = "test-admin-token"


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
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
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
