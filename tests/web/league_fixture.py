"""A league with a few bots, versions, finished and running matches and published standings,
on a referee with its web viewer (tests/web/conftest.py's ``web``), for the league page tests."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.leagues.archives import good_tar_gz
from tests.leagues.helpers import standings_doc
from tests.server.conftest import ADMIN
from tests.server.helpers import md

CRASH_LINE = "Traceback (most recent call last): ZeroDivisionError: division by zero"


@dataclass
class League:
    name: str
    tokens: dict[str, str] = field(default_factory=dict)  # bot -> bot token
    invite: str = ""
    finished: list[str] = field(default_factory=list)
    running: tuple[str, list[str]] | None = None  # match id, seat tokens
    unlisted: str = ""


async def build(web, name: str = "spring", running: bool = False) -> League:
    lg = League(name)
    async with grpc.aio.insecure_channel(web.target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        await stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
            name=name, title="Spring Batavia league", games=["batavia"],
            description="Three-seat Batavia, OpenSkill ratings, a match every few seconds.",
            registration=pb.REGISTRATION_INVITE)), metadata=md(ADMIN))
        lg.invite = (await stub.CreateInvite(pb.CreateInviteRequest(league=name, uses=5),
                                             metadata=md(ADMIN))).code
        for bot, kind, owner in (("alpha", pb.BOT_KIND_HOSTED, "Ann"),
                                 ("beta", pb.BOT_KIND_REMOTE, "Bo"),
                                 ("gamma", pb.BOT_KIND_HOSTED, "Cy")):
            lg.tokens[bot] = (await stub.RegisterBot(pb.RegisterBotRequest(
                name=bot, league=name, kind=kind, owner=owner, invite_code=lg.invite,
                description=f"{bot}: a greedy Batavia bot"))).bot_token
        for bot in ("alpha", "gamma"):
            for _ in range(2):
                v = await _upload(stub, lg.tokens[bot])
            await stub.SetBotStatus(pb.SetBotStatusRequest(
                bot=bot, version=v.version - 1, version_status=pb.VERSION_READY),
                metadata=md(ADMIN))
        await stub.SetBotStatus(pb.SetBotStatusRequest(
            bot="gamma", version=2, version_status=pb.VERSION_FAILED, message=CRASH_LINE),
            metadata=md(ADMIN))
        bots = ["alpha", "beta", "gamma"]
        for seed in (11, 12):
            resp = await stub.CreateMatch(pb.CreateMatchRequest(
                game="batavia", seats=3, seed=seed, league=name, seat_bots=bots,
                seat_names=bots, seat_bot_versions=[1, 0, 1]), metadata=md(ADMIN))
            tokens = [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]
            await web.play(resp.match_id, tokens, seed=seed)
            lg.finished.append(resp.match_id)
        resp = await stub.CreateMatch(pb.CreateMatchRequest(
            game="batavia", seats=3, seed=99, league=name, unlisted=True, seat_bots=bots),
            metadata=md(ADMIN))
        lg.unlisted = resp.match_id
        doc = standings_doc(name, bots=("alpha", "gamma", "beta"))
        for e, m in zip(doc["entries"], lg.finished * 2, strict=False):
            e["history"][-1]["match"] = m
        doc["entries"][1]["recent_incidents"][0].update(match=lg.finished[0], message=CRASH_LINE)
        await stub.PublishStandings(pb.PublishStandingsRequest(
            league=name, standings_json=json.dumps(doc)), metadata=md(ADMIN))
        if running:
            resp = await stub.CreateMatch(pb.CreateMatchRequest(
                game="batavia", seats=3, seed=987654321987, league=name, seat_bots=bots),
                metadata=md(ADMIN))
            lg.running = (resp.match_id,
                          [s.token for s in sorted(resp.seats, key=lambda s: s.seat)])
    return lg


async def _upload(stub, token: str) -> pb.BotVersion:
    data = good_tar_gz()

    def frames():
        yield pb.UploadBotChunk(header=pb.UploadBotHeader(filename="bot.tar.gz", size=len(data)))
        yield pb.UploadBotChunk(data=data)

    return await stub.UploadBot(frames(), metadata=md(token))


def build_sync(web, **kw) -> League:
    return web.call(build(web, **kw), timeout=120)


