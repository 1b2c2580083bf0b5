"""Every kit calls again when the referee answers UNAVAILABLE, whatever the reason (issue 22):
NOT_OWNER (the match is run by another referee of the cluster now; the proxy routes the next
call there) before the Welcome and after an accepted move, as a referee's stream ends when its
match is taken over. A scripted fake referee (tests/client/fake_referee.py) ends the first two
Play streams so; each kit rejoins with backoff, answers the decision pushed again and exits 0
at the GameOver, as the Python SDK does. The referee killed with -9 mid-match and restarted is
the conformance suite's "restart" check (test_kits.py)."""
from __future__ import annotations

import asyncio

import grpc
import pytest

from referee.v1 import referee_pb2, referee_pb2_grpc
from tests.client.fake_referee import BID, PASS, run_bot_against

from .toolchains import KITS

NOT_OWNER = (("referee-reason", "NOT_OWNER"),)


class TakenOverReferee(referee_pb2_grpc.RefereeServicer):
    """Play #1 ends at the Join with UNAVAILABLE / NOT_OWNER; Play #2 welcomes the bot, takes
    its move, then ends so too; Play #3 pushes the next decision and ends the match after the
    bot's move."""

    def __init__(self) -> None:
        self.plays = 0
        self.submits: list[referee_pb2.Submit] = []

    async def Play(self, request_iterator, context):
        self.plays += 1
        n = self.plays
        first = await anext(request_iterator)
        assert first.join.match_id == "m1"
        if n == 1:
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                "match m1 is run by another referee; call again", NOT_OWNER)
        version = 7 if n == 2 else 8
        yield referee_pb2.ServerMessage(welcome=referee_pb2.Welcome(
            match_id="m1", game="batavia", seat=0, seat_count=2))
        yield referee_pb2.ServerMessage(decision=referee_pb2.Decision(
            state_version=version, seat=0, kind="batavia.auction", legal_moves=[PASS, BID]))
        msg = await anext(request_iterator)
        self.submits.append(msg.submit)
        yield referee_pb2.ServerMessage(move_result=referee_pb2.MoveResult(
            accepted=True, state_version=version + 1, request_id=msg.submit.request_id))
        if n == 2:
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                "match m1 is now run by another referee; call again", NOT_OWNER)
        yield referee_pb2.ServerMessage(game_over=referee_pb2.GameOver(match_id="m1"))


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_calls_again_after_not_owner(kit):
    argv = KITS[kit]()
    fake = TakenOverReferee()
    code, out = asyncio.run(run_bot_against(argv, fake))
    text = out.decode(errors="replace")
    assert code == 0, text
    assert fake.plays == 3, text
    assert [s.state_version for s in fake.submits] == [7, 8], text
