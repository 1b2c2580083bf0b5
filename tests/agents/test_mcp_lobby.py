"""`referee-bot mcp` in the referee's lobby (issues 33 and 34): an agent with no organizer finds
its own game. Driven by the `mcp` SDK's own client over stdio against a referee with a house bot:
the agent lists the lobby, challenges the house bot, plays the match to its end through the
seat tools, and the record verifies; refusals (an unknown bot, an absurd clock, a used
invitation, someone else's seek) come back as tool results with the lobby's reason; no result
carries a token (the known ones, and any long hex run: the lobby token and the seat tokens the
agent's server holds are never shown to the test either)."""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys

import grpc
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from referee_client.connection import bearer
from referee_tournament.procs import LocalReferee

from referee.v1 import referee_pb2, referee_pb2_grpc

from .standin import legal_ids
from .test_mcp import ROOT, Tools, _command, _env, _verify

pytestmark = pytest.mark.slow  # a referee with a house bot, whole matches

#: a token or secret of the referee (seat, bot, admin, lobby tokens, invitations: 32 to 64 hex
#: digits); match and seek ids are shorter
SECRET_RE = re.compile(r"[0-9a-f]{32,}")
CLOCK = "10+5"


class LobbyTools(Tools):
    async def __call__(self, tool: str, **args):
        out = await super().__call__(tool, **args)
        blob = json.dumps(out)
        assert not SECRET_RE.search(blob), f"{tool} returned a secret-like value: {blob[:300]}"
        return out


def _params(referee, *, admin: bool) -> StdioServerParameters:
    env = _env(referee)
    if not admin:
        del env["REFEREE_ADMIN_TOKEN"]
    return StdioServerParameters(command=sys.executable,
                                 args=_command(referee, "--lobby-name", "claude"),
                                 env=env, cwd=str(ROOT))


async def _play_out(tools: Tools, mid: str) -> int:
    moves = 0
    while True:
        turn = await tools("wait_for_turn", match_id=mid, timeout_s=30)
        assert turn["ok"], turn
        if turn["over"]:
            return moves
        if turn["your_turn"]:
            legal = legal_ids(turn["text"])
            done = await tools("submit_move", match_id=mid, move_id=legal[moves % len(legal)],
                               note="lobby")
            assert done["ok"] and done["accepted"], done
            moves += 1


