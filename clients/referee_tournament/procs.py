"""Child processes: the referee and the bots.

Children die with the runner: on Linux every child is started through ``setpriv --pdeathsig
KILL`` (util-linux), so killing the runner - even with SIGKILL - leaves no bot or referee
behind. (No ``preexec_fn``: Python code between fork and exec would run gRPC's fork handlers in
the child, which aborts it.) Children must be started from the thread that lives as long as
the run (the event loop's), since the parent-death signal follows the creating thread."""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


_SH = shutil.which("sh")
#: Run after the parent-death signal is set: if the parent died before that (the runner was
#: killed between fork and prctl), the signal will never come, so do not start the program.
_GUARD = 'test "$PPID" = "$0" && exec "$@"'


def die_with_parent_prefix() -> list[str]:
    """argv prefix that makes the child get SIGKILL when this process dies ([] if
    unavailable): ``setpriv --pdeathsig KILL -- sh -c GUARD <our pid> PROGRAM ARGS...``."""
    if not _SETPRIV:
        return []
    if not _SH:
        return [_SETPRIV, "--pdeathsig", "KILL", "--"]
    return [_SETPRIV, "--pdeathsig", "KILL", "--", _SH, "-c", _GUARD, str(os.getpid())]


def bin_dirs() -> list[str]:
    """Where console scripts of this Python live (a venv's bin), then $PATH."""
    return [str(Path(sys.executable).parent), *os.environ.get("PATH", "").split(os.pathsep)]


def resolve(program: str, cwd: str | None = None) -> str:
    """An executable for ``program``: as given if it has a slash, else searched in this
    Python's bin folder then $PATH. Raises FileNotFoundError with a helpful message."""
    if "/" in program:
        p = Path(program)
        if not p.is_absolute() and cwd:
            p = Path(cwd) / p
        return str(p)
    found = shutil.which(program, path=os.pathsep.join(bin_dirs()))
    if not found:
        raise FileNotFoundError(f"command {program!r} not found in {bin_dirs()[0]} or $PATH")
    return found


def referee_command() -> list[str]:
    try:
        return [resolve("referee")]
    except FileNotFoundError:
        return [sys.executable, "-m", "referee.cli"]


class LocalReferee:
    """``referee serve`` on 127.0.0.1 with an ephemeral port, as a subprocess."""

    def __init__(self, data_dir: Path, admin_token: str | None = None,
                 extra_args: tuple[str, ...] = ()):
        self.data_dir = Path(data_dir)
        self.admin_token = admin_token or secrets.token_hex(16)
        self.extra_args = tuple(extra_args)  # more `referee serve` flags (e.g. --http-port)
        self.proc: subprocess.Popen | None = None
        self.port = 0
        #: it also listens on a Unix socket (sandboxed bots have no network), in a short
        #: private folder: a socket path must fit in 107 bytes, a run's data folder may not
        self.unix_socket: str | None = None
        self._socket_dir: str | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> LocalReferee:
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> None:
        """Start the process (returns at once; see :meth:`wait_ready`)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port_file = self.data_dir / "port"
        self.port_file.unlink(missing_ok=True)
        self.log_path = self.data_dir / "referee.log"
        if self._socket_dir is None:
            self._socket_dir = tempfile.mkdtemp(prefix="referee-")
            self.unix_socket = os.path.join(self._socket_dir, "referee.sock")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*die_with_parent_prefix(), *referee_command(), "serve",
                 "--host", "127.0.0.1", "--port", "0",
                 "--port-file", str(self.port_file), "--data-dir", str(self.data_dir),
                 "--admin-token", self.admin_token, "--unix", str(self.unix_socket),
                 "--log-format", "json",  # a file that tools read (e.g. the web_serving line)
                 *self.extra_args],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 60.0) -> LocalReferee:
        assert self.proc is not None
        port_file, log_path = self.port_file, self.log_path
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the referee exited with {self.proc.returncode}:\n{tail}")
            if port_file.exists():
                text = port_file.read_text().strip()
                if text:
                    self.port = int(text)
                    return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the referee did not start within {timeout:.0f}s (log: {log_path})")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = self.unix_socket = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
