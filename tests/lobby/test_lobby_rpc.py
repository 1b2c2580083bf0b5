"""The lobby over the wire (issue 33, items 2-5; referee.proto's lobby block, play/lobby.py):
people and bots mixed, through the protocol only. A person's seek is filled by a bot that
accepts challenges through its Session, and both play the match to its end; an invitation works
once; caps, floods, unknown bots and absurd clocks are refused with their reasons; nothing the
public reads carries a token or a secret."""
from __future__ import annotations

import asyncio
import json
import random
import time

import grpc
import jsonschema
import pytest

from referee.schema import record_schema
from referee.server.play.lobby import LobbyLimits
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.helpers import md, play_seat, reason_of
from tests.sessions.helpers import RawSession, register

BLITZ = "5+3"


class ChallengeSession(RawSession):
    """A bot's Session whose hello says it accepts challenges."""

    def __init__(self, channel, token, games=(), max_challenges=0, capacity=2):
        super().__init__(channel, token, capacity)
        self.games, self.max_challenges = list(games), max_challenges

    async def hello(self) -> pb.SessionWelcome:
        await self.call.write(pb.SessionClientMessage(hello=pb.SessionHello(
            capacity=self.capacity, agent="test", accept_challenges=True,
            challenge_games=self.games, max_challenges=self.max_challenges)))
        msg = await self.recv()
        assert msg.WhichOneof("msg") == "welcome", msg
        return msg.welcome


async def person(stub, name="ada") -> str:
    got = await stub.EnterLobby(pb.EnterLobbyRequest(name=name))
    assert got.name == name and len(got.lobby_token) == 64
    return got.lobby_token


async def refused(call) -> tuple[grpc.StatusCode, str | None]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    return err.value.code(), reason_of(err.value)


def run(server, body):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            return await body(ch, referee_pb2_grpc.RefereeStub(ch))
    return asyncio.run(go())


def test_a_persons_seek_is_filled_by_a_bot_through_its_session_and_played_out(server):
    async def body(ch, stub):
        bot_token = await register(stub, "duelist")
        sess = ChallengeSession(ch, bot_token, games=["goa"])
        await sess.hello()
        listed = await stub.ListSeeks(pb.ListSeeksRequest())
        assert [b.name for b in listed.bots] == ["duelist"]
        assert list(listed.bots[0].games) == ["goa"]
        me = await person(stub)
        opened = await stub.OpenSeek(pb.OpenSeekRequest(
            game="goa", seats=2, preset=BLITZ, bots_may_join=True), metadata=md(me))
        # the bot took the open seat at once: the match exists, the person's token is here
        assert opened.seek.state == pb.SEEK_FILLED and opened.seek.match_id
        assert opened.invitation == ""  # no seat was left to invite anyone to
        mid = opened.seek.match_id
        assert sorted(s.name for s in opened.seek.seat_list) == ["ada", "duelist"]
        assert len(opened.seat_tokens) == 1
        mine = opened.seat_tokens[0]
        a = await sess.assignment()
        assert a.match_id == mid and a.seat != mine.seat
        assert a.time_policy.bank_ms == 300_000 and a.time_policy.increment_ms == 3_000
        await sess.ack(a)
        again = await stub.GetSeek(pb.GetSeekRequest(seek_id=opened.seek.seek_id),
                                   metadata=md(me))
        assert [t.token for t in again.seat_tokens] == [mine.token]
        # somebody else reading the seek sees who sits where, never a token
        public = await stub.GetSeek(pb.GetSeekRequest(seek_id=opened.seek.seek_id))
        assert not public.seat_tokens and public.seek.match_id == mid
        logs = await asyncio.gather(
            play_seat(stub, mid, mine.token, random.Random(1)),
            play_seat(stub, mid, a.seat_token, random.Random(2)))
        assert all(log.game_over is not None for log in logs)
        sess.close()
        record = await stub.GetRecord(pb.GetRecordRequest(match_id=mid))
        return json.loads(record.record_json)
    record = run(server, body)
    jsonschema.validate(record, record_schema())  # the published schema describes it
    assert record["lobby"]["rated"] is False
    assert record["time_policy"]["increment_ms"] == 3_000
    assert "duelist" in record["seat_bots"]


