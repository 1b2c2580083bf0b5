"""The store contract (referee.server.store.sqlite.Store) held by both backends: the embedded SQLite
store and PostgreSQL (a real server the fixture starts, bench/pgserver.py). The same tests run
against each (``store_url``): group commit, a failed write that fails alone, the lookups of a
match no longer in memory, the tables of bot sessions and leagues, and a referee that creates a
match, stops, resumes it from the store, plays it to the end and serves its record."""
from __future__ import annotations

import asyncio
import json
import random

import grpc
import pytest

from referee.server.base.errors import RefereeError
from referee.server.store.opening import StoreUrlError, open_store
from referee.server.store.opening import store_url as resolve_url
from referee.server.store.sqlite import MatchRow, MoveRow
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, play_match


def row(mid: str, **kw) -> MatchRow:
    return MatchRow(id=mid, game="batavia", options={"setup": "face_up"}, seats=3, seed=2**62,
                    components_name="s", components_sha256="0" * 64,
                    time_policy={"move_ms": 5}, token_hashes=["a" * 64] * 3,
                    names=["x", "y", "z"], status="running", created_ms=1_700_000_000_000,
                    finished_ms=None, forfeited=None, result=None, **kw)


def move(n: int) -> MoveRow:
    return MoveRow(n, n % 3, n - 1, {"bid": {"amount": n}}, "f" * 64, n, n == 5,
                   "DEFAULT_MOVE" if n == 5 else None, "a note" if n == 2 else "")


@pytest.mark.parametrize("durability", ["normal", "full"])
def test_group_commit_round_trip(store_url, durability, tmp_path):
    store = open_store(store_url, tmp_path, durability)
    assert store.kind == ("postgresql" if store_url else "sqlite")
    store.start()

    async def run():
        await store.insert_match(row("m1", league="L", seat_bots=["a", "", "b"],
                                     seat_versions=[3, 0, 0]))
        futs = [store.insert_move("m1", move(n), [0, n, 0] if n == 7 else None)
                for n in range(1, 101)]
        await asyncio.gather(*futs)
        await store.set_joined("m1", [2, 0])
        await store.set_abandoned("m1", {1: "bot exited (code 1)"})
        await store.finish_match("m1", status="finished", finished_ms=1_700_000_000_009,
                                 forfeited=1, result={"scores": [1, 2, 3]},
                                 record_path=tmp_path / "records" / "m1.json",
                                 record={"match_id": "m1"})

    asyncio.run(run())
    store.close()
    assert store.ops == 104 and store.batches < store.ops
    (got,) = store.load_matches()
    assert got.seed == 2**62 and got.options == {"setup": "face_up"} and got.status == "finished"
    assert got.result == {"scores": [1, 2, 3]} and got.finished_ms == 1_700_000_000_009
    assert got.forfeited == 1 and got.rejected == [0, 7, 0] and got.joined == [0, 2]
    assert got.abandoned == {1: "bot exited (code 1)"} and got.league == "L"
    assert got.seat_bots == ["a", "", "b"] and got.seat_versions == [3, 0, 0]
    assert store.load_matches("running") == []
    moves = store.load_moves("m1")
    assert [m.n for m in moves] == list(range(1, 101))
    assert moves[4].timeout and moves[4].policy == "DEFAULT_MOVE" and not moves[3].timeout
    assert moves[1].note == "a note" and moves[0].note == ""
    assert store.match_status("m1") == "finished" and store.match_status("nope") is None
    assert store.reveal_key("m1") == ("batavia", 2**62, "safe")
    assert (tmp_path / "records" / "m1.json").exists()
    store.close()


def test_a_failed_write_fails_alone(store_url, tmp_path):
    store = open_store(store_url, tmp_path)
    store.start()

    async def run():
        await store.insert_move("m", MoveRow(1, 0, 0, {}, "h", 0, False, None))
        with pytest.raises(RuntimeError, match="store commit failed"):
            await store.insert_move("m", MoveRow(1, 0, 0, {}, "h", 0, False, None))  # dup key
        futs = [store.insert_move("m", MoveRow(n, 0, 0, {}, "h", 0, False, None))
                for n in (2, 1, 3)]
        got = await asyncio.gather(*futs, return_exceptions=True)
        assert got[0] is None and isinstance(got[1], RuntimeError) and got[2] is None

    asyncio.run(run())
    store.close()
    assert [m.n for m in store.load_moves("m")] == [1, 2, 3]
    with pytest.raises(ValueError, match="durability"):
        open_store(store_url, tmp_path, "sometimes")


