"""tests/debian-packages.txt is complete on its own: every command the tests outside tests/kits
run from the system belongs to a package that `apt-get install` of that list alone brings in on
a fresh machine (tests/kits/test_packages.py does the same for each kit's list)."""
from __future__ import annotations

import shutil

import pytest

from bench.pgserver import binaries

from . import debian
from .web.browser import CHROMIUM

_PG = binaries()

#: the commands the tests run, and where
COMMANDS = {
    CHROMIUM: "tests/web (browser tests)",
    "bwrap": "tests/tournament/test_sandbox.py (and prlimit, setpriv)",
    "prlimit": "tests/tournament/test_sandbox.py",
    "setpriv": "tests/tournament/test_sandbox.py",
    "openssl": "tests/server/test_streams.py, tests/client/test_client_tls.py",
    "node": "tests/goa/test_goa_board_js.py, tests/tournament/test_node_bot.py",
    "npm": "tests/tournament/test_node_bot.py",
    # the PostgreSQL store's tests (bench/pgserver.py), found where Debian puts them
    **({str(_PG / "initdb"): "bench/pgserver.py", str(_PG / "pg_ctl"): "bench/pgserver.py"}
       if _PG else {}),
}


def test_the_suite_list_brings_in_every_command_the_tests_run():
    if not debian.is_debian():
        pytest.skip("not a Debian system: no package lists to check")
    found = [path for path in (shutil.which(c) for c in COMMANDS) if path]
    if not any(debian.owners(found).values()):
        pytest.skip("none of the commands the tests run is installed from a Debian package here")
    try:
        gaps = debian.unbrought(debian.read(debian.SUITE), found)
    except RuntimeError as error:
        pytest.skip(str(error))
    if gaps:
        pytest.fail(debian.explain(debian.SUITE, gaps), pytrace=False)