def test_an_anonymous_agent_challenges_a_house_bot_and_plays_it_out(house_referee, tmp_path):
    referee = house_referee

    async def main():
        async with Client(_params(referee, admin=False)) as client:
            tools = LobbyTools(client, [referee.admin_token])
            empty = await tools("list_matches")
            assert empty["matches"] == [] and "list_seeks" in empty["message"]
            lobby = await tools("list_seeks")
            assert lobby["ok"] and "house-random" in [b["name"] for b in lobby["bots"]]
            house = next(b for b in lobby["bots"] if b["name"] == "house-random")
            assert house["house"] is True

            # refusals: tool results with the lobby's reason, nothing opened
            unknown = await tools("challenge", bot="no-such-bot", game="goa", preset=CLOCK)
            assert unknown["ok"] is False and unknown["reason"] == "NOT_FOUND", unknown
            absurd = await tools("challenge", bot="house-random", game="goa", preset="999+0")
            assert absurd["ok"] is False and absurd["reason"] == "MALFORMED", absurd
            forever = await tools("challenge", bot="house-random", game="goa",
                                  time_policy={"move_ms": 999_999_999})
            assert forever["ok"] is False and forever["reason"] == "BAD_TIME_POLICY", forever
            both = await tools("challenge", bot="house-random", game="goa", preset=CLOCK,
                               time_policy={"move_ms": 5000})
            assert both["reason"] == "MALFORMED"
            bad_game = await tools("open_seek", game="chess", preset=CLOCK)
            assert bad_game["ok"] is False and bad_game["reason"], bad_game
            used = await tools("join_seek", invitation="0" * 12)
            assert used["ok"] is False and used["reason"] == "BAD_INVITATION", used
            neither = await tools("join_seek")
            assert neither["reason"] == "MALFORMED"

            # a seek of its own: listed, then withdrawn
            opened = await tools("open_seek", game="santa_maria", seats=2, preset=CLOCK)
            assert opened["ok"] and opened["seek"]["state"] == "open", opened
            assert "invitation" not in opened  # a public seek: joined by its id
            sid = opened["seek"]["seek_id"]
            listed = await tools("list_seeks", game="santa_maria")
            assert sid in [k["seek_id"] for k in listed["seeks"]]
            assert [k["seek_id"] for k in listed["mine"]] == [sid]
            again = await tools("join_seek", seek_id=sid)
            assert again["ok"] is False and again["reason"] == "ALREADY_SEATED", again
            cancelled = await tools("cancel_seek", seek_id=sid)
            assert cancelled["ok"] and cancelled["seek"]["state"] == "cancelled"
            gone = await tools("cancel_seek", seek_id=sid)
            assert gone["ok"] is False and gone["reason"] == "NOT_FOUND", gone

            # the challenge: the match starts at once, its seat is the agent's
            got = await tools("challenge", bot="house-random", game="goa", preset=CLOCK)
            assert got["ok"] and got["seek"]["state"] == "filled", got
            mid = got["seek"]["match_id"]
            seated = await tools("wait_for_match", timeout_s=30)
            mine = [m for m in seated["matches"] if m["match_id"] == mid]
            assert len(mine) == 1 and mine[0]["status"] == "accepted", seated
            assert mine[0]["seek_id"] == got["seek"]["seek_id"] and mine[0]["game"] == "goa"
            assert sorted(mine[0]["seat_names"]) == ["claude", "house-random"]
            moves = await _play_out(tools, mid)
            assert moves > 3
            done = await tools("list_matches")
            assert [m["over"] for m in done["matches"]] == [True]
            return mid, mine[0]["seat"]

    mid, seat = asyncio.run(asyncio.wait_for(main(), 600))
    data = _verify(referee, mid, tmp_path)
    assert data["lobby"]["challenged"] == "house-random"
    assert {m.get("note") for m in data["moves"] if m["seat"] == seat} == {"lobby"}


def test_a_registered_agent_challenges_as_its_bot(house_referee, tmp_path):
    """With a bot token the agent is its bot in the lobby: the seat comes as an Assignment on
    its Session, accepted for it (it asked for the match), and is played with the same tools."""
    referee = house_referee

    async def main():
        async with Client(_params(referee, admin=True)) as client:
            tools = LobbyTools(client, [referee.admin_token])
            assert (await tools("register_bot", name="mcp-lobby-bot"))["ok"]
            got = await tools("challenge", bot="house-random", game="santa_maria",
                              preset=CLOCK, name="my seat")
            assert got["ok"] and got["seek"]["state"] == "filled", got
            mid = got["seek"]["match_id"]
            seated = await tools("wait_for_match", timeout_s=30)
            mine = [m for m in seated["matches"] if m["match_id"] == mid]
            assert mine and mine[0]["status"] == "accepted", seated
            assert "my seat" in mine[0]["seat_names"]
            assert await _play_out(tools, mid) > 3
            return mid, mine[0]["seat"]

    mid, seat = asyncio.run(asyncio.wait_for(main(), 600))
    data = _verify(referee, mid, tmp_path)
    assert data["lobby"]["challenged"] == "house-random"
    assert {m.get("note") for m in data["moves"] if m["seat"] == seat} == {"lobby"}


