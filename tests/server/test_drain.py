"""SIGTERM drains a referee before it stops (issue 37 item 3; RefereeServer.drain): the health
check says NOT_SERVING, new matches, streams and moves are refused with UNAVAILABLE / DRAINING
(the SDK and the kits call again: elsewhere, or here once restarted), a move being committed is
committed and answered before its stream ends, and every stream then ends with UNAVAILABLE /
DRAINING. A move is never acknowledged and lost: it is acknowledged and in the store, or refused.
Each match's lease is released as the drain lets go of it (after its last move's commit), so
that another referee takes it at once (tests/cluster/test_rolling_restart.py)."""
from __future__ import annotations

import asyncio
import threading
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, reason_of


def _hold_commits(service, write: str = "insert_move") -> threading.Event:
    """Hold every commit of the store's ``write`` (each move's, by default) until the returned
    event is set (as test_cut_mid_move)."""
    store = service.store
    release = threading.Event()
    original = getattr(store, write)

    def slow_insert(*args, **kwargs):  # runs on the server's loop
        inner = original(*args, **kwargs)

        async def held():
            await asyncio.get_running_loop().run_in_executor(None, release.wait, 30)
            return await inner

        return asyncio.ensure_future(held())

    setattr(store, write, slow_insert)
    return release


async def _join(stub, match_id: str, token: str):
    """A Play stream joined to the match, and its first Decision (None if the seat has none)."""
    call = stub.Play(metadata=md(token))
    await call.write(pb.ClientMessage(join=pb.Join(match_id=match_id)))
    while True:
        msg = await asyncio.wait_for(call.read(), 10)
        assert msg is not grpc.aio.EOF
        if msg.WhichOneof("msg") == "decision":
            return call, msg.decision


async def _rest(call) -> tuple[list[pb.ServerMessage], grpc.aio.AioRpcError | None]:
    """What a stream still sends, and the error it ends with."""
    got = []
    try:
        while (msg := await asyncio.wait_for(call.read(), 20)) is not grpc.aio.EOF:
            got.append(msg)
    except grpc.aio.AioRpcError as err:
        return got, err
    return got, None


def _wait(pred) -> None:
    deadline = time.monotonic() + 10
    while not pred():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_move_being_committed_is_acknowledged_and_a_later_one_refused(server):
    """Match A's move is being committed when the drain starts: the drain waits for it, its
    MoveResult (accepted) reaches the bot before the stream ends with UNAVAILABLE / DRAINING,
    and it is in the store. Match B's move, sent during the drain, is refused the same way and
    is not in the store."""
    service = server.service
    release = _hold_commits(service)

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            a, a_tokens = await create(stub, seats=3, seed=3)
            b, b_tokens = await create(stub, seats=3, seed=4)
            a_call, a_dec = await _join(stub, a, a_tokens[service.matches[a].decision.seat])
            b_call, b_dec = await _join(stub, b, b_tokens[service.matches[b].decision.seat])
            await a_call.write(pb.ClientMessage(submit=pb.Submit(
                state_version=a_dec.state_version, move=a_dec.legal_moves[0])))
            await asyncio.get_running_loop().run_in_executor(
                None, _wait, lambda: service.matches[a].match.version == 1)
            # the drain starts while A's commit is held
            drained = asyncio.run_coroutine_threadsafe(server.server.drain(), server.loop)
            await asyncio.get_running_loop().run_in_executor(
                None, _wait, lambda: service.draining)
            await b_call.write(pb.ClientMessage(submit=pb.Submit(
                state_version=b_dec.state_version, move=b_dec.legal_moves[0])))
            b_got, b_err = await _rest(b_call)
            assert not drained.done()  # still waiting for A's commit
            release.set()
            await asyncio.wrap_future(drained)
            # drained, not yet stopped: each match's lease is free already, behind its move's
            # commit, for another referee to take at the bots' next call
            for mid in (a, b):
                assert service.store.lease_holder(mid)[0] == "", mid
            assert len(service.store.load_moves(a)) == 1
            a_got, a_err = await _rest(a_call)
            results = [m.move_result for m in a_got if m.WhichOneof("msg") == "move_result"]
            assert [r.accepted for r in results] == [True], a_got
            assert a_err is not None and a_err.code() == grpc.StatusCode.UNAVAILABLE
            assert reason_of(a_err) == "DRAINING"
            assert not any(m.WhichOneof("msg") == "move_result" for m in b_got), b_got
            assert b_err is not None and b_err.code() == grpc.StatusCode.UNAVAILABLE
            assert reason_of(b_err) == "DRAINING"
        assert len(service.store.load_moves(a)) == 1
        assert service.store.load_moves(b) == []

    asyncio.run(run())


