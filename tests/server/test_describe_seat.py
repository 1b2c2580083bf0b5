"""DescribeSeat (issue 34, item 1): a seat's view and decision in words, through the protocol.

The text is the seat's own (its token), every legal move has a distinct stable id, and the move
it carries is the one the referee accepts; a seat not to decide gets no moves."""
from __future__ import annotations

import asyncio

import grpc
import pytest

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import ADMIN, create, md, reason_of


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


@pytest.mark.parametrize(("name", "options"), [
    ("batavia", {}), ("goa", {}), ("goa", {"edition": "2004"}), ("santa_maria", {})])
def test_events_since_a_version_are_the_public_events_and_each_text_is_the_seats_own(
        server, name, options):
    """The events of DescribeSeat are the match's public events as every seat's event stream
    gets them, replayed for a first call (after 6 moves) and kept for later ones; and every
    seat's text is exactly the text of what GetView and GetLegalMoves send that seat, so it
    carries nothing of another seat's hand."""
    from referee.core import registry, text
    from referee.core.match import Match
    from referee.server.base.wire import match_event

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                game=name, seats=3, seed=5, options=options), metadata=md(ADMIN))
            mid = created.match_id
            tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
            game = registry.get(name)
            local = Match.create(game, options, 3, 5)
            expected = []
            for n in range(20):
                if n == 6:  # the first call: its events come from the replayed moves
                    first = await stub.DescribeSeat(pb.DescribeSeatRequest(match_id=mid),
                                                    metadata=md(tokens[0]))
                    assert first.events == text.describe_events(expected) != ""
                texts = [await stub.DescribeSeat(pb.DescribeSeatRequest(match_id=mid),
                                                 metadata=md(t)) for t in tokens]
                for s, t in enumerate(tokens):
                    view = await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(t))
                    assert texts[s].view == text.describe_view(view.view)
                decider = next(t for t in texts if t.moves)
                assert all(not t.moves for t in texts if t is not decider)
                move = decider.moves[n % len(decider.moves)]
                res = await stub.SubmitMove(pb.SubmitMoveRequest(
                    match_id=mid, state_version=decider.state_version, move=move.move),
                    metadata=md(tokens[decider.seat]))
                assert res.accepted
                d = local.decision()
                chosen = next(m for m in d.moves
                              if game.move_to_proto(m) == getattr(move.move, name))
                _, events = local.submit(d.seat, chosen)
                expected += [match_event(e, local.version, False) for e in events]
            later = await stub.DescribeSeat(pb.DescribeSeatRequest(match_id=mid),
                                            metadata=md(tokens[1]))
            assert later.events == text.describe_events(expected)
            since = await stub.DescribeSeat(pb.DescribeSeatRequest(match_id=mid, since_version=10),
                                            metadata=md(tokens[2]))
            assert since.events == text.describe_events(
                [e for e in expected if e.state_version > 10])
    asyncio.run(run())
