"""A rolling restart under load loses nothing (issue 37 item 3; docs/organizer/cluster.md,
"Rolling restarts"): ``referee serve --workers 2`` behind its nginx, SDK bots playing many
Batavia matches at once (each finished match replaced by a new one until the restart is done),
and ``referee restart --rolling`` restarting every worker in turn meanwhile. Then: every match
finishes with a complete, signed record (progress, within the load's own bound; no time is
asserted), every move acknowledged to a bot is in its record with the state hash the bot was
given, no move was refused, each worker drained and exited cleanly (code 0: not killed at the
bound), every seat of a match its worker restarted under it reconnected, and the other worker
took such matches over while it restarted (the draining worker released their leases; nginx
sent their calls to the other worker while nothing listened on its socket). With the SQLite
store and with PostgreSQL as the shared store.

The output (``-s``) gives the pause of the matches under way across each worker's restart: the
longest time between two acknowledged moves of the match (figures for the report, no bound
asserted: the machine is shared)."""
from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import datetime

import grpc
import pytest
from referee_client import Backoff, check_record
from referee_client.bot import PlayStats, play

from referee.server.base import shard, signing
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import pg_server  # noqa: F401 - the session's PostgreSQL

from .conftest import ADMIN, ClusterHandle, log_events
from .test_cluster import Acked, md, record

CONCURRENT = 8  # matches under way at once
FINISH_S = 180.0  # the matches under way when the restart is done have this long to end


#: each bot's thinking time a move (awaited: the bots share one event loop), so that a match
#: lasts longer than a worker's restart and some are under way across it (asserted below): at
#: full speed a Batavia match could end, taken over by the other worker, before the restarted
#: one was back
THINK_S = 0.01


class Timed(Acked):
    """Acked, with the time (time.time()) of each accepted move: the pauses."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.times: list[float] = []

    def choose(self, decision):
        move = super().choose(decision)

        async def thought():
            await asyncio.sleep(THINK_S)
            return move

        return thought()

    def on_move_result(self, result) -> None:
        super().on_move_result(result)
        if result.accepted:
            self.times.append(time.time())


def longest_pause(bots: list[Timed]) -> float:
    """The longest time between two acknowledged moves of one match (any seats)."""
    times = sorted(t for b in bots for t in b.times)
    return max((b - a for a, b in itertools.pairwise(times)), default=0.0)


@dataclass
class Run:
    match: pb.CreateMatchResponse
    bots: list[Timed]
    stats: list[PlayStats]
    started: float  # time.time(): compared with the supervisor's log timestamps
    ended: float


async def _create(stub, n: int) -> pb.CreateMatchResponse:
    """CreateMatch, called again with the same request_id on UNAVAILABLE (a worker draining or
    restarting): the tournament runner's way, which never creates a match twice."""
    req = pb.CreateMatchRequest(game="batavia", seats=3, seed=n, request_id=f"roll-{n}")
    while True:
        try:
            return await stub.CreateMatch(req, metadata=md(ADMIN), timeout=30)
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.UNAVAILABLE, err
            await asyncio.sleep(0.1)


async def _one(stub, address: str, n: int) -> Run:
    m = await _create(stub, n)
    bots = [Timed(n * 10 + s.seat) for s in m.seats]
    started = time.time()
    backoff = Backoff(initial=0.05, maximum=0.5, give_up_after=90)
    results = await asyncio.gather(*(play(bots[i], address, m.match_id, s.token,
                                          backoff=backoff) for i, s in enumerate(m.seats)))
    return Run(m, bots, [stats for _, stats in results], started, time.time())


def _ts(doc: dict) -> float:
    return datetime.fromisoformat(doc["timestamp"].replace("Z", "+00:00")).timestamp()


