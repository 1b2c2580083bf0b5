"""Suite-wide settings: the order in which pytest-xdist hands out the test modules.

`make test` runs ``pytest -n 2 --dist worksteal``: each worker starts on half of the collected
tests, and a worker that runs out takes half of what the other has not started. The run then
ends when the last long test ends; so the modules whose tests take longest (measured with
``--durations``; see "Tests" in docs/ARCHITECTURE.md) are collected first, and the short ones
fill in at the end. Only the order changes: every module keeps its tests together (its
module-scoped fixtures are set up once), and a module missing from or extra to the list below
runs all the same, in the usual place.
"""
from __future__ import annotations

import os

import pytest

#: Modules to start first, longest first (seconds under `-n 2` on a 2-core machine).
LONG_FIRST = (
    "tests/kits/test_kit_combine.py",  # the first C++ kit build on a clean checkout
    "tests/bench/test_bench_smoke.py",
    "tests/kits/test_kits.py",
    "tests/tournament/test_persistent.py",
    "tests/tournament/test_ray.py",  # a local Ray started
    "tests/client/test_sdk_install.py",  # the SDK wheel built and installed in a venv
    "tests/cluster/test_many_hosts.py",
    "tests/server/test_burst.py",  # 600 matches joined at once, played out (about a minute)
    "tests/agents/test_mcp.py",  # eight whole matches through the MCP server (about 75 s)
    "tests/contract/test_any_move.py",
    "tests/client/test_greedy_santa_maria_strength.py",
    "tests/client/test_greedy_goa_strength.py",
    "tests/tournament/test_fail_fast.py",
    "tests/web/test_viewer_browser.py",
    "tests/web/test_play_browser.py",  # four whole matches clicked through, one by keyboard
    "tests/tournament/test_ladder.py",
    "tests/tournament/test_end_to_end.py",
    "tests/batavia/test_properties.py",
    "tests/goa/test_view_bytes.py",
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    try:
        return LONG_FIRST.index(path)
    except ValueError:
        return len(LONG_FIRST)


def pytest_configure(config: pytest.Config) -> None:
    """No pip run by a test (or by what a test starts) reaches a package index: `make setup`
    installs what the tests need (tests/test_offline.py)."""
    os.environ["PIP_NO_INDEX"] = "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: every module's tests stay in their order


@pytest.fixture(autouse=True)
def _umask_kept():
    """Each test leaves the process's umask as it found it: ``referee serve`` sets 077 for its
    own process (issue 31 item 6), and a test that runs it in-process (``cli_main(["serve",
    ...])``) would otherwise make every later file of that test worker private, so that a
    sandboxed bot of a later test could no longer read the files it was given."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)


@pytest.fixture(autouse=True)
def _no_logging_to_a_closed_stream():
    """A command run in-process (``cli.main([...])``) points structlog and the root logger at the
    stderr it found: pytest's capture of that test, closed when the test ends. A later test of
    the same worker that logs (the tournament runner warns of provisional sheets) would then
    fail on "I/O operation on closed file". Before each test, a closed stream is let go (the
    defaults write to whatever sys.stdout is then); a configuration with an open stream, as a
    module's own server may have set up, is kept."""
    import logging

    import structlog

    factory = structlog.get_config().get("logger_factory")
    stream = getattr(factory, "_file", None)
    if stream is not None and getattr(stream, "closed", False):
        structlog.reset_defaults()
    root = logging.getLogger()
    root.handlers[:] = [h for h in root.handlers
                        if not getattr(getattr(h, "stream", None), "closed", False)]
    yield
