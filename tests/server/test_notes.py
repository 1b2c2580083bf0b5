"""A bot's note on its move (Submit.note, SubmitMoveRequest.note; referee.proto): at most 512
bytes of UTF-8 with no control character but newline and tab, else the move is refused as
MALFORMED and nothing changes; stored with the move before it is acknowledged, so a restart
keeps it; in the record's move entry (only when set); and sent to nobody while the match is
live: not to the other seats' streams, not to Watch, not in GetRecord without the admin
token."""
from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path

import grpc
import pytest

from referee.core import registry
from referee.core.match import Match
from referee.server.store.sqlite import SqliteStore
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, play_match, reason_of

GAME = registry.get("batavia")


async def _decision(srv, stub, mid, tokens):
    seat = srv.service.matches[mid].decision.seat
    d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                 metadata=md(tokens[seat]))
    return seat, d


async def _new_match(srv, ch):
    """A new 3-seat match on ``ch``: (stub, id, tokens, seat to act, its decision)."""
    stub = referee_pb2_grpc.RefereeStub(ch)
    mid, tokens = await create(stub, seats=3, seed=5)
    seat, d = await _decision(srv, stub, mid, tokens)
    return stub, mid, tokens, seat, d


async def _submit(stub, mid, token, d, note, rnd):
    return await stub.SubmitMove(pb.SubmitMoveRequest(
        match_id=mid, state_version=d.state_version, move=rnd.choice(list(d.legal_moves)),
        note=note), metadata=md(token))


def note_for(n: int) -> str:
    return f"move {n}: ducats look good\n\tmarker-{n}-zq"


@pytest.mark.parametrize(("note", "why"), [
    ("x" * 513, "513 bytes"),
    ("é" * 257, "514 bytes"),  # 257 characters, two bytes each
    ("bad\x00nul", "U+0000"),
    ("carriage\rreturn", "U+000D"),
    ("escape\x1b[31m", "U+001B"),
    ("c1\x85control", "U+0085"),
])
def test_a_bad_note_refuses_the_move_and_changes_nothing(server, note, why):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub, mid, tokens, seat, d = await _new_match(server, ch)
            rt = server.service.matches[mid]
            before = (rt.match.version, GAME.hash_state(rt.match.state), len(rt.match.moves))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await _submit(stub, mid, tokens[seat], d, note, random.Random(1))
            err = info.value
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason_of(err) == "MALFORMED" and "note" in err.details()
            assert why in err.details()
            assert (rt.match.version, GAME.hash_state(rt.match.state),
                    len(rt.match.moves)) == before
            assert rt.rejections[seat] == 1  # counted like any malformed move
            # the same move with an acceptable note goes through
            r = await _submit(stub, mid, tokens[seat], d, "ok\n\tfine", random.Random(1))
            assert r.accepted
    asyncio.run(go())


def test_the_largest_note_is_accepted(server):
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub, mid, tokens, seat, d = await _new_match(server, ch)
            note = "€" * 170 + "ab"  # 3 * 170 + 2 = 512 bytes
            assert len(note.encode()) == 512
            assert (await _submit(stub, mid, tokens[seat], d, note, random.Random(1))).accepted
            assert server.service.matches[mid].match.moves[-1].note == note
    asyncio.run(go())


def test_a_note_that_is_not_utf8_is_refused_on_both_paths(server):
    """The bytes do not parse (a proto3 string must be UTF-8): MALFORMED, nothing changes."""
    async def go():
        async with grpc.aio.insecure_channel(server.target) as ch:
            _stub, mid, tokens, seat, d = await _new_match(server, ch)
            rt = server.service.matches[mid]
            good = pb.SubmitMoveRequest(match_id=mid, state_version=d.state_version,
                                        move=d.legal_moves[0], note="QQ").SerializeToString()
            raw = good.replace(b"QQ", b"\xff\xfe")
            call = ch.unary_unary("/referee.v1.Referee/SubmitMove")
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call(raw, metadata=md(tokens[seat]))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason_of(info.value) == "MALFORMED" and "UTF-8" in info.value.details()
            assert rt.match.version == d.state_version and not rt.match.moves
            # on a Play stream: a MoveResult MALFORMED, and the stream goes on
            frame = pb.ClientMessage(submit=pb.Submit(
                state_version=d.state_version, move=d.legal_moves[0], note="QQ"))
            bad = frame.SerializeToString().replace(b"QQ", b"\xff\xfe")
            join = pb.ClientMessage(join=pb.Join(match_id=mid)).SerializeToString()
            play = ch.stream_stream("/referee.v1.Referee/Play")
            stream = play(iter([join, bad]), metadata=md(tokens[seat]))
            results = []
            async for data in stream:
                msg = pb.ServerMessage.FromString(data)
                if msg.WhichOneof("msg") == "move_result":
                    results.append(msg.move_result)
                    break
            stream.cancel()
            assert results and not results[0].accepted
            assert results[0].reason == pb.MALFORMED and "UTF-8" in results[0].message
            assert rt.match.version == d.state_version and not rt.match.moves
    asyncio.run(go())