def test_an_invitation_seats_one_friend_and_is_refused_the_second_time(server):
    async def body(ch, stub):
        host, friend, late = [await person(stub, n) for n in ("host", "friend", "late")]
        opened = await stub.OpenSeek(pb.OpenSeekRequest(
            game="goa", seats=2, preset="blitz", private=True), metadata=md(host))
        secret = opened.invitation
        assert opened.seek.state == pb.SEEK_OPEN and len(secret) >= 32
        listed = await stub.ListSeeks(pb.ListSeeksRequest())
        assert not listed.seeks  # private: only the invitation finds it
        assert await refused(stub.JoinSeek(pb.JoinSeekRequest(seek_id=opened.seek.seek_id),
                                           metadata=md(late))) == (grpc.StatusCode.NOT_FOUND,
                                                                   "NOT_FOUND")
        joined = await stub.JoinSeek(pb.JoinSeekRequest(invitation=secret, name="Bea"),
                                     metadata=md(friend))
        assert joined.seek.state == pb.SEEK_FILLED and len(joined.seat_tokens) == 1
        assert await refused(stub.JoinSeek(pb.JoinSeekRequest(invitation=secret),
                                           metadata=md(late))) == (
            grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITATION")
        first = await stub.GetSeek(pb.GetSeekRequest(seek_id=opened.seek.seek_id),
                                   metadata=md(host))
        assert len(first.seat_tokens) == 1
        assert first.seat_tokens[0].seat != joined.seat_tokens[0].seat
        assert first.seat_tokens[0].token != joined.seat_tokens[0].token
    run(server, body)


def test_refusals_carry_their_reasons_and_change_nothing(server):
    async def body(ch, stub):
        me = await person(stub)
        await register(stub, "shy")  # registered, but no session that accepts challenges
        cases = [
            (stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset=BLITZ)),
             (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")),
            (stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset=BLITZ),
                           metadata=md("f" * 64)),
             (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")),
            (stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, time_policy=pb.TimePolicy(
                bank_ms=1_000_000_000)), metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TIME_POLICY")),
            (stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2), metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TIME_POLICY")),  # no clock at all
            (stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, time_policy=pb.TimePolicy(
                first_move_ms=60_000)), metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TIME_POLICY")),  # a start, then no clock
            (stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, time_policy=pb.TimePolicy(
                move_ms=5)), metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TIME_POLICY")),
            (stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset="9999+1"),
                           metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")),
            (stub.OpenSeek(pb.OpenSeekRequest(game="chess", preset=BLITZ), metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")),
            (stub.OpenSeek(pb.OpenSeekRequest(game="batavia", seats=9, preset=BLITZ),
                           metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")),
            (stub.Challenge(pb.ChallengeRequest(bot="nobody", game="batavia", preset=BLITZ),
                            metadata=md(me)),
             (grpc.StatusCode.NOT_FOUND, "NOT_FOUND")),
            (stub.Challenge(pb.ChallengeRequest(bot="shy", game="goa", seats=2,
                                                preset=BLITZ), metadata=md(me)),
             (grpc.StatusCode.FAILED_PRECONDITION, "NOT_CHALLENGEABLE")),
            (stub.JoinSeek(pb.JoinSeekRequest(seek_id="s0"), metadata=md(me)),
             (grpc.StatusCode.NOT_FOUND, "NOT_FOUND")),
            (stub.JoinSeek(pb.JoinSeekRequest(), metadata=md(me)),
             (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")),
        ]
        for call, expected in cases:
            assert await refused(call) == expected
        assert not server.service.lobby.seeks  # nothing was opened by any of them
    run(server, body)


def test_the_cap_of_open_seeks_per_player_and_cancelling(server):
    async def body(ch, stub):
        me, other = await person(stub, "me"), await person(stub, "other")
        seeks = [await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset=BLITZ),
                                     metadata=md(me)) for _ in range(3)]
        assert await refused(stub.OpenSeek(pb.OpenSeekRequest(
            game="goa", seats=2, preset=BLITZ), metadata=md(me))) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED, "SEEK_LIMIT")
        sid = seeks[0].seek.seek_id
        assert await refused(stub.JoinSeek(pb.JoinSeekRequest(seek_id=sid),
                                           metadata=md(me))) == (
            grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_SEATED")
        assert await refused(stub.CancelSeek(pb.CancelSeekRequest(seek_id=sid),
                                             metadata=md(other))) == (
            grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED")
        gone = await stub.CancelSeek(pb.CancelSeekRequest(seek_id=sid), metadata=md(me))
        assert gone.state == pb.SEEK_CANCELLED
        listed = await stub.ListSeeks(pb.ListSeeksRequest(game="goa"))
        assert sorted(s.seek_id for s in listed.seeks) == sorted(
            s.seek.seek_id for s in seeks[1:])
        # the public list carries nothing secret: no invitation, no token
        text = listed.SerializeToString()
        for s in seeks:
            assert s.invitation.encode() not in text
        assert me.encode() not in text
        await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset=BLITZ),
                            metadata=md(me))  # room again
    run(server, body)


def test_a_seek_flood_from_one_address_is_refused(make_server):
    """Fresh lobby identities buy no more: the opening rate is the address's."""
    srv = make_server(lobby=LobbyLimits(open_rate=0.001, open_burst=2, per_client=10))

    async def body(ch, stub):
        tokens = [await person(stub, f"p{i}") for i in range(3)]
        for t in tokens[:2]:
            await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset=BLITZ),
                                metadata=md(t))
        assert await refused(stub.OpenSeek(pb.OpenSeekRequest(
            game="goa", seats=2, preset=BLITZ), metadata=md(tokens[2]))) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED")
    run(srv, body)


def test_a_seek_expires(make_server):
    srv = make_server(lobby=LobbyLimits(ttl_s=0.3))

    async def body(ch, stub):
        me = await person(stub)
        opened = await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset=BLITZ),
                                     metadata=md(me))
        waited = await stub.GetSeek(pb.GetSeekRequest(seek_id=opened.seek.seek_id,
                                                      wait_ms=5_000), metadata=md(me))
        assert waited.seek.state == pb.SEEK_EXPIRED
        assert await refused(stub.JoinSeek(pb.JoinSeekRequest(invitation=opened.invitation),
                                           metadata=md(await person(stub, "b")))) == (
            grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITATION")
        assert not (await stub.ListSeeks(pb.ListSeeksRequest())).seeks
    run(srv, body)


def test_a_challenged_bot_at_its_limit_is_busy(server):
    async def body(ch, stub):
        sess = ChallengeSession(ch, await register(stub, "solo"), max_challenges=1)
        await sess.hello()
        me = await person(stub)
        first = await stub.Challenge(pb.ChallengeRequest(bot="solo", game="goa", seats=2,
                                                         preset=BLITZ), metadata=md(me))
        assert first.seek.state == pb.SEEK_FILLED and first.seek.challenged == "solo"
        assert await refused(stub.Challenge(pb.ChallengeRequest(
            bot="solo", game="goa", seats=2, preset=BLITZ), metadata=md(me))) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED, "BOT_BUSY")
        sess.close()
    run(server, body)


