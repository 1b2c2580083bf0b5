"""A live match's clock under its time policy (docs/ARCHITECTURE.md, *Server*, "Time policy"):
each seat's bank and strikes, its start-up allowance (``first_move_ms``, once per seat), when
the pending decision's clock started, the timer that fires when its time is up, and the start
gate that keeps a match's clocks stopped until its seats have joined (``join_ms``)."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

from referee.core.match import MoveEntry
from referee.v1 import referee_pb2 as pb

#: How long a match's first decision waits for its seats to join when its time policy says
#: ``join_ms = 0`` and ``referee serve`` was given no --join-ms (docs/organizers.md).
DEFAULT_JOIN_MS = 30_000

#: The move the time policy plays, by its OnExpiry value (FORFEIT within its strikes plays
#: RANDOM_LEGAL).
POLICY_NAMES: dict[int, str] = {pb.DEFAULT_MOVE: "DEFAULT_MOVE", pb.RANDOM_LEGAL: "RANDOM_LEGAL"}


def timed(policy: pb.TimePolicy) -> bool:
    """Whether a time policy times its decisions: a move limit, or a bank alone (a chess clock:
    move_ms 0 with bank_ms, each move's whole time off the bank)."""
    return bool(policy.move_ms or policy.bank_ms)


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch, as records and the store keep times."""
    return int(time.time() * 1000)


class MatchClock:
    """The clocks of one match's seats. The referee's loop calls ``on_expiry(version)`` when
    the decision of that state version has run out of time.

    A seat's first timed decision gets ``first_move_ms`` on top of its move time (the
    start-up allowance, ``allowance_due``); what it spends past both comes off its bank."""

    __slots__ = ("allowance_due", "bank_left", "charged", "deadline_ms", "extra_ms",
                 "issued_at", "on_expiry", "policy", "running", "seat", "strikes_used", "timer")

    def __init__(self, policy: pb.TimePolicy, seat_count: int,
                 on_expiry: Callable[[int], None]):
        self.policy = policy
        self.on_expiry = on_expiry
        self.bank_left = [policy.bank_ms] * seat_count
        self.strikes_used = [0] * seat_count
        self.allowance_due = [True] * seat_count
        self.extra_ms = 0  # the start-up allowance of the decision under way
        self.running = False  # the decision under way is being timed
        self.issued_at = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.seat = -1  # whose decision is timed (-1: none)
        self.deadline_ms = 0  # its deadline (unix ms; 0: none), as its Decision says
        self.charged = (-1, 0)  # the last charge's seat and that seat's bank before it

    def public_proto(self) -> pb.PublicClock:
        """The clock as everyone at the table may see it (a chess clock is public): the time
        policy's limits, whose decision runs and its deadline, each seat's bank left and
        strikes used. Watch sends it (``SpectatorUpdate.clock``); the web viewer draws it
        (:func:`clock_json`), whichever worker or host runs the match."""
        p = self.policy
        return pb.PublicClock(move_ms=p.move_ms, bank_ms=p.bank_ms, strikes=p.strikes,
                              seat=self.seat, deadline_unix_ms=self.deadline_ms,
                              bank_left_ms=self.bank_left, strikes_used=self.strikes_used,
                              increment_ms=p.increment_ms)

    def restore(self, moves: Iterable[MoveEntry]) -> None:
        """Bank, strikes and the allowances already used, from the recorded moves (after a
        restart): a seat with a move in the log has had its first decision, and each move it
        made itself earned its increment, as ``charge`` gave it."""
        p = self.policy
        clocked = timed(p)
        for e in moves:
            extra = p.first_move_ms if self.allowance_due[e.seat] else 0
            self.allowance_due[e.seat] = False
            if e.timeout:
                self.strikes_used[e.seat] += 1
                self.bank_left[e.seat] = 0
                continue
            if clocked and e.elapsed_ms > p.move_ms + extra:
                over = e.elapsed_ms - p.move_ms - extra
                self.bank_left[e.seat] = max(0, self.bank_left[e.seat] - over)
            if clocked:
                self.bank_left[e.seat] += p.increment_ms

    def start(self, seat: int, version: int, abandoned: bool) -> int:
        """Start the clock of ``seat``'s decision at ``version``; its deadline (unix ms), or 0
        when it has none. An abandoned seat's decision expires at once: nobody will answer.
        The seat's first timed decision carries its start-up allowance."""
        self.cancel()
        deadline = 0
        p = self.policy
        self.issued_at = time.monotonic()
        self.running = True
        self.extra_ms = p.first_move_ms if self.allowance_due[seat] else 0
        self.allowance_due[seat] = False
        self.seat = seat
        if abandoned:
            self.expire_now(version)
        elif timed(p):
            allowed = p.move_ms + self.extra_ms + self.bank_left[seat]
            deadline = now_ms() + allowed
            loop = asyncio.get_running_loop()
            self.timer = loop.call_later(
                (allowed + p.grace_ms) / 1000.0, self._expired, version
            )
        self.deadline_ms = deadline
        return deadline

    def hold(self) -> None:
        """A decision is pending but not timed (its match waits for its seats to join)."""
        self.cancel()
        self.running = False
        self.extra_ms = 0
        self.seat, self.deadline_ms = -1, 0  # not timed: the viewer shows no running clock

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
        """Milliseconds since the pending decision's clock started (0 while it is held)."""
        if not self.running:
            return 0
        return int((time.monotonic() - self.issued_at) * 1000)

    def charge(self, seat: int, elapsed: int) -> None:
        """A move answered in ``elapsed`` ms: what went past move_ms (and the seat's start-up
        allowance, on its first decision) comes off the bank; then the Fischer increment is
        added to it (a move the time policy plays earns none: ``strike`` empties the bank)."""
        p = self.policy
        bank = self.bank_left[seat]
        self.charged = (seat, bank)
        move_ms = p.move_ms
        if not (move_ms or p.bank_ms):  # untimed (``timed``, inlined: once per move)
            return
        limit = move_ms + self.extra_ms
        if elapsed > limit:
            bank = max(0, bank - (elapsed - limit))
        self.bank_left[seat] = bank + p.increment_ms

    def uncharge(self) -> None:
        """Give back the last ``charge``: its move could not be stored, so it was not played."""
        seat, bank = self.charged
        if seat >= 0:
            self.bank_left[seat] = bank
        self.charged = (-1, 0)

    def snapshot(self) -> tuple[list[int], list[int]]:
        """The seats' banks and strikes, to put back with ``rollback`` (a time-policy move or
        forfeit that the store could not commit is not played)."""
        return list(self.bank_left), list(self.strikes_used)

    def rollback(self, snap: tuple[list[int], list[int]]) -> None:
        self.bank_left, self.strikes_used = list(snap[0]), list(snap[1])

    def restart(self, version: int) -> int:
        """Time the pending decision (of ``self.seat``, at ``version``) afresh from now, with
        its start-up allowance and the seat's bank as they are: after the store was away, so
        that no seat runs out of time, or is forfeited, because its move could not be stored
        (docs/organizer/referee.md, "When the store is away"). Its new deadline (unix ms; 0:
        none)."""
        self.cancel()
        seat, p = self.seat, self.policy
        if seat < 0:
            return 0
        self.issued_at = time.monotonic()
        self.running = True
        deadline = 0
        if timed(p):
            allowed = p.move_ms + self.extra_ms + self.bank_left[seat]
            deadline = now_ms() + allowed
            self.timer = asyncio.get_running_loop().call_later(
                (allowed + p.grace_ms) / 1000.0, self._expired, version)
        self.deadline_ms = deadline
        return deadline

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


