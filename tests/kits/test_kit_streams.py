"""Every kit reconnects the same way and resends a move the referee's store could not take
(issue 31 item 2). A stand-in referee (tests/client/fake_referee.py's way of driving a kit)
plays what a client sees when a host dies behind nginx, then a rate-limited stream, then a
store outage:

* Play #1 welcomes the bot, pushes a decision, takes its move and ends the stream with INTERNAL
  "Received RST_STREAM with error code 2" and no referee-reason: what nginx does to a stream
  whose upstream died after the response headers (it cannot send a gRPC status then);
* Play #2 ends at the Join with RESOURCE_EXHAUSTED (the referee's rate limit on a stream);
* Play #3 pushes the same decision again (the move was never acknowledged), answers the first
  submit with STORE_UNAVAILABLE (nothing played) and accepts the second, which must be the same
  move and note at the same state_version, not a new answer of the bot's.

Each kit must exit 0 at the GameOver, as docs/bot/protocol.md ("Reconnecting") says every
client does."""
from __future__ import annotations

import asyncio
import contextlib

import grpc
import pytest

from referee.v1 import referee_pb2, referee_pb2_grpc
from tests.client.fake_referee import BID, PASS, run_bot_against

from .toolchains import KITS

RST = "Received RST_STREAM with error code 2"


class DyingHostReferee(referee_pb2_grpc.RefereeServicer):
    def __init__(self) -> None:
        self.plays = 0
        self.submits: list[tuple[int, referee_pb2.Submit]] = []  # (play, submit)

    def _decision(self) -> referee_pb2.ServerMessage:
        return referee_pb2.ServerMessage(decision=referee_pb2.Decision(
            state_version=7, seat=0, kind="batavia.auction", legal_moves=[PASS, BID]))

    async def Play(self, request_iterator, context):
        self.plays += 1
        n = self.plays
        first = await anext(request_iterator)
        assert first.join.match_id == "m1"
        if n == 2:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                "rate limit exceeded on this stream; slow down",
                                (("referee-reason", "RESOURCE_EXHAUSTED"),))
        yield referee_pb2.ServerMessage(welcome=referee_pb2.Welcome(
            match_id="m1", game="batavia", seat=0, seat_count=2))
        yield self._decision()
        msg = await anext(request_iterator)
        self.submits.append((n, msg.submit))
        if n == 1:
            await context.abort(grpc.StatusCode.INTERNAL, RST)
        yield referee_pb2.ServerMessage(move_result=referee_pb2.MoveResult(
            accepted=False, reason=referee_pb2.STORE_UNAVAILABLE, state_version=7,
            message="the store cannot commit now; send the move again",
            request_id=msg.submit.request_id))
        with contextlib.suppress(TimeoutError):  # a kit that does not resend: the test fails
            msg = await asyncio.wait_for(anext(request_iterator), 20)
            self.submits.append((n, msg.submit))
            yield referee_pb2.ServerMessage(move_result=referee_pb2.MoveResult(
                accepted=True, state_version=8, request_id=msg.submit.request_id))
        yield referee_pb2.ServerMessage(game_over=referee_pb2.GameOver(match_id="m1"))


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_reconnects_after_a_reset_stream_and_resends_after_store_unavailable(kit):
    """issue 31 item 2: INTERNAL (a proxy's RST_STREAM) and RESOURCE_EXHAUSTED are retried by
    every kit, and a STORE_UNAVAILABLE refusal is answered by the same move sent again."""
    argv = KITS[kit]()
    fake = DyingHostReferee()
    code, out = asyncio.run(run_bot_against(argv, fake))
    text = out.decode(errors="replace")
    assert code == 0, text
    assert fake.plays == 3, text
    assert [(n, s.state_version) for n, s in fake.submits] == [(1, 7), (3, 7), (3, 7)], text
    (_, refused), (_, again) = fake.submits[1:]
    assert (again.move, again.note) == (refused.move, refused.note), text