def test_an_older_schema_gains_its_columns_when_opened(store_url, tmp_path):
    """Columns are only ever added: a store whose tables lack the newer ones is brought up to
    date in place, keeping its rows (ensure_schema)."""
    store = open_store(store_url, tmp_path)
    with store.connection() as conn:
        conn.execute("DROP TABLE moves")
        conn.execute("CREATE TABLE moves (match_id TEXT NOT NULL, n INTEGER NOT NULL,"
                     " seat INTEGER NOT NULL, version_before INTEGER NOT NULL,"
                     " move_json TEXT NOT NULL, state_hash TEXT NOT NULL,"
                     " elapsed_ms INTEGER NOT NULL, timeout INTEGER NOT NULL DEFAULT 0,"
                     " policy TEXT, PRIMARY KEY (match_id, n))")
        conn.execute("INSERT INTO moves (match_id, n, seat, version_before, move_json,"
                     " state_hash, elapsed_ms) VALUES ('m', 1, 0, 0, '{}', 'h', 3)")
        assert "note" not in store.columns(conn, "moves")
    store.close()
    again = open_store(store_url, tmp_path)
    with again.connection() as conn:
        assert "note" in again.columns(conn, "moves")
    assert [(m.n, m.note) for m in again.load_moves("m")] == [(1, "")]
    again.close()


def test_a_url_with_a_password_is_refused_on_the_command_line(tmp_path, monkeypatch):
    for url in ("postgresql://u:secret@db/referee", "postgresql://db/referee?password=secret"):
        with pytest.raises(StoreUrlError, match="PGPASSWORD") as err:
            resolve_url(url, environ={})
        assert "secret" not in str(err.value)
    with pytest.raises(StoreUrlError, match="postgresql://"):
        resolve_url("mysql://db/x", environ={})
    # from a file or the environment, a password is fine (neither is on a command line)
    path = tmp_path / "store-url"
    path.write_text("postgresql://u:secret@db/referee\n")
    assert resolve_url("", str(path), environ={}) == "postgresql://u:secret@db/referee"
    assert resolve_url("", "", {"REFEREE_STORE_URL": "postgresql://u:pw@h/d"}) == \
        "postgresql://u:pw@h/d"
    assert resolve_url("", "", {}) == ""  # the embedded store
    with pytest.raises(StoreUrlError, match="empty"):
        (tmp_path / "empty").write_text("")
        resolve_url("", str(tmp_path / "empty"), environ={})


def test_a_match_bots_and_a_league_survive_a_restart(store_url, make_server, tmp_path):
    """Create a match, play part of it, register a bot and open a league, stop the referee;
    a new one on the same store resumes the match with the same tokens, knows the bot and the
    league, plays the match to the end and serves its record."""
    data = tmp_path / "data"
    srv = make_server(data, store_url=store_url)

    async def first():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=4242)
            rnd = random.Random(3)
            for _ in range(12):
                seat = srv.service.matches[mid].decision.seat
                d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                             metadata=md(tokens[seat]))
                r = await stub.SubmitMove(pb.SubmitMoveRequest(
                    match_id=mid, state_version=d.state_version,
                    move=rnd.choice(list(d.legal_moves))), metadata=md(tokens[seat]))
                assert r.accepted
            await stub.RegisterBot(pb.RegisterBotRequest(name="b1"), metadata=md(ADMIN))
            await stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
                name="spring", title="Spring", games=["batavia"])), metadata=md(ADMIN))
            # opened again: the row is replaced (an upsert both stores accept)
            await stub.OpenLeague(pb.OpenLeagueRequest(league=pb.League(
                name="spring", title="Spring cup", games=["batavia"])), metadata=md(ADMIN))
            return mid, tokens

    mid, tokens = asyncio.run(first())
    version = srv.service.matches[mid].match.version
    srv.stop()
    srv.start()
    assert srv.service.matches[mid].match.version == version
    assert "b1" in srv.service.sessions.bots.values()
    assert srv.service.leagues.leagues["spring"].league.title == "Spring cup"

    logs = asyncio.run(play_match(srv.target, mid, tokens, seed=8))
    assert all(log.game_over is not None for log in logs)

    async def record():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return await stub.GetRecord(pb.GetRecordRequest(match_id=mid))

    rec = asyncio.run(record())
    assert rec.complete and json.loads(rec.record_json)["match_id"] == mid
    assert srv.service.store.match_status(mid) == "finished"


