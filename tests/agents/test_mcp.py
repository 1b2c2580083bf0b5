"""`referee-bot mcp` (issue 34 item 2) driven by the `mcp` SDK's own client, over stdio and over
streamable HTTP, through whole matches of every game: the agent registers its bot, waits for
the match that seats it, accepts it, reads its seat as text and as JSON, plays by move id and by
structured move, gets every refusal as a tool result (reason and rule), and the match ends with
a verified record. Leak checks: no tool result or resource carries a token, and what get_seat
shows is exactly the seat's own view (the referee's DescribeSeat and GetView for that seat)."""
from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from referee_client import play
from referee_client.bots import RandomBot
from referee_client.connection import bearer

from referee.v1 import referee_pb2, referee_pb2_grpc

from .records import verified_record
from .standin import legal_ids

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # eight whole matches, an MCP server started for each

GAMES = [("goa", 2, {}), ("goa", 2, {"edition": "2004"}), ("santa_maria", 2, {}),
         ("batavia", 3, {})]


def _env(referee) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "clients"),
                                         env.get("PYTHONPATH", "")])
    env["REFEREE_ADMIN_TOKEN"] = referee.admin_token
    env.pop("REFEREE_BOT_TOKEN", None)
    return env


def _command(referee, *more: str) -> list[str]:
    return ["-m", "referee_tools.bot_cli", "mcp", "--address", referee.address,
            "--log-level", "warning", *more]


@asynccontextmanager
async def mcp_client(referee, transport: str, tmp_path: Path):
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=_command(referee),
                                       env=_env(referee), cwd=str(ROOT))
        async with Client(params) as client:
            yield client
        return
    port_file = tmp_path / "mcp.port"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *_command(referee, "--transport", "http", "--port", "0", "--port-file",
                                  str(port_file)),
        env=_env(referee), cwd=ROOT, stderr=asyncio.subprocess.PIPE)
    try:
        for _ in range(300):
            if port_file.exists() or proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        assert port_file.exists(), "the MCP server did not start"
        url = f"http://127.0.0.1:{int(port_file.read_text())}/mcp"
        async with Client(url) as client:
            yield client
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)


class Tools:
    """Calls the MCP tools, checking each result is a tool result (never a transport error)
    and carries no secret."""

    def __init__(self, client, secrets: list[str]):
        self.client, self.secrets, self.results = client, secrets, []

    async def __call__(self, tool: str, **args):
        r = await self.client.call_tool(tool, args)
        out = r.structured_content
        assert isinstance(out, dict), r
        if set(out) == {"result"}:
            out = out["result"]
        blob = json.dumps(out) + "".join(getattr(c, "text", "") for c in r.content)
        for secret in self.secrets:
            assert secret not in blob, f"{tool} leaked a secret"
        self.results.append((tool, out))
        return out

    async def resource(self, uri: str) -> str:
        r = await self.client.read_resource(uri)
        text = "".join(getattr(c, "text", "") for c in r.contents)
        for secret in self.secrets:
            assert secret not in text, f"{uri} leaked a secret"
        return text


async def _stub_call(referee, method: str, request, token: str):
    async with grpc.aio.insecure_channel(referee.address) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        return await getattr(stub, method)(request, metadata=bearer(token), timeout=10)


def _verify(referee, mid: str, tmp_path) -> dict:
    """The finished match's record (complete, and `referee replay verify` says OK), parsed."""
    return json.loads(verified_record(referee, mid, tmp_path))


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(("game", "seats", "options"), GAMES,
                         ids=["goa2012", "goa2004", "santa_maria", "batavia"])
def test_an_agent_plays_a_whole_match_through_mcp(referee, transport, game, seats, options,
                                                  tmp_path):
    name = f"agent-{game}-{options.get('edition', 'x')}-{transport}"
    agent_seat = seats - 1
    rng = random.Random(seats)

    async def main():
        async with mcp_client(referee, transport, tmp_path) as client:
            tools = Tools(client, [referee.admin_token])
            # no bot yet, no match: told so in a result
            empty = await tools("list_matches")
            assert empty["ok"] and empty["matches"] == [] and "register_bot" in empty["message"]
            assert (await tools("get_seat", match_id="nope"))["reason"] == "NOT_SEATED"
            registered = await tools("register_bot", name=name)
            assert registered["ok"], registered

            created = await _stub_call(referee, "CreateMatch", referee_pb2.CreateMatchRequest(
                game=game, seats=seats, seed=9, options=options,
                seat_bots=[""] * agent_seat + [name],
                time_policy=referee_pb2.TimePolicy(move_ms=60_000)), referee.admin_token)
            mid = created.match_id
            tokens = {s.seat: s.token for s in created.seats}
            tools.secrets += list(tokens.values())

            offered = await tools("wait_for_match", timeout_s=30)
            assert [m["status"] for m in offered["matches"]] == ["offered"], offered
            assert (await tools("get_seat", match_id=mid))["reason"] == "NOT_ACCEPTED"
            accepted = await tools("accept_match", match_id=mid)
            assert accepted["ok"] and accepted["match"]["seat"] == agent_seat

            # the resources: rules summary from ListGames, the rulings
            rules = await tools.resource(f"referee://games/{game}/rules")
            assert "Seats:" in rules and "Rulebook:" in rules
            assert "#" in await tools.resource(f"referee://games/{game}/rulings")
            assert game in await tools.resource("referee://games")

            others = [asyncio.create_task(play(RandomBot(s), referee.address, mid, tokens[s]))
                      for s in tokens if s != agent_seat]
            moves = refused_checked = illegal_checked = 0
            seen_moves: list[dict] = []  # structured moves of earlier decisions
            while True:
                turn = await tools("wait_for_turn", match_id=mid, timeout_s=30)
                assert turn["ok"], turn
                if turn["over"]:
                    break
                if not turn["your_turn"]:
                    continue
                legal = legal_ids(turn["text"])
                assert legal, turn["text"]
                if moves % 7 == 0:
                    await _check_no_leak(tools, referee, mid, tokens[agent_seat])
                if not refused_checked:
                    refused_checked = await _check_refusals(tools, mid)
                if not illegal_checked or moves % 5 == 1:
                    seat = await tools("get_seat", match_id=mid, format="json")
                    now = [m["move"] for m in seat["seat_text"]["moves"]]
                    stale = next((m for m in seen_moves if m not in now), None)
                    if stale is not None and not illegal_checked:
                        # well-formed, legal earlier, not now: the referee's refusal and rule
                        no = await tools("submit_move", match_id=mid, move=stale)
                        assert no["ok"] is False and no["reason"] == "ILLEGAL_MOVE", no
                        assert no["message"] and no["legal"]
                        illegal_checked = 1
                    seen_moves += now[:3]
                if moves % 5 == 1:  # a structured move: the JSON get_seat shows
                    move = rng.choice(now)
                    done = await tools("submit_move", match_id=mid, move=move,
                                       note="structured")
                else:
                    done = await tools("submit_move", match_id=mid,
                                       move_id=rng.choice(legal), note="by id")
                assert done["ok"] and done["accepted"], done
                moves += 1
            await asyncio.wait_for(asyncio.gather(*others), 60)
            assert refused_checked and illegal_checked and moves > 3
            over = await tools("get_seat", match_id=mid)
            assert over["over"] and "OVER" in over["text"]
            return mid

    mid = asyncio.run(asyncio.wait_for(main(), 600))
    data = _verify(referee, mid, tmp_path)
    notes = {m.get("note") for m in data["moves"] if m["seat"] == agent_seat}
    assert {"by id", "structured"} <= notes


