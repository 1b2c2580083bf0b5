"""The leaner move (issue 22, item 3): the decision asked of the game once per state version
and never served for another version or another seat, views encoded once per version and seat,
and Join.combine_decision (the next Decision inside the mover's MoveResult)."""
from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
import pytest

from referee.core import registry
from referee.core.match import Match
from referee.v1 import goa_pb2, referee_pb2_grpc
from referee.v1 import referee_pb2 as pb

from .helpers import create, md, play_match
from .test_error_paths import raw_stream


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


# ---------------------------------------------------------------------- combine_decision
async def _seat_frames(ch, mid: str, token: str, rng: random.Random, *, combine: bool,
                       events: bool = False, bad_first: bool = False) -> list[bytes]:
    """A random bot on a Play stream reading raw frames (the bytes the referee sent) until its
    GameOver; with ``bad_first`` its first answer to each decision is an illegal move."""
    play = ch.stream_stream("/referee.v1.Referee/Play",
                            request_serializer=pb.ClientMessage.SerializeToString,
                            response_deserializer=None)
    out: asyncio.Queue = asyncio.Queue()
    out.put_nowait(pb.ClientMessage(join=pb.Join(match_id=mid, events=events,
                                                 combine_decision=combine)))

    async def requests():
        while (m := await out.get()) is not None:
            yield m

    def answer(d: pb.Decision) -> None:
        if bad_first:  # a move of another game: refused as WRONG_GAME, the decision stays
            out.put_nowait(pb.ClientMessage(submit=pb.Submit(
                state_version=d.state_version, move=pb.Move(goa=goa_pb2.Move()))))
        out.put_nowait(pb.ClientMessage(submit=pb.Submit(
            state_version=d.state_version, move=rng.choice(list(d.legal_moves)),
            request_id=f"r{d.state_version}")))

    frames: list[bytes] = []
    call = play(requests(), metadata=md(token))
    try:
        async for data in call:
            frames.append(data)
            msg = pb.ServerMessage.FromString(data)
            which = msg.WhichOneof("msg")
            if which == "decision":
                answer(msg.decision)
            elif which == "move_result" and msg.move_result.HasField("next"):
                answer(msg.move_result.next)
            elif which == "game_over":
                break
    finally:
        out.put_nowait(None)
        call.cancel()
    return frames


def _play_raw(server, seats: int, seed: int, **kw) -> tuple[str, list[list[bytes]]]:
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=seats, seed=seed)
            frames = await asyncio.gather(*(
                _seat_frames(ch, mid, t, random.Random(seed * 10 + i), **kw)
                for i, t in enumerate(tokens)))
            return mid, frames

    return asyncio.run(run())


def _kinds(frames: list[bytes]) -> list[str]:
    return [pb.ServerMessage.FromString(f).WhichOneof("msg") for f in frames]


def test_without_the_flag_the_stream_is_what_it_always_was(server):
    """No combine_decision: every accepted move is answered by a plain MoveResult, serialised
    as it always was, and each Decision comes as a message of its own, also when the same seat
    acts again."""
    _mid, per_seat = _play_raw(server, 3, 31, combine=False)
    again = 0
    for frames in per_seat:
        kinds = _kinds(frames)
        for k, (data, kind) in enumerate(zip(frames, kinds, strict=True)):
            if kind != "move_result":
                continue
            r = pb.ServerMessage.FromString(data).move_result
            assert not r.HasField("next")
            assert len(r.state_hash) == 64  # the receipt (issue 31 item 7)
            plain = pb.ServerMessage(move_result=pb.MoveResult(
                accepted=True, state_version=r.state_version, request_id=r.request_id,
                state_hash=r.state_hash))
            assert data == plain.SerializeToString()  # byte for byte
            if kinds[k + 1] == "decision" and pb.ServerMessage.FromString(
                    frames[k + 1]).decision.state_version == r.state_version:
                again += 1
    assert again > 5  # Batavia: the same seat often acts again


def test_combined_decision_rides_in_the_movers_move_result(server):
    """combine_decision: when the mover acts again, its MoveResult carries the next Decision
    and no separate Decision follows; when another seat acts next, the mover gets a plain
    MoveResult and the Decision goes to that seat's stream."""
    mid, per_seat = _play_raw(server, 3, 32, combine=True)
    combined = plain = 0
    versions: dict[int, int] = {}  # state version -> the seat its decision went to
    for seat, frames in enumerate(per_seat):
        for data in frames:
            msg = pb.ServerMessage.FromString(data)
            which = msg.WhichOneof("msg")
            if which == "decision":
                assert msg.decision.seat == seat
                assert msg.decision.state_version not in versions
                versions[msg.decision.state_version] = seat
            elif which == "move_result":
                r = msg.move_result
                assert r.accepted
                if r.HasField("next"):
                    combined += 1
                    nxt = r.next
                    assert (nxt.seat, nxt.state_version, nxt.match_id) == (
                        seat, r.state_version, mid)
                    assert nxt.legal_moves and nxt.view.batavia.seat == seat
                    assert r.state_version not in versions
                    versions[r.state_version] = seat
                else:
                    plain += 1
                    # another seat acts next (or the match is over): not this stream's
                    assert versions.get(r.state_version, -1) != seat
    assert all(_kinds(frames)[-1] == "game_over" for frames in per_seat)
    assert combined > 5 and plain > 5
    # every decision of the match went out exactly once: on its own or inside a MoveResult
    assert sorted(versions) == list(range(len(versions)))


