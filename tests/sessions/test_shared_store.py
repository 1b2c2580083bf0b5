"""Bots on several referees sharing one store (issue 22): what one referee registered, another
finds in the store when its memory does not know it (a bot's name, a bot token), and referees
that would derive different seat tokens for bound seats refuse to share a store."""
from __future__ import annotations

import asyncio
import shutil

import grpc
import pytest

from referee.server.startup import StartupError
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import _quiet_logs, make_server, pg_server, store_url  # noqa: F401

from .helpers import RawSession, create_bound, register


def test_a_bot_registered_on_one_referee_plays_on_another(make_server, tmp_path):  # noqa: F811
    data = tmp_path / "data"
    a = make_server(data, lease_owner="A")
    b = make_server(data, lease_owner="B")

    async def go():
        async with grpc.aio.insecure_channel(a.target) as ch:
            token = await register(referee_pb2_grpc.RefereeStub(ch), "shared-bot")
        async with grpc.aio.insecure_channel(b.target) as ch:
            # B never saw the registration: the name and the token are looked up in the store
            mid, _ = await create_bound(referee_pb2_grpc.RefereeStub(ch), ["shared-bot", "", ""])
            session = RawSession(ch, token)
            await session.hello()
            got = await session.assignment()
            session.close()
            return mid, got

    mid, got = asyncio.run(go())
    assert got.match_id == mid and got.seat == 0


def test_referees_with_different_bot_seat_keys_refuse_to_share_a_store(
        store_url, make_server, tmp_path):  # noqa: F811
    if not store_url:
        pytest.skip("one SQLite store means one data directory, hence one key file")
    make_server(tmp_path / "a", store_url=store_url, lease_owner="A")
    with pytest.raises(StartupError, match=r"bot-seats\.key"):
        make_server(tmp_path / "b", store_url=store_url, lease_owner="B")
    (tmp_path / "c").mkdir()
    shutil.copy(tmp_path / "a" / "bot-seats.key", tmp_path / "c" / "bot-seats.key")
    make_server(tmp_path / "c", store_url=store_url, lease_owner="C")  # the same key: fine


def test_a_league_opened_on_one_referee_is_found_by_another(make_server, tmp_path):  # noqa: F811
    from referee.v1 import referee_pb2 as pb
    from tests.server.helpers import md

    from .helpers import ADMIN

    data = tmp_path / "data"
    a = make_server(data, lease_owner="A")
    b = make_server(data, lease_owner="B")

    async def go():
        async with grpc.aio.insecure_channel(a.target) as ch:
            await referee_pb2_grpc.RefereeStub(ch).OpenLeague(pb.OpenLeagueRequest(
                league=pb.League(name="autumn", title="Autumn", games=["batavia"])),
                metadata=md(ADMIN))
        async with grpc.aio.insecure_channel(b.target) as ch:
            return await referee_pb2_grpc.RefereeStub(ch).GetLeague(
                pb.GetLeagueRequest(name="autumn"))

    assert asyncio.run(go()).title == "Autumn"
