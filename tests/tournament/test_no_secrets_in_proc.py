"""Issue 18, item 1: no secret on a command line, none in an environment that does not own it.

A trusted (not sandboxed) entrant runs as the same user as the runner: it can read every
process's ``/proc/<pid>/cmdline`` (any user can) and ``/proc/<pid>/environ``. It read the admin
token from the referee's command line and created matches with it. Here a real tournament runs
(per-match bots and a persistent entrant, on a private referee) while this test reads the command
line and environment of every process the runner starts, and finds:

* the admin token nowhere (the referee reads it from a 0600 file);
* no token (256-bit hex: seat, bot and admin tokens alike) on any command line;
* each seat or bot token in the environment of one bot only (that process and its children).
"""
from __future__ import annotations

import itertools
import os
import re
import stat
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import RANDOM, ROOT, cli_command, write_toml

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")

#: tokens are hex: the project's seat, bot and admin tokens are 128 or 256 random bits
SECRET = re.compile(rb"(?<![0-9a-f])[0-9a-f]{32,}(?![0-9a-f])")
SESSION = ("referee-bot session random --address {address} --capacity {capacity} --seed 5 "
           "--log-level warning")


@dataclass
class Seen:
    pid: int
    ancestors: tuple[int, ...]  # parent first, up to the runner
    cmdline: list[bytes]
    environ: bytes


def _parents() -> dict[int, int]:
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                text = Path(f"/proc/{entry.name}/stat").read_text()
            except OSError:
                continue
            out[int(entry.name)] = int(text.rsplit(")", 1)[1].split()[1])
    return out


def _watch(root: int, stop: threading.Event, seen: list[Seen], admin: set[str]) -> None:
    """Read every descendant of ``root`` (and ``root``) until ``stop``."""
    while not stop.is_set():
        parents = _parents()
        for pid in parents:
            chain, p = [], parents.get(pid)
            while p is not None and p != root and p in parents:
                chain.append(p)
                p = parents.get(p)
            if pid != root and p != root:
                continue
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                env = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue  # gone meanwhile
            seen.append(Seen(pid, (*chain, root) if pid != root else (), argv, env))
            if b"serve" in argv:  # the referee: where does its admin token come from?
                for flag, value in itertools.pairwise(argv):
                    if flag == b"--admin-token":
                        admin.add(value.decode())
                    elif flag == b"--admin-token-file":
                        try:
                            path = Path(value.decode())
                            assert stat.S_IMODE(path.stat().st_mode) == 0o600
                            admin.add(path.read_text().strip())
                        except FileNotFoundError:
                            pass
        stop.wait(0.02)


def test_no_process_of_a_tournament_shows_a_secret_it_does_not_own(tmp_path):
    out = tmp_path / "out"
    cfg = write_toml(tmp_path / "t.toml", f"""
        name = "secrets"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "one"
        command = "{RANDOM}"
        [[entrants]]
        name = "two"
        command = "{RANDOM}"
        [[entrants]]
        name = "kept"
        command = "{SESSION}"
        persistent = true
        [format]
        rounds = 1
        [time]
        move_ms = 5000
        [run]
        concurrency = 2
        """)
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_ADMIN_TOKEN"}
    ours = {m.group() for v in env.values() for m in SECRET.finditer(v.encode())}
    runner = subprocess.Popen([*cli_command(), "run", str(cfg), "--no-progress"], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen: list[Seen] = []
    admin: set[str] = set()
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(runner.pid, stop, seen, admin))
    watcher.start()
    try:
        output, _ = runner.communicate(timeout=300)
    finally:
        stop.set()
        watcher.join()
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, output.decode(errors="replace")

    # the watch saw the referee, per-match bots and the persistent one
    assert admin, "never saw the referee's admin token"
    assert any(b"random" in s.cmdline and b"session" not in s.cmdline for s in seen)
    assert any(b"session" in s.cmdline for s in seen)
    holders: dict[bytes, dict[int, Seen]] = {}
    for s in seen:
        for token in admin:
            assert token.encode() not in s.environ, f"admin token in the environment of {s.pid}"
            assert not any(token.encode() in a for a in s.cmdline), f"admin token in argv of {s.pid}: {s.cmdline}"
        on_argv = {m.group() for a in s.cmdline for m in SECRET.finditer(a)} - ours
        assert not on_argv, f"a token on the command line of {s.pid}: {s.cmdline}"
        for m in SECRET.finditer(s.environ):
            if m.group() not in ours:
                holders.setdefault(m.group(), {})[s.pid] = s
    assert holders, "no bot was seen with its token"
    for by_pid in holders.values():
        # every process holding it descends from one of them: the bot it was given to
        owners = [p for p, s in by_pid.items() if not set(s.ancestors) & set(by_pid)]
        assert len(owners) == 1, f"a token in the environment of {len(owners)} processes"
        assert owners[0] != runner.pid
        assert b"serve" not in by_pid[owners[0]].cmdline