def test_leases_fence_a_stale_holder(store_url, tmp_path):
    """Two referees on one store: B may take a match over only once A's lease has expired, and
    from then on A's writes for it fail (UNAVAILABLE, NOT_OWNER) and change nothing, in the
    same transaction as the check (fencing); A hears it (on_lost), by a refused write or by
    its next renewal."""
    a, b = open_store(store_url, tmp_path), open_store(store_url, tmp_path)
    lost: list[str] = []
    a.enable_leases("A", 300, lost.append)
    b.enable_leases("B", 300, lambda mid: None)
    a.start()
    b.start()

    async def run():
        await a.insert_match(row("m1"))
        await a.insert_match(row("m2", reveal_policy="none"))
        await a.insert_move("m1", move(1))
        await a.renew_leases()
        assert b.try_lease("m1") is None and b.lease_holder("m1")[0] == "A"
        await asyncio.sleep(0.4)  # A, stalled, does not renew: its leases expire
        assert b.try_lease("m1") == 2 and b.try_lease("m2") == 2
        with pytest.raises(RefereeError) as err:
            await a.insert_move("m1", move(2))
        assert err.value.code == grpc.StatusCode.UNAVAILABLE and err.value.reason == "NOT_OWNER"
        for write in (a.set_joined("m1", [0]), a.finish_match(
                "m1", status="finished", finished_ms=2, forfeited=None, result=None)):
            with pytest.raises(RefereeError):
                await write
        await b.insert_move("m1", move(2))
        await a.renew_leases()  # finds m2 lost as well, and does not take anything back
        await asyncio.sleep(0.01)
        assert b.lease_holder("m1")[0] == "B" and b.lease_holder("m2")[0] == "B"
        await b.finish_match("m1", status="finished", finished_ms=3, forfeited=None,
                             result=None)
        assert b.lease_holder("m1") is None  # a finished match holds no lease

    asyncio.run(run())
    a.close()
    b.close()  # a clean stop releases B's leases: anyone may take m2 at once
    assert sorted(lost) == ["m1", "m2"]
    assert [(m.n, m.seat) for m in b.load_moves("m1")] == [(1, 1), (2, 2)]
    (m1,) = [r for r in b.load_matches() if r.id == "m1"]
    assert m1.status == "finished" and m1.finished_ms == 3 and m1.joined is None
    c = open_store(store_url, tmp_path)
    c.enable_leases("C", 300, lambda mid: None)
    assert c.try_lease("m2") == 3
    assert c.match_of_token("a" * 64) == ("m1", 0)
    c.close()


def test_a_lease_names_its_holders_advertised_address(store_url, tmp_path):
    """Several hosts (docs/organizer/many-hosts.md): a lease says where its holder is reached
    (``--advertise``), from the match's creation and after a take-over, so that the other
    referees hand it the calls for the match; a referee that advertises nothing leaves it
    empty. ``held_leases`` lists what is leased under this referee's name (resumed at start)."""
    a, b = open_store(store_url, tmp_path), open_store(store_url, tmp_path)
    a.enable_leases("A", 200, lambda mid: None, "10.0.0.1:50051")
    b.enable_leases("B", 200, lambda mid: None)
    a.start()
    b.start()

    async def run():
        await a.insert_match(row("m1"))
        assert b.lease_holder("m1") == ("A", a.lease_holder("m1")[1], "10.0.0.1:50051")
        assert a.held_leases() == ["m1"] and b.held_leases() == []
        await asyncio.sleep(0.3)  # A does not renew: B takes m1 over, advertising nothing
        assert b.try_lease("m1") == 2
        assert a.lease_holder("m1")[::2] == ("B", "")
        assert b.held_leases() == ["m1"]
        a.address = "10.0.0.9:50051"  # (a restarted A on another address)
        await asyncio.sleep(0.3)
        assert a.try_lease("m1") == 3
        assert b.lease_holder("m1")[::2] == ("A", "10.0.0.9:50051")

    asyncio.run(run())
    a.close()
    b.close()


