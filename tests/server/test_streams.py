"""Play-stream rejections, Watch (spectator views only), message size, health, reflection and
garbage input."""
from __future__ import annotations

import asyncio
import json
import os
import random

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from referee.core import registry
from referee.core.match import Match
from referee.v1 import batavia_pb2, goa_pb2, referee_pb2_grpc
from referee.v1 import referee_pb2 as pb

from .conftest import ADMIN
from .helpers import create, md, play_match, reason_of

GAME = registry.get("batavia")


def test_play_stream_rejections_keep_stream_open(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=5)
            rt = server.service.matches[mid]
            s = rt.decision.seat
            out: asyncio.Queue = asyncio.Queue()
            await out.put(pb.ClientMessage(join=pb.Join(match_id=mid, events=True)))

            async def reqs():
                while (m := await out.get()) is not None:
                    yield m

            call = stub.Play(reqs(), metadata=md(tokens[s]))
            it = call.__aiter__()
            welcome = (await it.__anext__()).welcome
            assert welcome.seat == s and welcome.game == "batavia" and welcome.seat_count == 3
            d = (await it.__anext__()).decision
            assert d.seat == s and d.view.batavia == GAME.view(rt.match.state, s)
            assert list(d.legal_moves) == [pb.Move(batavia=GAME.move_to_proto(m))
                                           for m in rt.decision.moves]
            before = (rt.match.version, GAME.hash_state(rt.match.state))
            bad = [
                (pb.Submit(state_version=d.state_version, move=pb.Move(), request_id="a"),
                 pb.MALFORMED),
                (pb.Submit(state_version=d.state_version + 1, move=d.legal_moves[0],
                           request_id="b"), pb.STALE_STATE),
                (pb.Submit(state_version=d.state_version, move=pb.Move(
                    batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999))), request_id="c"),
                 pb.ILLEGAL_MOVE),
                # issue 31 item 4: a Goa move in a Batavia match is WRONG_GAME, not MALFORMED
                (pb.Submit(state_version=d.state_version, move=pb.Move(goa=goa_pb2.Move()),
                           request_id="d"), pb.WRONG_GAME),
            ]
            for sub, reason in bad:
                await out.put(pb.ClientMessage(submit=sub))
                r = (await it.__anext__()).move_result
                assert not r.accepted and r.reason == reason and r.request_id == sub.request_id
                assert r.message and r.state_version == d.state_version
                assert (rt.match.version, GAME.hash_state(rt.match.state)) == before
            await out.put(pb.ClientMessage())  # empty message: rejected, stream stays
            r = (await it.__anext__()).move_result
            assert not r.accepted and r.reason == pb.MALFORMED
            await out.put(pb.ClientMessage(submit=pb.Submit(
                state_version=d.state_version, move=d.legal_moves[-1], request_id="ok")))
            r = (await it.__anext__()).move_result
            assert r.accepted and r.request_id == "ok" and r.state_version == d.state_version + 1
            await out.put(None)
            call.cancel()

    asyncio.run(run())


def test_watch_carries_only_spectator_views(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=2024)
            got: list[pb.WatchMessage] = []

            async def watch():
                async for m in stub.Watch(pb.WatchRequest(match_id=mid)):
                    got.append(m)

            w = asyncio.ensure_future(watch())
            await asyncio.sleep(0.05)
            await play_match(server.target, mid, tokens, seed=3)
            await asyncio.wait_for(w, 10)
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid))
            return got, json.loads(rec.record_json)

    got, record = asyncio.run(run())
    # re-simulate and compare each update with game.view(state, None) at its version
    m = Match.create(GAME, record["options"], record["seats"], int(record["seed"]))
    spectator = {0: GAME.view(m.state, None)}
    for e in record["moves"]:
        msg = batavia_pb2.Move()
        from google.protobuf import json_format
        json_format.ParseDict(e["move"], msg)
        m.submit(e["seat"], GAME.move_from_proto(msg), e["version_before"])
        spectator[m.version] = GAME.view(m.state, None)
    updates = [x.update for x in got if x.WhichOneof("msg") == "update"]
    assert len(updates) == len(record["moves"]) + 1
    for u in updates:
        assert u.view.batavia == spectator[u.state_version]
        assert u.view.batavia.seat == -1
        assert not u.view.batavia.HasField("my_hand") or u.view.batavia.my_hand.ByteSize() == 0
    assert any(x.WhichOneof("msg") == "event" for x in got)
    assert got[-1].WhichOneof("msg") == "game_over"


