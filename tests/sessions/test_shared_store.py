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
    shutil.copy(tmp_path / "a" / "record-signing.key", tmp_path / "c" / "record-signing.key")
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


def test_a_bound_match_another_referee_created_reaches_the_session_here_by_pull(
        make_server, tmp_path):  # noqa: F811
    """Several hosts: a host serves a CreateMatch binding bots itself while the home host is
    unreachable, and the bot's session may already be back on the home host. The home host's
    `BotSessions.pull` (run every lease_ttl/3 on a roaming home host) brings that assignment
    in and sends it as a re-send; once the other referee ran the match to its end, the next
    pull lets it go (the session's room comes back)."""
    data = tmp_path / "data"
    a = make_server(data, lease_owner="A")
    b = make_server(data, lease_owner="B")

    async def pull():
        return a.service.sessions.pull(lambda m: m in a.service.matches)

    async def held():
        return sorted(a.service.sessions.open)

    async def finished(mid):
        await b.service.store.write(lambda c: c.execute(
            "UPDATE matches SET status='finished' WHERE id=?", (mid,)))

    async def go():
        async with grpc.aio.insecure_channel(a.target) as ach, \
                grpc.aio.insecure_channel(b.target) as bch:
            token = await register(referee_pb2_grpc.RefereeStub(ach), "roamer")
            session = RawSession(ach, token)
            await session.hello()
            mid, _ = await create_bound(referee_pb2_grpc.RefereeStub(bch), ["roamer", "", ""])
            await session.nothing_for(0.5)  # B stored it; A does not know of it
            assert a.call(pull()) == 1
            got = await session.assignment()
            assert (got.match_id, got.seat, got.resent) == (mid, 0, True)
            await session.ack(got)
            assert a.call(pull()) == 0  # held already: nothing twice
            assert a.call(held()) == [(mid, 0)]
            b.call(finished(mid))  # as if B had played it to its end
            assert a.call(pull()) == 0
            assert a.call(held()) == []
            session.close()

    asyncio.run(go())

