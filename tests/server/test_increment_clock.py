"""Human time policies (issue 33, item 1): a Fischer increment (``TimePolicy.increment_ms``)
added to a seat's bank after each move it makes itself, and the chess clock (move_ms 0 with a
bank: every move's whole time off the bank). The increment is in the record's time policy and
a restarted referee rebuilds the banks with it (``MatchClock.restore``)."""
from __future__ import annotations

import asyncio

import grpc

from referee.core.match import MoveEntry
from referee.server.base.clock import MatchClock, StartGate, timed
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, play_match
from .test_time_policy import record_of

BLITZ = pb.TimePolicy(bank_ms=300_000, increment_ms=3_000, on_expiry=pb.RANDOM_LEGAL)


def _entry(seat: int, elapsed: int, timeout: bool = False) -> MoveEntry:
    return MoveEntry(n=0, seat=seat, version_before=0, move={}, state_hash="",
                     elapsed_ms=elapsed, timeout=timeout)


def test_a_bank_alone_is_a_chess_clock():
    """move_ms 0 with a bank times every decision (before, the bank was ignored without a
    move limit); no bank and no limit stays untimed."""
    assert timed(BLITZ)
    assert not timed(pb.TimePolicy())
    assert StartGate(pb.TimePolicy(join_ms=5_000), 0).open  # untimed: nothing to hold
    assert not StartGate(pb.TimePolicy(bank_ms=1_000, join_ms=5_000), 0).open


def test_each_own_move_adds_the_increment_after_its_time_is_charged():
    """Fischer: 5+3, a move of 10 s leaves 300 - 10 + 3 = 293 s."""
    clock = MatchClock(BLITZ, 2, lambda v: None)
    clock.charge(0, 10_000)
    assert clock.bank_left == [293_000, 300_000]
    clock.charge(1, 1_000)
    clock.charge(1, 1_000)
    assert clock.bank_left == [293_000, 304_000]  # quick moves gain time
    clock.uncharge()  # a move the store could not keep gives back its increment too
    assert clock.bank_left == [293_000, 302_000]


def test_a_move_limit_is_free_and_only_time_past_it_is_charged():
    clock = MatchClock(pb.TimePolicy(move_ms=5_000, bank_ms=60_000, increment_ms=2_000), 1,
                       lambda v: None)
    clock.charge(0, 4_000)
    assert clock.bank_left == [62_000]
    clock.charge(0, 9_000)
    assert clock.bank_left == [60_000]  # 4 s past the limit, 2 s back


def test_no_increment_without_a_clock_or_for_a_timeout():
    untimed = MatchClock(pb.TimePolicy(increment_ms=3_000), 1, lambda v: None)
    untimed.charge(0, 10_000)
    assert untimed.bank_left == [0]
    clock = MatchClock(BLITZ, 1, lambda v: None)
    clock.strike(0)  # ran out of time: the time policy plays, the bank is empty
    assert clock.bank_left == [0]


def test_restore_rebuilds_the_banks_with_their_increments():
    """After a restart the banks come from the move log: each own move charged, then its
    increment; a time-policy move empties the bank and earns nothing."""
    moves = [_entry(0, 10_000), _entry(1, 1_000), _entry(0, 2_000), _entry(1, 0, timeout=True)]
    live = MatchClock(BLITZ, 2, lambda v: None)
    for e in moves[:3]:
        live.charge(e.seat, e.elapsed_ms)
    live.strike(1)
    restored = MatchClock(BLITZ, 2, lambda v: None)
    restored.restore(moves)
    assert restored.bank_left == live.bank_left == [294_000, 0]


def test_a_match_under_an_increment_records_it_and_grows_the_banks(server):
    """End to end: 3 seats on a 5+3 clock answer at once; every bank ends above its start and
    the record's time policy carries the increment."""
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            return await create(referee_pb2_grpc.RefereeStub(ch), seats=3, seed=5,
                                policy=BLITZ)
    mid, tokens = asyncio.run(run())
    rt = server.service.matches[mid]
    logs = asyncio.run(play_match(server.target, mid, tokens, seed=1))
    assert all(log.game_over is not None for log in logs)
    record = asyncio.run(record_of(server, mid))
    assert record["time_policy"]["increment_ms"] == 3_000
    moved = {e["seat"] for e in record["moves"] if not e.get("timeout")}
    assert moved == {0, 1, 2}
    assert all(bank > 300_000 for bank in rt.clock.bank_left), rt.clock.bank_left
    # the public clock says so too (Watch, the viewer, the play page)
    assert rt.clock.public_proto().increment_ms == 3_000
