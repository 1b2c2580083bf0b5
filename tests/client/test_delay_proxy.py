"""`referee-bot play --delay-ms`'s proxy (issue 33 item 2): every call of the Referee service
passes through it unchanged (a whole match played through it on the Play stream), each answer
held back by the delay (the proxy's sleeps recorded, not timed), and the referee's refusals
reach the bot with their status, message and machine-readable reason."""
from __future__ import annotations

import asyncio
import json
import threading

import grpc
import pytest
from referee_client import run_bot
from referee_client.bots import BOTS
from referee_client.connection import reason_of
from referee_tools import delay_proxy
from referee_tools.delay_proxy import DelayProxy

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN, ServerHandle
from tests.server.helpers import md


class _Clock:
    """Stands in for the proxy's asyncio: records each hold instead of sleeping."""

    def __init__(self):
        self.holds: list[float] = []

    def __getattr__(self, name):
        return getattr(asyncio, name)

    async def sleep(self, seconds: float) -> None:
        self.holds.append(seconds)


@pytest.fixture
def proxied(tmp_path, monkeypatch):
    monkeypatch.setattr(delay_proxy, "asyncio", _Clock())
    handle = ServerHandle(tmp_path / "data")
    handle.start()
    proxy = DelayProxy(handle.target, delay_ms=250)
    handle.call(proxy.start())
    yield handle, proxy
    handle.call(proxy.stop())
    handle.close()


def _error(stub, **kw) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        stub.GetView(pb.GetViewRequest(match_id="nope"), metadata=md("not-a-token"), **kw)
    return info.value


def test_refusals_pass_with_their_reason_and_a_match_plays_through(proxied):
    handle, proxy = proxied
    with grpc.insecure_channel(handle.target) as direct, \
            grpc.insecure_channel(proxy.address) as via:
        want = _error(referee_pb2_grpc.RefereeStub(direct))
        got = _error(referee_pb2_grpc.RefereeStub(via), timeout=10)
        assert reason_of(want)  # the referee gives one, and the proxy passes it on
        assert (got.code(), got.details(), reason_of(got)) == (
            want.code(), want.details(), reason_of(want))
        created = referee_pb2_grpc.RefereeStub(via).CreateMatch(
            pb.CreateMatchRequest(game="goa", seats=2, seed=5), metadata=md(ADMIN))
    overs: dict[int, pb.GameOver] = {}

    def seat(token: str, n: int) -> None:
        overs[n] = run_bot(BOTS["random"](n), proxy.address, created.match_id, token)

    threads = [threading.Thread(target=seat, args=(s.token, s.seat)) for s in created.seats]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(overs) == [0, 1]
    assert all(len(o.seats) == 2 for o in overs.values())
    # every answer was held back (the random bot's answers are all legal: one per move)
    with grpc.insecure_channel(handle.target) as direct:
        record = referee_pb2_grpc.RefereeStub(direct).GetRecord(
            pb.GetRecordRequest(match_id=created.match_id), metadata=md(ADMIN))
    moves = len(json.loads(record.record_json)["moves"])
    assert moves > 10
    assert delay_proxy.asyncio.holds == [0.25] * moves
