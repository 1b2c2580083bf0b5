"""A referee with its web viewer (--http-port 0) on a background event loop, and helpers to
play matches on it."""
from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from referee.server import logs
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN, ServerHandle
from tests.server.helpers import md, play_seat


@pytest.fixture(scope="session", autouse=True)
def _quiet_logs():
    logs.configure("warning")


class WebHandle(ServerHandle):
    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.http_port}"

    async def create(self, game="batavia", seats=3, seed=7, names=(), options=None):
        async with grpc.aio.insecure_channel(self.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            req = pb.CreateMatchRequest(game=game, seats=seats, seed=seed,
                                        seat_names=list(names), options=options or {})
            resp = await stub.CreateMatch(req, metadata=md(ADMIN))
        return resp.match_id, [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]

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
