"""Watch carries the match's public clocks (``SpectatorUpdate.clock``) and the referee's send
time (``sent_unix_ms``), so that a viewer served by another worker or host than the match's
draws the same clocks as one beside it (issue 22). The clocks are public, like a chess clock's
faces; nothing hidden travels with them."""
from __future__ import annotations

import asyncio

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, play_match

POLICY = pb.TimePolicy(move_ms=60_000, bank_ms=7_000, strikes=2, join_ms=60_000)


def test_watch_updates_carry_the_public_clocks_and_their_send_time(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11, policy=POLICY)
            got: list[pb.WatchMessage] = []
            watching = asyncio.Event()

            async def watch():
                async for m in stub.Watch(pb.WatchRequest(match_id=mid)):
                    got.append(m)
                    watching.set()

            w = asyncio.ensure_future(watch())
            await asyncio.wait_for(watching.wait(), 10)  # the first update: before any join
            await play_match(server.target, mid, tokens, seed=4)
            await asyncio.wait_for(w, 20)
            return got

    got = asyncio.run(run())
    updates = [m.update for m in got if m.WhichOneof("msg") == "update"]
    # before any seat has joined the clocks are held: the limits and banks, nothing running
    first = updates[0]
    assert first.HasField("clock") and first.sent_unix_ms > 0
    c = first.clock
    assert (c.move_ms, c.bank_ms, c.strikes) == (60_000, 7_000, 2)
    assert list(c.bank_left_ms) == [7_000] * 3 and list(c.strikes_used) == [0] * 3
    assert c.seat == -1 and c.deadline_unix_ms == 0
    # once the seats joined, the update of every decision names the seat whose clock runs
    # and its deadline (the start of the clocks is an update of its own)
    live = [u for u in updates[1:] if u.current_seat >= 0]
    assert live, "no update while the match was played"
    for u in live:
        assert u.HasField("clock") and u.sent_unix_ms > 0
        assert u.clock.seat == u.current_seat and u.clock.deadline_unix_ms > 0
        assert len(u.clock.bank_left_ms) == 3
    # the final update: no clock once the match is over
    assert updates[-1].current_seat == -1 and not updates[-1].HasField("clock")
    assert got[-1].WhichOneof("msg") == "game_over"


def test_the_send_time_is_fresh_on_every_update_sent(server, monkeypatch):
    """The update is built once per state version, decision and clock start; the send time is
    not cached with it (a viewer joining later allows for the referee's clock with it)."""
    from referee.server.play import runtime
    async def make():
        async with grpc.aio.insecure_channel(server.target) as ch:
            return (await create(referee_pb2_grpc.RefereeStub(ch), seats=3, seed=12,
                                 policy=POLICY))[0]

    mid = asyncio.run(make())
    rt = server.service.matches[mid]

    async def update_at(ms: int) -> pb.SpectatorUpdate:
        monkeypatch.setattr(runtime, "now_ms", lambda: ms)
        return pb.WatchMessage.FromString(rt.spectator_update()).update

    a = server.call(update_at(1_000))
    b = server.call(update_at(2_000))
    assert (a.sent_unix_ms, b.sent_unix_ms) == (1_000, 2_000)
    assert a.clock == b.clock and a.view == b.view and a.state_version == b.state_version
    assert a.clock.move_ms == 60_000
