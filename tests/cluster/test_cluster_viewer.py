"""The web viewer of a cluster draws the clocks of a match another worker runs, as it does for
its own (issue 22): the clocks come in the owner's Watch updates (``SpectatorUpdate.clock``,
``sent_unix_ms``). Chromium through Playwright, as in tests/web."""
from __future__ import annotations

import time

import grpc

from referee.server.base import shard
from referee.server.cluster import free_port
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from ..web.browser import browser, page, save_screenshot, wait_until  # noqa: F401 - fixtures
from .conftest import ADMIN

NAMES = ["ada", "bob", "cy"]


def test_the_page_of_another_workers_match_shows_its_clocks(make_cluster, page,  # noqa: F811
                                                             tmp_path):
    port = free_port("127.0.0.1")
    c = make_cluster("--http-port", str(port))
    # the clocks start 1 ms after creation (join_ms); nobody moves within the 10 minutes
    policy = pb.TimePolicy(move_ms=600_000, bank_ms=45_000, strikes=1, join_ms=1)

    # a blocking channel: Playwright's loop runs in this thread (no asyncio.run here)
    with grpc.insecure_channel(c.address) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        made = [stub.CreateMatch(pb.CreateMatchRequest(
            game="batavia", seats=3, seed=seed, seat_names=NAMES, time_policy=policy),
            metadata=(("authorization", f"Bearer {ADMIN}"),), timeout=30).match_id
            for seed in range(6)]  # CreateMatch is spread over the workers in turn
    # the viewer runs on the home worker w1: a match of w2 is followed through w2's Watch
    other = next(m for m in made if shard.of_match(m) == "w2")
    deadline = time.monotonic() + 60
    while True:
        try:
            page.goto(f"http://127.0.0.1:{port}/matches/{other}")
            break
        except Exception:  # noqa: BLE001 - the viewer is still starting
            assert time.monotonic() < deadline, "the web viewer did not start"
            time.sleep(0.3)
    wait_until(page, "document.querySelector('.seat-clock.running') !== null")
    clocks = page.eval_on_selector_all(".seats .seat-clock", "els => els.map(e => e.textContent)")
    assert len(clocks) == 3 and all("bank 45" in t for t in clocks), clocks
    running = page.eval_on_selector_all(".seat-clock.running", "els => els.length")
    assert running == 1 and any("left" in t for t in clocks), clocks
    assert not page.errors, page.errors
    save_screenshot(page.locator("main"), tmp_path, "viewer-other-worker-clocks.png")
