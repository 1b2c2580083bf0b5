"""The Python SDK's persistent session (referee_client.session): one connection plays every
assigned match, several at once, and carries on across a referee restart."""
from __future__ import annotations

import asyncio
import json
import threading

import grpc
import pytest
from referee_client import Backoff, BotError, session
from referee_client.bots.random_bot import RandomBot

from referee.server import RefereeServer, ServerConfig
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ServerHandle

from .helpers import ADMIN, create_bound, md, register


async def _records(target: str, ids: list[str]) -> list[dict]:
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        out = []
        for mid in ids:
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid), metadata=md(ADMIN))
            assert rec.complete
            out.append(json.loads(rec.record_json))
        return out


def test_sessions_play_every_assigned_match_several_at_once(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ta = await register(stub, "alice")
            tb = await register(stub, "bob")
            ids = [(await create_bound(stub, ["alice", "bob", "alice"], seed=i))[0]
                   for i in range(3)]
        seen: list[tuple[str, int]] = []
        peak = {"alice": 0}

        def factory(a):
            seen.append((a.match_id, a.seat))
            return RandomBot(a.seat)

        def over(a, game_over):
            assert game_over.match_id == a.match_id

        alice = session(factory, server.target, ta, capacity=4, max_matches=6,
                        on_game_over=over)
        bob = session(factory, server.target, tb, capacity=1, max_matches=3)

        async def watch_peak():
            while True:
                conns = server.service.sessions.conns.get("alice", [])
                peak["alice"] = max([peak["alice"], *(len(c.active) for c in conns)])
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch_peak())
        sa, sb = await asyncio.wait_for(asyncio.gather(alice, bob), 120)
        watcher.cancel()
        assert (sa.finished, sa.failed, sb.finished, sb.failed) == (6, 0, 3, 0)
        assert sorted(seen) == sorted([(m, s) for m in ids for s in (0, 1, 2)])
        assert peak["alice"] > 1  # several matches at once on one session
        for rec in await _records(server.target, ids):
            assert rec["result"] and not any(m.get("timeout") for m in rec["moves"])

    asyncio.run(go())


def test_a_refused_bot_token_is_a_clear_error(server):
    async def go():
        with pytest.raises(BotError) as ei:
            await asyncio.wait_for(session(lambda a: RandomBot(0), server.target, "bogus",
                                           max_matches=1), 30)
        assert "UNAUTHENTICATED" in str(ei.value)

    asyncio.run(go())


class _FixedPortServer(ServerHandle):
    def __init__(self, data_dir, port):
        super().__init__(data_dir)
        self.port = port

    def start(self) -> int:
        cfg = ServerConfig(host="127.0.0.1", port=self.port, data_dir=str(self.data_dir),
                           admin_token=ADMIN)
        self.server = RefereeServer(cfg)
        self.port = self.call(self.server.start())
        return self.port


class _SlowRandom(RandomBot):
    async def choose(self, decision):
        await asyncio.sleep(0.01)
        return super().choose(decision)


def test_a_session_survives_a_referee_restart(server, tmp_path):
    """The bot keeps its session and its matches: the referee comes back on the same address
    with the same store, the SDK reconnects, the open assignments are sent again and every
    match ends with no move lost or played by the time policy."""
    async def setup():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            token = await register(stub, "alice")
            ids = [(await create_bound(stub, ["alice"] * 3, seed=i))[0] for i in range(2)]
            return token, ids

    token, ids = asyncio.run(setup())
    port, data = server.port, server.data_dir
    result: dict = {}

    def bot_thread():
        try:
            result["stats"] = asyncio.run(session(
                lambda a: _SlowRandom(a.seat), f"127.0.0.1:{port}", token, capacity=6,
                max_matches=6, backoff=Backoff(initial=0.05, maximum=0.5, give_up_after=60)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            result["error"] = exc

    t = threading.Thread(target=bot_thread, daemon=True)
    t.start()
    rt = server.service.matches[ids[0]]
    for _ in range(400):
        if rt.match.version > 10:
            break
        threading.Event().wait(0.02)
    assert rt.match.version > 10 and rt.game_over is None
    server.stop()
    again = _FixedPortServer(data, port)
    try:
        again.start()
        t.join(120)
        assert not t.is_alive()
        assert "error" not in result, result.get("error")
        stats = result["stats"]
        assert stats.finished == 6 and stats.reconnects >= 1
        for rec in asyncio.run(_records(again.target, ids)):
            assert rec["result"] and not any(m.get("timeout") for m in rec["moves"])
    finally:
        again.close()
