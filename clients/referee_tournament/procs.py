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
from typing import Self

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


class RefereeStartError(RuntimeError):
    """``referee serve`` exited, or wrote no port in time; the message quotes its log."""


class LocalReferee:
    """``referee serve`` on 127.0.0.1 as a subprocess: the one way this project starts a local
    referee (the tournament runner, ``referee-bot play`` and ``conformance``, ``make run``'s
    demo, ``make bench`` and the tests all use it).

    It picks a free port (``--port 0``) and is ready when it has written ``--port-file``, which
    the referee does once it serves (health SERVING, web viewer up). Its output goes to
    ``log_path`` (default ``<data_dir>/referee.log``, appended to across restarts, as JSON
    lines that tools read); :meth:`log_tail` quotes it. It also listens on a Unix socket
    (sandboxed bots have no network). To restart it after a crash (:meth:`kill`), :meth:`launch`
    it again with ``self.port`` on the same data directory. The child dies with this process (see
    :func:`die_with_parent_prefix`) and is in its own session, so a Ctrl-C at the terminal
    reaches us, not it."""

    def __init__(self, data_dir: Path, admin_token: str | None = None,
                 extra_args: tuple[str, ...] = (), *, log_path: Path | None = None):
        self.data_dir = Path(data_dir)
        self.admin_token = admin_token or secrets.token_hex(16)
        self.extra_args = tuple(extra_args)  # more `referee serve` flags (e.g. --http-port)
        self.log_path = Path(log_path) if log_path is not None else self.data_dir / "referee.log"
        self.port_file = self.data_dir / "port"
        self.proc: subprocess.Popen | None = None
        self.port = 0
        #: it also listens on a Unix socket (sandboxed bots have no network), in a short
        #: private folder: a socket path must fit in 107 bytes, a run's data folder may not
        self.unix_socket: str | None = None
        self._socket_dir: str | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended (None while it runs or before start)."""
        return self.proc.poll() if self.proc is not None else None

    def start(self, timeout: float = 60.0) -> Self:
        self.launch()
        return self.wait_ready(timeout)

    @property
    def admin_token_file(self) -> str:
        """Where the admin token is handed over: a file (0600) in our private (0700) folder."""
        assert self._socket_dir is not None
        return os.path.join(self._socket_dir, "admin.token")

    def command(self, port: int = 0) -> list[str]:
        """The ``referee serve`` argv. It holds no secret (any user of the machine can read a
        command line): the admin token goes in :attr:`admin_token_file`."""
        assert self.unix_socket is not None
        return [*die_with_parent_prefix(), *referee_command(), "serve",
                "--host", "127.0.0.1", "--port", str(port),
                "--port-file", str(self.port_file), "--data-dir", str(self.data_dir),
                "--admin-token-file", self.admin_token_file, "--unix", self.unix_socket,
                "--log-format", "json",  # a file that tools read (e.g. the web_serving line)
                *self.extra_args]

    def launch(self, port: int = 0) -> None:
        """Start the process on ``port`` (0: a free one); returns at once, see
        :meth:`wait_ready`. Call it from the thread that outlives the run (the event loop's):
        the parent-death signal follows the creating thread."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port_file.unlink(missing_ok=True)
        if self._socket_dir is None:
            self._socket_dir = tempfile.mkdtemp(prefix="referee-")
            self.unix_socket = os.path.join(self._socket_dir, "referee.sock")
        fd = os.open(self.admin_token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.admin_token + "\n")
        # nor in its environment: the token is ours, not one the caller's shell had
        env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.command(port), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True, env=env,
            )

    def wait_ready(self, timeout: float = 60.0) -> Self:
        """Wait for the port file; :class:`RefereeStartError` (the process stopped) if the
        referee exits or has not written it within ``timeout`` seconds."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RefereeStartError(f"the referee exited with status {self.proc.returncode}"
                                        f" while starting; its log ({self.log_path}):\n"
                                        f"{self.log_tail()}")
            text = self.port_file.read_text().strip() if self.port_file.exists() else ""
            if text:
                self.port = int(text)
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise RefereeStartError(f"the referee did not start within {timeout:g}s; its "
                                        f"log ({self.log_path}):\n{self.log_tail()}")
            time.sleep(0.05)

    def log_tail(self, lines: int = 25) -> str:
        """The last lines of the referee's log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"

    def kill(self) -> None:
        """SIGKILL: what a crash looks like to the bots."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self, grace: float = 10.0) -> bool:
        """SIGTERM, then SIGKILL if it is still there after ``grace`` seconds; True if it had
        to be killed. Removes the Unix socket's folder."""
        killed = False
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                killed = True
                self.kill()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = self.unix_socket = None
        return killed

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
