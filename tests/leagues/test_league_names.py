"""A league's name that no league can have is not looked up in the store (issue 31, item 5):
PostgreSQL refuses a query whose text holds a NUL, which answered INTERNAL before."""
from __future__ import annotations

import asyncio

import grpc
import pytest

from referee.v1 import referee_pb2 as pb
from tests.server.conftest import pg_server, store_url  # noqa: F401 - the store matrix

from .helpers import ADMIN, error_of, md, stub_for


@pytest.mark.parametrize("name", ["\x00", "spring\x00", "a" * 65, "-x"])
def test_a_name_no_league_has_is_not_found_on_either_store(make_server, store_url,  # noqa: F811
                                                           name):
    """Issue 31 item 5: GetLeague and SetLeagueState of such a name are NOT_FOUND, on SQLite
    and PostgreSQL alike, and change nothing."""
    h = make_server(store_url=store_url)

    async def run():
        async with grpc.aio.insecure_channel(h.target) as ch:
            stub = stub_for(ch)
            got = [await error_of(stub.GetLeague(pb.GetLeagueRequest(name=name))),
                   await error_of(stub.SetLeagueState(pb.SetLeagueStateRequest(
                       name=name, state=pb.LEAGUE_PAUSED), metadata=md(ADMIN)))]
            return [g[:2] for g in got]

    assert asyncio.run_coroutine_threadsafe(run(), h.loop).result(60) == [
        (grpc.StatusCode.NOT_FOUND, "NOT_FOUND")] * 2