def test_message_size_limit(make_server, tmp_path):
    srv = make_server(tmp_path / "small", max_message_bytes=4096)

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=1)
            req = pb.SubmitMoveRequest(match_id=mid, request_id="x" * 8000)
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await stub.SubmitMove(req, metadata=md(tokens[0]))
            assert ei.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            # still serving
            assert (await stub.ListGames(pb.ListGamesRequest())).games

    asyncio.run(run())


def test_rate_limit(make_server, tmp_path):
    srv = make_server(tmp_path / "rl", rate=1.0, burst=3.0)

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=1)
            codes = []
            for _ in range(6):
                try:
                    await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[1]))
                    codes.append("OK")
                except grpc.aio.AioRpcError as err:
                    codes.append(err.code().name)
                    assert reason_of(err) == "RESOURCE_EXHAUSTED"
            assert codes[:3] == ["OK"] * 3 and "RESOURCE_EXHAUSTED" in codes[3:]

    asyncio.run(run())


def test_health_and_reflection(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            h = health_pb2_grpc.HealthStub(ch)
            for name in ("", "referee.v1.Referee"):
                r = await h.Check(health_pb2.HealthCheckRequest(service=name))
                assert r.status == health_pb2.HealthCheckResponse.SERVING
            refl = reflection_pb2_grpc.ServerReflectionStub(ch)
            reqs = [reflection_pb2.ServerReflectionRequest(list_services=""),
                    reflection_pb2.ServerReflectionRequest(
                        file_containing_symbol="referee.v1.Referee")]
            resps = [r async for r in refl.ServerReflectionInfo(iter(reqs))]
            names = {s.name for s in resps[0].list_services_response.service}
            assert {"referee.v1.Referee", "grpc.health.v1.Health"} <= names
            assert resps[1].file_descriptor_response.file_descriptor_proto

    asyncio.run(run())


METHODS = {
    "ListGames": "uu", "CreateMatch": "uu", "SubmitMove": "uu", "GetView": "uu",
    "GetLegalMoves": "uu", "GetRecord": "uu", "Watch": "us", "Play": "ss", "Echo": "ss",
}


def test_garbage_never_crashes_the_server(server):
    rnd = random.Random(0)

    async def one(ch, method, kind, payloads, token):
        path = f"/referee.v1.Referee/{method}"
        ident = {"request_serializer": lambda b: b, "response_deserializer": lambda b: b}
        metadata = md(token) if token else None
        try:
            if kind == "uu":
                await asyncio.wait_for(
                    ch.unary_unary(path, **ident)(payloads[0], metadata=metadata), 5)
            elif kind == "us":
                call = ch.unary_stream(path, **ident)(payloads[0], metadata=metadata)
                async def drain():
                    async for _ in call:
                        pass
                try:
                    await asyncio.wait_for(drain(), 0.3)
                except TimeoutError:
                    call.cancel()
            else:
                call = ch.stream_stream(path, **ident)(iter(payloads), metadata=metadata)
                async def drain():
                    async for _ in call:
                        pass
                try:
                    await asyncio.wait_for(drain(), 0.3)
                except TimeoutError:
                    call.cancel()
        except grpc.aio.AioRpcError as err:
            assert err.code() != grpc.StatusCode.UNAVAILABLE

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=8)
            structured = [
                pb.CreateMatchRequest(game="batavia", seats=4000000000).SerializeToString(),
                pb.CreateMatchRequest(game="batavia", seats=3, options={"max_rounds": "1e9"},
                                      seat_names=["\x00" * 300]).SerializeToString(),
                pb.CreateMatchRequest(game="batavia", seats=3, time_policy=pb.TimePolicy(
                    on_expiry=77)).SerializeToString(),
                pb.SubmitMoveRequest(match_id=mid, state_version=2**64 - 1).SerializeToString(),
                pb.ClientMessage(submit=pb.Submit()).SerializeToString(),
                pb.ClientMessage(join=pb.Join(match_id="\udcff".encode("utf-8", "surrogatepass")
                                              .decode("latin-1"))).SerializeToString(),
                pb.ClientMessage(join=pb.Join(match_id=mid)).SerializeToString(),
                pb.WatchRequest(match_id="").SerializeToString(),
                b"", b"\x00", b"\xff" * 50,
            ]
            for _ in range(6):
                for method, kind in METHODS.items():
                    payloads = [rnd.choice(structured) if rnd.random() < 0.5
                                else os.urandom(rnd.randint(0, 200)) for _ in range(3)]
                    token = rnd.choice([None, ADMIN, tokens[0], "garbage", "Bearer Bearer ;;"])
                    await one(ch, method, kind, payloads, token)
            h = health_pb2_grpc.HealthStub(ch)
            r = await h.Check(health_pb2.HealthCheckRequest(service="referee.v1.Referee"))
            assert r.status == health_pb2.HealthCheckResponse.SERVING
            assert (await stub.ListGames(pb.ListGamesRequest())).games
            v = await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[0]))
            assert v.view.batavia.seat == 0

    asyncio.run(run())


