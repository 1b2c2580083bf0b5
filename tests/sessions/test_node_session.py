"""The Node.js session example (clients/node/session_bot.js) plays every match assigned to it
over one connection, several at once. Runs when `node` is on PATH (npm dependencies installed
if missing)."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.tournament.test_node_bot import NODE_DIR, node_bot  # noqa: F401 - the fixture

from .helpers import ADMIN, create_bound, md, register


def test_the_node_session_bot_plays_its_assignments(server, node_bot):  # noqa: F811
    async def setup():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            token = await register(stub, "node")
            # every seat bound to the bot: it plays both matches alone, 3 seats at once
            ids = [(await create_bound(stub, ["node"] * 3, seed=i))[0] for i in range(2)]
            return token, ids

    token, ids = asyncio.run(setup())
    proc = subprocess.run(
        [node_bot, str(NODE_DIR / "session_bot.js"), "--address", server.target,
         "--capacity", "3", "--max-matches", "6", "--seed", "4"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "REFEREE_BOT_TOKEN": token})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count('"game over"') == 6

    async def records():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return [await stub.GetRecord(pb.GetRecordRequest(match_id=m), metadata=md(ADMIN))
                    for m in ids]

    for rec in asyncio.run(records()):
        assert rec.complete
        data = json.loads(rec.record_json)
        assert data["result"] and not any(m.get("timeout") for m in data["moves"])


def test_the_node_session_bot_refuses_to_go_on_with_a_bad_token(server, node_bot):  # noqa: F811
    proc = subprocess.run(
        [node_bot, str(NODE_DIR / "session_bot.js"), "--address", server.target],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "REFEREE_BOT_TOKEN": "bogus"})
    assert proc.returncode == 1 and "session refused" in proc.stderr
