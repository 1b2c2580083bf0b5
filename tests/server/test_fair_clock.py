"""Fair clocks from the first move (issue 19, item 4; referee.proto, TimePolicy.join_ms and
first_move_ms): a match's clocks do not start until every seat has joined (or been abandoned),
or join_ms after its creation; each seat's first timed decision carries first_move_ms on top of
move_ms. Found under load: the first move of 3 of 3 demo matches was played by the time policy,
because the clock started when the match was created, before any bot had joined."""
from __future__ import annotations

import asyncio
import random
import time

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, play_match, play_seat
from .test_time_policy import record_of, wait_for

LONG = 600_000  # a join time nobody waits for in a test


def _create(srv, policy, seats=3):
    async def run():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            return await create(referee_pb2_grpc.RefereeStub(ch), seats=seats, seed=31,
                                policy=policy)
    return asyncio.run(run())


def test_a_seat_joining_after_more_than_move_ms_is_not_timed_out(server):
    """The issue's finding: bots that join later than move_ms after CreateMatch (a loaded
    machine starting their processes) must still play their first move themselves."""
    policy = pb.TimePolicy(move_ms=150, first_move_ms=5_000, join_ms=LONG,
                           on_expiry=pb.RANDOM_LEGAL)
    mid, tokens = _create(server, policy)
    rt = server.service.matches[mid]
    time.sleep(0.6)  # four times move_ms (and its grace) before any bot joins
    assert rt.match.moves == []  # nothing was played for the seats while nobody was there
    logs = asyncio.run(play_match(server.target, mid, tokens, seed=3))
    assert all(log.game_over is not None for log in logs)
    record = asyncio.run(record_of(server, mid))
    first = {}
    for e in record["moves"]:
        first.setdefault(e["seat"], e)
    assert sorted(first) == [0, 1, 2]
    assert [first[s].get("timeout", False) for s in range(3)] == [False] * 3
    assert record["time_policy"]["join_ms"] == LONG
    assert record["time_policy"]["first_move_ms"] == 5_000


def test_the_first_decision_is_held_until_the_last_seat_joins(server):
    """Until every seat is there, the seat to move is not sent its decision (so it is never
    told a deadline that does not hold); once the last one joins its clock starts, and the
    deadline it is sent counts from then, with its start-up allowance."""
    policy = pb.TimePolicy(move_ms=200, first_move_ms=4_000, join_ms=LONG,
                           on_expiry=pb.RANDOM_LEGAL)
    mid, tokens = _create(server, policy)
    rt = server.service.matches[mid]
    acting = rt.decision.seat
    others = [s for s in range(3) if s != acting]

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            early = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                             metadata=md(tokens[acting]))
            assert not early.legal_moves and early.deadline_unix_ms == 0  # not yet its turn
            await asyncio.sleep(0.5)
            assert rt.match.moves == [] and rt.held
            await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[others[0]]))
            assert rt.held  # one seat still missing
            before = int(time.time() * 1000)
            await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[others[1]]))
            assert not rt.held
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                         metadata=md(tokens[acting]))
            assert d.legal_moves and d.state_version == 0
            # the clock started after the last join: move_ms + first_move_ms from then on
            assert d.deadline_unix_ms >= before + 200 + 4_000
            await asyncio.sleep(0.5)  # past move_ms: the allowance keeps the move its own
            r = await stub.SubmitMove(pb.SubmitMoveRequest(
                match_id=mid, state_version=0, move=d.legal_moves[0]),
                metadata=md(tokens[acting]))
            assert r.accepted

    asyncio.run(run())
    assert rt.match.moves[0].timeout is False


def test_the_allowance_is_for_the_first_decision_only(server):
    """A seat that answers its first decision after move_ms but within first_move_ms keeps its
    move; the same delay on its next decision is a timeout."""
    policy = pb.TimePolicy(move_ms=100, first_move_ms=5_000, join_ms=LONG,
                           on_expiry=pb.RANDOM_LEGAL)
    mid, tokens = _create(server, policy)
    rt = server.service.matches[mid]

    async def slow_seat(stub, token, slow):
        out: asyncio.Queue = asyncio.Queue()
        out.put_nowait(pb.ClientMessage(join=pb.Join(match_id=mid)))

        async def requests():
            while (m := await out.get()) is not None:
                yield m

        call = stub.Play(requests(), metadata=md(token))
        answered = 0
        try:
            async for msg in call:
                if msg.WhichOneof("msg") == "decision":
                    d = msg.decision
                    if slow and answered < 2:
                        await asyncio.sleep(0.6)  # 6 × move_ms, well inside the allowance
                    answered += 1
                    out.put_nowait(pb.ClientMessage(submit=pb.Submit(
                        state_version=d.state_version, move=d.legal_moves[0])))
        finally:
            out.put_nowait(None)
            call.cancel()

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            slow = rt.decision.seat
            tasks = [asyncio.ensure_future(slow_seat(stub, tokens[s], s == slow))
                     for s in range(3)]
            for _ in range(1000):  # up to 20 s
                if sum(e.seat == slow for e in rt.match.moves) >= 2:
                    break
                await asyncio.sleep(0.02)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return slow

    slow = asyncio.run(run())
    mine = [e for e in rt.match.moves if e.seat == slow]
    assert mine[0].timeout is False and mine[0].elapsed_ms >= 600
    assert mine[1].timeout is True


