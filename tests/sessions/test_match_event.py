"""CreateMatchRequest.event: the tournament or league event a match belongs to reaches its
seats (the Welcome of a Play stream, the Assignment of a bot's Session), its record and its
page; a name that a page or the store could not take is refused and creates nothing (a
follow-up of issues 34 and 35: an agent seated by a Swiss round could not tell which event
seated it)."""
from __future__ import annotations

import asyncio
import json
import random

import grpc
import pytest
from referee_tournament.league.store import LeagueStore
from referee_tournament.play import MatchJob, match_request

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from referee.web.app import templates
from referee.web.source import MatchSource
from tests.server.helpers import play_seat

from .helpers import ADMIN, RawSession, md, reason_of, register

EVENT = "spring-swiss round 2"


def test_the_event_reaches_the_seats_the_record_and_the_page(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            token = await register(stub, "eve")
            session = RawSession(ch, token)
            await session.hello()
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                game="batavia", seats=3, seed=5, seat_bots=["eve", "", ""], event=EVENT),
                metadata=md(ADMIN))
            a = await session.assignment()
            assert (a.match_id, a.event) == (created.match_id, EVENT)
            await session.ack(a)
            tokens = {s.seat: s.token for s in created.seats}
            logs = await asyncio.gather(*(
                play_seat(stub, created.match_id, a.seat_token if s == 0 else tokens[s],
                          random.Random(s)) for s in range(3)))
            session.close()
            assert all(log.welcome.event == EVENT for log in logs)
            assert all(log.game_over is not None for log in logs)
            got = await stub.GetRecord(pb.GetRecordRequest(match_id=created.match_id),
                                       metadata=md(ADMIN))
            assert json.loads(got.record_json)["event"] == EVENT
            # a match of no event says nothing of one
            plain = await stub.CreateMatch(pb.CreateMatchRequest(game="batavia", seats=3),
                                           metadata=md(ADMIN))
            return created.match_id, plain.match_id

    match_id, plain_id = asyncio.run(go())
    source = MatchSource(server.service)  # what the match page and /api/matches show
    assert server.call(source.meta(match_id))["event"] == EVENT
    assert server.call(source.meta(plain_id))["event"] == ""
    html = templates.env.get_template("match.html").render(
        meta={**server.call(source.meta(match_id)), "embargo": None}, static=False,
        inline_js=[], version=0, seat=None, renderer=None)
    assert f"event: {EVENT}" in html


@pytest.mark.parametrize("event", ["x" * 121, "round\x00one", "line\nbreak", "\udcff"])
def test_an_event_name_a_page_or_the_store_cannot_take_is_refused(server, event):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            before = len((await stub.ListGames(pb.ListGamesRequest())).games)
            req = pb.CreateMatchRequest(game="batavia", seats=3)
            try:
                req.event = event
            except ValueError:  # protobuf refuses a lone surrogate itself
                return
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.CreateMatch(req, metadata=md(ADMIN))
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason_of(caught.value) == "MALFORMED"
            assert "event" in caught.value.details()
            assert len((await stub.ListGames(pb.ListGamesRequest())).games) == before

    asyncio.run(go())


def _job(**kw) -> MatchJob:
    return MatchJob(idx=0, game="batavia", seats=3, options={}, seed=1,
                    seating=["a", "b", "c"], commands=[[]] * 3, cwds=[None] * 3,
                    envs=[{}] * 3, time_policy={}, address=None, admin_token="",
                    bot_seeds=[0] * 3, **kw)


def test_the_runners_name_the_event_of_their_matches(tmp_path):
    """The tournament runner sends its tournament's name, and the league runner its event's
    name, the same again when it resends a request it stopped while sending (the request must
    be the same to get the same match back)."""
    assert match_request(_job(event="swiss-2026")).event == "swiss-2026"
    assert match_request(_job()).event == ""
    store = LeagueStore(tmp_path / "league.sqlite3")
    store.intend(3, "batavia", ["a:1", "b:1", "c:1"], 9, ("arena-friday", 0, True))
    store.intend(4, "batavia", ["a:1", "b:1", "c:1"], 9)
    assert [c.idx for c in store.creating()] == [3, 4]
    assert (store.event_of(3), store.event_of(4), store.event_of(99)) == ("arena-friday", "", "")
