"""Fixtures of the agents' tests (issue 34): one `referee serve` for the package (its matches
are independent), and the stand-in chat server."""
from __future__ import annotations

import pytest
from referee_tournament.procs import LocalReferee

from .standin import StandIn


@pytest.fixture(scope="package")
def referee(tmp_path_factory):
    server = LocalReferee(tmp_path_factory.mktemp("agents-referee") / "data")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def standin():
    made: list[StandIn] = []

    def make(**kwargs) -> StandIn:
        s = StandIn(**kwargs).start()
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop()
