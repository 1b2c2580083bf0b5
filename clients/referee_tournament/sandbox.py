"""Running an untrusted bot: bubblewrap namespaces plus resource limits.

A sandboxed entrant's command runs under ``bwrap`` (Debian package ``bubblewrap``):

- **no network at all**: a network namespace of its own with nothing in it; the referee is
  reached through its Unix domain socket (``referee serve --unix PATH``), bound into the
  sandbox at :data:`SOCKET_IN_SANDBOX`, so the bot's ``{address}`` is ``unix:`` + that path;
- **a read-only view of what it needs**: the system's ``/usr`` (and the ``/bin``, ``/lib``
  links), the Python it runs with (the virtual environment and its base installation), the
  packages of this project a Python bot imports (the SDK and its generated protocol modules),
  the entrant's working folder and the paths the entrant lists in ``read_only``; nothing else of
  the host (no home folders, no referee data folder with its admin token, no other bot's logs);
- **its own writable temporary folder**: a size-capped tmpfs at ``/tmp`` (also ``$HOME``);
- **its own process, IPC, UTS and cgroup namespaces**; it dies with the runner
  (``--die-with-parent``, armed once bwrap's set-up is done: a runner killed in those first
  milliseconds can leave it behind) and cannot reach the terminal: the runner starts it in a
  session of its own (``start_new_session``), so it has no controlling terminal. The runner
  stops it by signalling that session's process group, which bwrap's sandboxed child stays in
  (bwrap's own ``--new-session`` would move it out with ``setsid`` before ``--die-with-parent``
  is armed: under load, a stop in that window left the sandbox running), and whose death takes
  the sandbox's whole process namespace with it;
- **limits** (``prlimit``): address space (memory), CPU seconds, processes, open files and the
  size of a written file. When the runner is root, the bot also runs under a user id of its own
  (no capabilities, ``no_new_privs``), since the kernel does not count a root user's processes
  against the process limit; otherwise bubblewrap's user namespace gives the same effect.
- **a clean environment**: only ``PATH``, ``HOME``, ``LANG``, ``PYTHONUNBUFFERED`` and the
  entrant's own ``env`` (never the runner's, which may hold the referee's admin token).
"""
from __future__ import annotations

import functools
import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: Where the referee's socket appears inside every sandbox.
SOCKET_IN_SANDBOX = "/run/referee/referee.sock"
ADDRESS_IN_SANDBOX = f"unix:{SOCKET_IN_SANDBOX}"

#: Host paths every sandbox sees read-only when they exist (the dynamic loader's cache, the
#: time zone, Debian's alternatives links that many /usr/bin programs resolve through).
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                 "/etc/alternatives", "/etc/ssl/certs")
#: Top-level names that are links into /usr on a merged-/usr system, else folders to bind.
_USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: User ids handed to sandboxes when the runner is root: each sandbox gets its own, so one
#: bot's processes never count against (or can signal) another's.
_UID_BASE, _UID_SPAN = 1_200_000, 100_000
_uids = itertools.count(os.getpid() * 97)


@dataclass(frozen=True)
class SandboxSpec:
    """What an entrant's ``sandbox`` table says (every field has a default)."""

    memory_mb: int = 2048  # address space; Node.js reserves much virtual memory: keep >= 1024
    cpu_s: int = 900  # CPU seconds over the bot's whole life (all matches of one process)
    processes: int = 64
    open_files: int = 256
    file_mb: int = 64  # largest file it may write
    tmp_mb: int = 64  # size of its writable /tmp
    read_only: tuple[str, ...] = field(default=())  # more host paths it may read

    def prlimit_args(self) -> list[str]:
        mb = 1024 * 1024
        return [f"--as={self.memory_mb * mb}", f"--cpu={self.cpu_s}",
                f"--nproc={self.processes}", f"--nofile={self.open_files}",
                f"--fsize={self.file_mb * mb}", "--core=0"]


def unavailable_reason() -> str | None:
    """Why bots cannot be sandboxed on this machine, or None when they can (checked once by
    starting a trivial sandbox)."""
    return _probe()


