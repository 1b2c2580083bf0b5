"""Async client helpers for the server tests."""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN


def md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def reason_of(err: grpc.aio.AioRpcError) -> str | None:
    for k, v in err.trailing_metadata() or ():
        if k == "referee-reason":
            return v
    return None


async def create(stub, seats=3, seed=7, options=None, policy=None, names=()):
    req = pb.CreateMatchRequest(game="batavia", seats=seats, options=options or {},
                                seat_names=list(names))
    if seed is not None:
        req.seed = seed
    if policy is not None:
        req.time_policy.CopyFrom(policy)
    resp = await stub.CreateMatch(req, metadata=md(ADMIN))
    return resp.match_id, [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]


@dataclass
class SeatLog:
    seat: int
    welcome: pb.Welcome | None = None
    decisions: int = 0
    results: list = field(default_factory=list)
    events: list = field(default_factory=list)
    game_over: pb.GameOver | None = None


async def play_seat(stub, match_id: str, token: str, rng: random.Random, *, max_moves=None,
                    stop_after=None, react=True) -> SeatLog:
    """A random bot on a Play stream: answers every Decision with a random legal move.
    Returns when the server ends the stream (GameOver) or after ``stop_after`` decisions."""
    out: asyncio.Queue = asyncio.Queue()
    out.put_nowait(pb.ClientMessage(join=pb.Join(match_id=match_id, events=True)))

    async def requests():
        while True:
            m = await out.get()
            if m is None:
                return
            yield m

    call = stub.Play(requests(), metadata=md(token))
    log = SeatLog(seat=-1)
    try:
        async for msg in call:
            which = msg.WhichOneof("msg")
            if which == "welcome":
                log.welcome = msg.welcome
                log.seat = msg.welcome.seat
            elif which == "decision":
                log.decisions += 1
                if stop_after is not None and log.decisions > stop_after:
                    break
                if react:
                    d = msg.decision
                    mv = rng.choice(list(d.legal_moves))
                    out.put_nowait(pb.ClientMessage(submit=pb.Submit(
                        state_version=d.state_version, move=mv, request_id=str(d.state_version))))
            elif which == "move_result":
                log.results.append(msg.move_result)
            elif which == "event":
                log.events.append(msg.event)
            elif which == "game_over":
                log.game_over = msg.game_over
                out.put_nowait(None)  # the client's side ends at GameOver (docs/bot/protocol.md)
    finally:
        out.put_nowait(None)
        call.cancel()
    return log


async def play_match(target: str, match_id: str, tokens: list[str], seed: int = 0):
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        return await asyncio.gather(*(
            play_seat(stub, match_id, t, random.Random(seed * 100 + i))
            for i, t in enumerate(tokens)
        ))
