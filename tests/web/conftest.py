"""A referee with its web viewer (--http-port 0) on a background event loop, and helpers to
play matches on it."""
from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from referee.server.base import logs
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN, ServerHandle
from tests.server.helpers import md, play_seat

from .browser import browser, page  # noqa: F401 - fixtures for the browser tests


@pytest.fixture(scope="session", autouse=True)
def _quiet_logs():
    logs.configure("warning")


class WebHandle(ServerHandle):
    def background(self, coro):
        """Run ``coro`` on the server's loop without waiting; cancelled at close if not done."""
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        self.__dict__.setdefault("_background", []).append(fut)
        return fut

    def close(self) -> None:
        for fut in self.__dict__.get("_background", []):
            fut.cancel()

        async def settle():
            await asyncio.sleep(0.05)
        if self.__dict__.get("_background"):
            self.call(settle())
        super().close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.http_port}"

    async def create(self, game="batavia", seats=3, seed=7, names=(), options=None,
                     policy=None, reveal=0):
        async with grpc.aio.insecure_channel(self.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            req = pb.CreateMatchRequest(game=game, seats=seats, seed=seed,
                                        seat_names=list(names), options=options or {},
                                        reveal_policy=reveal)
            if policy is not None:
                req.time_policy.CopyFrom(policy)
            resp = await stub.CreateMatch(req, metadata=md(ADMIN))
        return resp.match_id, [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]

    async def play_slowly(self, match_id, tokens, delay=0.005, seed=0, notes=False, hold=None):
        """Random bots that wait ``delay`` seconds before each move (a match a person can watch);
        with ``notes``, each move carries ``note_text(seat, version)``; with ``hold`` =
        (version, threading.Event), no move is made from that version on until the event is
        set (the test looks at the live match meanwhile)."""
        async with grpc.aio.insecure_channel(self.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return await asyncio.gather(*(
                _slow_seat(stub, match_id, t, random.Random(seed * 100 + i), delay,
                           (lambda v, i=i: note_text(i, v)) if notes else None, hold)
                for i, t in enumerate(tokens)))

    async def play(self, match_id, tokens, seed=0, stop_after=None):
        async with grpc.aio.insecure_channel(self.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return await asyncio.gather(*(
                play_seat(stub, match_id, t, random.Random(seed * 100 + i),
                          stop_after=stop_after)
                for i, t in enumerate(tokens)))


@pytest.fixture
def web(tmp_path):
    h = WebHandle(tmp_path / "data", http_port=0)
    h.start()
    yield h
    h.close()


def note_text(seat: int, version: int) -> str:
    """The note the test bots put on a move: unique per seat and move, easy to look for."""
    return f"seat {seat} hums at v{version}: zq-note-{seat}-{version}"


async def _slow_seat(stub, match_id, token, rng, delay, note=None, hold=None):
    out: asyncio.Queue = asyncio.Queue()
    out.put_nowait(pb.ClientMessage(join=pb.Join(match_id=match_id)))

    async def requests():
        while (m := await out.get()) is not None:
            yield m

    call = stub.Play(requests(), metadata=md(token))
    over = None
    try:
        async for msg in call:
            which = msg.WhichOneof("msg")
            if which == "decision":
                d = msg.decision
                await asyncio.sleep(delay)
                if hold is not None and d.state_version >= hold[0]:
                    await asyncio.to_thread(hold[1].wait, 120)  # a threading.Event
                out.put_nowait(pb.ClientMessage(submit=pb.Submit(
                    state_version=d.state_version, move=rng.choice(list(d.legal_moves)),
                    note=note(d.state_version) if note else "")))
            elif which == "game_over":
                over = msg.game_over
    finally:
        out.put_nowait(None)
        call.cancel()
    return over