def test_notes_are_recorded_survive_a_restart_and_reach_nobody_live(make_server, tmp_path):
    data = tmp_path / "data"
    srv = make_server(data)
    received: list[bytes] = []

    async def spy(target, mid, token=None):
        """Everything a watcher, or a seat's stream with events, is sent."""
        async with grpc.aio.insecure_channel(target) as ch:
            if token is None:
                call = ch.unary_stream("/referee.v1.Referee/Watch")(
                    pb.WatchRequest(match_id=mid).SerializeToString())
            else:
                join = pb.ClientMessage(join=pb.Join(match_id=mid, events=True))
                call = ch.stream_stream("/referee.v1.Referee/Play")(
                    iter([join.SerializeToString()]), metadata=md(token))
            try:
                async for data_ in call:
                    received.append(data_)
            except (grpc.aio.AioRpcError, asyncio.CancelledError):
                pass

    async def first_half():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=77)
            # seat 2's Play stream only listens (events on); its moves go unary, unnoted
            spies = [asyncio.ensure_future(spy(srv.target, mid)),
                     asyncio.ensure_future(spy(srv.target, mid, tokens[2]))]
            await asyncio.sleep(0.2)
            rnd = random.Random(3)
            noted = 0
            for _ in range(15):
                seat, d = await _decision(srv, stub, mid, tokens)
                n = len(srv.service.matches[mid].match.moves) + 1
                note = note_for(n) if n % 2 and seat != 2 else ""
                r = await _submit(stub, mid, tokens[seat], d, note, rnd)
                assert r.accepted
                noted += bool(note)
            await asyncio.sleep(0.3)
            for t in spies:
                t.cancel()
            await asyncio.gather(*spies, return_exceptions=True)
            # the record of a running match: only for the admin
            for token in tokens:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.GetRecord(pb.GetRecordRequest(match_id=mid), metadata=md(token))
                assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid), metadata=md(ADMIN))
            return mid, tokens, noted, json.loads(rec.record_json)

    mid, tokens, noted, live_record = asyncio.run(first_half())
    assert noted >= 2
    assert received, "the spies received nothing"
    for data_ in received:
        assert b"marker-" not in data_ and b"ducats look good" not in data_
    moves = live_record["moves"]
    want = {m["n"]: note_for(m["n"]) for m in moves if m["n"] % 2 and m["seat"] != 2}
    assert {m["n"]: m["note"] for m in moves if "note" in m} == want
    assert all("note" not in m for m in moves if m["n"] not in want)  # absent when unset
    conn = sqlite3.connect(data / "referee.sqlite3")
    stored = conn.execute("SELECT n, note FROM moves WHERE match_id=? ORDER BY n",
                          (mid,)).fetchall()
    conn.close()
    assert [n for n, note in stored if note] == [m["n"] for m in moves if "note" in m]

    srv.stop()
    srv.start()  # the notes come back from the store with the moves
    rt = srv.service.matches[mid]
    assert [e.note for e in rt.match.moves] == [m.get("note", "") for m in moves]
    logs = asyncio.run(play_match(srv.target, mid, tokens, seed=4))
    record = json.loads(Path(logs[0].game_over.record_path).read_text())
    assert [m.get("note") for m in record["moves"][: len(moves)]] == [
        m.get("note") for m in moves]
    assert all("note" not in m for m in record["moves"][len(moves):])


def test_a_store_from_before_notes_opens_and_gains_the_column(tmp_path):
    """An older referee's moves table had no note column: it is added, old rows read as
    none."""
    data = tmp_path / "old"
    data.mkdir()
    conn = sqlite3.connect(data / "referee.sqlite3")
    conn.executescript("""
        CREATE TABLE moves (match_id TEXT NOT NULL, n INTEGER NOT NULL, seat INTEGER NOT NULL,
            version_before INTEGER NOT NULL, move_json TEXT NOT NULL, state_hash TEXT NOT NULL,
            elapsed_ms INTEGER NOT NULL, timeout INTEGER NOT NULL DEFAULT 0, policy TEXT,
            PRIMARY KEY (match_id, n)) WITHOUT ROWID;
        INSERT INTO moves VALUES ('m1', 1, 0, 0, '{}', 'h', 5, 0, NULL);
    """)
    conn.commit()
    conn.close()
    store = SqliteStore(data)
    rows = store.load_moves("m1")
    assert [(r.n, r.note) for r in rows] == [(1, "")]
    store.close()


def test_a_record_entry_carries_a_note_only_when_set():
    m = Match.create(GAME, {}, 3, 9)
    d = m.decision()
    entry, _ = m.submit(d.seat, d.moves[0])
    assert "note" not in entry.to_json()
    d = m.decision()
    entry, _ = m.submit(d.seat, d.moves[0], note="why not")
    assert entry.to_json()["note"] == "why not"
