"""A throw-away PostgreSQL server for the tests of the PostgreSQL store (tests/server's
``pg_server`` fixture) and the bench's store phase (bench/store.py): Debian's `postgresql`
binaries (`initdb`, `pg_ctl` from /usr/lib/postgresql/<version>/bin), a cluster in a temporary
folder listening on a Unix socket only, started once per test session and removed at its end.

PostgreSQL refuses to run as root, and the tests run as root here and in CI: then the cluster
belongs to the `postgres` user (the package creates it) and its commands run through `setpriv`.
Each test gets a database of its own (`new_database`, fast: a copy of template1). The cluster
runs with fsync off for the tests (what they check is what the referee commits and reads back,
not the disk's durability) and on for the bench.
"""
from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

USER = "referee"  # the cluster's superuser, trusted on its socket


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder with initdb and pg_ctl, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    for initdb in reversed(found):
        folder = Path(initdb).parent
        if (folder / "pg_ctl").exists():
            return folder
    return None


class PgServer:
    def __init__(self, bin_dir: Path, fsync: bool = False):
        self.fsync = fsync
        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="referee-pg-"))
        self.data = self.dir / "data"
        self.socket_dir = self.dir
        self._names = itertools.count(1)
        self._prefix = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")  # KeyError: no postgres user (see skip_reason)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._prefix = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}",
                            "--clear-groups", "--"]

    def _run(self, *args: str) -> None:
        proc = subprocess.run([*self._prefix, *args], capture_output=True, text=True,
                              cwd=self.dir, check=False, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed ({proc.returncode}): "
                               f"{(proc.stderr or proc.stdout)[-2000:]}")

    def start(self) -> None:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", USER, "-A", "trust",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        self.resume()

    def resume(self) -> None:
        """Start the server on the cluster made by ``start`` (again, after ``halt``)."""
        options = f"-k {self.socket_dir} -c listen_addresses='' -c max_connections=200"
        if not self.fsync:
            options += " -c fsync=off -c full_page_writes=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-w",
                  "-l", str(self.dir / "server.log"), "start")

    def halt(self, mode: str = "fast") -> None:
        """Stop the server, keeping the cluster (``pg_ctl stop -m MODE``): a database outage,
        which ``resume`` ends (tests/server/test_store_outage.py)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w",
                      "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def cpu_seconds(self) -> float:
        """The CPU seconds the database server has used so far: the postmaster, its live
        processes (backends, WAL writer, checkpointer...), and those that ended (reaped by the
        postmaster, so in its children's times), from /proc (Linux)."""
        from bench.cluster import descendants

        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        tick = os.sysconf("SC_CLK_TCK")
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = sum(int(f) for f in fields[11:15]) / tick
        for child in descendants(pid):
            try:
                fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # ended meanwhile: counted in the postmaster's children's times
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
        return total

    def url(self, database: str = "postgres") -> str:
        """The URL of ``database``: a Unix socket, no password (the cluster trusts it)."""
        return f"postgresql://{USER}@/{database}?host={quote(str(self.socket_dir), safe='')}"

    def new_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def skip_reason() -> str | None:
    """Why the PostgreSQL tests cannot run here, or None."""
    if binaries() is None:
        return ("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb): install "
                "Debian's postgresql (tests/debian-packages.txt)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[dev]')"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run PostgreSQL as"
        if shutil.which("setpriv") is None:
            return "running as root and setpriv (util-linux) is missing"
    return None