class StartGate:
    """When a match's clocks start (docs/ARCHITECTURE.md, *Server*, "Time policy"): once every
    seat has joined or been abandoned, or ``join_ms`` after the match was created, whichever
    comes first. Until then no decision is timed: the runtime holds the pending decision back.
    A match without a move limit, or with ``join_ms`` 0 once the referee's default is applied,
    starts at once. Computed from the creation time and the joined seats, both stored, so a
    resumed match opens its gate at the same moment as before the restart."""

    __slots__ = ("open", "open_at_ms", "timer")

    def __init__(self, policy: pb.TimePolicy, created_ms: int):
        self.open_at_ms = created_ms + policy.join_ms
        self.open = not timed(policy) or not policy.join_ms
        self.timer: asyncio.TimerHandle | None = None

    def check(self, seats_present: Iterable[bool]) -> bool:
        """Open the gate if every seat is there or its time has come; whether it is open."""
        if not self.open and (all(seats_present) or now_ms() >= self.open_at_ms):
            self.open = True
            self.cancel()
        return self.open

    def arm(self, on_open: Callable[[], None]) -> None:
        """Call ``on_open`` when the join time is up (once; a no-op if already armed)."""
        if self.open or self.timer is not None:
            return
        delay = max(0, self.open_at_ms - now_ms()) / 1000.0
        self.timer = asyncio.get_running_loop().call_later(delay, self._fire, on_open)

    def _fire(self, on_open: Callable[[], None]) -> None:
        self.timer = None
        self.open = True
        on_open()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def clock_json(c: pb.PublicClock) -> dict[str, object]:
    """Public clocks as the web viewer's pages draw them."""
    return {"move_ms": c.move_ms, "bank_ms": c.bank_ms, "strikes": c.strikes, "seat": c.seat,
            "deadline_ms": c.deadline_unix_ms, "bank_left_ms": list(c.bank_left_ms),
            "strikes_used": list(c.strikes_used), "increment_ms": c.increment_ms}
