"""The league RPCs on the wire (issue 19, items 2 and 3): leagues, invites, entrants' own
registration, bot status, standings, CreateMatch's league fields; every refusal with its
reason, and nothing changed by one; what survives a restart."""
from __future__ import annotations

import asyncio
import contextlib
import json

import grpc
import pytest

from referee.server.base.auth import token_hash
from referee.v1 import referee_pb2 as pb
from tests.sessions.helpers import RawSession

from .archives import good_tar_gz
from .helpers import (
    ADMIN,
    db_rows,
    error_of,
    md,
    open_league,
    standings_doc,
    standings_json,
    stub_for,
    upload,
)

OK = grpc.StatusCode.OK


def _run(coro):
    return asyncio.run(coro)


def _entrant(name: str, league: str = "spring", code: str = "", kind=pb.BOT_KIND_REMOTE,
             **kw) -> pb.RegisterBotRequest:
    return pb.RegisterBotRequest(name=name, league=league, invite_code=code, kind=kind, **kw)


def test_open_get_and_set_a_league_admin_only(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            req = pb.OpenLeagueRequest(league=pb.League(name="spring", games=["batavia"]))
            assert (await error_of(stub.OpenLeague(req)))[:2] == (
                grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
            assert (await error_of(stub.OpenLeague(req, metadata=md("nope"))))[:2] == (
                grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED")
            bad = pb.OpenLeagueRequest(league=pb.League(name="spring", games=["chess"]))
            code, reason, text = await error_of(stub.OpenLeague(bad, metadata=md(ADMIN)))
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
            assert "unknown game" in text
            for league in (pb.League(name="../x"), pb.League(name="a", settings_json="[1"),
                           pb.League(name="a", registration=7)):
                assert (await error_of(stub.OpenLeague(pb.OpenLeagueRequest(league=league),
                                                       metadata=md(ADMIN))))[1] == "MALFORMED"
            assert (await error_of(stub.GetLeague(pb.GetLeagueRequest(name="spring"))))[:2] == (
                grpc.StatusCode.NOT_FOUND, "NOT_FOUND")

            got = await open_league(stub, title="Spring cup", description="Batavia, 3 seats",
                                    settings_json='{"rating": "openskill"}')
            assert got.state == pb.LEAGUE_RUNNING and got.title == "Spring cup"
            assert got.updated_unix_ms > 0 and list(got.games) == ["batavia"]
            # anyone reads it, no token
            assert await stub.GetLeague(pb.GetLeagueRequest(name="spring")) == got

            assert (await error_of(stub.SetLeagueState(
                pb.SetLeagueStateRequest(name="spring", state=pb.LEAGUE_PAUSED))))[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            assert (await error_of(stub.SetLeagueState(
                pb.SetLeagueStateRequest(name="spring"), metadata=md(ADMIN))))[1] == "MALFORMED"
            paused = await stub.SetLeagueState(pb.SetLeagueStateRequest(
                name="spring", state=pb.LEAGUE_PAUSED, reason="maintenance"), metadata=md(ADMIN))
            assert paused.state == pb.LEAGUE_PAUSED
            assert server.service.leagues.leagues["spring"].reason == "maintenance"
            # OpenLeague again updates it and keeps the state it does not set
            again = await open_league(stub, title="Spring cup 2")
            assert again.state == pb.LEAGUE_PAUSED and again.title == "Spring cup 2"

    _run(run())


def test_entrants_register_with_an_invite_only_and_names_are_never_taken_over(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)  # registration: INVITE (the default)
            assert (await error_of(stub.RegisterBot(_entrant("a", league="nope"))))[:2] == (
                grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
            assert (await error_of(stub.RegisterBot(_entrant("a"))))[:2] == (
                grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITE")
            assert (await error_of(stub.RegisterBot(_entrant("a", code="0" * 32))))[1] == \
                "BAD_INVITE"
            # an invite is admin only, and its code is kept as a hash only
            assert (await error_of(stub.CreateInvite(
                pb.CreateInviteRequest(league="spring"))))[0] == grpc.StatusCode.UNAUTHENTICATED
            code = (await stub.CreateInvite(pb.CreateInviteRequest(league="spring", uses=2),
                                            metadata=md(ADMIN))).code
            assert len(code) >= 32
            rows = db_rows(server, "SELECT code_hash, uses_left FROM invites")
            assert rows == [(token_hash(code), 2)]

            first = await stub.RegisterBot(_entrant("alpha", code=code, owner="Ann",
                                                    description="greedy"))
            assert first.name == "alpha" and len(first.bot_token) == 64
            # the name is taken: ALREADY_EXISTS, and the invite's use is not spent on it
            assert (await error_of(stub.RegisterBot(_entrant("alpha", code=code))))[:2] == (
                grpc.StatusCode.ALREADY_EXISTS, "ALREADY_EXISTS")
            assert db_rows(server, "SELECT uses_left FROM invites") == [(1,)]
            await stub.RegisterBot(_entrant("beta", code=code))
            # used up
            code_, reason, text = await error_of(stub.RegisterBot(_entrant("gamma", code=code)))
            assert (code_, reason) == (grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITE")
            assert "used up" in text
            # expired
            late = (await stub.CreateInvite(pb.CreateInviteRequest(league="spring", valid_s=60),
                                            metadata=md(ADMIN))).code
            server.service.leagues.invites[token_hash(late)].expires_ms = 1
            _, reason, text = await error_of(stub.RegisterBot(_entrant("gamma", code=late)))
            assert reason == "BAD_INVITE" and "expired" in text
            # an invite of another league is no good here
            await open_league(stub, "autumn")
            other = (await stub.CreateInvite(pb.CreateInviteRequest(league="autumn"),
                                             metadata=md(ADMIN))).code
            assert (await error_of(stub.RegisterBot(_entrant("gamma", code=other))))[1] == \
                "BAD_INVITE"
            # nothing was stored by any refusal
            assert sorted(n for (n,) in db_rows(server, "SELECT name FROM bots")) == [
                "alpha", "beta"]
            assert db_rows(server, "SELECT league, kind, status, owner, description FROM bots"
                           " WHERE name='alpha'") == [("spring", 0, pb.BOT_ACTIVE, "Ann",
                                                       "greedy")]
            # the admin may still replace a token (and register without an invite)
            replaced = await stub.RegisterBot(_entrant("alpha"), metadata=md(ADMIN))
            assert replaced.bot_token != first.bot_token

    _run(run())


def test_open_closed_approval_and_stopped_registration(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, "open", registration=pb.REGISTRATION_OPEN, approval=True)
            await open_league(stub, "closed", registration=pb.REGISTRATION_CLOSED)
            await stub.RegisterBot(_entrant("o1", league="open"))
            bots = (await stub.ListLeagueBots(pb.ListLeagueBotsRequest(league="open"),
                                              metadata=md(ADMIN))).bots
            assert [(b.name, b.status) for b in bots] == [("o1", pb.BOT_PENDING)]
            assert (await error_of(stub.RegisterBot(_entrant("c1", league="closed"))))[:2] == (
                grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED")
            await stub.SetLeagueState(pb.SetLeagueStateRequest(
                name="open", state=pb.LEAGUE_STOPPED), metadata=md(ADMIN))
            assert (await error_of(stub.RegisterBot(_entrant("o2", league="open"))))[:2] == (
                grpc.StatusCode.FAILED_PRECONDITION, "LEAGUE_STOPPED")
            for bad in (_entrant("x y", league="closed"),
                        _entrant("x", league="closed", owner="o" * 65),
                        _entrant("x", league="closed", description="d" * 513),
                        _entrant("x", league="closed", kind=9)):
                assert (await error_of(stub.RegisterBot(bad, metadata=md(ADMIN))))[1] == \
                    "MALFORMED"

    _run(run())


def test_unauthenticated_registration_is_rate_limited(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, registration=pb.REGISTRATION_OPEN)
            codes = []
            for i in range(30):
                try:
                    await stub.RegisterBot(_entrant(f"bot{i}"))
                    codes.append(OK)
                except grpc.aio.AioRpcError as err:
                    codes.append(err.code())
            assert OK in codes and grpc.StatusCode.RESOURCE_EXHAUSTED in codes

    _run(run())


def test_bot_status_list_and_removed_tokens(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, registration=pb.REGISTRATION_OPEN)
            token = (await stub.RegisterBot(_entrant("alpha"))).bot_token
            s = RawSession(ch, token)
            await s.hello()
            bots = (await stub.ListLeagueBots(pb.ListLeagueBotsRequest(league="spring"),
                                              metadata=md(ADMIN))).bots
            assert [(b.name, b.connected, b.kind) for b in bots] == [
                ("alpha", True, pb.BOT_KIND_REMOTE)]
            assert (await error_of(stub.ListLeagueBots(
                pb.ListLeagueBotsRequest(league="spring"), metadata=md(token))))[0] == \
                grpc.StatusCode.PERMISSION_DENIED
            assert (await error_of(stub.SetBotStatus(pb.SetBotStatusRequest(
                bot="nobody", status=pb.BOT_DISABLED), metadata=md(ADMIN))))[0] == \
                grpc.StatusCode.NOT_FOUND
            assert (await error_of(stub.SetBotStatus(pb.SetBotStatusRequest(
                bot="alpha"), metadata=md(ADMIN))))[1] == "MALFORMED"
            assert (await error_of(stub.SetBotStatus(pb.SetBotStatusRequest(
                bot="alpha", version=1, version_status=pb.VERSION_READY),
                metadata=md(ADMIN))))[0] == grpc.StatusCode.NOT_FOUND
            disabled = await stub.SetBotStatus(pb.SetBotStatusRequest(
                bot="alpha", status=pb.BOT_DISABLED, message="too slow"), metadata=md(ADMIN))
            assert (disabled.status, disabled.message) == (pb.BOT_DISABLED, "too slow")
            # a disabled remote bot cannot be bound to a seat
            code, reason, _ = await error_of(stub.CreateMatch(pb.CreateMatchRequest(
                game="batavia", seats=3, league="spring", seat_bots=["alpha", "", ""]),
                metadata=md(ADMIN)))
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "BOT_UNAVAILABLE")
            removed = await stub.SetBotStatus(pb.SetBotStatusRequest(
                bot="alpha", status=pb.BOT_REMOVED), metadata=md(ADMIN))
            assert removed.status == pb.BOT_REMOVED
            # its open session ends, and its token opens no other
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                for _ in range(3):
                    await s.recv(5)
            assert ei.value.code() == grpc.StatusCode.UNAUTHENTICATED
            s.close()
            s2 = RawSession(ch, token)
            with contextlib.suppress(AssertionError), pytest.raises(grpc.aio.AioRpcError) as ei:
                await s2.hello()
            assert ei.value.code() == grpc.StatusCode.UNAUTHENTICATED
            s2.close()

    _run(run())


def test_create_match_league_fields_and_hosted_seats(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, registration=pb.REGISTRATION_OPEN)
            remote = (await stub.RegisterBot(_entrant("rem"))).bot_token
            hosted = (await stub.RegisterBot(_entrant("host", kind=pb.BOT_KIND_HOSTED))).bot_token
            base = {"game": "batavia", "seats": 3, "seed": 5}
            assert (await error_of(stub.CreateMatch(pb.CreateMatchRequest(
                league="nope", **base), metadata=md(ADMIN))))[0] == grpc.StatusCode.NOT_FOUND
            assert (await error_of(stub.CreateMatch(pb.CreateMatchRequest(
                league="spring", seat_bots=["rem", "host", ""], seat_bot_versions=[0, 1],
                **base), metadata=md(ADMIN))))[1] == "MALFORMED"
            assert db_rows(server, "SELECT count(*) FROM matches") == [(0,)]
            resp = await stub.CreateMatch(pb.CreateMatchRequest(
                league="spring", unlisted=True, seat_bots=["rem", "host", ""],
                seat_bot_versions=[0, 1, 0], **base), metadata=md(ADMIN))
            rows = db_rows(server, "SELECT league, unlisted, seat_bots_json, seat_versions_json"
                           " FROM matches WHERE id=?", (resp.match_id,))
            assert rows == [("spring", 1, '["rem", "host", ""]', "[0, 1, 0]")]
            record = json.loads((await stub.GetRecord(pb.GetRecordRequest(
                match_id=resp.match_id), metadata=md(ADMIN))).record_json)
            assert (record["league"], record["seat_bots"], record["seat_bot_versions"]) == (
                "spring", ["rem", "host", ""], [0, 1, 0])
            # the remote seat is assigned; the hosted one is not (the runner plays it)
            assert db_rows(server, "SELECT seat, bot FROM assignments") == [(0, "rem")]
            s_rem, s_host = RawSession(ch, remote), RawSession(ch, hosted)
            await s_rem.hello()
            await s_host.hello()
            a = await s_rem.assignment()
            assert (a.match_id, a.seat) == (resp.match_id, 0)
            await s_host.nothing_for(0.5)
            # the hosted seat's token from CreateMatch plays it
            seat1 = next(s.token for s in resp.seats if s.seat == 1)
            view = await stub.GetView(pb.GetViewRequest(match_id=resp.match_id),
                                      metadata=md(seat1))
            assert view.state_version >= 0
            s_rem.close()
            s_host.close()
            # a stopped league takes no match
            await stub.SetLeagueState(pb.SetLeagueStateRequest(
                name="spring", state=pb.LEAGUE_STOPPED), metadata=md(ADMIN))
            assert (await error_of(stub.CreateMatch(pb.CreateMatchRequest(
                league="spring", **base), metadata=md(ADMIN))))[1] == "LEAGUE_STOPPED"

    _run(run())


def test_publish_standings_checked_against_the_schema(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub)

            def req(text, league="spring"):
                return pb.PublishStandingsRequest(league=league, standings_json=text)

            assert (await error_of(stub.PublishStandings(req(standings_json()))))[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            assert (await error_of(stub.PublishStandings(
                req(standings_json(), "nope"), metadata=md(ADMIN))))[0] == \
                grpc.StatusCode.NOT_FOUND
            _, reason, text = await error_of(stub.PublishStandings(req("{"),
                                                                   metadata=md(ADMIN)))
            assert reason == "MALFORMED" and "not JSON" in text
            doc = standings_doc()
            doc["entries"][1]["rating"] = "high"
            _, reason, text = await error_of(stub.PublishStandings(
                req(json.dumps(doc)), metadata=md(ADMIN)))
            assert reason == "MALFORMED" and "entries/1/rating" in text
            doc = standings_doc()
            del doc["entries"][0]["mu"]
            _, _, text = await error_of(stub.PublishStandings(req(json.dumps(doc)),
                                                              metadata=md(ADMIN)))
            assert "entries/0" in text and "'mu'" in text
            _, _, text = await error_of(stub.PublishStandings(
                req(standings_json(league="autumn")), metadata=md(ADMIN)))
            assert "league" in text
            assert db_rows(server, "SELECT count(*) FROM standings") == [(0,)]
            # bigger than the referee's other requests (64 KiB), well under 4 MiB
            big = standings_doc(bots=tuple(f"bot{i}" for i in range(200)))
            text = json.dumps(big)
            assert len(text) > 64 * 1024
            got = await stub.PublishStandings(req(text), metadata=md(ADMIN))
            assert got.published_unix_ms > 0
            assert db_rows(server, "SELECT json FROM standings") == [(text,)]
            # over 4 MiB: refused
            huge = json.dumps({**big, "rating_model": "x" * 100, "pad": "p" * (4 << 20)})
            assert (await error_of(stub.PublishStandings(req(huge), metadata=md(ADMIN))))[0] in (
                grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED)

    _run(run())


def test_other_requests_keep_the_message_size_limit(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            code, _, _ = await error_of(stub.GetLeague(pb.GetLeagueRequest(name="x" * 70_000)))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            call = stub.Echo()
            await call.write(pb.EchoMessage(seq=1, payload=b"x" * 70_000))
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await call.read()
            assert ei.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert (await stub.ListGames(pb.ListGamesRequest())).games

    _run(run())


def test_leagues_bots_versions_and_standings_survive_a_restart(make_server, tmp_path):
    srv = make_server(tmp_path / "data")

    async def setup():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, registration=pb.REGISTRATION_INVITE, title="Cup")
            code = (await stub.CreateInvite(pb.CreateInviteRequest(league="spring", uses=2),
                                            metadata=md(ADMIN))).code
            token = (await stub.RegisterBot(_entrant("host", code=code,
                                                     kind=pb.BOT_KIND_HOSTED))).bot_token
            v = await upload(stub, token, "bot.tar.gz", good_tar_gz())
            await stub.SetBotStatus(pb.SetBotStatusRequest(
                bot="host", version=v.version, version_status=pb.VERSION_FAILED,
                message="crashed at start"), metadata=md(ADMIN))
            await stub.PublishStandings(pb.PublishStandingsRequest(
                league="spring", standings_json=standings_json()), metadata=md(ADMIN))
            await stub.SetLeagueState(pb.SetLeagueStateRequest(
                name="spring", state=pb.LEAGUE_PAUSED, reason="night"), metadata=md(ADMIN))
            return code, token, v

    code, token, v = _run(setup())
    srv.stop()
    srv.start()

    async def check():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = stub_for(ch)
            league = await stub.GetLeague(pb.GetLeagueRequest(name="spring"))
            assert (league.title, league.state) == ("Cup", pb.LEAGUE_PAUSED)
            bots = (await stub.ListLeagueBots(pb.ListLeagueBotsRequest(league="spring"),
                                              metadata=md(ADMIN))).bots
            assert [(b.name, b.kind) for b in bots] == [("host", pb.BOT_KIND_HOSTED)]
            (got,) = bots[0].versions
            assert (got.sha256, got.status, got.message) == (
                v.sha256, pb.VERSION_FAILED, "crashed at start")
            chunks = [c async for c in stub.GetBotArchive(
                pb.GetBotArchiveRequest(bot="host", version=1), metadata=md(ADMIN))]
            assert chunks[0].version.sha256 == v.sha256
            assert srv.service.leagues.standings["spring"].doc == standings_doc()
            # the invite's second use and the bot's token still work
            await stub.RegisterBot(_entrant("second", code=code))
            v2 = await upload(stub, token, "bot.py", b"print(1)\n")
            assert v2.version == 2
            assert (await error_of(stub.RegisterBot(_entrant("third", code=code))))[1] == \
                "BAD_INVITE"

    _run(check())


def test_a_removed_bot_is_gone_from_the_challenges_section_too(server):
    """Issue 33 item 2: the standings' challenges section (a league that allows challenges)
    names entrants; one the organizer removed is left out of it as of the entries."""
    challenges = {"rated": True, "matches": 2, "pool": None,
                  "by_entrant": [{"bot": b, "matches": 1, "wins": 1, "losses": 0, "draws": 0}
                                 for b in ("alpha", "beta")],
                  "recent": [{"match": f"m{i}", "game": "batavia", "finished_unix_ms": 1,
                              "entrants": {b: "win"}, "rated": True}
                             for i, b in enumerate(("alpha", "beta"))]}

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = stub_for(ch)
            await open_league(stub, registration=pb.REGISTRATION_OPEN)
            for b in ("alpha", "beta"):
                await stub.RegisterBot(_entrant(b))
            await stub.PublishStandings(pb.PublishStandingsRequest(
                league="spring", standings_json=json.dumps(
                    {**standings_doc(), "challenges": challenges})), metadata=md(ADMIN))
            await stub.SetBotStatus(pb.SetBotStatusRequest(bot="beta", status=pb.BOT_REMOVED),
                                    metadata=md(ADMIN))
    _run(run())
    ch = server.service.leagues.standings_json("spring")["challenges"]
    assert [e["bot"] for e in ch["by_entrant"]] == ["alpha"]
    assert [m["entrants"] for m in ch["recent"]] == [{"alpha": "win"}, {}]