@functools.lru_cache(maxsize=1)
def _probe() -> str | None:
    if not sys.platform.startswith("linux"):
        return "sandboxing needs Linux namespaces (bubblewrap)"
    for tool, package in (("bwrap", "bubblewrap"), ("prlimit", "util-linux"),
                          ("setpriv", "util-linux")):
        if not shutil.which(tool):
            return f"{tool} is not installed (Debian package {package})"
    argv = wrap(["true"], cwd=None, socket_path=None, spec=SandboxSpec())
    try:
        done = subprocess.run(argv, check=False, capture_output=True, timeout=30, env=clean_env({}))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start: {exc}"
    if done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip().splitlines()
        return ("bubblewrap cannot create namespaces here"
                + (f": {err[-1]}" if err else f" (exit {done.returncode})"))
    return None


def clean_env(extra: dict[str, str]) -> dict[str, str]:
    """The whole environment of a sandboxed bot."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
            "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
            **extra}


#: What the runner's environment may hold that no bot, sandboxed or not, is given.
RUNNER_SECRETS = ("REFEREE_ADMIN_TOKEN",)


def bot_env(extra: dict[str, str], *, sandboxed: bool) -> dict[str, str]:
    """The environment of a bot process: a sandboxed bot's is :func:`clean_env`; a trusted bot
    inherits the runner's (its PATH, virtual environment, locale...) without
    :data:`RUNNER_SECRETS`. ``extra`` (the entrant's ``env`` and the connection) goes on top."""
    if sandboxed:
        return clean_env(extra)
    inherited = {k: v for k, v in os.environ.items() if k not in RUNNER_SECRETS}
    return {**inherited, "PYTHONUNBUFFERED": "1", **extra}


def python_paths() -> list[str]:
    """What a Python bot of this installation needs to read: the interpreter's prefixes and the
    folders of this project's client packages (found through their modules, which works for
    a regular and for an editable install)."""
    paths = {sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix),
             os.path.realpath(sys.base_prefix)}
    for module in ("referee_client", "referee.v1"):
        try:
            found = importlib.util.find_spec(module)
        except ImportError:
            found = None
        for folder in (found.submodule_search_locations or []) if found else []:
            paths.add(str(Path(folder).resolve()))
    return sorted(p for p in paths if p and os.path.exists(p))


def _parents(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def wrap(argv: list[str], *, cwd: str | None, socket_path: str | None,
         spec: SandboxSpec) -> list[str]:
    """The argv that runs ``argv`` inside a sandbox; ``cwd`` (read-only) becomes its working
    folder, ``socket_path`` (the referee's Unix socket on the host) appears at
    :data:`SOCKET_IN_SANDBOX`. Start it with ``start_new_session=True``: that session is what
    keeps it from the terminal, and its process group is how it is stopped."""
    root = os.geteuid() == 0
    args = ["bwrap", "--die-with-parent", "--hostname", "sandbox",
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try"]
    if not root:
        args.append("--unshare-user")
    args += ["--ro-bind", "/usr", "/usr"]
    for name in _USR_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777",
             "--size", str(spec.tmp_mb * 1024 * 1024),
             "--tmpfs", "/tmp"]
    bound: set[str] = {"/usr"}  # read-only mounts made so far (paths under /tmp go on its tmpfs)
    made: set[str] = set()  # parent folders made so far
    binds: list[str] = [p for p in _SYSTEM_FILES if os.path.exists(p)]
    binds += python_paths()
    if cwd:
        binds.append(os.path.realpath(cwd))
    binds += [os.path.realpath(p) for p in spec.read_only]
    for path in sorted(set(binds)):
        if any(path == m or path.startswith(m + "/") for m in bound):
            continue  # already inside something bound
        for parent in _parents(path):  # readable parents even where the host's are not
            if parent not in made:
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        args += ["--ro-bind", path, path]
        bound.add(path)
    if socket_path:
        args += ["--perms", "0755", "--dir", str(Path(SOCKET_IN_SANDBOX).parent),
                 "--bind", socket_path, SOCKET_IN_SANDBOX]
    args += ["--chdir", os.path.realpath(cwd) if cwd else "/tmp", "--"]
    if root:
        uid = str(_UID_BASE + next(_uids) % _UID_SPAN)
        args += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                 "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--"]
    args += ["prlimit", *spec.prlimit_args(), "--", *argv]
    return args
