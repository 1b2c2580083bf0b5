"""Fixtures for the client SDK tests: a real `referee serve` subprocess on 127.0.0.1:0 (the
project's one launcher, `referee_tournament.procs.LocalReferee`), and a TCP proxy in front of
it."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from referee_tournament.procs import LocalReferee

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def bot_command(kind: str) -> list[str]:
    script = VENV_BIN / "referee-bot"
    if script.exists():
        return [str(script), kind]
    return [sys.executable, "-m", "referee_client.cli", kind]


def server_available() -> bool:
    return (ROOT / "referee" / "cli.py").exists() and (ROOT / "referee" / "server").is_dir()


@pytest.fixture
def referee_server(tmp_path):
    if not server_available():
        pytest.skip("referee/server is not there yet")
    server = LocalReferee(tmp_path / "data")
    server.start()
    yield server
    server.stop()


def bot_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "clients"), env.get("PYTHONPATH", "")]
    )
    return env


class TcpProxy:
    """A loopback TCP proxy on an ephemeral port, forwarding to whatever port the referee has
    now. Lets a test restart the referee (on a new ephemeral port) behind one stable address,
    and cut every connection at will (a network drop)."""

    def __init__(self) -> None:
        import asyncio
        import threading

        self._asyncio = asyncio
        self.target_port = 0
        self._pairs: set = set()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._server = self._run(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]

    def _run(self, coro, timeout: float = 10.0):
        return self._asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def _handle(self, reader, writer) -> None:
        asyncio = self._asyncio
        if not self.target_port:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()  # nobody listening: the client sees UNAVAILABLE
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)

        async def pipe(src, dst) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                dst.transport.abort()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            self._pairs.discard(pair)

    def drop_all(self) -> None:
        """Cut every proxied connection (both sides), like a network failure."""

        async def drop() -> None:
            for a, b in list(self._pairs):
                a.transport.abort()
                b.transport.abort()

        self._run(drop())

    def close(self) -> None:
        self.drop_all()
        self._server.close()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


@pytest.fixture
def tcp_proxy():
    proxy = TcpProxy()
    yield proxy
    proxy.close()


def read_until(proc, marker: str, timeout: float) -> str:
    """The output of ``proc`` (its stdout a pipe) up to and including the line holding
    ``marker``; fails if the process ends first or ``timeout`` seconds pass. Reads the pipe's
    bytes directly: a buffered readline would hide lines from ``select``."""
    import select
    import time

    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], 1)[0]:
            continue
        chunk = os.read(fd, 65536)
        assert chunk, data.decode(errors="replace")[-3000:]  # it ended without the marker
        data += chunk
        text = data.decode(errors="replace")
        at = text.find(marker)
        if at >= 0 and "\n" in text[at:]:
            return text
    raise AssertionError(f"no {marker!r} within {timeout}s: {data.decode(errors='replace')[-3000:]}")
