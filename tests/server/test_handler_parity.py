"""Issue 32: every RPC the protocol declares for a service the referee serves has a handler,
of the kind the .proto says, on a servicer that implements it; and no handler is served that
the protocol lacks. Without this guard a method added to the .proto answers UNIMPLEMENTED
(and a bot sees a "not supported" error) until someone notices."""
from __future__ import annotations

import asyncio

import grpc
import pytest
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor

from referee.server.front import service as front
from referee.sim import service as sim
from referee.v1 import referee_pb2 as pb
from referee.v1 import sim_pb2 as spb

from .conftest import ADMIN

REFEREE = pb.DESCRIPTOR.services_by_name["Referee"]
SIMULATOR = spb.DESCRIPTOR.services_by_name["Simulator"]


class _Details(grpc.HandlerCallDetails):
    def __init__(self, method: str):
        self.method = method
        self.invocation_metadata = ()


def served(handler: grpc.GenericRpcHandler) -> set[str]:
    """The full method paths a generic handler serves (grpc's dictionary handler keeps them
    in ``_method_handlers``; asserted, so a grpc release that renames it fails loudly)."""
    table = getattr(handler, "_method_handlers", None)
    assert isinstance(table, dict), "grpc's generic handler no longer lists its methods"
    return set(table)


def parity_gaps(svc: ServiceDescriptor, handler: grpc.GenericRpcHandler,
                servicer: type) -> list[str]:
    """What is wrong between ``svc`` (the .proto's service) and the handlers served for it."""
    gaps = []
    paths = {f"/{svc.full_name}/{m.name}": m for m in svc.methods}
    for path in sorted(served(handler) - set(paths)):
        gaps.append(f"{path} is served but the protocol has no such method")
    for path, m in paths.items():
        if not callable(getattr(servicer, m.name, None)):
            gaps.append(f"{servicer.__name__} does not implement {m.name}")
        h = handler.service(_Details(path))
        if h is None:
            gaps.append(f"{path} has no handler (it would answer UNIMPLEMENTED)")
        elif (h.request_streaming, h.response_streaming) != (m.client_streaming,
                                                             m.server_streaming):
            gaps.append(f"{path} is served as streaming={h.request_streaming, h.response_streaming}"
                        f", the protocol says {m.client_streaming, m.server_streaming}")
    return gaps


@pytest.fixture
def referee_service(server) -> front.RefereeService:
    """The servicer of a started referee (tests/server/conftest.py)."""
    return server.service


def test_every_referee_method_has_its_handler(referee_service):
    assert not parity_gaps(REFEREE, front.generic_handler(referee_service), front.RefereeService)
    # and the served table (registered per method at start-up) is the descriptor's
    assert set(front.registered_handlers(front.generic_handler(referee_service))) == \
        {m.name for m in REFEREE.methods}


def test_every_simulator_method_has_its_handler():
    assert not parity_gaps(SIMULATOR, sim.generic_handler(sim.SimulatorService()),
                           sim.SimulatorService)


def test_the_parity_check_sees_a_missing_an_extra_and_a_mis_kinded_handler(referee_service):
    """The check above can fail: a table that lost a method, gained one or serves one as the
    wrong kind is reported."""
    full = front.generic_handler(referee_service)
    table = dict(full._method_handlers)  # type: ignore[attr-defined]  # see served()
    table.pop(f"/{REFEREE.full_name}/GetSigningKey")
    table[f"/{REFEREE.full_name}/Nonexistent"] = table[f"/{REFEREE.full_name}/ListGames"]
    table[f"/{REFEREE.full_name}/Watch"] = table[f"/{REFEREE.full_name}/GetView"]
    broken = grpc.method_handlers_generic_handler(
        REFEREE.full_name, {k.rpartition("/")[2]: v for k, v in table.items()})
    gaps = "\n".join(parity_gaps(REFEREE, broken, front.RefereeService))
    assert "GetSigningKey has no handler" in gaps
    assert "Nonexistent is served" in gaps
    assert "Watch is served as streaming" in gaps

    class Lacking:
        pass

    gaps = "\n".join(parity_gaps(REFEREE, full, Lacking))
    assert "Lacking does not implement ListGames" in gaps


async def _call_empty(ch: grpc.aio.Channel, svc: ServiceDescriptor, m: MethodDescriptor,
                      metadata: tuple[tuple[str, str], ...]) -> grpc.StatusCode:
    """Call ``m`` with an empty request (one empty frame on a request stream); its status."""
    path = f"/{svc.full_name}/{m.name}"
    try:
        if m.client_streaming:
            make = ch.stream_stream if m.server_streaming else ch.stream_unary
            call = make(path)(iter([b""]), metadata=metadata, timeout=10)
        else:
            make = ch.unary_stream if m.server_streaming else ch.unary_unary
            call = make(path)(b"", metadata=metadata, timeout=10)
        if m.server_streaming:
            async for _ in call:
                pass
        else:
            await call
        return grpc.StatusCode.OK
    except grpc.aio.AioRpcError as exc:
        return exc.code()


def test_a_running_referee_answers_every_method(server):
    """On a started referee (its handlers as the server registered them), no method of the
    protocol answers an empty request with UNIMPLEMENTED."""

    async def go() -> dict[str, grpc.StatusCode]:
        async with grpc.aio.insecure_channel(server.target) as ch:
            md = (("authorization", f"Bearer {ADMIN}"),)
            return {m.name: await _call_empty(ch, REFEREE, m, md) for m in REFEREE.methods}

    codes = asyncio.run(go())
    assert set(codes) == {m.name for m in REFEREE.methods}
    assert not [name for name, code in codes.items()
                if code == grpc.StatusCode.UNIMPLEMENTED], codes


def test_a_running_simulator_answers_every_method():
    srv, port = sim.serve(port=0, workers=2)
    try:
        async def go() -> dict[str, grpc.StatusCode]:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                return {m.name: await _call_empty(ch, SIMULATOR, m, ())
                        for m in SIMULATOR.methods}

        codes = asyncio.run(go())
    finally:
        srv.stop(None)
    assert set(codes) == {m.name for m in SIMULATOR.methods}
    assert not [name for name, code in codes.items()
                if code == grpc.StatusCode.UNIMPLEMENTED], codes
