"""Bot sessions over three hosts on one store (issue 22; docs/organizer/many-hosts.md): with the
home host w1 down, the proxy spreads the bots' sessions over the other hosts, so a match bound
to a bot may be created on one host (w2, which serves the CreateMatch itself while w1 cannot be
reached) while the bot's session is on another (w3). Every host holding sessions pulls the open
assignments of its connected bots from the store, so the assignment reaches the bot on w3,
once, and w3 lets it go when w2 has run the match to its end (even with the bot gone). In-process referees with
``--advertise`` (each its own shard, lease owner and port), on both stores."""
from __future__ import annotations

import asyncio
import shutil
import time

import grpc

from referee.server import RefereeServer, ServerConfig
from referee.server.base import shard
from referee.server.cluster import free_port
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import (  # noqa: F401 - fixtures
    ADMIN,
    ServerHandle,
    _quiet_logs,
    pg_server,
    store_url,
)

from .helpers import RawSession, create_bound, md


class Host(ServerHandle):
    """An in-process referee on a port fixed before it starts (its ``--advertise`` address)."""

    def __init__(self, data_dir, port: int, **overrides):
        super().__init__(data_dir, **overrides)
        self.fixed_port = port

    def start(self) -> int:
        cfg = ServerConfig(host="127.0.0.1", port=self.fixed_port, data_dir=str(self.data_dir),
                           admin_token=ADMIN, **self.overrides)
        self.server = RefereeServer(cfg)
        self.port = self.call(self.server.start())
        return self.port


def test_a_match_bound_on_one_host_reaches_the_bots_session_on_a_third(store_url, tmp_path):  # noqa: F811
    ports = {f"w{k}": free_port("127.0.0.1") for k in (1, 2, 3)}
    peers = {s: f"127.0.0.1:{p}" for s, p in ports.items()}  # w1's: nobody listens (down)
    hosts: dict[str, Host] = {}
    try:
        for s in ("w2", "w3"):
            # SQLite: one data directory (the store and its key); PostgreSQL: one each, with
            # the first one's bot seat key
            data = tmp_path / ("data" if not store_url else s)
            if store_url and hosts:
                data.mkdir()
                shutil.copy(tmp_path / "w2" / "bot-seats.key", data / "bot-seats.key")
                shutil.copy(tmp_path / "w2" / "record-signing.key", data / "record-signing.key")
            h = Host(data, ports[s], store_url=store_url, shard=s, advertise=peers[s],
                     peers=peers, lease_owner=f"host-{s}", lease_ttl_s=0.6)
            h.start()
            hosts[s] = h
        w2, w3 = hosts["w2"], hosts["w3"]
        policy = pb.TimePolicy(move_ms=60_000, on_expiry=pb.FORFEIT)

        async def held() -> list[tuple[str, int]]:
            return sorted(w3.service.sessions.open)

        async def go() -> None:
            async with grpc.aio.insecure_channel(w2.target) as ch2, \
                    grpc.aio.insecure_channel(w3.target) as ch3:
                stub2 = referee_pb2_grpc.RefereeStub(ch2)
                token = (await stub2.RegisterBot(pb.RegisterBotRequest(name="roamer"),
                                                 metadata=md(ADMIN))).bot_token
                session = RawSession(ch3, token)  # the proxy sent the session to w3
                await session.hello()
                # w2 cannot hand the bound CreateMatch to w1 and makes the match itself
                mid, _ = await create_bound(stub2, ["roamer", "", ""], policy=policy)
                assert shard.of_match(mid) == "w2" and mid in w2.service.matches
                got = await session.assignment(timeout=15)
                assert (got.match_id, got.seat, got.resent) == (mid, 0, True)
                await session.ack(got)
                await session.nothing_for(1.5)  # pulled every 0.5 s: never sent twice
                assert w3.call(held()) == [(mid, 0)]
                # the bot goes away (it plays on through its Play stream, which goes to w2);
                # then w2 runs the match to its end (a seat abandoned under FORFEIT ends it)
                session.close()
                r = await stub2.AbandonSeat(pb.AbandonSeatRequest(
                    match_id=mid, seat=1, reason="gone"), metadata=md(ADMIN))
                assert r.forfeited
                deadline = time.monotonic() + 15
                while w3.call(held()):  # w3's next pull lets it go, connected bot or not
                    assert time.monotonic() < deadline, "w3 still holds the ended match"
                    await asyncio.sleep(0.1)

        asyncio.run(go())
    finally:
        for h in hosts.values():
            h.close()