def test_a_league_that_allows_it_lets_people_challenge_its_entrants(server):
    """"Play the champion" (issue 33, item 4): an active entrant of a running league whose
    settings say ``"challenges": true`` is challenged while its Session is open, though the
    session itself takes no challenges; the match is no league match (the league runner
    neither plays nor rates it) and its record says it came from the lobby. Another league's
    entrant stays unchallengeable."""
    async def body(ch, stub):
        from tests.server.conftest import ADMIN
        for name, settings in (("open", '{"challenges": true}'), ("closed", "{}")):
            await stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
                name=name, games=["goa"], registration=pb.REGISTRATION_OPEN,
                settings_json=settings)), metadata=md(ADMIN))
        sessions = []
        for bot, league in (("champ", "open"), ("hermit", "closed")):
            got = await stub.RegisterBot(pb.RegisterBotRequest(name=bot, league=league))
            s = RawSession(ch, got.bot_token)  # a plain session: it accepts no challenge
            await s.hello()
            sessions.append(s)
        listed = await stub.ListSeeks(pb.ListSeeksRequest())
        assert [(b.name, b.league) for b in listed.bots] == [("champ", "open")]
        me = await person(stub)
        assert await refused(stub.Challenge(pb.ChallengeRequest(
            bot="hermit", game="goa", seats=2, preset=BLITZ), metadata=md(me))) == (
            grpc.StatusCode.FAILED_PRECONDITION, "NOT_CHALLENGEABLE")
        assert await refused(stub.Challenge(pb.ChallengeRequest(  # not a game of its league
            bot="champ", game="batavia", seats=3, preset=BLITZ), metadata=md(me))) == (
            grpc.StatusCode.FAILED_PRECONDITION, "NOT_CHALLENGEABLE")
        got = await stub.Challenge(pb.ChallengeRequest(bot="champ", game="goa", seats=2,
                                                       preset=BLITZ), metadata=md(me))
        assert got.seek.state == pb.SEEK_FILLED
        # its session takes one match at a time (capacity 1): a second challenge waits
        assert await refused(stub.Challenge(pb.ChallengeRequest(
            bot="champ", game="goa", seats=2, preset=BLITZ), metadata=md(me))) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED, "BOT_BUSY")
        a = await sessions[0].assignment()
        assert a.match_id == got.seek.match_id
        for s in sessions:
            s.close()
        return got.seek.match_id
    mid = run(server, body)
    rt = server.service.matches[mid]
    assert "league" not in rt.league_fields
    assert rt.league_fields["lobby"]["challenged"] == "champ"
    # named in its record, so that the league's runner finds it (ListLeagueChallenges)
    assert rt.league_fields["lobby"]["league"] == "open"


