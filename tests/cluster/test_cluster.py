"""``referee serve --workers 2`` behind nginx (issue 22 item 1): matches of every game played to
the end through the proxy by unchanged bots (the SDK's and the Node kit's), calls that name a
match only in their body served across workers, a worker or the proxy killed with -9 and
restarted without losing an acknowledged move, clean shutdown, and rate limits that key on the
real client."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import grpc
import pytest
from referee_client import Backoff, check_record
from referee_client.bot import play
from referee_client.bots.random_bot import RandomBot

from bench.cluster import descendants
from referee.server.base import shard, signing
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN, ClusterHandle, running

MATCHES = [("batavia", 3, {}), ("goa", 2, {}), ("goa", 3, {"edition": "2004"}),
           ("santa_maria", 2, {})]


def md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def create(stub, game: str, seats: int, seed: int, options=None) -> pb.CreateMatchResponse:
    return await stub.CreateMatch(
        pb.CreateMatchRequest(game=game, seats=seats, seed=seed, options=options or {}),
        metadata=md(ADMIN))


async def record(stub, match_id: str) -> dict:
    rec = await stub.GetRecord(pb.GetRecordRequest(match_id=match_id), metadata=md(ADMIN))
    assert rec.complete
    return json.loads(rec.record_json)


async def watch(stub, match_id: str) -> list[str]:
    kinds = []
    async for msg in stub.Watch(pb.WatchRequest(match_id=match_id)):
        kinds.append(msg.WhichOneof("msg"))
    return kinds


class Acked(RandomBot):
    """A random bot that remembers the state version of every move the referee accepted."""

    def __init__(self, seed: int, think_s: float = 0.0):
        super().__init__(seed)
        self.acked: list[int] = []
        self.think_s = think_s

    def choose(self, decision):
        if self.think_s:
            time.sleep(self.think_s)
        return super().choose(decision)

    def on_move_result(self, result) -> None:
        if result.accepted:
            self.acked.append(result.state_version)


def test_every_game_plays_to_the_end_through_the_proxy(cluster: ClusterHandle):
    """Rulebook-independent: every game's matches, spread over both workers, end with a result;
    the Node kit's bot plays one seat as it would against one referee; Watch and GetRecord,
    which name the match only in their body, reach its owner from either worker."""
    from tests.kits import toolchains

    node = toolchains.node_bot()

    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            made = [await create(stub, g, n, i, o) for i, (g, n, o) in enumerate(MATCHES)]
            assert {shard.of_match(m.match_id) for m in made} == {"w1", "w2"}
            for m in made:
                assert all(shard.of_token(s.token) == shard.of_match(m.match_id)
                           for s in m.seats)
            watchers = [asyncio.ensure_future(watch(stub, m.match_id)) for m in made]
            # the Node kit plays seat 0 of the last match (on the worker round robin gave it)
            kit = made[-1]
            env = dict(os.environ, REFEREE_TOKEN=kit.seats[0].token)
            proc = await asyncio.create_subprocess_exec(
                *node, "--address", cluster.address, "--match", kit.match_id, env=env,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            seats = [(m, s) for m in made for s in m.seats if (m, s.seat) != (kit, 0)]
            overs = await asyncio.gather(*(
                play(RandomBot(k), cluster.address, m.match_id, s.token)
                for k, (m, s) in enumerate(seats)))
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, out.decode()[-2000:]
            for over, stats in overs:
                assert over.match_id and stats.refused == 0
            for w in watchers:
                kinds = await asyncio.wait_for(w, 60)
                assert kinds[-1] == "game_over"
            # issue 31 item 7: the workers sign with one key, which any of them serves; each
            # seat's receipts (the Welcome's commitment, each move's state hash) check out
            keys = {(await stub.GetSigningKey(pb.GetSigningKeyRequest())).public_key
                    for _ in range(2)}
            assert len(keys) == 1
            receipts = {}
            for (m, s), (_over, stats) in zip(seats, overs, strict=True):
                receipts[(m.match_id, s.seat)] = stats.receipts
            for m in made:
                for _ in range(2):  # round robin: once from each worker
                    rec = await record(stub, m.match_id)
                    assert rec["match_id"] == m.match_id and rec["result"] and rec["moves"]
                    assert [e["n"] for e in rec["moves"]] == list(
                        range(1, len(rec["moves"]) + 1))
                    assert signing.check_signature(rec, next(iter(keys))) is None
                for (mid, _seat), got in receipts.items():
                    if mid == m.match_id:
                        assert got.seed_commitment == rec["seed_commitment"]
                        assert check_record(rec, got) == []

    asyncio.run(go())


def _kill_during_play(cluster: ClusterHandle, victim: str, match_shard: str) -> None:
    """Play two Batavia matches (one on ``match_shard``) with bots that think a little, kill
    ``victim`` with -9 once the match on ``match_shard`` is under way, and check: the bots
    finish, nothing was refused, every move the referee acknowledged is in the record, and a
    seat token of that shard only ever got OK or UNAVAILABLE meanwhile, never UNAUTHENTICATED
    (an "unknown token" from a worker that does not own it)."""
    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            made = []
            for seed in range(8):  # round robin alternates; take one match of each worker
                m = await create(stub, "batavia", 3, seed)
                if shard.of_match(m.match_id) not in {shard.of_match(x.match_id) for x in made}:
                    made.append(m)
                if len(made) == 2:
                    break
            target = next(m for m in made if shard.of_match(m.match_id) == match_shard)
            bots = {(m.match_id, s.seat): Acked(s.seat, think_s=0.01) for m in made
                    for s in m.seats}
            backoff = Backoff(initial=0.05, maximum=0.5, give_up_after=90)
            tasks = {(m.match_id, s.seat): asyncio.ensure_future(
                play(bots[m.match_id, s.seat], cluster.address, m.match_id, s.token,
                     backoff=backoff)) for m in made for s in m.seats}
            games = asyncio.gather(*tasks.values())
            codes: set[grpc.StatusCode] = set()
            probing = True

            async def probe():
                token = target.seats[0].token
                while probing:
                    try:
                        await stub.GetView(pb.GetViewRequest(match_id=target.match_id),
                                           metadata=md(token), timeout=5)
                        codes.add(grpc.StatusCode.OK)
                    except grpc.aio.AioRpcError as err:
                        codes.add(err.code())
                    await asyncio.sleep(0.01)

            prober = asyncio.ensure_future(probe())
            while sum(len(bots[target.match_id, s.seat].acked) for s in target.seats) < 8:
                assert not games.done(), games
                await asyncio.sleep(0.02)
            os.kill(cluster.pid(victim), signal.SIGKILL)
            await asyncio.get_running_loop().run_in_executor(None, cluster.wait_restarted,
                                                             victim)
            done, _ = await asyncio.wait(tasks.values(), timeout=180)
            assert len(done) == len(tasks), {  # which seats never finished, for the log
                k: (len(bots[k].acked), t.done()) for k, t in tasks.items()}
            results = await games
            probing = False
            await prober
            for _, stats in results:
                assert stats.refused == 0
            assert codes <= {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE}, codes
            assert grpc.StatusCode.OK in codes
            for m in made:
                rec = await record(stub, m.match_id)
                played = {(e["seat"], e["version_before"] + 1) for e in rec["moves"]}
                for s in m.seats:
                    acked = {(s.seat, v) for v in bots[m.match_id, s.seat].acked}
                    assert acked <= played, (m.match_id, s.seat, acked - played)
                assert rec["result"]

    asyncio.run(go())


def test_a_worker_killed_with_9_is_restarted_and_its_match_resumes(cluster: ClusterHandle):
    _kill_during_play(cluster, "w2", "w2")
    assert any(d["child"] == "w2" and d["code"] == -signal.SIGKILL
               for d in cluster.events("cluster_child_died"))


def test_the_proxy_killed_with_9_is_restarted_and_bots_reconnect(cluster: ClusterHandle):
    _kill_during_play(cluster, "nginx", "w1")
    assert any(d["child"] == "nginx" for d in cluster.events("cluster_child_died"))


def test_sigterm_stops_every_process_of_the_cluster(cluster: ClusterHandle):
    kids = descendants(cluster.proc.pid)
    assert len(kids) >= 4  # two workers, nginx's master and its worker
    assert cluster.stop() == 0
    deadline = time.monotonic() + 10
    while any(running(p) for p in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in kids if running(p)]
    assert not (cluster.folder / "port").exists()


def test_a_forged_client_header_buys_no_fresh_rate_limit(make_cluster):
    """The proxy replaces x-referee-client with the client's address: a client that makes one
    up for every call is still one client, and runs out of its burst."""
    c = make_cluster("--rate", "1", "--burst", "5")

    async def go():
        async with grpc.aio.insecure_channel(c.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            codes = []
            for k in range(30):
                try:  # GetLeague: rate-limited per client, always on the home worker
                    await stub.GetLeague(pb.GetLeagueRequest(name="none"),
                                         metadata=(("x-referee-client", f"10.9.{k}.1"),))
                    codes.append("OK")
                except grpc.aio.AioRpcError as err:
                    codes.append(err.code().name)
            return codes

    codes = asyncio.run(go())
    # one bucket: the burst of 5 (and a call a second), then refusals; a header taken at its
    # word would have given every call a bucket of its own
    assert codes[:5] == ["NOT_FOUND"] * 5
    assert codes.count("RESOURCE_EXHAUSTED") >= 20, codes


def test_without_nginx_the_command_says_how_to_install_it(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no nginx on PATH
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "serve", "--workers", "2",
         "--data-dir", str(tmp_path / "d"), "--nginx", str(tmp_path / "no-nginx")],
        capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 2
    assert "nginx-light" in proc.stderr


@pytest.mark.parametrize("text", ["w1-00ff", "w12-abc"])
def test_match_ids_and_tokens_name_their_shard(text):
    assert shard.of_match(text) == text.partition("-")[0]
    assert shard.of_match("0123456789abcdef") is None
    assert shard.of_token(shard.token("w3")) == "w3"
    assert shard.of_token(shard.token(None)) is None and len(shard.token(None)) == 64


def test_bot_sessions_get_matches_created_through_any_worker(cluster: ClusterHandle):
    """RegisterBot and the bot's Session go to the home worker; a CreateMatch binding the bot
    that lands on the other worker is handed to the home worker, so the session still gets an
    Assignment and plays it."""
    from referee_client import session

    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            tokens = {}
            for name in ("alice", "bob"):
                resp = await stub.RegisterBot(pb.RegisterBotRequest(name=name),
                                              metadata=md(ADMIN))
                tokens[name] = resp.bot_token
                assert shard.of_token(resp.bot_token) == shard.HOME
            ids = []
            for seed in range(4):  # round robin: two of these land on w2 first
                resp = await stub.CreateMatch(pb.CreateMatchRequest(
                    game="batavia", seats=3, seed=seed, seat_bots=["alice", "bob", "alice"]),
                    metadata=md(ADMIN))
                ids.append(resp.match_id)
            assert {shard.of_match(i) for i in ids} == {shard.HOME}
            # and an unbound match still goes to either worker
            plain = [await create(stub, "goa", 2, s) for s in range(2)]
            assert {shard.of_match(m.match_id) for m in plain} == {"w1", "w2"}
            seen: list[str] = []

            def factory(a):
                seen.append(a.match_id)
                return RandomBot(a.seat)

            await asyncio.wait_for(asyncio.gather(
                session(factory, cluster.address, tokens["alice"], capacity=8, max_matches=8),
                session(factory, cluster.address, tokens["bob"], capacity=4, max_matches=4)),
                240)
            assert sorted(set(seen)) == sorted(ids)
            for i in ids:
                assert (await record(stub, i))["result"]

    asyncio.run(go())


def test_the_web_viewer_lists_the_matches_of_every_worker(make_cluster):
    """One viewer (run by the home worker) lists every worker's matches, live ones included,
    and shows the clocks of another worker's running match (they come in its Watch updates)."""
    import httpx

    from referee.server.cluster import free_port

    port = free_port("127.0.0.1")
    c = make_cluster("--http-port", str(port))
    # the clocks start 1 ms after creation (join_ms) and nobody moves within 10 minutes
    policy = pb.TimePolicy(move_ms=600_000, bank_ms=9_000, join_ms=1)

    async def go():
        async with grpc.aio.insecure_channel(c.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return [await stub.CreateMatch(pb.CreateMatchRequest(
                game="goa", seats=2, seed=s, time_policy=policy), metadata=md(ADMIN))
                for s in range(4)]

    made = asyncio.run(go())
    assert {shard.of_match(m.match_id) for m in made} == {"w1", "w2"}
    deadline = time.monotonic() + 30
    while True:
        try:
            listed = httpx.get(f"http://127.0.0.1:{port}/api/matches", timeout=5).json()
            break
        except httpx.HTTPError:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    rows = listed["matches"] if isinstance(listed, dict) else listed
    ids = {m["id"] for m in rows}
    assert {m.match_id for m in made} <= ids
    assert {m["state"] for m in rows if m["id"] in ids} == {"running"}
    # a running match of the other worker: its replay so far from the store, and its live
    # feed from its owner (the first public update arrives, not an early game_over)
    other = next(m for m in made if shard.of_match(m.match_id) == "w2")
    doc = httpx.get(f"http://127.0.0.1:{port}/api/matches/{other.match_id}", timeout=10)
    assert doc.status_code == 200, doc.text[:300]
    assert doc.json()["frames"]
    with httpx.stream("GET", f"http://127.0.0.1:{port}/api/matches/{other.match_id}/live",
                      timeout=10) as live:
        first = json.loads(next(line for line in live.iter_lines()
                                if line.startswith("data:"))[5:])
    assert first["type"] == "update"
    # its clocks as its owner runs them: the policy, the seat to act and its deadline, in the
    # owner's time (now_ms), so that the page counts down as it does for a local match
    clock = first["clock"]
    assert clock is not None, "no clocks for another worker's match"
    assert (clock["move_ms"], clock["bank_ms"], clock["bank_left_ms"]) == (600_000, 9_000,
                                                                         [9_000, 9_000])
    assert clock["seat"] == first["current_seat"] >= 0 and clock["deadline_ms"] > 0
    assert first["now_ms"] > 0


def test_each_worker_holds_its_matches_leases_under_its_own_name(cluster: ClusterHandle):
    """The store's leases (several referees on one store) name each worker apart: workers
    sharing one name would release and renew each other's leases; a restarted worker keeps
    its name, so it gets its matches back at once."""
    import sqlite3

    async def go():
        async with grpc.aio.insecure_channel(cluster.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            return [await create(stub, "goa", 2, s) for s in range(2)]

    made = asyncio.run(go())
    with sqlite3.connect(cluster.data / "referee.sqlite3") as db:
        owners = dict(db.execute("SELECT match_id, owner FROM leases").fetchall())
    for m in made:
        assert owners[m.match_id].endswith(":" + shard.of_match(m.match_id)), owners
