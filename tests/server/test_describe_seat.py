"""DescribeSeat (issue 34, item 1): a seat's view and decision in words, through the protocol.

The text is the seat's own (its token), every legal move has a distinct stable id, and the move
it carries is the one the referee accepts; a seat not to decide gets no moves."""
from __future__ import annotations

import asyncio

import grpc
import pytest

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md, reason_of


def test_the_deciding_seat_gets_every_legal_move_by_id_and_can_play_one(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=3)
            texts = [await stub.DescribeSeat(pb.DescribeSeatRequest(match_id=mid),
                                             metadata=md(t)) for t in tokens]
            decider = next(t for t in texts if t.moves)
            legal = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                             metadata=md(tokens[decider.seat]))
            assert [m.move for m in decider.moves] == list(legal.legal_moves)
            assert len({m.id for m in decider.moves}) == len(decider.moves)
            assert decider.prompt == legal.prompt and decider.view
            assert all(not t.moves and not t.prompt for t in texts if t.seat != decider.seat)
            again = await stub.DescribeSeat(pb.DescribeSeatRequest(match_id=mid),
                                            metadata=md(tokens[decider.seat]))
            assert [m.id for m in again.moves] == [m.id for m in decider.moves]
            result = await stub.SubmitMove(pb.SubmitMoveRequest(
                match_id=mid, state_version=decider.state_version, move=decider.moves[-1].move),
                metadata=md(tokens[decider.seat]))
            assert result.accepted
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.DescribeSeat(pb.DescribeSeatRequest(match_id=mid),
                                        metadata=md("not-a-token"))
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED, reason_of(err.value)
    asyncio.run(run())
