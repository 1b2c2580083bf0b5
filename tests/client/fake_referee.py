"""A scripted fake referee for checking what a bot puts on the wire (issue 20): it pushes one
decision, records every Submit and answers each with ``judge(submit)`` (a MoveResult). A refused
decision is never pushed again, as with the real referee; once the bot has been quiet for
``quiet_s`` (it left the decision to the time policy) or a move is accepted, the match is over.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable

import grpc

from referee.v1 import batavia_pb2, referee_pb2, referee_pb2_grpc

PASS = referee_pb2.Move(batavia=batavia_pb2.Move(pass_bid=batavia_pb2.PassBid()))
BID = referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=3)))
BID_999 = referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999)))
RULE = "Batavia, Auction: a bid above your gold"


def legal_only(submit: referee_pb2.Submit) -> referee_pb2.MoveResult:
    if submit.move in (PASS, BID):
        return referee_pb2.MoveResult(accepted=True)
    return referee_pb2.MoveResult(accepted=False, reason=referee_pb2.ILLEGAL_MOVE, message=RULE)


def store_away(times: int) -> Callable[[referee_pb2.Submit], referee_pb2.MoveResult]:
    """A judge whose store is away for the first ``times`` submits (STORE_UNAVAILABLE, nothing
    played), then accepts a legal move."""
    seen = [0]

    def judge(submit: referee_pb2.Submit) -> referee_pb2.MoveResult:
        seen[0] += 1
        if seen[0] <= times:
            return referee_pb2.MoveResult(accepted=False, reason=referee_pb2.STORE_UNAVAILABLE,
                                          message="the store cannot commit now; send it again")
        return legal_only(submit)
    return judge


def refuse_all(submit: referee_pb2.Submit) -> referee_pb2.MoveResult:
    return referee_pb2.MoveResult(accepted=False, reason=referee_pb2.ILLEGAL_MOVE, message=RULE)


class FakeReferee(referee_pb2_grpc.RefereeServicer):
    def __init__(self, judge: Callable[[referee_pb2.Submit], referee_pb2.MoveResult],
                 settle_after: int = 10, kind: str = "batavia.auction", quiet_s: float = 1.0,
                 deadline_unix_ms: int = 0):
        self.submits: list[referee_pb2.Submit] = []
        self.deadline_unix_ms = deadline_unix_ms  # the pushed decision's move clock
        self.judge, self.settle_after, self.kind, self.quiet_s = judge, settle_after, kind, quiet_s
        self.quiet = asyncio.Event()  # set when the bot stopped answering (after a refusal)

    async def Play(self, request_iterator, context):
        first = await anext(request_iterator)
        assert first.join.match_id == "m1"
        yield referee_pb2.ServerMessage(welcome=referee_pb2.Welcome(
            match_id="m1", game="batavia", seat=0, seat_count=2))
        yield referee_pb2.ServerMessage(decision=referee_pb2.Decision(
            state_version=7, seat=0, kind=self.kind, legal_moves=[PASS, BID],
            deadline_unix_ms=self.deadline_unix_ms))
        while True:
            try:
                msg = await asyncio.wait_for(anext(request_iterator), self.quiet_s)
            except TimeoutError:  # the bot left the decision to the time policy
                self.quiet.set()
                break
            self.submits.append(msg.submit)
            result = self.judge(msg.submit)
            result.state_version, result.request_id = 7, msg.submit.request_id
            yield referee_pb2.ServerMessage(move_result=result)
            if result.accepted or len(self.submits) >= self.settle_after:
                break
        yield referee_pb2.ServerMessage(game_over=referee_pb2.GameOver(match_id="m1"))


@contextlib.asynccontextmanager
async def serving(fake: FakeReferee) -> AsyncIterator[str]:
    """Serve ``fake`` on a free loopback port; yields its address."""
    server = grpc.aio.server()
    referee_pb2_grpc.add_RefereeServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def run_bot_against(argv: list[str], fake) -> tuple[int, bytes]:
    """Run the bot command ``argv`` against ``fake`` (served here) for match "m1", its seat
    token in $REFEREE_TOKEN; its exit status and output."""
    async with serving(fake) as address:
        proc = await asyncio.create_subprocess_exec(
            *argv, "--address", address, "--match", "m1",
            env={**os.environ, "REFEREE_TOKEN": "seat-token"},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
        return proc.returncode or 0, out
