"""Unary RPCs, every rejection kind (state untouched), errors with reasons, token isolation."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from referee.core import registry
from referee.v1 import batavia_pb2, referee_pb2_grpc
from referee.v1 import referee_pb2 as pb

from .conftest import ADMIN
from .helpers import create, md, reason_of

GAME = registry.get("batavia")


def error_info(err: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    for k, v in err.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            st = status_pb2.Status.FromString(v)
            assert st.code == err.code().value[0]
            for d in st.details:
                info = error_details_pb2.ErrorInfo()
                if d.Unpack(info):
                    return info
    return None


async def expect_error(coro, code: grpc.StatusCode, reason: str | None = None):
    with pytest.raises(grpc.aio.AioRpcError) as ei:
        await coro
    err = ei.value
    assert err.code() == code, (err.code(), err.details())
    if reason is not None:
        assert reason_of(err) == reason
        info = error_info(err)
        assert info is not None and info.reason == reason and info.domain == "referee.v1"
    return err


def snapshot(server, mid):
    rt = server.service.matches[mid]
    return rt.match.version, GAME.hash_state(rt.match.state), len(rt.match.moves)


def test_list_games(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            return await referee_pb2_grpc.RefereeStub(ch).ListGames(pb.ListGamesRequest())

    resp = asyncio.run(run())
    (g,) = [g for g in resp.games if g.name == "batavia"]
    assert (g.min_seats, g.max_seats) == (3, 5)
    opts = {o.name: o for o in g.options}
    assert {"setup", "min_bid", "pirates_repeat", "max_rounds"} <= set(opts)
    assert opts["setup"].type == "enum" and opts["setup"].default_value == "face_down"
    assert list(opts["setup"].choices) == ["face_down", "face_up"]
    sheet = GAME.default_components(GAME.spec.parse_options({}))
    (c,) = g.components
    assert c.name == sheet.name and c.sha256 == sheet.sha256
    assert dict(c.provenance_counts) == sheet.provenance_counts


def test_create_match_validation(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            ok = pb.CreateMatchRequest(game="batavia", seats=3)
            await expect_error(stub.CreateMatch(ok), grpc.StatusCode.UNAUTHENTICATED)
            await expect_error(stub.CreateMatch(ok, metadata=md("nope")),
                               grpc.StatusCode.PERMISSION_DENIED)
            bad = pb.CreateMatchRequest(game="batavia", seats=3, options={"setup": "sideways"})
            err = await expect_error(stub.CreateMatch(bad, metadata=md(ADMIN)),
                                     grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
            assert "option 'setup' takes one of face_down, face_up" in err.details()
            bad = pb.CreateMatchRequest(game="batavia", seats=3, options={"colour": "red"})
            err = await expect_error(stub.CreateMatch(bad, metadata=md(ADMIN)),
                                     grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
            assert "unknown option" in err.details()
            for seats in (2, 6):
                err = await expect_error(
                    stub.CreateMatch(pb.CreateMatchRequest(game="batavia", seats=seats),
                                     metadata=md(ADMIN)),
                    grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
                assert "3 to 5 seats" in err.details()
            await expect_error(
                stub.CreateMatch(pb.CreateMatchRequest(game="chess", seats=2), metadata=md(ADMIN)),
                grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED")
            # seat tokens are not admin tokens
            mid, tokens = await create(stub, seats=3, seed=None,
                                       options={"setup": "face_up", "min_bid": "1"})
            await expect_error(stub.CreateMatch(ok, metadata=md(tokens[0])),
                               grpc.StatusCode.PERMISSION_DENIED)
            assert len(set(tokens)) == 3 and all(len(t) >= 43 for t in tokens)
            return mid

    mid = asyncio.run(run())
    rt = server.service.matches[mid]
    assert rt.match.options["setup"] == "face_up" and 0 <= rt.match.seed < 2**63
    # only hashes of tokens are stored
    import sqlite3

    conn = sqlite3.connect(server.data_dir / "referee.sqlite3")
    (hashes,) = conn.execute("SELECT token_hashes_json FROM matches WHERE id=?", (mid,)).fetchone()
    conn.close()
    assert all(len(h) == 64 for h in json.loads(hashes))


def test_unary_flow_and_every_rejection_leaves_state_unchanged(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=99)
            # who is to act?
            views = [await stub.GetView(pb.GetViewRequest(match_id=mid), metadata=md(t))
                     for t in tokens]
            acting = [i for i, v in enumerate(views) if v.HasField("decision")]
            assert len(acting) == 1
            s = acting[0]
            other = (s + 1) % 3
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                         metadata=md(tokens[s]))
            assert d.seat == s and len(d.legal_moves) > 0
            assert d.view == views[s].view
            assert d.view.batavia == GAME.view(server.service.matches[mid].match.state, s)
            none = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                            metadata=md(tokens[other]))
            assert len(none.legal_moves) == 0
            legal = d.legal_moves[0]
            v = d.state_version
            before = snapshot(server, mid)

            async def rejected(req, token, code, reason, text=None):
                err = await expect_error(stub.SubmitMove(req, metadata=md(token)), code, reason)
                assert snapshot(server, mid) == before
                if text:
                    assert text in err.details(), err.details()
                return err

            IA, FP = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION
            sub = pb.SubmitMoveRequest
            await rejected(sub(match_id=mid, state_version=v, move=pb.Move()), tokens[s], IA,
                           "MALFORMED", "empty move")
            wrong = pb.Move()
            wrong.goa.SetInParent()
            # issue 31 item 4: a move of another game is WRONG_GAME, not MALFORMED
            await rejected(sub(match_id=mid, state_version=v, move=wrong), tokens[s], IA,
                           "WRONG_GAME", "not goa")
            await rejected(sub(match_id=mid, state_version=v, move=pb.Move(
                batavia=batavia_pb2.Move())), tokens[s], IA, "MALFORMED")
            await rejected(sub(match_id=mid, state_version=v, move=pb.Move(
                batavia=batavia_pb2.Move(play_card=batavia_pb2.PlayCard(company=42)))),
                tokens[s], IA, "MALFORMED")
            await rejected(sub(match_id=mid, state_version=v, move=legal), tokens[other], FP,
                           "NOT_YOUR_TURN", f"seat {s} is to act")
            await rejected(sub(match_id=mid, state_version=v + 5, move=legal), tokens[s], FP,
                           "STALE_STATE", "state version")
            illegal = pb.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999)))
            assert illegal not in list(d.legal_moves)
            err = await rejected(sub(match_id=mid, state_version=v, move=illegal), tokens[s], FP,
                                 "ILLEGAL_MOVE")
            assert err.details()
            # and an accepted one
            res = await stub.SubmitMove(sub(match_id=mid, state_version=v, move=legal,
                                            request_id="r1"), metadata=md(tokens[s]))
            assert res.accepted and res.state_version == v + 1 and res.request_id == "r1"
            assert snapshot(server, mid)[0] == v + 1
            # a replay of the same submit is stale (or not this seat's turn) now
            before2 = snapshot(server, mid)
            err = await expect_error(
                stub.SubmitMove(sub(match_id=mid, state_version=v, move=legal),
                                metadata=md(tokens[s])), FP)
            assert reason_of(err) in ("STALE_STATE", "NOT_YOUR_TURN")
            assert snapshot(server, mid) == before2
            # the record needs the admin token while the match runs
            await expect_error(stub.GetRecord(pb.GetRecordRequest(match_id=mid)),
                               grpc.StatusCode.UNAUTHENTICATED)
            await expect_error(stub.GetRecord(pb.GetRecordRequest(match_id=mid),
                                              metadata=md(tokens[0])),
                               grpc.StatusCode.PERMISSION_DENIED)
            rec = await stub.GetRecord(pb.GetRecordRequest(match_id=mid), metadata=md(ADMIN))
            assert not rec.complete and len(json.loads(rec.record_json)["moves"]) == 1

    asyncio.run(run())


def test_token_isolation(server):
    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            m1, t1 = await create(stub, seats=3, seed=1)
            _m2, t2 = await create(stub, seats=3, seed=2)
            gv = pb.GetViewRequest
            await expect_error(stub.GetView(gv(match_id=m1)), grpc.StatusCode.UNAUTHENTICATED,
                               "UNAUTHENTICATED")
            await expect_error(stub.GetView(gv(match_id=m1), metadata=md("x" * 43)),
                               grpc.StatusCode.UNAUTHENTICATED)
            await expect_error(stub.GetView(gv(match_id=m1), metadata=(("authorization",
                                                                          t1[0]),)),
                               grpc.StatusCode.UNAUTHENTICATED)  # no Bearer scheme
            await expect_error(stub.GetView(gv(match_id=m1), metadata=md(t2[0])),
                               grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED")
            await expect_error(stub.GetView(gv(match_id="nope"), metadata=md(t1[0])),
                               grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
            # each token sees exactly its own seat's view
            state = server.service.matches[m1].match.state
            for seat, tok in enumerate(t1):
                v = await stub.GetView(gv(match_id=m1), metadata=md(tok))
                assert v.view.batavia == GAME.view(state, seat)
                assert v.view.batavia.seat == seat
            # a Play stream with another match's token is refused
            call = stub.Play(iter([pb.ClientMessage(join=pb.Join(match_id=m1))]),
                             metadata=md(t2[1]))
            with pytest.raises(grpc.aio.AioRpcError) as ei:
                async for _ in call:
                    pass
            assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert reason_of(ei.value) == "PERMISSION_DENIED"

    asyncio.run(run())


def test_refused_moves_are_counted_per_seat_in_the_record(server):
    """Every refused submission (malformed, stale, illegal, out of turn) is counted for its seat
    in the game record's `rejected_moves`, so a tournament can report them for bots in any
    language; accepted moves are not counted."""
    from .helpers import play_match

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=21)
            rt = server.service.matches[mid]
            seat = rt.decision.seat
            version = rt.match.version
            illegal = pb.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999)))
            for move, ver in ((illegal, version), (rt.decision_for(rt.decision.seat).legal_moves[0], version + 5),
                              (pb.Move(), version)):
                with pytest.raises(grpc.aio.AioRpcError):
                    await stub.SubmitMove(pb.SubmitMoveRequest(
                        match_id=mid, state_version=ver, move=move), metadata=md(tokens[seat]))
            other = (seat + 1) % 3
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.SubmitMove(pb.SubmitMoveRequest(
                    match_id=mid, state_version=version, move=rt.decision_for(rt.decision.seat).legal_moves[0]),
                    metadata=md(tokens[other]))
        await play_match(server.target, mid, tokens, seed=3)
        record = json.loads(Path(rt.record_path).read_text())
        want = [0, 0, 0]
        want[seat] += 3
        want[other] += 1
        assert record["rejected_moves"] == want

    asyncio.run(run())
