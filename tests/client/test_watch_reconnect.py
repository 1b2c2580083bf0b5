"""The SDK's ``watch()`` opens the Watch stream again when it ends with a status clients retry
(issue 31 item 2: a host killed behind nginx ends its streams INTERNAL, RST_STREAM code 2;
docs/bot/protocol.md *Reconnecting*), and gives up on a final status or after its backoff's
give-up time. A stand-in referee answers Watch."""
from __future__ import annotations

import grpc
import pytest
from referee_client.bot import Backoff
from referee_client.connection import RefereeError
from referee_client.unary import watch

from referee.v1 import referee_pb2, referee_pb2_grpc

from .test_unary_resend import serving

UPDATE = referee_pb2.WatchMessage(update=referee_pb2.SpectatorUpdate(state_version=3))
OVER = referee_pb2.WatchMessage(game_over=referee_pb2.GameOver())


class CutWatch(referee_pb2_grpc.RefereeServicer):
    """Watch: the first ``cuts`` streams send the current view, then end with ``code``; the
    next one sends the view and the GameOver."""

    def __init__(self, cuts: int, code: grpc.StatusCode = grpc.StatusCode.INTERNAL):
        self.cuts, self.code, self.calls = cuts, code, 0

    def Watch(self, request, context):
        self.calls += 1
        yield UPDATE
        if self.calls <= self.cuts:
            context.abort(self.code, "Received RST_STREAM with error code 2")
        yield OVER


def test_watch_reopens_a_stream_a_proxy_cut_and_ends_at_the_game_over():
    fake = CutWatch(2)
    with serving(fake) as address:
        kinds = [m.WhichOneof("msg") for m in watch(address, "m1")]
    assert fake.calls == 3
    assert kinds == ["update", "update", "update", "game_over"]


def test_watch_does_not_retry_a_final_status():
    fake = CutWatch(5, grpc.StatusCode.NOT_FOUND)
    with serving(fake) as address, pytest.raises(RefereeError) as err:
        list(watch(address, "m1"))
    assert err.value.code == grpc.StatusCode.NOT_FOUND and fake.calls == 1


def test_watch_gives_up_after_its_backoff_time_without_a_message():
    class Down(referee_pb2_grpc.RefereeServicer):
        calls = 0

        def Watch(self, request, context):
            Down.calls += 1
            context.abort(grpc.StatusCode.UNAVAILABLE, "no referee")
            yield UPDATE  # never reached: makes this a generator

    with serving(Down()) as address, pytest.raises(RefereeError) as err:
        list(watch(address, "m1", backoff=Backoff(initial=0.01, maximum=0.02,
                                                  give_up_after=0.3)))
    assert err.value.code == grpc.StatusCode.UNAVAILABLE and Down.calls >= 2
