"""The chat-model bot (issue 34 item 3) against the stand-in chat server: it plays whole matches
through DescribeSeat's text, asks again after an answer that names no legal move or cannot be
read, keeps within the move clock (a late or silent server costs the decision, which the
referee's time policy plays: a timeout in the record), notes each move's cost and reason, and
counts the tokens of the match."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from referee_client import AdminClient, play, register_bot
from referee_client.bots import RandomBot
from referee_client.llm import (
    ChatClient,
    ChatModelBot,
    load_template,
    parse_answer,
    parse_usage_line,
    usage_line,
)
from referee_client.unary import time_policy_proto

from .records import verified_record

IDS = {"abc234", "xyz789", "qqq222"}


def test_answers_are_parsed_tolerantly_and_only_legal_ids_count():
    assert parse_answer("MOVE: abc234\nREASON: cheap", IDS) == ("abc234", "cheap")
    assert parse_answer("**Move:** `XYZ789` because it wins", IDS)[0] == "xyz789"
    assert parse_answer("qqq222", IDS)[0] == "qqq222"
    assert parse_answer("I would play abc234, it is best.", IDS)[0] == "abc234"
    assert parse_answer("MOVE: zzzzzz", IDS)[0] is None  # not legal
    assert parse_answer("abc234 or xyz789?", IDS)[0] is None  # two: not a choice
    assert parse_answer("", IDS)[0] is None
    assert parse_usage_line(usage_line(120, 2, 1, 1) + "\nreason") == (120, 2, 1, 1)
    assert parse_usage_line("a note of another bot") is None


def test_a_prompt_template_with_unknown_fields_is_refused(tmp_path):
    bad = tmp_path / "p.txt"
    bad.write_text("$view $nonsense")
    try:
        load_template(bad)
    except ValueError as exc:
        assert "nonsense" in str(exc)
    else:
        raise AssertionError("an unknown field was taken")
    good = tmp_path / "q.txt"
    good.write_text("$view\n$moves\n$feedback")
    assert load_template(good).get_identifiers() == ["view", "moves", "feedback"]


def test_a_whole_match_with_wrong_malformed_late_and_silent_answers(referee, standin, tmp_path):
    chat_server = standin(script=["wrong", "correct", "malformed", "correct", "late", "silent"],
                          late_s=4.0, seed=5)
    with AdminClient(referee.address, referee.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=7, time_policy=time_policy_proto(
            {"move_ms": 1500, "on_expiry": "random_legal"}))
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
    chat = ChatClient(chat_server.base_url, "stand-in", "sk-test-key-123")
    bot = ChatModelBot(chat, referee.address, tokens[0])

    async def main():
        try:
            return await asyncio.gather(
                play(bot, referee.address, created.match_id, tokens[0]),
                *(play(RandomBot(i), referee.address, created.match_id, tokens[i])
                  for i in (1, 2)))
        finally:
            await bot.close()

    outcomes = asyncio.run(asyncio.wait_for(main(), 300))
    over, stats = outcomes[0]
    assert over.match_id == created.match_id and over.seats
    u = bot.usage
    assert chat_server.served[:6] == ["wrong", "correct", "malformed", "correct", "late",
                                      "silent"]
    assert u.illegal == 1 and u.failed_asks == 3  # malformed, late, silent
    assert u.reasks == 2  # after the wrong one, after the malformed one
    assert u.left_to_time_policy == 2 == stats.gave_up  # late, then silent
    assert stats.refused == 0  # every id it sent was legal
    assert u.tokens > 0 and u.moves == u.decisions - 2
    # the wrong answer was told to the model when asked again
    assert "DID NOT NAME ONE OF THE LEGAL MOVE IDS" in chat_server.requests[1]["messages"][-1][
        "content"]
    assert all(k == "Bearer sk-test-key-123" for k in chat_server.keys)

    record_json = verified_record(referee, created.match_id, tmp_path)
    assert "sk-test-key" not in record_json
    record = json.loads(record_json)
    mine = [m for m in record["moves"] if m["seat"] == 0]
    assert sum(1 for m in mine if m.get("timeout")) == 2
    noted = [parse_usage_line(m.get("note", "")) for m in mine if not m.get("timeout")]
    assert all(n is not None for n in noted), "every move of the model carries its cost"
    assert sum(n[0] for n in noted) == u.tokens  # type: ignore[index]
    assert sum(n[1] for n in noted) == u.asks  # type: ignore[index]
    assert sum(n[2] for n in noted) == u.reasks  # type: ignore[index]
    assert sum(n[3] for n in noted) == u.illegal  # type: ignore[index]
    assert all(len(m["note"].encode()) <= 512 for m in mine if m.get("note"))


def test_the_command_takes_its_key_from_a_file_and_writes_the_usage(referee, standin, tmp_path):
    chat_server = standin(seed=3)
    with AdminClient(referee.address, referee.admin_token) as admin:
        created = admin.create_match("goa", 2, seed=4, time_policy=time_policy_proto(
            {"move_ms": 5000}))
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
    key_file = tmp_path / "key"
    key_file.write_text("sk-file-key\n")
    (tmp_path / "token").write_text(tokens[0])
    usage_file = tmp_path / "usage.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee_client.cli", "llm", "--base-url", chat_server.base_url,
         "--model", "m", "--api-key-file", str(key_file), "--match", created.match_id,
         "--token-file", str(tmp_path / "token"), "--address", referee.address,
         "--usage-file", str(usage_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    async def other():
        return await play(RandomBot(1), referee.address, created.match_id, tokens[1])

    asyncio.run(asyncio.wait_for(other(), 300))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    usage = json.loads(usage_file.read_text())
    assert usage["match_id"] == created.match_id and usage["tokens"] > 0
    assert usage["illegal"] == 0 and usage["left_to_time_policy"] == 0
    assert set(chat_server.keys) == {"Bearer sk-file-key"}


def test_without_a_match_it_plays_its_bots_assignments(referee, standin, tmp_path):
    """A league's remote chat-model bot: a Session with the bot token, one match assigned."""
    import grpc

    from referee.v1 import referee_pb2, referee_pb2_grpc

    chat_server = standin(seed=8)
    bot_token = register_bot(referee.address, referee.admin_token, "chat-model-remote")
    with grpc.insecure_channel(referee.address) as ch:
        created = referee_pb2_grpc.RefereeStub(ch).CreateMatch(referee_pb2.CreateMatchRequest(
            game="santa_maria", seats=2, seed=6, seat_bots=["chat-model-remote", ""],
            time_policy=referee_pb2.TimePolicy(move_ms=5000)),
            metadata=[("authorization", f"Bearer {referee.admin_token}")])
    tokens = {s.seat: s.token for s in created.seats}
    usage_file = tmp_path / "usage.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee_client.cli", "llm", "--base-url", chat_server.base_url,
         "--model", "m", "--address", referee.address, "--max-matches", "1",
         "--usage-file", str(usage_file)],
        env={**os.environ, "REFEREE_BOT_TOKEN": bot_token}, stderr=subprocess.PIPE, text=True)
    asyncio.run(asyncio.wait_for(
        play(RandomBot(1), referee.address, created.match_id, tokens[1]), 300))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    usage = json.loads(usage_file.read_text())
    assert usage["match_id"] == created.match_id and usage["moves"] > 0
