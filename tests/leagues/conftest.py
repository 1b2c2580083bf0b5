"""The in-process referee fixtures of the server tests, for the league tests."""
from tests.server.conftest import _quiet_logs, make_server, server  # noqa: F401
