"""The leaner move (issue 22, item 3): the decision asked of the game once per state version,
and never served for another version or another seat."""
from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc

from referee.core import registry
from referee.core.match import Match
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md, play_match


class CountingGame:
    """A game that counts ``decision`` calls and forwards everything else."""

    def __init__(self, game: Any):
        self._game = game
        self.calls: list[int] = []  # one entry per call

    def decision(self, state: Any):
        self.calls.append(1)
        return self._game.decision(state)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return (a.seat, a.kind, list(a.moves)) == (b.seat, b.kind, list(b.moves))


def test_match_asks_the_game_once_per_version_and_never_serves_an_old_one():
    game = registry.get("batavia")
    counting = CountingGame(game)
    m = Match.create(game, {}, 3, 11)
    m.game = counting  # type: ignore[assignment]
    rng = random.Random(3)
    moves = 0
    while True:
        d = m.decision()
        assert m.decision() is d  # asked again at the same version: the same answer
        # what the game says of the state now (never a decision of an earlier version)
        assert _same(d, game.decision(m.state))
        if d is None:
            break
        m.submit(d.seat, rng.choice(d.moves), m.version)  # checks against the cached one
        moves += 1
    # one question per version: the check of each move and the next decision share it
    assert len(counting.calls) == moves + 1


def test_runtime_decides_once_per_move_and_only_for_the_seat_to_act(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=21)
            rt = server.service.matches[mid]
            counting = CountingGame(rt.match.game)
            rt.match.game = counting
            # before any move: only the seat to act gets its decision, at this version
            acting = rt.decision.seat
            for s, t in enumerate(tokens):
                d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                             metadata=md(t))
                assert d.state_version == rt.match.version
                assert bool(d.legal_moves) == (s == acting), (s, acting)
            logs = await play_match(server.target, mid, tokens, seed=5)
            return counting, logs

    counting, logs = asyncio.run(run())
    moves = sum(len(log.results) for log in logs)
    assert moves > 10 and all(r.accepted for log in logs for r in log.results)
    # each accepted move: one decision for the version it made, checked and sent alike
    assert len(counting.calls) == moves


def test_cached_views_are_each_seats_own_at_the_current_version(server):
    """Views are encoded once per state version and seat (MatchRuntime.view_bytes): GetView
    answers each seat with its own view of the state as it is now, never another seat's, a
    spectator's or an older version's."""
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=4)
            rt = server.service.matches[mid]
            game = rt.game
            built: list[int | None] = []

            class CountingViews(CountingGame):
                def view_bytes(self, state, seat):
                    built.append(seat)
                    return game.view_bytes(state, seat)

            rt.game = CountingViews(game)
            rng = random.Random(8)
            for _ in range(12):
                for s, t in enumerate(tokens):
                    got = await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(t))
                    assert got.state_version == rt.match.version
                    assert got.view.batavia == game.view(rt.match.state, s), s
                # asked again at the same version: served from the encodings made above
                before = len(built)
                for t in tokens:
                    await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(t))
                assert len(built) == before
                d = rt.decision
                mv = rng.choice(list(
                    (await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                              metadata=md(tokens[d.seat]))).legal_moves))
                res = await stub.SubmitMove(pb.SubmitMoveRequest(
                    match_id=mid, state_version=rt.match.version, move=mv),
                    metadata=md(tokens[d.seat]))
                assert res.accepted
            # the spectators' view is the public one, cached apart from every seat's
            assert rt.wire.view_message(rt.view_bytes(None)).batavia == game.view(
                rt.match.state, None)

    asyncio.run(run())