def test_list_league_challenges_is_the_organizers_and_refuses_bad_input(server):
    """ListLeagueChallenges (issue 33 item 2) needs the admin token, names a known league and a
    time that is one; a league without finished challenges lists none."""
    async def body(ch, stub):
        from tests.server.conftest import ADMIN
        await stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
            name="quiet", games=["goa"], settings_json='{"challenges": true}')),
            metadata=md(ADMIN))
        me = await person(stub)
        assert await refused(stub.ListLeagueChallenges(pb.ListLeagueChallengesRequest(
            league="quiet"), metadata=md(me))) == (grpc.StatusCode.PERMISSION_DENIED,
                                                  "PERMISSION_DENIED")
        assert await refused(stub.ListLeagueChallenges(pb.ListLeagueChallengesRequest(
            league="nowhere"), metadata=md(ADMIN))) == (grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
        assert await refused(stub.ListLeagueChallenges(pb.ListLeagueChallengesRequest(
            league="quiet", finished_after_unix_ms=-1), metadata=md(ADMIN))) == (
            grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
        got = await stub.ListLeagueChallenges(pb.ListLeagueChallengesRequest(league="quiet"),
                                              metadata=md(ADMIN))
        assert list(got.challenges) == []
    run(server, body)


def test_a_bot_joining_with_its_token_is_seated_as_that_bot(server):
    """Bots and people mixed the other way round: a person's public seek taken by a bot that
    accepts no challenge but joins by itself, with its bot token; its seat comes as an
    Assignment on its Session (never as a token in the reply)."""
    async def body(ch, stub):
        token = await register(stub, "joiner")
        sess = RawSession(ch, token)
        await sess.hello()
        me = await person(stub)
        opened = await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset="bot"),
                                     metadata=md(me))
        joined = await stub.JoinSeek(pb.JoinSeekRequest(seek_id=opened.seek.seek_id),
                                     metadata=md(token))
        assert joined.seek.state == pb.SEEK_FILLED and not joined.seat_tokens
        assert {s.bot for s in joined.seek.seat_list} == {"joiner", ""}
        a = await sess.assignment()
        assert a.match_id == joined.seek.match_id
        sess.close()
        # a seek that took every seat of its opener starts at once (a table for one at home)
        solo = await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset="bot",
                                                      take_seats=2), metadata=md(me))
        assert solo.seek.state == pb.SEEK_FILLED and len(solo.seat_tokens) == 2
        assert solo.invitation == ""
    run(server, body)


