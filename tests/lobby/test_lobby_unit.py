"""The lobby's own logic without a network (play/lobby.py): a seek whose match is being created
when its time runs out is not forgotten under its players, and a late joiner is told it is full;
a match that cannot be created gives the seat back."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import grpc
import pytest

from referee.server.base.errors import RefereeError
from referee.server.play.lobby import Lobby, LobbyLimits
from referee.v1 import referee_pb2 as pb


class NoBots:
    """The bot sessions as the lobby reads them, with no bot at all."""

    def __init__(self):
        self.bots: dict[str, str] = {}
        self.blocked: set[str] = set()
        self.conns: dict[str, list] = {}

    def bot_named_by(self, h):
        return None

    def known(self, name):
        return False

    def connected(self, name):
        return False


def _lobby(create, ttl_s=600.0):
    return Lobby(NoBots(), lambda req: SimpleNamespace(seats=req.seats or 2), create,
                 LobbyLimits(ttl_s=ttl_s))


def test_a_seek_filling_as_it_expires_keeps_its_players_tokens():
    async def run():
        release = asyncio.Event()

        async def create(req, extra):
            await release.wait()
            return "m1", ["t0", "t1"]

        lobby = _lobby(create, ttl_s=0.2)
        a, b, c = (lobby.identity(lobby.enter(n, "10.0.0.1").lobby_token, "10.0.0.1")
                   for n in ("a", "b", "c"))
        opened = await lobby.open_seek(a, pb.OpenSeekRequest(game="g", seats=2, preset="blitz"))
        joining = asyncio.ensure_future(lobby.join(b, pb.JoinSeekRequest(
            invitation=opened.invitation)))
        await asyncio.sleep(0.3)  # past its expiry, its match still being created
        with pytest.raises(RefereeError) as err:
            await lobby.join(c, pb.JoinSeekRequest(seek_id=opened.seek.seek_id))
        assert err.value.reason == "SEEK_CLOSED" and "full" in err.value.message
        release.set()
        joined = await joining
        assert joined.seek.state == pb.SEEK_FILLED and joined.seek.match_id == "m1"
        mine = await lobby.get(a, pb.GetSeekRequest(seek_id=opened.seek.seek_id))
        assert len(mine.seat_tokens) == 1
    asyncio.run(run())


def test_a_match_that_cannot_be_created_gives_the_seat_back():
    async def run():
        async def create(req, extra):
            raise RefereeError(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                               "the store is away")

        lobby = _lobby(create)
        a, b = (lobby.identity(lobby.enter(n, "10.0.0.1").lobby_token, "10.0.0.1")
                for n in ("a", "b"))
        opened = await lobby.open_seek(a, pb.OpenSeekRequest(game="g", seats=2, preset="blitz"))
        with pytest.raises(RefereeError) as err:
            await lobby.join(b, pb.JoinSeekRequest(seek_id=opened.seek.seek_id))
        assert err.value.reason == "STORE_UNAVAILABLE"
        seek = (await lobby.get(a, pb.GetSeekRequest(seek_id=opened.seek.seek_id))).seek
        assert seek.state == pb.SEEK_OPEN
        assert [s.name for s in seek.seat_list] == ["a", ""]  # b's seat is free again
    asyncio.run(run())
