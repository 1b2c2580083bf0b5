"""The in-process referee of the server tests (leagues included), for the entrant tools."""
from tests.server.conftest import _quiet_logs, make_server, server  # noqa: F401