async def _check_refusals(tools: Tools, mid: str) -> int:
    """Every way of getting a move wrong is a tool result naming the reason."""
    bad_id = await tools("submit_move", match_id=mid, move_id="zzzzzz")
    assert bad_id["ok"] is False and bad_id["reason"] == "UNKNOWN_MOVE_ID" and bad_id["legal"]
    malformed = await tools("submit_move", match_id=mid, move={"no_such_game": {}})
    assert malformed["ok"] is False and malformed["reason"] == "MALFORMED"
    both = await tools("submit_move", match_id=mid)
    assert both["ok"] is False and both["reason"] == "MALFORMED"
    # a well-formed move the referee refuses: the empty move of the game
    seat = await tools("get_seat", match_id=mid, format="json")
    game = next(iter(seat["seat_text"]["moves"][0]["move"]))
    illegal = await tools("submit_move", match_id=mid, move={game: {}})
    assert illegal["ok"] is False and illegal["reason"] in ("ILLEGAL_MOVE", "MALFORMED")
    assert illegal["message"], illegal
    return 1


async def _check_no_leak(tools: Tools, referee, mid: str, token: str) -> None:
    """get_seat shows the seat's own view: the same as the referee gives that seat's token."""
    as_json = await tools("get_seat", match_id=mid, format="json")
    own = await _stub_call(referee, "GetView", referee_pb2.GetViewRequest(match_id=mid), token)
    assert as_json["view"]["view"] == json_format.MessageToDict(
        own.view, preserving_proto_field_name=True)
    text = await _stub_call(referee, "DescribeSeat",
                            referee_pb2.DescribeSeatRequest(match_id=mid), token)
    as_text = await tools("get_seat", match_id=mid)
    assert text.view.rstrip() in as_text["text"]
    assert as_json["seat_text"]["view"] == text.view


def test_one_seat_given_by_match_and_token_and_no_admin_token(referee, tmp_path):
    """`--match M` with the seat token in the environment (and a bot token): the seat is listed
    (its game and number learned from the referee), readable and playable, no token shows;
    register_bot says what it lacks."""
    async def main():
        created = await _stub_call(referee, "CreateMatch", referee_pb2.CreateMatchRequest(
            game="goa", seats=2, seed=2), referee.admin_token)
        tokens = {s.seat: s.token for s in created.seats}
        bot = await _stub_call(referee, "RegisterBot", referee_pb2.RegisterBotRequest(
            name="agent-with-token"), referee.admin_token)
        env = {**_env(referee), "REFEREE_TOKEN": tokens[1], "REFEREE_BOT_TOKEN": bot.bot_token}
        del env["REFEREE_ADMIN_TOKEN"]
        params = StdioServerParameters(
            command=sys.executable, args=_command(referee, "--match", created.match_id),
            env=env, cwd=str(ROOT))
        async with Client(params) as client:
            tools = Tools(client, [referee.admin_token, bot.bot_token, *tokens.values()])
            for _ in range(100):  # its session opens in the background
                listed = await tools("list_matches")
                if listed["bot"]:
                    break
                await asyncio.sleep(0.05)
            assert listed["bot"] == "agent-with-token"
            assert [(m["match_id"], m["seat"], m["game"], m["status"])
                    for m in listed["matches"]] == [(created.match_id, 1, "goa", "accepted")]
            seat = await tools("get_seat", match_id=created.match_id)
            assert seat["ok"] and seat["seat"] == 1
            no = await tools("register_bot", name="x")
            assert no["ok"] is False and no["reason"] == "NO_ADMIN_TOKEN"
            if not seat["your_turn"]:
                refused = await tools("submit_move", match_id=created.match_id, move_id="abc")
                assert refused["reason"] == "NOT_YOUR_TURN"
    asyncio.run(asyncio.wait_for(main(), 120))
