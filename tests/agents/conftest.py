"""Fixtures of the agents' tests (issue 34): one `referee serve` for the package (its matches
are independent), one with house bots for the lobby's tests (started only by them), and the
stand-in chat server."""
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


@pytest.fixture(scope="package")
def house_referee(tmp_path_factory):
    """A referee whose lobby has its house bot ``house-random`` (``--house-bots random``),
    ready once the bot's Session accepts challenges. Every test calls from 127.0.0.1, so the
    lobby's rate of seeks per address is raised (its burst of 5 would throttle the package)."""
    import time

    import grpc

    from referee.v1 import referee_pb2, referee_pb2_grpc

    server = LocalReferee(tmp_path_factory.mktemp("agents-house") / "data",
                          extra_args=("--house-bots", "random", "--seek-rate", "5"))
    server.start()
    try:
        with grpc.insecure_channel(server.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            deadline = time.monotonic() + 60
            while not stub.ListSeeks(referee_pb2.ListSeeksRequest(), timeout=10).bots:
                assert time.monotonic() < deadline, "the house bot never came"
                time.sleep(0.2)
        yield server
    finally:
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
