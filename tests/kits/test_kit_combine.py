"""Every kit joins with Join.combine_decision and answers the Decision that comes inside an
accepted MoveResult (issue 22, item 3): checked on the wire against a scripted fake referee
that pushes one Decision, answers the first Submit with an accepted MoveResult carrying the
seat's next Decision (and no Decision message of its own), then, after the answer to that
one, a plain accepted MoveResult and the GameOver. A kit that ignored ``next`` would never
answer the second decision."""
from __future__ import annotations

import asyncio

import pytest

from referee.v1 import referee_pb2, referee_pb2_grpc
from tests.client.fake_referee import BID, PASS, run_bot_against

from .toolchains import KITS


def _decision(version: int) -> referee_pb2.Decision:
    return referee_pb2.Decision(match_id="m1", state_version=version, seat=0,
                                kind="batavia.auction", legal_moves=[PASS, BID])


class CombiningReferee(referee_pb2_grpc.RefereeServicer):
    def __init__(self) -> None:
        self.join: referee_pb2.Join | None = None
        self.submits: list[referee_pb2.Submit] = []

    async def Play(self, request_iterator, context):
        first = await anext(request_iterator)
        self.join = first.join
        yield referee_pb2.ServerMessage(welcome=referee_pb2.Welcome(
            match_id="m1", game="batavia", seat=0, seat_count=2))
        yield referee_pb2.ServerMessage(decision=_decision(7))
        for version in (7, 8):
            try:
                msg = await asyncio.wait_for(anext(request_iterator), 20)
            except TimeoutError:  # the kit did not answer the decision it was given
                return
            self.submits.append(msg.submit)
            result = referee_pb2.MoveResult(accepted=True, state_version=version + 1,
                                            request_id=msg.submit.request_id)
            if version == 7:  # the same seat acts again: its Decision rides in the result
                result.next.CopyFrom(_decision(8))
            yield referee_pb2.ServerMessage(move_result=result)
        yield referee_pb2.ServerMessage(game_over=referee_pb2.GameOver(match_id="m1"))


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_asks_for_combined_decisions_and_answers_them(kit):
    fake = CombiningReferee()

    code, out = asyncio.run(run_bot_against(KITS[kit](), fake))
    text = out.decode(errors="replace")
    assert fake.join is not None and fake.join.combine_decision, text
    assert [s.state_version for s in fake.submits] == [7, 8], text
    assert all(s.move in (PASS, BID) for s in fake.submits), text
    assert code == 0, text
