"""``referee backup`` and ``referee restore``: a consistent copy of a referee's data while it runs,
and putting one back into a fresh data directory (or an empty PostgreSQL database).

A backup is a directory: ``manifest.json`` (what, when, which store and schema version, the
SHA-256 of every file), the store (``referee.sqlite3``, or ``store.dump``: ``pg_dump``'s custom
format), the records of the matches the store says are finished, and every other file of the
data directory (``record-signing.key``, ``bot-seats.key``, ``admin.token``, ``bots/``). Nothing here knows a game."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from referee.server.store.sqlite import SCHEMA_VERSION, SCHEMA_VERSION_SETTING

FORMAT = "referee-backup/1"
MANIFEST = "manifest.json"
DB_FILE = "referee.sqlite3"
DUMP_FILE = "store.dump"
RECORDS = "records"
#: pages copied per step of SQLite's online backup: small steps keep each one short
STEP_PAGES = 1024

Progress = Callable[[str], None]


class BackupError(Exception):
    """A backup or restore that cannot be made; the message says why and what to do."""


@dataclass
class Summary:
    """What a backup holds (or a restore put back), for the command's last line."""
    store: str
    schema_version: int
    running: int
    finished: int
    records: int
    files: int

    def line(self) -> str:
        return (f"{self.store} store (schema {self.schema_version}): {self.running} running and "
                f"{self.finished} finished matches, {self.records} record files, "
                f"{self.files} files in all")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _os_error(what: str, exc: OSError) -> BackupError:
    if exc.errno is not None and exc.errno == 28:  # ENOSPC
        return BackupError(f"{what}: the disk is full ({exc.filename or ''}); free space or "
                           "choose another destination")
    return BackupError(f"{what}: {exc.strerror or exc} ({exc.filename or ''})")


