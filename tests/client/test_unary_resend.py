"""SeatClient.submit sends a move again when the call ends with a status clients retry
(issue 31 item 2): STORE_UNAVAILABLE, or a call cut by a proxy whose referee died; the same
move at the same state version (safe: played at most once), bounded by the decision's move
clock. A stand-in referee answers SubmitMove."""
from __future__ import annotations

import contextlib
import time
from concurrent import futures

import grpc
import pytest
from referee_client import SeatClient
from referee_client.connection import RefereeError

from referee.v1 import referee_pb2, referee_pb2_grpc

from .fake_referee import BID

STORE = (("referee-reason", "STORE_UNAVAILABLE"),)


class Flaky(referee_pb2_grpc.RefereeServicer):
    """SubmitMove: the first ``failures`` calls end as ``how`` says, then the move is taken."""

    def __init__(self, failures: int, how: str):
        self.failures, self.how = failures, how
        self.requests: list[referee_pb2.SubmitMoveRequest] = []

    def SubmitMove(self, request, context):
        self.requests.append(request)
        if len(self.requests) <= self.failures:
            if self.how == "store":
                context.abort_with_status(_status(grpc.StatusCode.UNAVAILABLE,
                                                  "the store cannot commit now", STORE))
            context.abort(grpc.StatusCode.INTERNAL,
                          "Received RST_STREAM with error code 2")
        return referee_pb2.MoveResult(accepted=True, state_version=request.state_version + 1,
                                      request_id=request.request_id)


def _status(code, details, trailers):
    class S(grpc.Status):
        pass
    s = S()
    s.code, s.details, s.trailing_metadata = code, details, trailers
    return s


@contextlib.contextmanager
def serving(fake):
    server = grpc.server(futures.ThreadPoolExecutor(4))
    referee_pb2_grpc.add_RefereeServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None)


@pytest.mark.parametrize("how", ["store", "reset"])
def test_submit_sends_the_same_move_again_until_the_referee_takes_it(how):
    """issue 31 item 2: two failed calls, then accepted: three identical requests."""
    fake = Flaky(2, how)
    with serving(fake) as address, SeatClient(address, "m1", "t") as seat:
        result = seat.submit(7, BID, "why")
    assert result.accepted
    assert [(r.state_version, r.move, r.note) for r in fake.requests] == [(7, BID, "why")] * 3


def test_submit_resends_stop_at_the_move_clock():
    """issue 31 item 2: past the decision's deadline the STORE_UNAVAILABLE error is raised."""
    fake = Flaky(100, "store")
    with (serving(fake) as address, SeatClient(address, "m1", "t") as seat,
          pytest.raises(RefereeError) as err):
        seat.submit(7, BID, deadline_unix_ms=int(time.time() * 1000) + 300)
    assert (err.value.code, err.value.reason) == (grpc.StatusCode.UNAVAILABLE,
                                                  "STORE_UNAVAILABLE")
    assert 1 <= len(fake.requests) < 10
