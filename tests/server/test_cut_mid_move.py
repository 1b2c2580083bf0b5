"""A Play stream cut while its move is being committed (the bot's connection lost, or a proxy in
front of the referee killed) still ends that move: the next decision goes out. Found by the
cluster's kill -9 test of its proxy (tests/cluster): the stream's reader was cancelled mid-commit,
the move stayed played and stored, and the match waited for ever with no decision issued."""
from __future__ import annotations

import asyncio
import threading
import time

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .helpers import create, md


def test_a_stream_cut_during_the_commit_still_issues_the_next_decision(server):
    service = server.service
    store = service.store
    release = threading.Event()
    original = store.insert_move

    def slow_insert(*args, **kwargs):  # runs on the server's loop
        inner = original(*args, **kwargs)

        async def held():
            await asyncio.get_running_loop().run_in_executor(None, release.wait, 30)
            return await inner

        return asyncio.ensure_future(held())

    store.insert_move = slow_insert

    async def first_decision(stub, match_id: str, token: str) -> pb.Decision | None:
        call = stub.Play(metadata=md(token))
        await call.write(pb.ClientMessage(join=pb.Join(match_id=match_id)))
        try:
            while True:
                msg = await asyncio.wait_for(call.read(), 2.0)
                if msg is grpc.aio.EOF:
                    return None
                if msg.WhichOneof("msg") == "decision":
                    return msg.decision
        except TimeoutError:
            return None
        finally:
            call.cancel()

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=11)
            rt = service.matches[mid]
            seat = rt.decision.seat
            call = stub.Play(metadata=md(tokens[seat]))
            await call.write(pb.ClientMessage(join=pb.Join(match_id=mid)))
            while (msg := await call.read()).WhichOneof("msg") != "decision":
                pass
            move = msg.decision.legal_moves[0]
            await call.write(pb.ClientMessage(submit=pb.Submit(
                state_version=msg.decision.state_version, move=move)))
            deadline = time.monotonic() + 10
            while rt.match.version == 0:  # played, its commit held back
                assert time.monotonic() < deadline
                await asyncio.sleep(0.01)
            call.cancel()  # the stream goes away mid-commit
            await asyncio.sleep(0.3)
            release.set()
            got = [await first_decision(stub, mid, t) for t in tokens]
            versions = [d.state_version for d in got if d is not None]
            assert versions == [1], versions

    asyncio.run(run())
