"""The zero values of Registration and BotKind mean "not set" (issue 32 item 4; referee.proto):
release 0.1.0 numbered REGISTRATION_INVITE and BOT_KIND_REMOTE 0, so a request of an older
client that leaves the field out (or sends 0) must keep meaning INVITE and REMOTE, while a
newer client sends the explicit value; the referee answers, shows and stores the meaningful
value, never UNSPECIFIED, and reads a store an older referee wrote (0 = invite, 0 = remote)."""
from __future__ import annotations

import asyncio
import sqlite3

import grpc

from referee.v1 import referee_pb2 as pb

from .helpers import ADMIN, db_rows, error_of, md, open_league, stub_for


def _run(coro):
    return asyncio.run(coro)


def test_the_numbers_are_the_ones_documented():
    # the wire numbers are the protocol (docs/bot/protocol.md, *Zero values*): pinned here
    assert (pb.REGISTRATION_UNSPECIFIED, pb.REGISTRATION_OPEN, pb.REGISTRATION_CLOSED,
            pb.REGISTRATION_INVITE) == (0, 1, 2, 3)
    assert (pb.BOT_KIND_UNSPECIFIED, pb.BOT_KIND_HOSTED, pb.BOT_KIND_REMOTE) == (0, 1, 2)
    assert pb.League().registration == pb.REGISTRATION_UNSPECIFIED
    assert pb.RegisterBotRequest().kind == pb.BOT_KIND_UNSPECIFIED


def test_an_unset_registration_is_invite_as_before_and_an_explicit_one_the_same(server):
    """OpenLeague without registration (an old client) and with REGISTRATION_INVITE (a new
    one): both leagues answer INVITE, ask entrants for an invite code, say "invite" on the
    web JSON, and keep it across a restart."""
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            old = await open_league(stub, "old")
            new = await open_league(stub, "new", registration=pb.REGISTRATION_INVITE)
            for league in (old, new):
                assert league.registration == pb.REGISTRATION_INVITE
                got = await stub.GetLeague(pb.GetLeagueRequest(name=league.name))
                assert got.registration == pb.REGISTRATION_INVITE
                refused = await error_of(stub.RegisterBot(pb.RegisterBotRequest(
                    name=f"x-{league.name}", league=league.name,
                    kind=pb.BOT_KIND_REMOTE)))
                assert refused[:2] == (grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITE")
            # the other modes are still what they say
            opened = await open_league(stub, "opened", registration=pb.REGISTRATION_OPEN)
            assert opened.registration == pb.REGISTRATION_OPEN

    _run(run())
    leagues = server.service.leagues
    assert [leagues.league_json(n)["registration"] for n in ("old", "new", "opened")] == [
        "invite", "invite", "open"]
    # stored with 0.1.0's numbers: an older referee opened on this store reads the same
    assert dict(db_rows(server, "SELECT name, registration FROM leagues")) == {
        "old": 0, "new": 0, "opened": 1}
    server.stop()
    server.start()
    leagues = server.service.leagues
    assert [leagues.league(n).league.registration for n in ("old", "new", "opened")] == [
        pb.REGISTRATION_INVITE, pb.REGISTRATION_INVITE, pb.REGISTRATION_OPEN]
    assert leagues.league_json("old")["registration"] == "invite"


def test_an_unset_kind_is_remote_as_before_and_an_explicit_one_the_same(server):
    """RegisterBot into a league without kind (an old client) and with BOT_KIND_REMOTE (a new
    one): both bots are remote on the wire (ListLeagueBots), in the web JSON and after a
    restart; HOSTED stays hosted."""
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, registration=pb.REGISTRATION_OPEN)
            await stub.RegisterBot(pb.RegisterBotRequest(name="old", league="spring"))
            await stub.RegisterBot(pb.RegisterBotRequest(name="new", league="spring",
                                                         kind=pb.BOT_KIND_REMOTE))
            await stub.RegisterBot(pb.RegisterBotRequest(name="host", league="spring",
                                                         kind=pb.BOT_KIND_HOSTED))
            bots = (await stub.ListLeagueBots(pb.ListLeagueBotsRequest(league="spring"),
                                              metadata=md(ADMIN))).bots
            return {b.name: b.kind for b in bots}

    want = {"old": pb.BOT_KIND_REMOTE, "new": pb.BOT_KIND_REMOTE, "host": pb.BOT_KIND_HOSTED}
    assert _run(run()) == want
    leagues = server.service.leagues
    assert {n: leagues.bot_json(n)["kind"] for n in want} == {
        "old": "remote", "new": "remote", "host": "hosted"}
    assert dict(db_rows(server, "SELECT name, kind FROM bots")) == {
        "old": 0, "new": 0, "host": 1}
    server.stop()
    server.start()
    assert {n: server.service.leagues.bot(n).kind for n in want} == want


def test_a_store_written_by_0_1_0_reads_as_invite_and_remote(server):
    """Rows as release 0.1.0 wrote them for an invite league and a remote bot (registration
    0, kind 0: also the column's default) come back as INVITE and REMOTE, never UNSPECIFIED."""
    _run(_open_and_register(server))
    server.stop()
    con = sqlite3.connect(server.data_dir / "referee.sqlite3")
    with con:
        con.execute("UPDATE leagues SET registration=0")
        con.execute("UPDATE bots SET kind=0")
    con.close()
    server.start()
    leagues = server.service.leagues
    assert leagues.league("spring").league.registration == pb.REGISTRATION_INVITE
    assert leagues.bot("alpha").kind == pb.BOT_KIND_REMOTE
    assert leagues.league_bot(leagues.bot("alpha")).kind == pb.BOT_KIND_REMOTE


async def _open_and_register(server) -> None:
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = stub_for(ch)
        await open_league(stub, registration=pb.REGISTRATION_OPEN)
        await stub.RegisterBot(pb.RegisterBotRequest(name="alpha", league="spring",
                                                     kind=pb.BOT_KIND_HOSTED))


def test_an_unknown_value_is_still_refused_and_changes_nothing(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            bad = await error_of(open_league(stub, registration=4))
            assert bad[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
            await open_league(stub, registration=pb.REGISTRATION_OPEN)
            bad = await error_of(stub.RegisterBot(pb.RegisterBotRequest(
                name="x", league="spring", kind=3)))
            assert bad[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")

    _run(run())
    assert db_rows(server, "SELECT name FROM bots") == []
    assert db_rows(server, "SELECT name FROM leagues") == [("spring",)]
