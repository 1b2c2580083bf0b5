"""Text an admin or a bot sends over gRPC that the store keeps (seat names, seat bots, option
values, reasons, messages, a league's description) is refused MALFORMED when it holds a control
character or is not valid Unicode, on SQLite and PostgreSQL alike (issue 31 item 5: "any input
gives a clear status"). PostgreSQL cannot store a NUL in text, so before, such a call answered
INTERNAL "internal error" on PostgreSQL and stored the NUL on SQLite."""
from __future__ import annotations

import asyncio

import grpc
import pytest

from referee.v1 import referee_pb2 as pb
from tests.leagues.helpers import error_of, open_league, reason_of, stub_for
from tests.server.conftest import pg_server, store_url  # noqa: F401 - the store matrix

from .helpers import ADMIN, create, md

BAD = ["nul\x00", "bell\x07", "esc\x1b[31m", "del\x7f"]


def _calls(stub, match_id: str, text: str):
    """Every admin call that stores a text given in the request, with ``text`` in it."""
    admin = md(ADMIN)
    return {
        "CreateMatch.seat_names": stub.CreateMatch(pb.CreateMatchRequest(
            game="batavia", seats=3, seed=1, seat_names=[text]), metadata=admin),
        "CreateMatch.seat_bots": stub.CreateMatch(pb.CreateMatchRequest(
            game="batavia", seats=3, seed=1, seat_bots=[text, "", ""]), metadata=admin),
        "AbandonSeat.reason": stub.AbandonSeat(pb.AbandonSeatRequest(
            match_id=match_id, seat=0, reason=text), metadata=admin),
        "OpenLeague.description": stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
            name="autumn", games=["batavia"], description=text)), metadata=admin),
        "SetLeagueState.reason": stub.SetLeagueState(pb.SetLeagueStateRequest(
            name="spring", state=pb.LEAGUE_PAUSED, reason=text), metadata=admin),
        "RegisterBot.owner": stub.RegisterBot(pb.RegisterBotRequest(
            name="gamma", league="spring", owner=text), metadata=admin),
        "RegisterBot.description": stub.RegisterBot(pb.RegisterBotRequest(
            name="gamma", league="spring", description=text), metadata=admin),
    }


async def _outcome(call) -> tuple[grpc.StatusCode, str | None] | str:
    try:
        await call
    except grpc.aio.AioRpcError as err:
        return err.code(), reason_of(err)
    return "accepted"


@pytest.mark.parametrize("text", BAD, ids=["nul", "bell", "escape", "delete"])
def test_stored_texts_with_control_characters_are_malformed_on_both_stores(
        make_server, store_url, text):  # noqa: F811
    h = make_server(store_url=store_url)

    async def run():
        async with grpc.aio.insecure_channel(h.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, "spring")
            match_id, _tokens = await create(stub, seats=3)
            got = {}
            for name, call in _calls(stub, match_id, text).items():
                got[name] = await _outcome(call)
            # nothing was changed: the match still runs, no league or bot was added
            view = await stub.GetRecord(pb.GetRecordRequest(match_id=match_id),
                                        metadata=md(ADMIN))
            leagues = [(await error_of(stub.GetLeague(pb.GetLeagueRequest(name="autumn"))))[0]]
            return got, view.complete, leagues

    got, complete, leagues = asyncio.run_coroutine_threadsafe(run(), h.loop).result(120)
    assert got == dict.fromkeys(got, (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")), got
    assert not complete
    assert leagues == [grpc.StatusCode.NOT_FOUND]
