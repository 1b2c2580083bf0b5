"""Fixtures for the client SDK tests: a real `referee serve` subprocess on 127.0.0.1:0, and an
in-process driver that hands bots the same Decision protos the server would."""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def referee_command() -> list[str]:
    """How to start the referee CLI: the console script if installed, else the module."""
    script = VENV_BIN / "referee"
    if script.exists():
        return [str(script)]
    found = shutil.which("referee")
    return [found] if found else [sys.executable, "-m", "referee.cli"]


def bot_command(kind: str) -> list[str]:
    script = VENV_BIN / "referee-bot"
    if script.exists():
        return [str(script), kind]
    return [sys.executable, "-m", "referee_client.cli", kind]


def server_available() -> bool:
    return (ROOT / "referee" / "cli.py").exists() and (ROOT / "referee" / "server").is_dir()


@dataclass
class RefereeProcess:
    """A `referee serve` subprocess; restartable on the same data directory."""

    data_dir: Path
    workdir: Path
    admin_token: str = field(default_factory=lambda: secrets.token_hex(16))
    proc: subprocess.Popen | None = None
    port: int = 0
    starts: int = 0
    extra_args: tuple[str, ...] = ()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0, port: int = 0) -> None:
        self.starts += 1
        port_file = self.workdir / f"port-{self.starts}"
        with open(self.workdir / f"server-{self.starts}.log", "wb") as log:
            self.proc = subprocess.Popen(
                [
                    *referee_command(), "serve",
                    "--host", "127.0.0.1", "--port", str(port),
                    "--port-file", str(port_file),
                    "--data-dir", str(self.data_dir),
                    "--admin-token", self.admin_token,
                    *self.extra_args,
                ],
                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"referee exited with {self.proc.returncode}:\n{self.log_text()}"
                )
            if port_file.exists() and port_file.read_text().strip():
                self.port = int(port_file.read_text().strip())
                return
            time.sleep(0.05)
        raise RuntimeError(f"referee did not write its port within {timeout}s:\n{self.log_text()}")

    def log_text(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-4000:] for p in sorted(self.workdir.glob("server-*.log"))
        )

    def kill(self) -> None:
        """Hard kill (SIGKILL): what a crash looks like to the bots."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def referee_server(tmp_path):
    if not server_available():
        pytest.skip("referee/server is not there yet")
    server = RefereeProcess(data_dir=tmp_path / "data", workdir=tmp_path)
    server.data_dir.mkdir()
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
