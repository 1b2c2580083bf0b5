"""The live feed's clocks come from the Watch updates (``SpectatorUpdate.clock``), with the
match's referee's time (``sent_unix_ms``): a page served by another worker or host than the
match's counts down against the owner's clock, allowing for the difference between the two
as it does for its own server's (issue 22)."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

from referee.core import registry
from referee.v1 import referee_pb2 as pb
from referee.web import live

CLOCK = pb.PublicClock(move_ms=20_000, bank_ms=5_000, strikes=1, seat=1,
                       deadline_unix_ms=90_000, bank_left_ms=[5_000, 4_000],
                       strikes_used=[0, 1])


class Remote:
    """Another referee's match as the feed sees it: whatever its Watch sends."""

    remote = True

    def __init__(self) -> None:
        self.id = "w2-abc"
        self.game = registry.get("goa")
        self.stream = None

    def watch(self, stream) -> None:
        self.stream = stream

    def detach(self, stream) -> None:
        self.stream = None


def _update(sent: int, clock: pb.PublicClock | None) -> bytes:
    u = pb.SpectatorUpdate(state_version=3, current_seat=1, decision_kind="x",
                           sent_unix_ms=sent)
    if clock is not None:
        u.clock.CopyFrom(clock)
    return pb.WatchMessage(update=u).SerializeToString()


def test_a_remote_update_brings_its_clocks_and_the_owners_time(monkeypatch):
    now = SimpleNamespace(ms=10_000)
    monkeypatch.setattr(live, "now_ms", lambda: now.ms)

    async def run():
        hub = live.LiveHub()
        rt = Remote()
        feed, viewer = hub.join(rt)
        # the owner's clock is 2 s ahead of this one's
        rt.stream.put(_update(12_000, CLOCK))
        first = await asyncio.wait_for(viewer.queue.get(), 5)
        # a page opened 3 s later gets the same clocks, and the owner's time as it is then
        now.ms = 13_000
        feed2, late = hub.join(rt)
        again = late.queue.get_nowait()
        # the match ends: the last update has no clocks
        rt.stream.put(_update(16_000, None))
        rt.stream.put(pb.WatchMessage(game_over=pb.GameOver(summary="over"))
                      .SerializeToString())
        msgs = []
        while (m := await asyncio.wait_for(viewer.queue.get(), 5)) is not None:
            msgs.append(m)
        await hub.close()
        return feed is feed2, first, again, msgs

    same, first, again, msgs = asyncio.run(run())
    assert same
    want = {"move_ms": 20_000, "bank_ms": 5_000, "strikes": 1, "seat": 1,
            "deadline_ms": 90_000, "bank_left_ms": [5_000, 4_000], "strikes_used": [0, 1],
            "increment_ms": 0}
    assert first["type"] == "update" and first["clock"] == want
    assert first["now_ms"] == 12_000
    assert again["clock"] == want and again["now_ms"] == 15_000
    assert msgs[0]["type"] == "update" and msgs[0]["clock"] is None
    assert msgs[-1]["type"] == "game_over"