def _rolling_restart_under_load(c: ClusterHandle) -> None:
    async def go():
        async with grpc.aio.insecure_channel(c.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            runs: list[Run] = []
            live: set[asyncio.Task] = set()
            made = 0
            roller: asyncio.subprocess.Process | None = None
            while True:
                if roller is None or roller.returncode is None:  # keep the load up
                    while len(live) < CONCURRENT:
                        live.add(asyncio.ensure_future(_one(stub, c.address, made)))
                        made += 1
                done, _ = await asyncio.wait(live, timeout=0.2,
                                             return_when=asyncio.FIRST_COMPLETED)
                for t in done:
                    runs.append(t.result())
                    live.discard(t)
                if roller is None and len(runs) >= CONCURRENT // 2:
                    # the load is under way: restart every worker in turn, as an operator does
                    roller = await asyncio.create_subprocess_exec(
                        sys.executable, "-m", "referee.cli", "restart", "--rolling",
                        "--data-dir", str(c.data), "--timeout", "300",
                        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
                if roller is not None and roller.returncode is not None:
                    break
            roll_out, _ = await roller.communicate()
            assert roller.returncode == 0, roll_out.decode()
            assert b"rolling restart done" in roll_out
            # no match stalled: those under way end within the load's own bound
            if live:
                done, pending = await asyncio.wait(live, timeout=FINISH_S)
                assert not pending, f"{len(pending)} matches never ended"
                runs += [t.result() for t in done]
            key = (await stub.GetSigningKey(pb.GetSigningKeyRequest())).public_key
            for r in runs:
                rec = await record(stub, r.match.match_id)
                assert rec["result"] and signing.check_signature(rec, key) is None
                played = {(e["seat"], e["version_before"] + 1) for e in rec["moves"]}
                for s, bot, stats in zip(r.match.seats, r.bots, r.stats, strict=True):
                    # 0 acknowledged moves lost: each is in the record, with the hash given
                    acked = {(s.seat, v) for v in bot.acked}
                    assert acked <= played, (r.match.match_id, s.seat, acked - played)
                    assert check_record(rec, stats.receipts) == []
                    assert stats.refused == 0
            return runs

    runs = asyncio.run(go())
    rolled = c.events("cluster_rolled")
    assert len(rolled) == 1
    handed: dict[str, set[str]] = {}
    for w in ("w1", "w2"):
        draining = [d for d in c.events("cluster_worker_draining") if d["child"] == w]
        back = [d for d in c.events("cluster_child_restarted")
                if d["child"] == w and d.get("rolling")]
        assert len(draining) == len(back) == 1
        assert back[0]["code"] == 0  # it drained and stopped by itself, not killed at the bound
        assert log_events(c.data / "cluster" / f"{w}.log", "drained")
        # every client of a match this worker held when it stopped and again when it came back
        # saw the stream end and reconnected
        spanning = [r for r in runs if shard.of_match(r.match.match_id) == w
                    and r.started < _ts(draining[0]) and r.ended > _ts(back[0])]
        assert spanning, f"no match of {w} was under way across its restart: load too short"
        for r in spanning:
            assert all(s.reconnects >= 1 for s in r.stats), (w, r.match.match_id)
        # handed over: the other worker took some of them over during the restart
        other = next(o for o in ("w1", "w2") if o != w)
        taken = {d["match_id"] for d in log_events(c.data / "cluster" / f"{other}.log",
                                                   "match_taken_over")
                 if _ts(draining[0]) <= _ts(d) <= _ts(back[0]) + 5}
        mine = {r.match.match_id for r in spanning}
        pauses = sorted(longest_pause(r.bots) for r in spanning)
        print(f"\n{w} restarted: {len(spanning)} matches under way across it, "
              f"{len(taken & mine)} taken over by {other}; longest pause between two "
              f"acknowledged moves: median {statistics.median(pauses):.2f} s, "
              f"max {pauses[-1]:.2f} s")
        handed[w] = taken & mine
    # asserted once every worker's figures are out
    for w, ids in handed.items():
        assert ids, f"no match of {w} was taken over by the other worker during its restart"


@pytest.mark.slow
def test_a_rolling_restart_under_load_loses_no_acknowledged_move(make_cluster):
    _rolling_restart_under_load(make_cluster("--drain", "3"))


@pytest.mark.slow
def test_a_rolling_restart_with_postgresql_as_the_shared_store(make_cluster, pg_server):  # noqa: F811
    _rolling_restart_under_load(make_cluster("--drain", "3", "--store",
                                             pg_server.new_database()))


def test_restart_without_a_cluster_says_so(tmp_path):
    """``referee restart --rolling`` on a data directory no cluster serves: exit 1, saying why."""
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "referee.cli", "restart", "--rolling",
                           "--data-dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 1
    assert "no cluster runs there" in proc.stderr and "supervisor.pid" in proc.stderr