def test_unexpected_exceptions_become_internal(server, monkeypatch):
    from referee.server.base import wire
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=3)
            rt = server.service.matches[mid]
            idle = (rt.decision.seat + 1) % 3

            def boom(self, view):
                raise RuntimeError("bug in a view")

            # GetView wraps the seat's encoded view (cached per version) in the envelope
            monkeypatch.setattr(wire.GameWire, "view_message", boom)
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[idle]))
            assert ei.value.code() == grpc.StatusCode.INTERNAL
            assert reason_of(ei.value) == "INTERNAL"
            monkeypatch.undo()
            v = await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[idle]))
            assert v.view.batavia.seat == idle

    asyncio.run(run())


def test_slow_reader_is_dropped_not_buffered_forever():
    from referee.server.play import streams
    st = streams.Stream(0)
    for _i in range(streams.MAX_BACKLOG + 10):
        st.put(b"x")
    assert st.dropped and st.queue.qsize() == 1
    assert st.queue.get_nowait().reason == "RESOURCE_EXHAUSTED"


def test_tls(make_server, tmp_path):
    import shutil
    import subprocess

    if not shutil.which("openssl"):
        pytest.skip("openssl not installed")
    key, cert = tmp_path / "k.pem", tmp_path / "c.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    srv = make_server(tmp_path / "tls", tls_cert=str(cert), tls_key=str(key))

    async def run():
        creds = grpc.ssl_channel_credentials(cert.read_bytes())
        async with grpc.aio.secure_channel(srv.target, creds) as ch:
            return await referee_pb2_grpc.RefereeStub(ch).ListGames(pb.ListGamesRequest())

    assert asyncio.run(run()).games



def test_events_only_for_streams_that_ask(server):
    """Join.events (referee.proto): a Play stream gets MatchEvents only if it asks; the Decision
    carries the full view either way."""

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11)
            calls = {}
            for seat in range(3):
                call = stub.Play(metadata=md(tokens[seat]))
                await call.write(pb.ClientMessage(join=pb.Join(match_id=mid, events=seat == 2)))
                assert (await call.read()).WhichOneof("msg") == "welcome"
                calls[seat] = call
            # seat 1 bids first (seat 0 is the first auctioneer) and passes
            first = (await calls[1].read()).decision
            assert first.view.batavia.seat == 1 and first.legal_moves
            move = next(m for m in first.legal_moves if m.batavia.HasField("pass_bid"))
            await calls[1].write(pb.ClientMessage(
                submit=pb.Submit(state_version=first.state_version, move=move)))
            assert (await calls[1].read()).move_result.accepted
            # seat 2 asked for events: the pass event, then its decision
            assert [(await calls[2].read()).WhichOneof("msg") for _ in range(2)] == [
                "event", "decision"]
            # seat 0 did not ask: nothing arrives (its next message would be an event)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(calls[0].read(), 0.3)
            for call in calls.values():
                call.cancel()

    asyncio.run(run())


def test_a_finished_play_stream_waits_for_the_client_to_end_its_side(server):
    """docs/bot/protocol.md, step 5: after GameOver the referee waits (up to
    ``CLOSE_WAIT_S``) for the client to end its side, so that the stream ends with both sides
    closed: a stream the server ends first gets RST_STREAM(NO_ERROR) after its trailers, which
    HAProxy 2.6 passed on to the seats as CANCELLED, losing GameOvers (docs/benchmarks.md). A
    client that never ends its side still gets the stream's end, ``close_wait_s`` later."""
    service = server.server.service
    assert service is not None

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=3)
            await play_match(server.target, mid, tokens)

            async def finished_stream(token: str) -> grpc.aio.StreamStreamCall:
                call = stub.Play(metadata=md(token))
                await call.write(pb.ClientMessage(join=pb.Join(match_id=mid)))
                assert [(await call.read()).WhichOneof("msg") for _ in range(2)] == [
                    "welcome", "game_over"]
                return call

            service.close_wait_s = 60.0
            call = await finished_stream(tokens[0])
            await asyncio.sleep(0.5)
            assert not call.done()  # the referee waits for our side...
            await call.done_writing()
            assert await call.read() is grpc.aio.EOF  # ...and ends the stream once it ended
            assert await call.code() == grpc.StatusCode.OK

            service.close_wait_s = 0.2  # a client that never ends its side: the bound
            call = await finished_stream(tokens[1])
            assert await asyncio.wait_for(call.read(), 30) is grpc.aio.EOF
            assert await call.code() == grpc.StatusCode.OK

    asyncio.run(run())