def test_join_ms_starts_the_clock_without_the_missing_seats(server):
    policy = pb.TimePolicy(move_ms=50, join_ms=300, on_expiry=pb.RANDOM_LEGAL)
    mid, _tokens = _create(server, policy)
    rt = server.service.matches[mid]
    wait_for(lambda: len(rt.match.moves) >= 2)  # nobody came: the time policy plays
    assert all(e.timeout for e in rt.match.moves)


def test_abandoning_the_missing_seats_starts_the_clock(server):
    policy = pb.TimePolicy(move_ms=LONG, join_ms=LONG, on_expiry=pb.RANDOM_LEGAL)
    mid, tokens = _create(server, policy)
    rt = server.service.matches[mid]
    acting = rt.decision.seat

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(tokens[acting]))
            for s in range(3):
                if s != acting:
                    assert rt.held
                    await stub.AbandonSeat(pb.AbandonSeatRequest(
                        match_id=mid, seat=s, reason="never came"), metadata=md(ADMIN))
            assert not rt.held
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                         metadata=md(tokens[acting]))
            assert d.legal_moves and d.deadline_unix_ms > 0

    asyncio.run(run())


def test_the_referee_default_join_time_is_recorded(make_server):
    srv = make_server(join_ms=1234)
    mid, _ = _create(srv, pb.TimePolicy(move_ms=LONG))
    rt = srv.service.matches[mid]
    assert rt.policy.join_ms == 1234
    assert rt.record()["time_policy"]["join_ms"] == 1234
    assert rt.record()["time_policy"]["first_move_ms"] == 0


def test_a_resumed_match_still_waits_for_its_seats(make_server, tmp_path):
    """The gate is computed from what is stored (the creation time, the joined seats), so a
    referee restarted before the bots came holds the first decision again, and opens it as
    the seats come back."""
    data = tmp_path / "data"
    srv = make_server(data)
    policy = pb.TimePolicy(move_ms=100, first_move_ms=5_000, join_ms=LONG,
                           on_expiry=pb.RANDOM_LEGAL)
    mid, tokens = _create(srv, policy)

    async def join(seat):
        async with grpc.aio.insecure_channel(srv.target) as ch:
            await referee_pb2_grpc.RefereeStub(ch).GetView(
                pb.GetViewRequest(match_id=mid), metadata=md(tokens[seat]))

    asyncio.run(join(0))
    wait_for(lambda: srv.service.store.load_matches()[0].joined == [0])
    srv.stop()
    srv.start()
    rt = srv.service.matches[mid]
    assert rt.held and rt.joined == [True, False, False]
    time.sleep(0.4)
    assert rt.match.moves == []
    logs = asyncio.run(play_match(srv.target, mid, tokens, seed=5))
    assert all(log.game_over is not None for log in logs)
    record = asyncio.run(record_of(srv, mid))
    assert record["moves"][0].get("timeout", False) is False


def test_a_policy_without_a_move_limit_never_holds(server):
    mid, tokens = _create(server, pb.TimePolicy(join_ms=LONG))
    rt = server.service.matches[mid]
    assert not rt.held

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return await asyncio.wait_for(play_seat(
                stub, mid, tokens[rt.decision.seat], random.Random(1), stop_after=0), 10)

    assert asyncio.run(run()).decisions == 1


def test_referee_serve_refuses_a_join_time_that_is_no_number_of_milliseconds(capsys):
    from referee.cli import main as cli_main

    for bad in ("-1", "soon", str(2**32)):
        try:
            cli_main(["serve", "--join-ms", bad])
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(f"--join-ms {bad} was taken")
        assert "--join-ms" in capsys.readouterr().err
