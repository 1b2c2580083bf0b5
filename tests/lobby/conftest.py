"""The in-process referee fixtures of the server tests, for the lobby tests."""
from tests.server.conftest import _quiet_logs, make_server, server  # noqa: F401
