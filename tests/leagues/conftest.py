"""The in-process referee fixtures of the server tests, for the league tests (and the store
matrix, SQLite and PostgreSQL)."""
from tests.server.conftest import (  # noqa: F401
    _quiet_logs,
    make_server,
    pg_server,
    server,
    store_url,
)