def test_combined_stream_keeps_events_before_the_move_result(server):
    """With events too, the move's events come before the MoveResult (and its next Decision)
    on a combining stream, so the bot sees what its move did before it is asked again."""
    _mid, per_seat = _play_raw(server, 3, 33, combine=True, events=True)
    checked = 0
    for frames in per_seat:
        msgs = [pb.ServerMessage.FromString(f) for f in frames]
        for k, msg in enumerate(msgs):
            if msg.WhichOneof("msg") == "move_result" and msg.move_result.HasField("next"):
                v = msg.move_result.state_version
                later = [m.event for m in msgs[k + 1:] if m.WhichOneof("msg") == "event"]
                assert all(e.state_version != v for e in later)
                checked += 1
    assert checked > 5


def test_a_refused_move_gets_no_next(server):
    """A refused move (here one of another game: WRONG_GAME, issue 31 item 4) is answered by a MoveResult
    without ``next``, even on a combining stream; the decision stays pending and the legal
    answer sent after it is played."""
    _mid, per_seat = _play_raw(server, 3, 34, combine=True, bad_first=True)
    refused = 0
    for frames in per_seat:
        for data in frames:
            msg = pb.ServerMessage.FromString(data)
            if msg.WhichOneof("msg") == "move_result" and not msg.move_result.accepted:
                refused += 1
                assert not msg.move_result.HasField("next")
                assert msg.move_result.reason == pb.WRONG_GAME
    assert refused > 10


def test_play_frames_over_the_size_limit_end_the_stream(make_server, tmp_path):
    """Play checks each frame's size itself (no wrapping generator on its move path): a first
    frame or a later one over --max-message-bytes ends the stream, RESOURCE_EXHAUSTED."""
    srv = make_server(tmp_path / "small", max_message_bytes=4096)

    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=1)
            big = pb.ClientMessage(submit=pb.Submit(request_id="x" * 8000))
            for first in (big, pb.ClientMessage(join=pb.Join(match_id=mid))):
                call = stub.Play(metadata=md(tokens[0]))
                await call.write(first)
                if first is not big:
                    await call.write(big)
                with pytest.raises(grpc.aio.AioRpcError) as ei:
                    while (await call.read()) is not grpc.aio.EOF:
                        pass
                assert ei.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "a frame of" in (ei.value.details() or "")

    asyncio.run(run())


def test_an_accepted_move_costs_the_referee_no_task(server):
    """Play's move path waits for no commit (MatchRuntime.play: the store's callback answers
    the move): a whole match costs the referee's loop a few tasks per stream (its handler, its
    reader, the match's end), none per move."""
    created: list[int] = []

    async def count_tasks() -> None:
        loop = asyncio.get_running_loop()

        def factory(loop, coro, **kw):
            created.append(1)
            return asyncio.Task(coro, loop=loop, **kw)

        loop.set_task_factory(factory)

    server.call(count_tasks())

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            mid, tokens = await create(referee_pb2_grpc.RefereeStub(ch), seats=3, seed=41)
            return await play_match(server.target, mid, tokens, seed=41)

    logs = asyncio.run(run())
    moves = sum(len(log.results) for log in logs)
    assert moves > 60 and all(r.accepted for log in logs for r in log.results)
    assert all(log.game_over is not None for log in logs)
    assert len(created) < moves // 4, (len(created), moves)


def test_frames_sent_while_a_move_commits_are_answered_after_it(server):
    """A seat that does not wait (its move, then a frame that is not a message, an empty one,
    a re-Join) gets the answers in the order of its frames, though the move's commit is still
    under way when the others are read: the move's MoveResult first."""
    async def slow_store() -> None:
        store = server.service.store
        insert = store.insert_move
        loop = asyncio.get_running_loop()

        def slow_insert(*args, **kw):
            later = loop.create_future()

            def done(fut):
                if fut.exception() is not None:
                    loop.call_later(0.3, later.set_exception, fut.exception())
                else:
                    loop.call_later(0.3, later.set_result, None)

            insert(*args, **kw).add_done_callback(done)
            return later

        store.insert_move = slow_insert

    server.call(slow_store())

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=42)
            rt = server.service.matches[mid]
            seat = rt.decision.seat
            call = raw_stream(ch, "Play", pb.ServerMessage)(metadata=md(tokens[seat]))
            await call.write(pb.ClientMessage(join=pb.Join(match_id=mid)).SerializeToString())
            assert (await call.read()).WhichOneof("msg") == "welcome"
            d = (await call.read()).decision
            move = pb.ClientMessage(submit=pb.Submit(
                state_version=d.state_version, move=d.legal_moves[0], request_id="m"))
            for frame in (move.SerializeToString(), b"\xff\xff\xff",
                          pb.ClientMessage().SerializeToString(),
                          pb.ClientMessage(join=pb.Join(match_id="other")).SerializeToString()):
                await call.write(frame)
            answers = []
            while len(answers) < 4:
                msg = await call.read()
                if msg.WhichOneof("msg") == "move_result":
                    answers.append(msg.move_result)
            call.cancel()
            return answers

    first, garbage, empty, rejoin = asyncio.run(run())
    assert first.accepted and first.request_id == "m"
    assert [r.accepted for r in (garbage, empty, rejoin)] == [False, False, False]
    assert "not a" in garbage.message
    assert "empty" in empty.message
    assert "joined to" in rejoin.message
