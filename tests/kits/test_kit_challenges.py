"""Every kit's session mode accepts challenges from the lobby (issue 33, item 2): started with
``--accept-challenges --games santa_maria --max-challenges 1`` it is listed by ListSeeks as a
bot that takes challenges, with exactly those games and that limit (its SessionHello carried
them); a person's challenge to it (EnterLobby, then Challenge, no admin token anywhere) starts
a match at once, the kit gets it as an Assignment and plays it to the end against the person's
seat, and the record is complete with no move left to the clock. A second challenge while it
plays is refused BOT_BUSY (the limit is 1 though its capacity is 2), and a challenge for a game
it did not name is refused as not challengeable. The lobby's flags out of place are bad usage
(exit 2) in every kit."""
from __future__ import annotations

import json
import random

import grpc
import pytest
from referee_client import register_bot, run_bot
from referee_client.bots import BOTS
from referee_tournament.procs import LocalReferee

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .test_kit_sessions import SESSION_KITS, Kit
from .toolchains import KITS

BOT = "duelist"
GAME = "santa_maria"


def _reason(err: grpc.RpcError) -> str:
    """The machine-readable reason of a refusal (the ``referee-reason`` trailer)."""
    return dict(err.trailing_metadata() or ()).get("referee-reason", "")


@pytest.mark.parametrize("kit", SESSION_KITS)
def test_kit_session_accepts_a_lobby_challenge_and_plays_it_out(kit, tmp_path):
    argv = [*KITS[kit](), "--session"]
    with LocalReferee(tmp_path / "referee") as referee:
        address = referee.address
        token = register_bot(address, referee.admin_token, BOT)
        k = Kit([*argv, "--address", address, "--capacity", "2", "--max-matches", "1",
                 "--seed", "4", "--accept-challenges", "--games", GAME,
                 "--max-challenges", "1"], token, tmp_path / "kit.log")
        try:
            k.wait_for("session open")
            with grpc.insecure_channel(address) as ch:
                stub = referee_pb2_grpc.RefereeStub(ch)
                listed = stub.ListSeeks(pb.ListSeeksRequest(), timeout=30)
                assert [(b.name, list(b.games), b.max_challenges) for b in listed.bots] == [
                    (BOT, [GAME], 1)], (listed, k.text())
                me = stub.EnterLobby(pb.EnterLobbyRequest(name="ada"), timeout=30).lobby_token
                auth = (("authorization", f"Bearer {me}"),)
                with pytest.raises(grpc.RpcError) as other_game:
                    stub.Challenge(pb.ChallengeRequest(bot=BOT, game="goa", seats=2,
                                                       preset="bot"), metadata=auth, timeout=30)
                assert (other_game.value.code(), _reason(other_game.value)) == (
                    grpc.StatusCode.FAILED_PRECONDITION, "NOT_CHALLENGEABLE")
                got = stub.Challenge(pb.ChallengeRequest(bot=BOT, game=GAME, seats=2,
                                                         preset="bot"), metadata=auth,
                                     timeout=30)
                assert got.seek.state == pb.SEEK_FILLED and got.seek.challenged == BOT
                mid, mine = got.seek.match_id, got.seat_tokens[0]
                with pytest.raises(grpc.RpcError) as busy:
                    stub.Challenge(pb.ChallengeRequest(bot=BOT, game=GAME, seats=2,
                                                       preset="bot"), metadata=auth, timeout=30)
                assert (busy.value.code(), _reason(busy.value)) == (
                    grpc.StatusCode.RESOURCE_EXHAUSTED, "BOT_BUSY")
            over = run_bot(BOTS["random"](random.Random(1).randrange(1 << 30)), address, mid,
                           mine.token)
            assert over is not None
            assert k.wait(120) == 0, k.text()  # --max-matches 1: the challenge was that match
            ended = k.events("game over", match=mid)
            assert [e["seat"] for e in ended] == [1 - mine.seat], k.text()
            with grpc.insecure_channel(address) as ch:
                rec = referee_pb2_grpc.RefereeStub(ch).GetRecord(
                    pb.GetRecordRequest(match_id=mid), timeout=30)
            assert rec.complete
            record = json.loads(rec.record_json)
            assert record["result"] and not any(m.get("timeout") for m in record["moves"])
            assert record["lobby"]["challenged"] == BOT
        finally:
            k.stop()


#: flag sets every kit refuses as bad usage (exit 2, before connecting): the lobby's flags
#: with a single match (else a complete command), its limits without --accept-challenges, a
#: limit out of range
BAD_USAGE = [
    ["--match", "m1", "--token=t", "--accept-challenges"],
    ["--match", "m1", "--token=t", "--games", GAME],
    ["--session", "--games", GAME],
    ["--session", "--max-challenges", "1"],
    ["--session", "--accept-challenges", "--max-challenges", "257"],
    ["--session", "--accept-challenges", "--max-challenges", "-1"],
]


@pytest.mark.parametrize("kit", SESSION_KITS)
def test_kit_refuses_the_lobby_flags_out_of_place(kit, tmp_path):
    base = KITS[kit]()
    for i, flags in enumerate(BAD_USAGE):
        # a bot token and an address that answers nothing: only the flags can be wrong
        k = Kit([*base, *flags, "--address", "127.0.0.1:9"], "some-bot-token",
                tmp_path / f"kit{i}.log")
        try:
            assert k.wait(30) == 2, (flags, k.text())
        finally:
            k.stop()
