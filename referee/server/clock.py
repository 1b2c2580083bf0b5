"""A live match's clock under its time policy (docs/ARCHITECTURE.md, *Server*, "Time policy"):
each seat's bank and strikes, when the pending decision was issued, and the timer that fires
when its time is up."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

from referee.core.match import MoveEntry
from referee.v1 import referee_pb2 as pb

#: The move the time policy plays, by its OnExpiry value (FORFEIT within its strikes plays
#: RANDOM_LEGAL).
POLICY_NAMES: dict[int, str] = {pb.DEFAULT_MOVE: "DEFAULT_MOVE", pb.RANDOM_LEGAL: "RANDOM_LEGAL"}


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch, as records and the store keep times."""
    return int(time.time() * 1000)


class MatchClock:
    """The clocks of one match's seats. The referee's loop calls ``on_expiry(version)`` when
    the decision of that state version has run out of time."""

    __slots__ = ("bank_left", "deadline_ms", "issued_at", "on_expiry", "policy", "seat",
                 "strikes_used", "timer")

    def __init__(self, policy: pb.TimePolicy, seat_count: int,
                 on_expiry: Callable[[int], None]):
        self.policy = policy
        self.on_expiry = on_expiry
        self.bank_left = [policy.bank_ms] * seat_count
        self.strikes_used = [0] * seat_count
        self.issued_at = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.seat = -1  # whose decision is timed (-1: none)
        self.deadline_ms = 0  # its deadline (unix ms; 0: none), as its Decision says

    def public_json(self) -> dict[str, object]:
        """The clock as everyone at the table may see it (a chess clock is public): the time
        policy's limits, whose decision runs and its deadline, each seat's bank left and
        strikes used. For the web viewer's clocks."""
        p = self.policy
        return {"move_ms": p.move_ms, "bank_ms": p.bank_ms, "strikes": p.strikes,
                "seat": self.seat, "deadline_ms": self.deadline_ms,
                "bank_left_ms": list(self.bank_left), "strikes_used": list(self.strikes_used)}

    def restore(self, moves: Iterable[MoveEntry]) -> None:
        """Bank and strikes from the recorded moves (after a restart)."""
        p = self.policy
        for e in moves:
            if e.timeout:
                self.strikes_used[e.seat] += 1
                self.bank_left[e.seat] = 0
            elif p.move_ms and e.elapsed_ms > p.move_ms:
                self.bank_left[e.seat] = max(0, self.bank_left[e.seat] - (e.elapsed_ms - p.move_ms))

    def start(self, seat: int, version: int, abandoned: bool) -> int:
        """Start the clock of ``seat``'s decision at ``version``; its deadline (unix ms), or 0
        when it has none. An abandoned seat's decision expires at once: nobody will answer."""
        self.cancel()
        deadline = 0
        p = self.policy
        self.issued_at = time.monotonic()
        self.seat = seat
        if abandoned:
            self.expire_now(version)
        elif p.move_ms:
            allowed = p.move_ms + self.bank_left[seat]
            deadline = now_ms() + allowed
            loop = asyncio.get_running_loop()
            self.timer = loop.call_later(
                (allowed + p.grace_ms) / 1000.0, self._expired, version
            )
        self.deadline_ms = deadline
        return deadline

    def expire_now(self, version: int) -> None:
        self.cancel()
        self.timer = asyncio.get_running_loop().call_later(0, self._expired, version)

    def _expired(self, version: int) -> None:
        self.timer = None
        self.on_expiry(version)

    def stop(self) -> None:
        """No decision is timed any more (the match is over)."""
        self.cancel()
        self.seat, self.deadline_ms = -1, 0

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def elapsed_ms(self) -> int:
        """Milliseconds since the pending decision was issued."""
        return int((time.monotonic() - self.issued_at) * 1000)

    def charge(self, seat: int, elapsed: int) -> None:
        """A move answered in ``elapsed`` ms: what went past move_ms comes off the bank."""
        p = self.policy
        if p.move_ms and elapsed > p.move_ms:
            self.bank_left[seat] = max(0, self.bank_left[seat] - (elapsed - p.move_ms))

    def strike(self, seat: int) -> bool:
        """``seat`` ran out of time: a strike, and its bank is gone. True if it forfeits."""
        p = self.policy
        self.strikes_used[seat] += 1
        self.bank_left[seat] = 0
        return (self.on_expiry_value() == pb.FORFEIT or p.strikes > 0) and (
            self.strikes_used[seat] > p.strikes
        )

    def on_expiry_value(self) -> int:
        return self.policy.on_expiry or pb.RANDOM_LEGAL

    def expiry_policy(self) -> str:
        """The name of the move the time policy plays for a seat out of time."""
        return POLICY_NAMES.get(self.on_expiry_value(), "RANDOM_LEGAL")
