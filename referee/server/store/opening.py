"""Which store a referee opens (``referee serve --store URL``, ``--store-file PATH``,
``$REFEREE_STORE_URL``): the embedded SQLite store by default, PostgreSQL for a
``postgresql://`` URL. Both hold the contract of ``referee.server.store.sqlite.Store``."""
from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from referee.server.store.sqlite import SqliteStore, Store, StoreSchemaError

STORE_URL_ENV = "REFEREE_STORE_URL"
PG_SCHEMES = ("postgresql", "postgres")


class StoreUrlError(ValueError):
    """A --store / --store-file / $REFEREE_STORE_URL that cannot be used (the message says why
    and never repeats a password)."""


def store_url(flag: str = "", file: str = "", environ: Mapping[str, str] | None = None) -> str:
    """The store to open: ``--store URL``, else the URL in ``--store-file``, else
    ``$REFEREE_STORE_URL``, else "" (the embedded SQLite store in the data directory).

    A password never goes on a command line (any user of the machine reads it in ``ps``):
    ``--store`` with one is refused; it belongs in ``$PGPASSWORD``, a ``PGPASSFILE`` (libpq
    reads both), ``--store-file`` or ``$REFEREE_STORE_URL``."""
    env = os.environ if environ is None else environ
    if flag:
        if _has_password(flag):
            raise StoreUrlError(
                "--store: the URL holds a password, which any user can read on a command "
                "line; give it in $PGPASSWORD or a PGPASSFILE, or the whole URL in "
                f"--store-file PATH or ${STORE_URL_ENV}")
        url = flag
    elif file:
        try:
            url = Path(file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise StoreUrlError(f"--store-file: {exc}") from None
        if not url:
            raise StoreUrlError(f"--store-file: {file} is empty")
    else:
        url = env.get(STORE_URL_ENV, "").strip()
    if url and url != "sqlite" and urlsplit(url).scheme not in PG_SCHEMES:
        raise StoreUrlError(
            f"the store URL must start with postgresql:// (or be empty for the embedded "
            f"SQLite store), not {urlsplit(url).scheme or url[:20]!r}")
    return "" if url == "sqlite" else url


def _has_password(url: str) -> bool:
    parts = urlsplit(url)
    try:
        if parts.password:
            return True
    except ValueError:
        return False
    return any(k.lower() == "password" for k, _ in parse_qsl(parts.query))


def open_store(url: str, data_dir: str | Path, durability: str = "normal") -> Store:
    """The store ``url`` names (see :func:`store_url`): "" is the embedded SQLite store in
    ``<data-dir>/referee.sqlite3``; ``postgresql://...`` a PostgreSQL database."""
    if not url:
        return SqliteStore(data_dir, durability)
    from referee.server.store.postgres import PostgresStore  # psycopg only for a PostgreSQL store

    return PostgresStore(url, durability)


def is_store_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the database's (a store that cannot be opened or used)."""
    if isinstance(exc, (sqlite3.Error, StoreSchemaError)):
        return True
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(exc, psycopg.Error)