def test_a_match_that_ends_is_not_taken_for_lost(store_url, tmp_path):
    """A finish deletes the match's lease: the writes of its batch, and a renewal queued before
    the finish is acknowledged, must not take that for a take-over."""
    store = open_store(store_url, tmp_path)
    lost: list[str] = []
    store.enable_leases("A", 60_000, lost.append)
    store.start()

    async def run():
        await store.insert_match(row("m1"))
        await store.insert_match(row("m2", reveal_policy="none"))
        writes = [store.insert_move("m1", move(1)), store.insert_move("m2", move(1)),
                  store.finish_match("m1", status="finished", finished_ms=2, forfeited=None,
                                     result=None),
                  store.insert_move("m2", move(2)), store.renew_leases()]
        await asyncio.gather(*writes)
        await store.renew_leases()
        await asyncio.sleep(0.01)

    asyncio.run(run())
    store.close()
    assert lost == []
    assert [m.n for m in store.load_moves("m2")] == [1, 2]


def test_a_released_lease_is_free_at_once_after_the_writes_before_it(store_url, tmp_path):
    """A draining referee hands a match over (``Store.release_lease``): the release commits
    after the writes queued before it (its last move is in the store for whoever takes the
    match), another referee takes the lease at once (no expiry to wait for), the releaser's
    renewals do not count the match as lost, and a lease already taken over is not freed by
    a stale release."""
    a, b = open_store(store_url, tmp_path), open_store(store_url, tmp_path)
    lost: list[str] = []
    a.enable_leases("A", 60_000, lost.append)
    b.enable_leases("B", 60_000, lambda mid: None)
    a.start()
    b.start()

    async def run():
        await a.insert_match(row("m1"))
        await a.insert_match(row("m2"))
        moved = a.insert_move("m1", move(1))  # queued, not awaited: the release follows it
        released = a.release_lease("m1")
        renewed = a.renew_leases()
        await asyncio.gather(moved, released, renewed)
        assert [m.n for m in b.load_moves("m1")] == [1]
        assert b.try_lease("m1") == 2  # at once: the lease lives a minute unreleased
        assert b.try_lease("m2") is None  # not released: still A's
        stale = a.epochs["m2"]
        assert b.lease_holder("m2")[0] == "A"
        a.epochs["m2"] = stale - 1  # a release of an epoch A no longer holds frees nothing
        await a.release_lease("m2")
        assert b.lease_holder("m2")[0] == "A"

    asyncio.run(run())
    assert lost == []
    a.close()
    b.close()


def test_finished_lobby_matches_for_league_challenges(store_url, tmp_path):
    """ListLeagueChallenges' read (issue 33 item 2): the finished matches whose record adds
    fields (the lobby's), after a time, oldest first; running ones and plain ones are not."""
    store = open_store(store_url, tmp_path, "normal")
    store.start()
    lobby = {"lobby": {"seek": "s", "rated": True, "challenged": "champ", "league": "L"}}

    async def run():
        await store.insert_match(row("plain"))
        await store.insert_match(row("event", extra={"event": "swiss"}))
        await store.insert_match(row("c1", extra=lobby))
        await store.insert_match(row("c2", extra=lobby))
        await store.insert_match(row("live", extra=lobby))
        for mid, t in (("plain", 5), ("event", 6), ("c2", 7), ("c1", 6)):
            await store.finish_match(mid, status="finished", finished_ms=t, forfeited=None,
                                     result={"scores": [1, 2, 3]},
                                     record_path=tmp_path / "records" / f"{mid}.json",
                                     record={"match_id": mid})

    asyncio.run(run())
    try:
        assert store.finished_lobby_matches(0) == [("c1", 6, lobby), ("c2", 7, lobby)]
        assert [m for m, _, _ in store.finished_lobby_matches(6)] == ["c2"]
        assert store.finished_lobby_matches(7) == []
    finally:
        store.close()
