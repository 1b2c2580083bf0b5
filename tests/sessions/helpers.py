"""Raw-stub helpers for the session tests (no SDK: the wire protocol itself)."""
from __future__ import annotations

import asyncio

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN
from tests.server.helpers import md, reason_of

__all__ = ["ADMIN", "RawSession", "create_bound", "md", "reason_of", "register"]


async def register(stub, name: str) -> str:
    resp = await stub.RegisterBot(pb.RegisterBotRequest(name=name), metadata=md(ADMIN))
    assert resp.name == name and len(resp.bot_token) == 64
    return resp.bot_token


async def create_bound(stub, bots: list[str], seed: int = 7, policy: pb.TimePolicy | None = None,
                       game: str = "batavia") -> tuple[str, list[str]]:
    req = pb.CreateMatchRequest(game=game, seats=len(bots), seed=seed, seat_bots=bots)
    if policy is not None:
        req.time_policy.CopyFrom(policy)
    resp = await stub.CreateMatch(req, metadata=md(ADMIN))
    return resp.match_id, [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]


class RawSession:
    """A Session stream driven by hand: ``recv()`` the next message, ``ack()``."""

    def __init__(self, channel: grpc.aio.Channel, token: str | None, capacity: int = 1):
        self.stub = referee_pb2_grpc.RefereeStub(channel)
        self.call = self.stub.Session(metadata=md(token) if token else ())
        self.capacity = capacity
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        # one reader for the stream's life: timing out a recv() never cancels a read (which
        # would cancel the call)
        try:
            while True:
                msg = await self.call.read()
                self.inbox.put_nowait(msg)
                if msg is grpc.aio.EOF:
                    return
        except grpc.aio.AioRpcError as err:
            self.inbox.put_nowait(err)

    async def hello(self) -> pb.SessionWelcome:
        await self.call.write(pb.SessionClientMessage(
            hello=pb.SessionHello(capacity=self.capacity, agent="test")))
        msg = await self.recv()
        assert msg.WhichOneof("msg") == "welcome", msg
        return msg.welcome

    async def recv(self, timeout: float = 10.0) -> pb.SessionServerMessage:
        msg = await asyncio.wait_for(self.inbox.get(), timeout)
        if isinstance(msg, grpc.aio.AioRpcError):
            raise msg
        assert msg is not grpc.aio.EOF, "the session ended"
        return msg

    async def assignment(self, timeout: float = 10.0) -> pb.Assignment:
        msg = await self.recv(timeout)
        assert msg.WhichOneof("msg") == "assignment", msg
        return msg.assignment

    async def ack(self, a_or_match, seat: int | None = None, accept: bool = True) -> None:
        match_id, seat = ((a_or_match.match_id, a_or_match.seat) if seat is None
                          else (a_or_match, seat))
        await self.call.write(pb.SessionClientMessage(
            ack=pb.AssignmentAck(match_id=match_id, seat=seat, accept=accept)))

    async def nothing_for(self, seconds: float) -> None:
        try:
            msg = await asyncio.wait_for(self.inbox.get(), seconds)
        except TimeoutError:
            return
        raise AssertionError(f"expected nothing, got {msg}")

    def close(self) -> None:
        self.reader.cancel()
        self.call.cancel()