def test_an_agent_meets_a_person_through_seeks_both_ways(house_referee):
    """A person (the test, through the lobby's RPCs) joins the agent's public seek by its id and
    its private seek by its invitation: the agent's server sees each fill (GetSeek's long poll)
    and wait_for_match gives the seat, playable at once; the agent joins the person's seek by id
    and is seated at once; an invitation works once."""
    referee = house_referee

    async def main():
        async with Client(_params(referee, admin=False)) as client, \
                grpc.aio.insecure_channel(referee.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ada = bearer((await stub.EnterLobby(referee_pb2.EnterLobbyRequest(
                name="ada"))).lobby_token)
            tools = LobbyTools(client, [referee.admin_token])
            raw = Tools(client, [referee.admin_token])  # for the one result with a secret

            async def seated(mid: str, seek_id: str) -> dict:
                got = await tools("wait_for_match", timeout_s=30)
                mine = [m for m in got["matches"] if m["match_id"] == mid]
                assert len(mine) == 1 and mine[0]["status"] == "accepted", got
                assert mine[0]["seek_id"] == seek_id
                turn = await tools("get_seat", match_id=mid)
                assert turn["ok"] and turn["seat"] == mine[0]["seat"], turn
                return mine[0]

            # the agent's public seek, joined by the person: the watcher sees it fill
            opened = await tools("open_seek", game="goa", seats=2, preset=CLOCK)
            sid = opened["seek"]["seek_id"]
            joined = await stub.JoinSeek(referee_pb2.JoinSeekRequest(seek_id=sid),
                                         metadata=ada, timeout=10)
            assert joined.seek.state == referee_pb2.SEEK_FILLED
            first = await seated(joined.seek.match_id, sid)
            assert sorted(first["seat_names"]) == ["ada", "claude"]

            # a private seek: off the list, its invitation returned once, good for one seat
            private = await raw("open_seek", game="batavia", seats=3, preset=CLOCK,
                                private=True, bots_may_join=False)
            invitation = private["invitation"]
            assert len(invitation) >= 32 and invitation not in json.dumps(private["seek"])
            psid = private["seek"]["seek_id"]
            listed = await tools("list_seeks")
            assert psid not in [k["seek_id"] for k in listed["seeks"]]
            await stub.JoinSeek(referee_pb2.JoinSeekRequest(invitation=invitation),
                                metadata=ada, timeout=10)
            used = await tools("join_seek", invitation=invitation)
            assert used["ok"] is False and used["reason"] == "BAD_INVITATION", used
            waiting = await tools("list_matches")
            assert [k["state"] for k in waiting["seeks"] if k["seek_id"] == psid] == ["open"]

            # the person's seek, joined by the agent: seated at once
            theirs = await stub.OpenSeek(referee_pb2.OpenSeekRequest(
                game="santa_maria", seats=2, preset=CLOCK), metadata=ada, timeout=10)
            took = await tools("join_seek", seek_id=theirs.seek.seek_id)
            assert took["ok"] and took["seek"]["state"] == "filled", took
            await seated(took["seek"]["match_id"], theirs.seek.seek_id)
        return ada, psid

    async def after(ada, psid: str) -> grpc.StatusCode:
        """The agent's server withdrew its open seek when it stopped."""
        async with grpc.aio.insecure_channel(referee.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            try:
                await stub.GetSeek(referee_pb2.GetSeekRequest(seek_id=psid), metadata=ada,
                                   timeout=10)
            except grpc.aio.AioRpcError as err:
                return err.code()
            return grpc.StatusCode.OK

    ada, psid = asyncio.run(asyncio.wait_for(main(), 300))
    assert asyncio.run(after(ada, psid)) == grpc.StatusCode.NOT_FOUND


def test_llm_challenges_a_house_bot_and_plays_the_match(house_referee, standin, tmp_path):
    """`referee-bot llm --challenge house-random` against the stand-in chat server: one
    command, one whole match, a verified record; an unknown bot exits 1 with the reason."""
    referee = house_referee
    chat_server = standin(seed=5)
    usage_file = tmp_path / "usage.jsonl"
    base = [sys.executable, "-m", "referee_client.cli", "llm", "--base-url",
            chat_server.base_url, "--model", "stand-in", "--address", referee.address,
            "--game", "goa", "--preset", CLOCK]
    out = subprocess.run([*base, "--challenge", "house-random", "--usage-file",
                          str(usage_file)], capture_output=True, text=True, timeout=600,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    usage = json.loads(usage_file.read_text())
    assert usage["moves"] > 3 and usage["illegal"] == 0
    data = _verify(referee, usage["match_id"], tmp_path)
    assert data["lobby"]["challenged"] == "house-random"
    no = subprocess.run([*base, "--challenge", "no-such-bot"], capture_output=True, text=True,
                        timeout=120, check=False)
    assert no.returncode == 1 and "NOT_FOUND" in no.stderr, no.stderr[-2000:]


def test_llm_with_a_bot_token_challenges_as_its_bot(house_referee, standin, tmp_path):
    """`referee-bot llm --challenge` with a bot token (from the environment, never the command
    line) challenges as that bot: the match comes as an Assignment on the bot's Session, which
    ends after it. Without the token the same command plays as an anonymous lobby player
    (the test above), and its log never says it opened a session."""
    from referee_client import register_bot

    referee = house_referee
    chat_server = standin(seed=9)
    token = register_bot(referee.address, referee.admin_token, "llm-lobby-bot")
    usage_file = tmp_path / "usage.jsonl"
    out = subprocess.run(
        [sys.executable, "-m", "referee_client.cli", "llm", "--base-url", chat_server.base_url,
         "--model", "stand-in", "--address", referee.address, "--game", "santa_maria", "--preset",
         CLOCK, "--challenge", "house-random", "--usage-file", str(usage_file)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "REFEREE_BOT_TOKEN": token})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "challenge accepted, as the bot" in out.stderr, out.stderr[-2000:]
    assert "session over" in out.stderr and "finished=1" in out.stderr, out.stderr[-2000:]
    assert token not in out.stderr + out.stdout
    usage = json.loads(usage_file.read_text().splitlines()[0])
    assert usage["moves"] > 3 and usage["illegal"] == 0
    data = _verify(referee, usage["match_id"], tmp_path)
    assert data["lobby"]["challenged"] == "house-random"


@pytest.fixture(scope="module")
def short_seek_referee(tmp_path_factory):
    """A referee whose open seeks expire after 2 s (``--seek-ttl 2``)."""
    server = LocalReferee(tmp_path_factory.mktemp("agents-short-seeks") / "data",
                          extra_args=("--seek-ttl", "2", "--seek-rate", "5"))
    server.start()
    yield server
    server.stop()


def test_an_agents_seek_that_expires_is_said_to_have_expired(short_seek_referee):
    """An open seek nobody joins expires: wait_for_match comes back with it marked expired and
    a message that says so, list_seeks no longer offers it, and another agent's join_seek on
    it is refused with the lobby's reason."""
    referee = short_seek_referee

    async def main():
        async with Client(_params(referee, admin=False)) as a, \
                Client(_params(referee, admin=False)) as b:
            ada, bea = LobbyTools(a, []), LobbyTools(b, [])
            opened = await ada("open_seek", game="goa", seats=2, preset=CLOCK)
            assert opened["ok"], opened
            sid = opened["seek"]["seek_id"]
            assert sid in [k["seek_id"] for k in (await bea("list_seeks", game="goa"))["seeks"]]
            waited = await ada("wait_for_match", timeout_s=60)
            assert waited["matches"] == [], waited
            assert [(k["seek_id"], k["state"]) for k in waited["seeks"]] in (
                [(sid, "expired")], [(sid, "gone")]), waited
            assert "expired" in waited["message"], waited
            listed = await bea("list_seeks", game="goa")
            assert sid not in [k["seek_id"] for k in listed["seeks"]], listed
            late = await bea("join_seek", seek_id=sid)
            assert late["ok"] is False and late["reason"] in ("NOT_FOUND", "SEEK_CLOSED"), late

    asyncio.run(asyncio.wait_for(main(), 300))
