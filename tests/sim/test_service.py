"""The Simulator service (proto/referee/v1/sim.proto) over gRPC, from the generated Python stubs
as any client would: a state from a set-up plays to the same end as the forward model, clones
are independent, rollouts are the seed's, a recorded position starts where it stood, handles
are capped and expire, and every bad input is a clear status with the referee's reason that
changes nothing."""
from __future__ import annotations

import json
import random

import grpc
import pytest

from referee.core import registry
from referee.core.rng import Rng
from referee.sim import Simulation
from referee.sim.service import Handles, serve
from referee.v1 import referee_pb2 as pb
from referee.v1 import sim_pb2 as spb
from referee.v1 import sim_pb2_grpc

from .records import played


@pytest.fixture(scope="module")
def stub():
    server, port = serve("127.0.0.1", 0, max_handles=64, idle_s=600)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield sim_pb2_grpc.SimulatorStub(channel)
    channel.close()
    server.stop(0)


def reason(err: grpc.RpcError) -> str | None:
    return dict(err.trailing_metadata() or ()).get("referee-reason")


def refused(call, request) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(request)
    return info.value


@pytest.mark.parametrize("name", sorted(registry.games()))
def test_a_state_plays_as_the_forward_model_does(stub, name):
    game = registry.get(name)
    seats = game.spec.max_seats
    st = stub.New(spb.SimNewRequest(game=name, seats=seats, seed=5))
    local = Simulation.new(name, seats, 5)
    assert st.state_hash == local.hash() and not st.over and st.to_move == local.to_move()
    rnd = random.Random(1)
    for _ in range(60):
        d = stub.LegalMoves(spb.SimHandle(handle=st.handle))
        if d.over:
            break
        assert d.seat == local.to_move() and d.kind == local.decision().kind
        assert [getattr(m, name) for m in d.legal_moves] == \
            [local.move_to_proto(m) for m in local.legal_moves()]
        k = rnd.randrange(len(d.legal_moves))
        st = stub.Apply(spb.SimApplyRequest(handle=st.handle, move=d.legal_moves[k]))
        local.apply(local.legal_moves()[k])
        assert st.state_hash == local.hash()
    view = stub.GetView(spb.SimViewRequest(handle=st.handle, seat=0))
    assert getattr(view, name) == local.view(0)
    assert getattr(stub.GetView(spb.SimViewRequest(handle=st.handle, seat=-1)), name) == \
        local.view(None)
    # a rollout on a copy leaves the handle as it was, and is the seed's
    res = stub.Rollout(spb.SimRolloutRequest(handle=st.handle, seed=9, on_copy=True))
    again = stub.Rollout(spb.SimRolloutRequest(handle=st.handle, seed=9, on_copy=True))
    assert res.over and res.moves > 0 and list(res.scores) == list(again.scores)
    assert list(res.scores) == local.clone().rollout(Rng(9)).scores
    assert stub.Result(spb.SimHandle(handle=st.handle)).over is False
    assert stub.Release(spb.SimHandle(handle=st.handle)).released


def test_clones_are_independent_and_handles_release(stub):
    a = stub.New(spb.SimNewRequest(game="batavia", seats=3, seed=2))
    b = stub.Clone(spb.SimHandle(handle=a.handle))
    assert b.handle != a.handle and b.state_hash == a.state_hash
    end = stub.Rollout(spb.SimRolloutRequest(handle=b.handle, seed=1))
    assert end.over and stub.Result(spb.SimHandle(handle=b.handle)).over
    d = stub.LegalMoves(spb.SimHandle(handle=a.handle))
    assert not d.over, "rolling out the clone left the original where it was"
    assert stub.Release(spb.SimHandle(handle=b.handle)).released
    assert not stub.Release(spb.SimHandle(handle=b.handle)).released
    err = refused(stub.LegalMoves, spb.SimHandle(handle=b.handle))
    assert err.code() == grpc.StatusCode.NOT_FOUND and reason(err) == "NOT_FOUND"


def test_a_recorded_position_starts_where_it_stood(stub):
    source = played("batavia", 3, 4)
    record = json.dumps(source)
    st = stub.New(spb.SimNewRequest(game="batavia", seats=3, seed=1, start=pb.StartPosition(
        record_json=record, move=30)))
    assert st.state_hash == source["moves"][29]["state_hash"]
    err = refused(stub.New, spb.SimNewRequest(game="batavia", seats=3, start=pb.StartPosition(
        record_json=record, move=10_000)))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(err) == "MALFORMED"
    assert "cannot start after move" in err.details()
    err = refused(stub.New, spb.SimNewRequest(game="batavia", seats=4, start=pb.StartPosition(
        record_json=record, move=10)))
    assert reason(err) == "MALFORMED" and "seats" in err.details()


def test_from_views_uses_the_games_sampler_or_says_it_has_none(stub):
    local = Simulation.new("batavia", 3, 8)
    view = pb.View(batavia=local.view(1))
    req = spb.SimFromViewsRequest(game="batavia", seats=3, seed=1,
                                  views=[spb.SimSeatView(seat=1, view=view)])
    try:
        st = stub.FromViews(req)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.UNIMPLEMENTED and reason(err) == "NO_SAMPLER"
        return
    sampled = stub.GetView(spb.SimViewRequest(handle=st.handle, seat=1))
    assert sampled == view, "a sample shows the seat exactly its view"