def test_a_session_hello_with_too_many_challenge_games_is_refused(server):
    async def body(ch, stub):
        sess = ChallengeSession(ch, await register(stub, "greedy"),
                                games=[f"g{i}" for i in range(33)])
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await sess.hello()
        assert (err.value.code(), reason_of(err.value)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                            "MALFORMED")
        sess.close()
    run(server, body)


def test_a_lobby_match_keeps_its_record_fields_across_a_restart(server):
    """The seek a match came from is stored with it (matches.extra_json): a referee restarted
    mid-match still writes ``"lobby"`` into the finished record. Its players play on with the
    tokens they had."""
    async def open_and_join(ch, stub):
        a, b = await person(stub, "a"), await person(stub, "b")
        opened = await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset="blitz",
                                                        rated=True), metadata=md(a))
        joined = await stub.JoinSeek(pb.JoinSeekRequest(invitation=opened.invitation),
                                     metadata=md(b))
        mine = await stub.GetSeek(pb.GetSeekRequest(seek_id=opened.seek.seek_id),
                                  metadata=md(a))
        return joined.seek.match_id, [mine.seat_tokens[0].token, joined.seat_tokens[0].token]
    mid, tokens = run(server, open_and_join)
    server.stop()
    server.start()
    assert server.service.matches[mid].league_fields["lobby"]["rated"] is True

    async def finish(ch, stub):
        logs = await asyncio.gather(*(play_seat(stub, mid, t, random.Random(i))
                                      for i, t in enumerate(tokens)))
        assert all(log.game_over is not None for log in logs)
        return json.loads((await stub.GetRecord(pb.GetRecordRequest(match_id=mid))).record_json)
    record = run(server, finish)
    assert record["lobby"]["preset"] == "blitz" and record["lobby"]["rated"] is True


def _until(pred, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_drain_answers_a_long_poll_at_once(server):
    """GetSeek waiting for a change (wait_ms) when the referee drains answers at once with the
    seek as it is, so the drain need not wait out the poll and the stop cancels no call; a
    GetSeek during the drain does not wait either."""
    async def body(ch, stub):
        me = await person(stub)
        opened = await stub.OpenSeek(pb.OpenSeekRequest(game="goa", seats=2, preset=BLITZ),
                                     metadata=md(me))
        loop = asyncio.get_running_loop()
        poll = asyncio.ensure_future(stub.GetSeek(pb.GetSeekRequest(
            seek_id=opened.seek.seek_id, wait_ms=30_000), metadata=md(me)))
        await asyncio.to_thread(_until, lambda: server.service.unary_calls >= 1)
        started = loop.time()
        await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(server.server.drain(), server.loop))
        answered = await poll
        assert loop.time() - started < 3  # not the poll's 30 s, nor the drain's bound
        assert answered.seek.state == pb.SEEK_OPEN
        again = await stub.GetSeek(pb.GetSeekRequest(seek_id=opened.seek.seek_id,
                                                     wait_ms=30_000), metadata=md(me))
        assert loop.time() - started < 3 and again.seek.seek_id == opened.seek.seek_id
    run(server, body)
