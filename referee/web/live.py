"""Live feeds for web viewers, fed by the same public updates as the ``Watch`` RPC.

One feed per watched match: it registers ONE spectator stream with the match runtime (exactly
what ``Watch`` does), turns what arrives into JSON once, and fans it out to every open page of
that match. Updates are coalesced (at most ``MAX_RATE`` per second per match): a viewer sees the
latest public view and every public event, and the gRPC path does the same work whether one or
a hundred browsers watch. When the last viewer of a match leaves, the feed detaches its stream
and its task ends: nothing stays behind."""
from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from referee.server.base.clock import clock_json, now_ms
from referee.server.play.streams import CLOSE, Stream
from referee.v1 import referee_pb2 as pb

from .frames import view_json
from .reader import Watchable

_UPDATE_TAG = bytes([(pb.WatchMessage.DESCRIPTOR.fields_by_name["update"].number << 3) | 2])
MAX_RATE = 10.0  # view updates per second per match, at most
CLIENT_BACKLOG = 64  # messages a slow browser may have waiting before it is told to reload


class Viewer:
    """One open page: a bounded queue of JSON-ready messages."""

    __slots__ = ("closed", "queue")

    def __init__(self) -> None:
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.closed = False

    def put(self, msg: dict[str, Any] | None) -> None:
        if self.closed:
            return
        if msg is None or self.queue.qsize() < CLIENT_BACKLOG:
            self.queue.put_nowait(msg)
        else:  # too slow: drop what waits, ask the page to reload the replay, then end
            while self.queue.qsize():
                self.queue.get_nowait()
            self.queue.put_nowait({"type": "resync"})
            self.queue.put_nowait(None)
            self.closed = True


class Feed:
    def __init__(self, hub: LiveHub, rt: Watchable):
        self.hub = hub
        self.rt = rt
        self.field = rt.game.spec.name
        self.viewers: set[Viewer] = set()
        self.stream = Stream(None)
        self.last: dict[str, Any] | None = None  # latest update, sent to a newcomer at once
        self.over: dict[str, Any] | None = None
        # the public clocks of the latest update (None once over), and, for a match another
        # referee runs, that referee's clock minus this one's as of that update (from its send
        # time, so it includes the update's delay on the way): a page allows for it as for
        # its own server's clock. 0 for a match of this referee: the same clock.
        self.clock: dict[str, Any] | None = None
        self.skew_ms = 0
        # another referee's match (RemoteMatch.remote); a MatchRuntime has no such member
        self.remote = bool(getattr(rt, "remote", False))
        rt.watch(self.stream)
        self.task = asyncio.ensure_future(self._pump())

    def add(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)
        if self.last is not None:
            viewer.put(self._clocked(self.last))
        if self.over is not None:
            viewer.put(self.over)
            viewer.put(None)

    def remove(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            self.close()

    def close(self) -> None:
        if self.hub.feeds.get(self.rt.id) is self:
            del self.hub.feeds[self.rt.id]
        self.rt.detach(self.stream)
        self.task.cancel()

    def _clocked(self, out: dict[str, Any]) -> dict[str, Any]:
        """``out`` with the clocks as they stand, and the match's referee's time now."""
        return {**out, "clock": self.clock, "now_ms": now_ms() + self.skew_ms}

    def _send(self, msg: dict[str, Any] | None) -> None:
        for v in list(self.viewers):
            v.put(msg)

    async def _pump(self) -> None:
        queue = self.stream.queue
        interval = 1.0 / MAX_RATE
        try:
            while True:
                items = [await queue.get()]
                while queue.qsize():
                    items.append(queue.get_nowait())
                events: list[dict[str, Any]] = []
                update = None
                end = False
                # Only the newest update of a burst is decoded (a view is the costly part);
                # a serialised WatchMessage starts with the tag of its one field.
                last_update = max((i for i, it in enumerate(items) if isinstance(it, bytes)
                                   and it[:1] == _UPDATE_TAG), default=-1)
                for k, item in enumerate(items):
                    if item is CLOSE:
                        end = True
                        break
                    if isinstance(item, bytes):
                        if item[:1] == _UPDATE_TAG and k != last_update:
                            continue
                        msg = pb.WatchMessage.FromString(item)
                    else:
                        msg = item
                    if not isinstance(msg, pb.WatchMessage):
                        end = True  # an error (the stream was dropped): the page reloads
                        self._send({"type": "resync"})
                        break
                    which = msg.WhichOneof("msg")
                    if which == "event":
                        e = msg.event
                        ev: dict[str, Any] = {"v": e.state_version, "seat": e.seat,
                                              "kind": e.kind, "text": e.text}
                        if e.data_json and e.data_json != "{}":
                            ev["data"] = json.loads(e.data_json)
                        events.append(ev)
                    elif which == "update":
                        update = msg.update
                        self.clock = clock_json(update.clock) \
                            if update.HasField("clock") else None
                        if self.remote and update.sent_unix_ms:
                            self.skew_ms = update.sent_unix_ms - now_ms()
                    elif which == "game_over":
                        self.over = {"type": "game_over", "summary": msg.game_over.summary,
                                     "winners": list(msg.game_over.winners)}
                if update is not None or events:
                    out: dict[str, Any] = {"type": "update", "events": events}
                    if update is not None:
                        out.update(version=update.state_version,
                                   current_seat=update.current_seat,
                                   decision_kind=update.decision_kind,
                                   view=view_json(getattr(update.view, self.field)))
                    # the clocks as they stand now (public, like a chess clock's faces), from
                    # the update: the same for a match of this referee and of another one
                    out = self._clocked(out)
                    if update is not None:
                        self.last = {**out, "events": []}
                    self._send(out)
                if self.over is not None:
                    self._send(self.over)
                if end or self.over is not None:
                    self._send(None)
                    break
                await asyncio.sleep(interval)  # coalesce: what arrives meanwhile goes in one
        except asyncio.CancelledError:
            pass
        finally:
            if self.hub.feeds.get(self.rt.id) is self:
                del self.hub.feeds[self.rt.id]
            self.rt.detach(self.stream)


class LiveHub:
    def __init__(self) -> None:
        self.feeds: dict[str, Feed] = {}

    def join(self, rt: Watchable) -> tuple[Feed, Viewer]:
        feed = self.feeds.get(rt.id)
        if feed is None or feed.task.done():
            feed = self.feeds[rt.id] = Feed(self, rt)
        viewer = Viewer()
        feed.add(viewer)
        return feed, viewer

    async def close(self) -> None:
        feeds = list(self.feeds.values())
        for f in feeds:
            f._send(None)
            f.close()
        for f in feeds:
            with contextlib.suppress(asyncio.CancelledError):
                await f.task

    @property
    def viewer_count(self) -> int:
        return sum(len(f.viewers) for f in self.feeds.values())
