"""Outbound streams: what the referee has queued for one connected Play, Watch or Session stream,
bounded so a client that never reads cannot make the referee buffer a match for it, and the
streams of one match (its seats' and its watchers')."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from referee.server.base import errors
from referee.server.base.errors import RefereeError

CLOSE = None  # queued to a stream to end it

#: Messages a stream may have waiting before the referee drops it as too slow a reader (a bot
#: that never reads must not make the referee buffer a whole match for it).
MAX_BACKLOG = 4096


def put_bounded(queue: asyncio.Queue, item: Any) -> bool:
    """Queue ``item`` for a stream's writer, or, with MAX_BACKLOG messages already waiting,
    empty the queue and leave only a RESOURCE_EXHAUSTED error that ends the stream; False then
    (the caller queues nothing more)."""
    if queue.qsize() < MAX_BACKLOG:
        queue.put_nowait(item)
        return True
    end_with(queue, errors.exhausted(
        f"more than {MAX_BACKLOG} messages waiting: this stream reads too slowly; "
        "reconnect with the same token to resume"))
    return False


def end_with(queue: asyncio.Queue, error: RefereeError) -> None:
    """Drop what a stream has waiting and leave only ``error``, which ends it."""
    while queue.qsize():
        queue.get_nowait()
    queue.put_nowait(error)


async def drain(queue: asyncio.Queue) -> AsyncGenerator[Any, None]:
    """What a stream's handler sends, in order, until CLOSE; a queued RefereeError is raised
    (the handler's guard turns it into the stream's status). One wake-up per burst: what is
    already queued is taken without awaiting the queue again."""
    get, get_nowait = queue.get, queue.get_nowait
    while True:
        item = get_nowait() if queue.qsize() else await get()
        if item is CLOSE:
            return
        if item.__class__ is RefereeError:
            raise item
        yield item


class Stream:
    """One connected Play or Watch stream: an outbound queue of messages (or bytes)."""

    __slots__ = ("combine", "dropped", "events", "queue", "seat")

    def __init__(self, seat: int | None, events: bool = True, combine: bool = False):
        self.seat = seat
        self.events = events  # push MatchEvents (Play: Join.events; Watch: always)
        # Join.combine_decision: the seat's next Decision rides in the MoveResult of its move
        self.combine = combine
        self.queue: asyncio.Queue = asyncio.Queue()
        self.dropped = False

    def put(self, item: Any) -> None:
        if not self.dropped:
            self.dropped = not put_bounded(self.queue, item)


class MatchStreams:
    """The streams of one match: each seat's Play streams and the Watch streams."""

    __slots__ = ("by_seat", "listeners", "watchers")

    def __init__(self, seat_count: int):
        self.by_seat: dict[int, list[Stream]] = {s: [] for s in range(seat_count)}
        self.watchers: list[Stream] = []
        self.listeners = 0  # seats' streams that asked for events: none, and a move skips them

    def add(self, stream: Stream) -> None:
        if stream.seat is None:
            self.watchers.append(stream)
        else:
            self.by_seat[stream.seat].append(stream)
            self.listeners += stream.events

    def remove(self, stream: Stream) -> None:
        lst = self.by_seat.get(stream.seat) if stream.seat is not None else self.watchers
        if lst is not None and stream in lst:
            lst.remove(stream)
            if stream.seat is not None:
                self.listeners -= stream.events

    def to_seat(self, seat: int, item: Any) -> None:
        for st in self.by_seat[seat]:
            st.put(item)

    def to_watchers(self, *items: Any) -> None:
        for w in self.watchers:
            for item in items:
                w.put(item)

    def event_streams(self) -> list[Stream]:
        """The seats' streams that asked for events."""
        if not self.listeners:
            return []
        return [st for lst in self.by_seat.values() for st in lst if st.events]

    def to_every_seat(self, *items: Any) -> None:
        for lst in self.by_seat.values():
            for st in lst:
                for item in items:
                    st.put(item)

    def close(self) -> None:
        """End every stream (the referee shuts down)."""
        self.to_every_seat(CLOSE)
        self.to_watchers(CLOSE)