def test_a_draining_referee_refuses_new_work_and_says_not_serving(server):
    service = server.service

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=5)
            seat = service.matches[mid].decision.seat
            watch = stub.Watch(pb.WatchRequest(match_id=mid))
            assert (await watch.read()).WhichOneof("msg")
            await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(server.server.drain(), server.loop))
            _, err = await _rest(watch)  # an open stream ends
            assert err is not None and reason_of(err) == "DRAINING"
            health = health_pb2_grpc.HealthStub(ch)
            status = (await health.Check(health_pb2.HealthCheckRequest())).status
            assert status == health_pb2.HealthCheckResponse.NOT_SERVING
            calls = {
                "CreateMatch": stub.CreateMatch(pb.CreateMatchRequest(game="batavia", seats=3),
                                                metadata=md(ADMIN)),
                "SubmitMove": stub.SubmitMove(pb.SubmitMoveRequest(match_id=mid),
                                              metadata=md(tokens[seat])),
            }
            for name, call in calls.items():
                try:
                    await call
                    raise AssertionError(f"{name} was served while draining")
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.UNAVAILABLE, (name, exc)
                    assert reason_of(exc) == "DRAINING", name
            play = stub.Play(metadata=md(tokens[seat]))
            await play.write(pb.ClientMessage(join=pb.Join(match_id=mid)))
            session = stub.Session(metadata=md("any-bot-token"))
            await session.write(pb.SessionClientMessage(hello=pb.SessionHello(capacity=1)))
            for name, stream in (("Play", play), ("Watch", stub.Watch(
                    pb.WatchRequest(match_id=mid))), ("Session", session)):
                got, err = await _rest(stream)
                assert got == [] and err is not None, name
                assert err.code() == grpc.StatusCode.UNAVAILABLE, (name, err)
                assert reason_of(err) == "DRAINING", name
        assert service.store.load_moves(mid) == []

    asyncio.run(run())


def test_a_call_begun_before_the_drain_ends_before_it(server):
    """A CreateMatch still committing its match when the drain starts: the drain waits for the
    call (so the stop after it cancels no call, which its client would see as CANCELLED rather
    than UNAVAILABLE), then quiesces the new match like the others and frees its lease."""
    service = server.service
    store = service.store
    release = _hold_commits(service, "insert_match")

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            created = asyncio.ensure_future(stub.CreateMatch(
                pb.CreateMatchRequest(game="batavia", seats=3, seed=8), metadata=md(ADMIN)))
            await asyncio.get_running_loop().run_in_executor(
                None, _wait, lambda: service.unary_calls == 1)
            drained = asyncio.run_coroutine_threadsafe(server.server.drain(), server.loop)
            await asyncio.get_running_loop().run_in_executor(
                None, _wait, lambda: service.draining)
            await asyncio.sleep(0.3)
            assert not drained.done()  # waiting for the call begun before it
            release.set()
            reply = await created
            await asyncio.wrap_future(drained)
            assert reply.match_id in service.matches  # quiesced by the drain, which
            assert store.lease_holder(reply.match_id)[0] == ""  # freed its lease

    asyncio.run(run())
    assert service.unary_calls == 0 and service.unary_idle.is_set()


def test_a_call_handed_to_another_referee_is_counted_too(server):
    """A cluster worker hands a call for a match another worker holds on (front.forward.routed):
    that call counts among the unary calls the drain waits for, like one served here."""
    from referee.server.front.forward import SERVICE_NAME, Forwarder, routed
    from referee.server.front.service import generic_handler

    service = server.service
    release = asyncio.Event()

    class Away(Forwarder):
        def target(self, method, data, context=None):
            return "unix:/nowhere"  # another referee holds it

        async def unary(self, method, target, data, context, fallback=None):
            await release.wait()
            return pb.GetViewResponse()

    handler = routed(generic_handler(service), Away("w1", {}), service.track_unary)
    method = handler.service(type("Details", (), {
        "method": f"/{SERVICE_NAME}/GetView",
        "invocation_metadata": ()})())

    async def run():
        call = asyncio.ensure_future(method.unary_unary(b"", None))
        await asyncio.sleep(0.05)
        during = service.unary_calls
        release.set()
        await call
        return during

    assert asyncio.run_coroutine_threadsafe(run(), server.loop).result(10) == 1
    assert service.unary_calls == 0