@pytest.mark.parametrize(("call", "request_of", "code", "why"), [
    ("New", lambda h: spb.SimNewRequest(game="chess"), "INVALID_ARGUMENT", "MALFORMED"),
    ("New", lambda h: spb.SimNewRequest(game="batavia", seats=9), "INVALID_ARGUMENT",
     "MALFORMED"),
    ("New", lambda h: spb.SimNewRequest(game="batavia", options={"nope": "1"}),
     "INVALID_ARGUMENT", "MALFORMED"),
    ("New", lambda h: spb.SimNewRequest(game="batavia", start=pb.StartPosition(
        record_json="{", move=1)), "INVALID_ARGUMENT", "MALFORMED"),
    ("FromViews", lambda h: spb.SimFromViewsRequest(game="batavia", seats=3),
     "INVALID_ARGUMENT", "MALFORMED"),
    ("FromViews", lambda h: spb.SimFromViewsRequest(game="batavia", seats=3, views=[
        spb.SimSeatView(seat=0, view=pb.View(goa=Simulation.new("goa", 2, 1).view(0)))]),
     "INVALID_ARGUMENT", "WRONG_GAME"),
    ("Apply", lambda h: spb.SimApplyRequest(handle=h, move=pb.Move(
        goa=Simulation.new("goa", 2, 1).move_to_proto(Simulation.new("goa", 2, 1)
                                                     .legal_moves()[0]))),
     "INVALID_ARGUMENT", "WRONG_GAME"),
    ("Apply", lambda h: spb.SimApplyRequest(handle=h), "INVALID_ARGUMENT", "WRONG_GAME"),
    ("GetView", lambda h: spb.SimViewRequest(handle=h, seat=3), "INVALID_ARGUMENT",
     "MALFORMED"),
    ("Clone", lambda h: spb.SimHandle(handle="x" * 5000), "NOT_FOUND", "NOT_FOUND"),
])
def test_bad_input_is_a_clear_status_and_changes_nothing(stub, call, request_of, code, why):
    st = stub.New(spb.SimNewRequest(game="batavia", seats=3, seed=3))
    err = refused(getattr(stub, call), request_of(st.handle))
    assert err.code() == getattr(grpc.StatusCode, code) and reason(err) == why
    assert len(err.details()) <= 300
    assert stub.LegalMoves(spb.SimHandle(handle=st.handle)).seat >= 0
    after = stub.Clone(spb.SimHandle(handle=st.handle))
    assert after.state_hash == st.state_hash, "a refused call changed the state"
    stub.Release(spb.SimHandle(handle=after.handle))
    stub.Release(spb.SimHandle(handle=st.handle))


def test_an_illegal_move_or_a_finished_game_is_refused(stub):
    st = stub.New(spb.SimNewRequest(game="batavia", seats=3, seed=6))
    local = Simulation.new("batavia", 3, 6)
    other = Simulation.new("batavia", 3, 6)
    other.rollout(Rng(1))  # a move legal somewhere else, not here
    legal = {local.move_to_proto(m).SerializeToString() for m in local.legal_moves()}
    probe = Simulation.new("batavia", 3, 6)
    illegal = None
    while illegal is None and not probe.over:
        for m in probe.legal_moves():
            if local.move_to_proto(m).SerializeToString() not in legal:
                illegal = m
                break
        probe.apply(probe.legal_moves()[0])
    assert illegal is not None
    err = refused(stub.Apply, spb.SimApplyRequest(handle=st.handle, move=pb.Move(
        batavia=local.move_to_proto(illegal))))
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason(err) in ("ILLEGAL_MOVE", "NOT_YOUR_TURN")
    stub.Rollout(spb.SimRolloutRequest(handle=st.handle, seed=2))
    err = refused(stub.Apply, spb.SimApplyRequest(handle=st.handle, move=pb.Move(
        batavia=local.move_to_proto(local.legal_moves()[0]))))
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and reason(err) == "MATCH_OVER"


def test_bytes_that_are_no_request_are_malformed():
    server, port = serve("127.0.0.1", 0)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            raw = ch.unary_unary("/referee.v1.Simulator/New")
            with pytest.raises(grpc.RpcError) as info:
                raw(b"\xff\xff\xff")
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason(info.value) == "MALFORMED"
    finally:
        server.stop(0)


def test_handles_are_capped_and_expire():
    now = [0.0]
    handles = Handles(cap=2, idle_s=10, clock=lambda: now[0])
    sim = Simulation.new("batavia", 3, 1)
    a = handles.add(sim)
    handles.add(sim.clone())
    with pytest.raises(Exception, match="holds 2 states") as info:
        handles.add(sim.clone())
    assert info.value.reason == "RESOURCE_EXHAUSTED"
    now[0] = 5
    handles.get(a)  # used: its idle time starts again
    now[0] = 12  # the other one is idle for 12 s: dropped
    assert len(handles) == 2 and handles.add(sim.clone()) and len(handles) == 2
    now[0] = 30
    with pytest.raises(Exception, match="no state with handle") as info:
        handles.get(a)
    assert info.value.reason == "NOT_FOUND" and len(handles) == 0