def _fresh_dir(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError(f"{dest} exists and is not an empty directory: give a new one")
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    dest.chmod(0o700)


def _pg_env(url: str) -> dict[str, str]:
    """libpq's environment for ``url``: pg_dump and pg_restore get the DSN (and its password)
    here, never on their command line, where any user of the machine reads it in ``ps``."""
    import psycopg  # only for a PostgreSQL store
    from psycopg.conninfo import conninfo_to_dict

    keys = {"host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "password": "PGPASSWORD",
            "dbname": "PGDATABASE", "sslmode": "PGSSLMODE", "passfile": "PGPASSFILE",
            "sslrootcert": "PGSSLROOTCERT", "sslcert": "PGSSLCERT", "sslkey": "PGSSLKEY",
            "connect_timeout": "PGCONNECT_TIMEOUT"}
    env = dict(os.environ)
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error as exc:  # a malformed URL
        raise BackupError(f"the store URL cannot be read: {str(exc).splitlines()[0]}") from None
    for k, v in params.items():
        if k in keys and v is not None:
            env[keys[k]] = str(v)
    return env


def _pg_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(f"{name} is not installed (Debian package postgresql-client)")
    return path


def _run_pg(args: list[str], env: dict[str, str], what: str) -> None:
    proc = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BackupError(f"{what} failed: {(proc.stderr or proc.stdout).strip()[-1500:]}")


def _counts_sqlite(conn: sqlite3.Connection) -> tuple[int, int, int, set[str]]:
    """(schema version, running, finished, the finished matches' ids) of a store."""
    row = conn.execute("SELECT value FROM settings WHERE name = ?",
                       (SCHEMA_VERSION_SETTING,)).fetchone()
    version = int(row[0]) if row else 1
    finished = {r[0] for r in conn.execute("SELECT id FROM matches WHERE status != 'running'")}
    running = conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'running'").fetchone()[0]
    return version, int(running), len(finished), finished


def _counts_pg(url: str) -> tuple[int, int, int, set[str]]:
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            # one snapshot for the counts (pg_dump takes its own, a moment apart: the counts
            # are for the operator, the dump is what is restored)
            row = conn.execute("SELECT value FROM settings WHERE name = %s",
                               (SCHEMA_VERSION_SETTING,)).fetchone()
            finished = {r[0] for r in conn.execute(
                "SELECT id FROM matches WHERE status != 'running'")}
            running = conn.execute(
                "SELECT COUNT(*) FROM matches WHERE status = 'running'").fetchone()
    except psycopg.Error as exc:
        raise BackupError(f"the PostgreSQL store cannot be read: "
                          f"{str(exc).strip().splitlines()[0]}") from None
    return (int(row[0]) if row else 1), int(running[0] if running else 0), len(finished), finished


def _sqlite_snapshot(src: Path, dst: Path, progress: Progress) -> None:
    """SQLite's online backup of ``src`` into ``dst``, STEP_PAGES pages a step. The source
    connection holds one read transaction over all the steps: in WAL mode a reader never blocks
    the referee's writer, and the steps copy that one snapshot (without it, each commit of the
    running referee would restart the copy, which under steady play might never end)."""
    with closing(sqlite3.connect(f"file:{src}?mode=ro", uri=True, isolation_level=None)) as s, \
            closing(sqlite3.connect(dst)) as d:
        s.execute("PRAGMA busy_timeout=5000")
        s.execute("BEGIN")
        s.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # the snapshot starts here
        last = [-1]

        def step(status: int, remaining: int, total: int) -> None:
            pct = 100 * (total - remaining) // max(total, 1)
            if pct // 10 != last[0]:
                last[0] = pct // 10
                progress(f"store: {pct}% of {total} pages")

        s.backup(d, pages=STEP_PAGES, progress=step)
        s.execute("COMMIT")
    os.chmod(dst, 0o600)


def backup(data_dir: str | Path, dest: str | Path, store_url: str = "",
           progress: Progress = lambda _: None) -> Summary:
    """Back up the referee whose data directory is ``data_dir`` (and store ``store_url``, ""
    for the embedded SQLite one) into the new directory ``dest``; safe while it runs."""
    data, out = Path(data_dir), Path(dest)
    if not data.is_dir():
        raise BackupError(f"--data-dir {data} is not a directory (where does the referee run?)")
    try:
        _fresh_dir(out)
        if store_url:
            version, running, n_done, finished = _counts_pg(store_url)
            progress("store: pg_dump (custom format)")
            _run_pg([_pg_tool("pg_dump"), "--format=custom", "--no-owner",
                     f"--file={out / DUMP_FILE}"], _pg_env(store_url), "pg_dump")
            os.chmod(out / DUMP_FILE, 0o600)
            kind = "postgresql"
        else:
            db = data / DB_FILE
            if not db.is_file():
                raise BackupError(f"--data-dir {data} holds no store ({DB_FILE}): is it a "
                                  "referee's data directory?")
            _sqlite_snapshot(db, out / DB_FILE, progress)
            with closing(sqlite3.connect(out / DB_FILE)) as conn:
                version, running, n_done, finished = _counts_sqlite(conn)
                if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
                    raise BackupError("the copy of the store fails SQLite's integrity check")
            kind = "sqlite"
        # the rest of the data directory after the store: the records only of matches
        # finished in the copy (a match that ends during the backup resumes from the copy
        # instead of having two endings); every other file as it is (the keys, the uploaded
        # bots: what a new referee on the copy needs to serve the same seats and records)
        n_records = 0
        for f in sorted(data.rglob("*")):
            rel = f.relative_to(data)
            if not f.is_file() or f.name.startswith(DB_FILE) or rel.parts[0] == MANIFEST \
                    or ".incoming" in rel.parts:  # uploads still arriving: not a bot yet
                continue
            if rel.parts[0] == RECORDS:
                if len(rel.parts) != 2 or f.suffix != ".json" or f.stem not in finished:
                    continue
                n_records += 1
            (out / rel).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            shutil.copy2(f, out / rel)
        progress(f"records: {n_records} files; the other files of {data}")
        files = {str(p.relative_to(out)): {"size": p.stat().st_size, "sha256": _sha256(p)}
                 for p in sorted(out.rglob("*")) if p.is_file()}
        summary = Summary(kind, version, running, n_done, n_records, len(files))
        manifest = {"format": FORMAT, "created": dt.datetime.now(dt.UTC).isoformat(
                        timespec="seconds"), "store": kind, "schema_version": version,
                    "running_matches": running, "finished_matches": n_done,
                    "files": files}
        (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        os.chmod(out / MANIFEST, 0o600)
    except OSError as exc:
        raise _os_error(f"backup into {out}", exc) from None
    except sqlite3.Error as exc:
        raise BackupError(f"the store {data / DB_FILE} cannot be copied: {exc}") from None
    return summary


def read_manifest(src: str | Path) -> dict:
    """The backup's manifest, after checking every file it lists against its checksum."""
    path = Path(src) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupError(f"{path} cannot be read ({exc}): is {src} a referee backup?") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{path} is not a {FORMAT} manifest")
    for name, meta in manifest["files"].items():
        f = Path(src) / name
        if not f.is_file():
            raise BackupError(f"the backup lacks {name}, which its manifest lists")
        if _sha256(f) != meta["sha256"]:
            raise BackupError(f"{name} does not match its checksum in the manifest (the backup "
                              "is damaged): not restored")
    if manifest.get("schema_version", 0) > SCHEMA_VERSION:
        raise BackupError(f"the backup's store has schema version {manifest['schema_version']}"
                          f"; this referee knows up to {SCHEMA_VERSION}: restore it with the "
                          "newer referee")
    return manifest


def _pg_tables(url: str) -> int:
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SELECT COUNT(*) FROM information_schema.tables"
                               " WHERE table_schema = current_schema()").fetchone()
    except psycopg.Error as exc:
        raise BackupError(f"the PostgreSQL store cannot be reached: "
                          f"{str(exc).strip().splitlines()[0]}") from None
    return int(row[0]) if row else 0


def _files(manifest: dict, prefix: str) -> Iterator[str]:
    return (n for n in manifest["files"] if n.startswith(prefix))


#: the leases the backup caught belong to the referees that ran then, on the original store;
#: released in the copy, so the referee started on it resumes every running match at once
#: instead of waiting out each lease (or, with its own --lease-owner, never)
RELEASE = "UPDATE leases SET owner = '', address = NULL"


def _release_leases(data: Path, store_url: str) -> None:
    if store_url:
        import psycopg

        try:
            with psycopg.connect(store_url, autocommit=True) as conn:
                conn.execute(RELEASE)
        except psycopg.Error as exc:
            raise BackupError(f"the restored PostgreSQL store cannot be written: "
                              f"{str(exc).strip().splitlines()[0]}") from None
        return
    try:
        with closing(sqlite3.connect(data / DB_FILE, isolation_level=None)) as conn:
            conn.execute(RELEASE)
    except sqlite3.Error as exc:
        raise BackupError(f"the restored store {data / DB_FILE} cannot be written: {exc}") \
            from None


def restore(src: str | Path, data_dir: str | Path, store_url: str = "",
            progress: Progress = lambda _: None) -> Summary:
    """Put the backup ``src`` into ``data_dir`` (and, for a PostgreSQL backup, the empty
    database ``store_url``). A data directory that holds a store, or a database with tables,
    is refused: a referee may be running on it (and one that is not still holds data the
    backup would hide); restore into a new one and point the referee there."""
    backup_dir, data = Path(src), Path(data_dir)
    manifest = read_manifest(backup_dir)
    progress(f"checked {len(manifest['files'])} files against the manifest")
    kind = manifest["store"]
    if kind == "postgresql" and not store_url:
        raise BackupError("this backup is of a PostgreSQL store: give the empty database to "
                          "restore it into (--store-file PATH or $REFEREE_STORE_URL)")
    if kind == "sqlite" and store_url:
        raise BackupError("this backup is of an embedded SQLite store: restore it without a "
                          "--store (into --data-dir only)")
    if (data / DB_FILE).exists() or (data / RECORDS).exists():
        raise BackupError(f"--data-dir {data} already holds a referee's data ({DB_FILE} or "
                          f"{RECORDS}/): a referee may be running on it; restore into a new "
                          "directory and start the referee there")
    if data.exists() and not data.is_dir():
        raise BackupError(f"--data-dir {data} is a file, not a directory")
    if store_url and _pg_tables(store_url):
        raise BackupError("the PostgreSQL database already has tables (a referee may be using "
                          "it): restore into a new, empty database")
    try:
        data.mkdir(mode=0o700, parents=True, exist_ok=True)
        if kind == "postgresql":
            progress("store: pg_restore")
            env = _pg_env(store_url)
            # --dbname is needed (without it pg_restore prints SQL); the name alone, the rest of
            # the DSN (a password) stays in the environment
            dbname = env.get("PGDATABASE") or env.get("PGUSER") or "postgres"
            _run_pg([_pg_tool("pg_restore"), "--no-owner", "--exit-on-error",
                     "--single-transaction", f"--dbname={dbname}",
                     str(backup_dir / DUMP_FILE)], env, "pg_restore")
        for name in manifest["files"]:
            if name in (MANIFEST, DUMP_FILE):
                continue
            target = data / name
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            shutil.copy2(backup_dir / name, target)
            os.chmod(target, 0o600)
        _release_leases(data, store_url)
    except OSError as exc:
        raise _os_error(f"restore into {data}", exc) from None
    n_records = sum(1 for _ in _files(manifest, RECORDS + "/"))
    return Summary(kind, manifest["schema_version"], manifest["running_matches"],
                   manifest["finished_matches"], n_records, len(manifest["files"]))
