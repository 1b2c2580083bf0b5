"""The many-host recipe (issue 22 item 2, docs/organizer/many-hosts.md), run as written: a
PostgreSQL store (bench/pgserver.py), two referees as two "hosts" on two loopback ports
(`referee serve --shard wK --advertise ADDR --store URL --lease-owner hK --lease-ttl 1`, each
with a data directory of its own and the first one's bot-seats.key and record-signing.key), and
nginx in front with the configuration `referee proxy-config` prints. Unchanged SDK bots play through nginx.

Host h1 is killed with -9 mid-match: nginx sends its shard's calls to h2, which takes its
matches over once their leases expire; the bots finish every match, every acknowledged move is
in the record, and CreateMatch keeps working meanwhile. h1 then comes back: it leaves the
matches h2 holds with h2 (it hands their calls, a Play stream included, to h2), nothing is run
twice, and new matches spread over both hosts again. Rules play no part here: random legal
moves of Batavia (3 seats) and Goa.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from referee_client import Backoff
from referee_client.bot import play
from referee_client.bots.random_bot import RandomBot

from bench.cluster import terminate
from referee.server.base import shard
from referee.server.cluster import free_port
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import pg_server  # noqa: F401 - the session's PostgreSQL

from .conftest import ADMIN, _nginx, log_events
from .test_cluster import Acked, create, md, record

TTL = "1"


class Host:
    """One referee of the recipe: `referee serve --shard wK --advertise 127.0.0.1:PORT`."""

    def __init__(self, tmp: Path, name: str, shard_name: str, port: int, store_url: str,
                 peers: str):
        self.name = name
        self.data = tmp / name
        self.data.mkdir(exist_ok=True)
        token_file = tmp / "admin.token"
        token_file.write_text(ADMIN + "\n")
        token_file.chmod(0o600)
        self.port_file = tmp / f"{name}.port"
        self.address = f"127.0.0.1:{port}"
        self.argv = [sys.executable, "-m", "referee.cli", "serve", "--shard", shard_name,
                     "--advertise", self.address, "--peers", peers,
                     "--host", "127.0.0.1", "--port", str(port),
                     "--store", store_url, "--lease-owner", name, "--lease-ttl", TTL,
                     "--data-dir", str(self.data), "--admin-token-file", str(token_file),
                     "--port-file", str(self.port_file), "--log-format", "json"]
        self.runs: list[Path] = []
        self.proc: subprocess.Popen | None = None
        self.web = 0

    def start(self, *extra: str) -> None:
        self.port_file.unlink(missing_ok=True)
        log = self.data.parent / f"{self.name}-{len(self.runs)}.log"
        self.runs.append(log)
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([*self.argv, *extra], stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not self.port_file.exists():
            assert self.proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, f"{self.name} did not start"
            time.sleep(0.05)

    def events(self, name: str, run: int | None = None) -> list[dict]:
        logs = self.runs if run is None else [self.runs[run]]
        return [e for log in logs for e in log_events(log, name)]

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None:
            terminate(self.proc, 20)


class Proxy:
    """nginx with the configuration of `referee proxy-config`."""

    def __init__(self, tmp: Path, hosts: dict[str, Host]):
        self.dir = tmp / "proxy"
        self.port = free_port("127.0.0.1")
        self.address = f"127.0.0.1:{self.port}"
        argv = [sys.executable, "-m", "referee.cli", "proxy-config", "--listen", self.address,
                "--dir", str(self.dir), "--down-after", "1"]
        for s, h in hosts.items():
            argv += ["--shard", f"{s}={h.address}"]
        conf = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
        self.conf = tmp / "nginx.conf"
        self.conf.write_text(conf.stdout)
        nginx = _nginx()
        assert nginx is not None
        self.proc = subprocess.Popen(
            [nginx, "-e", str(self.dir / "nginx.log"), "-p", str(self.dir), "-c", str(self.conf)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, (self.dir / "nginx.log").read_text()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not listen"
                time.sleep(0.05)

    def stop(self) -> None:
        terminate(self.proc, 10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # its worker process


@pytest.fixture
def recipe(tmp_path, pg_server):  # noqa: F811
    if _nginx() is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light)")
    url = pg_server.new_database()
    ports = [free_port("127.0.0.1") for _ in range(2)]
    peers = f"w1=127.0.0.1:{ports[0]},w2=127.0.0.1:{ports[1]}"
    h1 = Host(tmp_path, "h1", "w1", ports[0], url, peers)
    h2 = Host(tmp_path, "h2", "w2", ports[1], url, peers)
    started: list = []
    h1.web = free_port("127.0.0.1")  # the web viewer runs on h1
    try:
        h1.start("--http-port", str(h1.web))
        started.append(h1)
        # another host: its own data directory, the first one's bot seat and signing keys
        shutil.copy(h1.data / "bot-seats.key", h2.data / "bot-seats.key")
        shutil.copy(h1.data / "record-signing.key", h2.data / "record-signing.key")
        h2.start()
        started.append(h2)
        proxy = Proxy(tmp_path, {"w1": h1, "w2": h2})
        started.append(proxy)
        yield h1, h2, proxy, url
    finally:
        for p in reversed(started):
            p.stop()


def _leases(url: str) -> dict[str, tuple[str, str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {m: (o, a) for m, o, a in
                conn.execute("SELECT match_id, owner, address FROM leases").fetchall()}


async def _served(stub, mid: str, token: str) -> pb.Decision:
    """GetLegalMoves until served, retrying UNAVAILABLE as a client does: the proxy's (its
    reason unset) or a referee's that cannot reach the match's holder yet (NOT_OWNER)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                            metadata=md(token), timeout=10)
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.UNAVAILABLE, err
            assert dict(err.trailing_metadata() or ()).get("referee-reason") in (
                None, "NOT_OWNER"), err
            assert time.monotonic() < deadline, "never served"
            await asyncio.sleep(0.1)


async def _moves(stub, mid: str, tokens: list[str], n: int) -> int:
    """``n`` moves by whoever acts (the first legal move); the state version after them."""
    version = 0
    for _ in range(n):
        for t in tokens:
            d = await _served(stub, mid, t)
            if d.legal_moves:
                r = await stub.SubmitMove(pb.SubmitMoveRequest(
                    match_id=mid, state_version=d.state_version, move=d.legal_moves[0]),
                    metadata=md(t), timeout=10)
                assert r.accepted
                version = r.state_version
                break
    return version


def _web_follows(port: int, match_id: str) -> None:
    """The viewer at ``port`` serves the running match's replay so far, then its live feed."""
    import httpx

    base = f"http://127.0.0.1:{port}/api/matches/{match_id}"
    deadline = time.monotonic() + 30
    while True:
        try:
            doc = httpx.get(base, timeout=10)
            break
        except httpx.HTTPError:
            assert time.monotonic() < deadline, "the viewer did not answer"
            time.sleep(0.2)
    assert doc.status_code == 200, doc.text[:300]
    assert doc.json()["frames"]
    with httpx.stream("GET", f"{base}/live", timeout=10) as live:
        first = next(line for line in live.iter_lines() if line.startswith("data:"))
    assert json.loads(first[5:])["type"] == "update"


def _check_records(made, bots, records) -> None:
    for m in made:
        rec = records[m.match_id]
        assert rec["result"], m.match_id
        assert [e["n"] for e in rec["moves"]] == list(range(1, len(rec["moves"]) + 1))
        played = {(e["seat"], e["version_before"] + 1) for e in rec["moves"]}
        for s in m.seats:
            acked = {(s.seat, v) for v in bots[m.match_id, s.seat].acked}
            assert acked <= played, (m.match_id, s.seat, acked - played)


def test_a_dead_hosts_matches_move_to_the_other_and_stay_there_when_it_returns(recipe):
    h1, h2, proxy, url = recipe
    backoff = Backoff(initial=0.05, maximum=0.5, give_up_after=90)

    def bots_for(made):
        bots = {(m.match_id, s.seat): Acked(s.seat) for m in made for s in m.seats}
        tasks = {(m.match_id, s.seat): asyncio.ensure_future(
            play(bots[m.match_id, s.seat], proxy.address, m.match_id, s.token, backoff=backoff))
            for m in made for s in m.seats}
        return bots, tasks

    async def finish(bots, tasks) -> None:
        done, _ = await asyncio.wait(tasks.values(), timeout=180)
        assert len(done) == len(tasks), {k: len(bots[k].acked) for k, t in tasks.items()
                                         if not t.done()}
        for over, stats in [t.result() for t in tasks.values()]:
            assert over.match_id and stats.refused == 0

    async def go():
        async with grpc.aio.insecure_channel(proxy.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            # CreateMatch goes to either host: the matches spread, each id naming its shard
            made = [await create(stub, "batavia", 3, seed) for seed in range(4)]
            assert {shard.of_match(m.match_id) for m in made} == {"w1", "w2"}
            # a match of h1 no bot plays: moved by hand across the death and the return
            slow = next(m for m in [await create(stub, "goa", 2, s) for s in (50, 51)]
                        if shard.of_match(m.match_id) == "w1")
            slow_tokens = [s.token for s in slow.seats]
            before = await _moves(stub, slow.match_id, slow_tokens, 4)
            leases = _leases(url)
            assert leases[slow.match_id] == ("h1", h1.address)

            bots, tasks = bots_for(made)
            on_h1 = [m for m in made if shard.of_match(m.match_id) == "w1"]
            while min(sum(len(bots[m.match_id, s.seat].acked) for s in m.seats)
                      for m in on_h1) < 8:
                assert not all(t.done() for t in tasks.values())
                await asyncio.sleep(0.02)
            h1.kill()
            live = {mid for (mid, _), t in tasks.items()
                    if shard.of_match(mid) == "w1" and not t.done()}

            # meanwhile new matches are created (on h2, the only host up) and played
            during = [await create(stub, "goa", 2, 60 + k) for k in range(2)]
            assert {shard.of_match(m.match_id) for m in during} == {"w2"}
            more_bots, more = bots_for(during)
            bots.update(more_bots)
            tasks.update(more)
            # the slow match: served again once its lease expired, with every move h1 acked
            d = await _served(stub, slow.match_id, slow_tokens[0])
            assert d.state_version == before
            before = await _moves(stub, slow.match_id, slow_tokens, 3)

            await finish(bots, tasks)
            records = {m.match_id: await record(stub, m.match_id) for m in [*made, *during]}
            _check_records([*made, *during], bots, records)
            taken = {e["match_id"] for e in h2.events("match_taken_over")}
            assert live | {slow.match_id} <= taken, (live, taken)
            assert _leases(url)[slow.match_id] == ("h2", h2.address)

            # h1 returns: it leaves the slow match with h2, and hands its calls on to it
            await asyncio.get_running_loop().run_in_executor(None, h1.start, "--http-port",
                                                             str(h1.web))
            # its web viewer shows the slow match, run by h2: its moves so far from the
            # store, then live through h2 (the lease's address)
            _web_follows(h1.web, slow.match_id)
            # nginx tries a host it found down again --down-after (1 s) later: from then on
            # new matches spread over both hosts again
            after = []
            deadline = time.monotonic() + 60
            while {shard.of_match(m.match_id) for m in after[-2:]} != {"w1", "w2"}:
                assert time.monotonic() < deadline, [m.match_id for m in after]
                after.append(await create(stub, "goa", 2, 70 + len(after)))
                await asyncio.sleep(0.1)
            d = await _served(stub, slow.match_id, slow_tokens[0])
            assert d.state_version == before
            assert _leases(url)[slow.match_id] == ("h2", h2.address)
            # the slow match's seats play it out: their Play streams reach h1 (their shard's
            # host again), which hands them whole to h2
            bots2, tasks2 = bots_for([*after, slow])
            await finish(bots2, tasks2)
            records = {m.match_id: await record(stub, m.match_id) for m in [*after, slow]}
            _check_records(after, bots2, records)
            _check_records([slow], bots2, records)
            assert len(records[slow.match_id]["moves"]) > before
            resumed = {e["match_id"] for e in h1.events("match_resumed", run=1)} | {
                e["match_id"] for e in h1.events("match_taken_over", run=1)}
            assert slow.match_id not in resumed and not live & resumed
            # no write was ever fenced off: no match was run by two hosts at once
            assert not h1.events("match_lost") and not h2.events("match_lost")

    asyncio.run(go())


def test_a_bots_session_follows_the_home_host_across_its_death_and_return(recipe):
    """A persistent bot (RegisterBot, Session: its token names the home shard w1) gets every
    match bound to it: created through either host while both run (the other hands the
    CreateMatch to the home host, where the bot's session is), on h2 while h1 is dead (the
    proxy sends the session there too), and on h1 again once it is back (h2 ends the
    sessions it took in, and they reconnect to h1)."""
    from referee_client import session

    h1, h2, proxy, _ = recipe
    backoff = Backoff(initial=0.05, maximum=0.5, give_up_after=90)

    async def go():
        async with grpc.aio.insecure_channel(proxy.address) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            resp = await stub.RegisterBot(pb.RegisterBotRequest(name="alice"),
                                          metadata=md(ADMIN))
            assert shard.of_token(resp.bot_token) == shard.HOME
            seen: list[str] = []

            def factory(a):
                seen.append(a.match_id)
                return RandomBot(a.seat)

            bot = asyncio.ensure_future(session(factory, proxy.address, resp.bot_token,
                                                capacity=4, backoff=backoff))

            async def bound(n: int, seed: int) -> list[str]:
                ids = []
                for k in range(n):
                    r = await stub.CreateMatch(pb.CreateMatchRequest(
                        game="goa", seats=2, seed=seed + k, seat_bots=["alice", "alice"]),
                        metadata=md(ADMIN), timeout=30)
                    ids.append(r.match_id)
                return ids

            async def played(ids: list[str]) -> None:
                deadline = time.monotonic() + 120
                for i in ids:
                    while True:
                        assert not bot.done(), bot
                        try:
                            if (await record(stub, i))["result"]:
                                break
                        except (grpc.aio.AioRpcError, AssertionError):
                            pass
                        assert time.monotonic() < deadline, (i, seen)
                        await asyncio.sleep(0.1)
                assert set(ids) <= set(seen)

            first = await bound(2, 1)  # round robin: one lands on h2, which hands it to h1
            assert {shard.of_match(i) for i in first} == {shard.HOME}
            await played(first)
            h1.kill()
            during = await bound(2, 11)  # the home host is down: created on h2
            assert {shard.of_match(i) for i in during} == {"w2"}
            await played(during)
            await asyncio.get_running_loop().run_in_executor(None, h1.start, "--http-port",
                                                             str(h1.web))
            deadline = time.monotonic() + 60
            back: list[str] = []
            while shard.HOME not in {shard.of_match(i) for i in back}:
                assert time.monotonic() < deadline, back
                back += await bound(1, 21 + len(back))
                await asyncio.sleep(0.1)
            await played(back)
            bot.cancel()
            # h2's hand-back runs once a lease period and logs after it has ended the sessions:
            # the bot may reconnect and play on h1 before the line is read here
            deadline = time.monotonic() + 15
            while not h2.events("sessions_handed_back"):
                assert time.monotonic() < deadline, h2.runs[-1].read_text()[-4000:]
                await asyncio.sleep(0.2)

    asyncio.run(go())


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True,
                          text=True, timeout=60, check=False, cwd=cwd)


def test_proxy_config_prints_a_configuration_nginx_accepts(tmp_path):
    nginx = _nginx()
    if nginx is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light)")
    out = _cli("proxy-config", "--shard", "w1=10.0.0.1:50051", "--shard", "w2=[fd00::2]:50051",
               "--shard", "w3=db3.example.org:7000", "--listen", "127.0.0.1:50999",
               "--dir", str(tmp_path / "px"))
    assert out.returncode == 0, out.stderr
    conf = tmp_path / "nginx.conf"
    conf.write_text(out.stdout)
    # each shard's own host first, the others as its backups; anything else to any host
    w1 = ("server 10.0.0.1:50051 max_fails=1 fail_timeout=2s;\n"
          "        server [fd00::2]:50051 backup;\n"
          "        server db3.example.org:7000 backup;")
    assert w1 in out.stdout
    assert "grpc_next_upstream error timeout;" in out.stdout
    check = subprocess.run([nginx, "-t", "-q", "-e", str(tmp_path / "px" / "e.log"), "-p",
                            str(tmp_path / "px"), "-c", str(conf)],
                           capture_output=True, text=True, timeout=60, check=False)
    # the names need not resolve here for the syntax; nginx resolves them at start
    assert check.returncode == 0 or "host not found" in check.stderr, check.stderr


def test_proxy_config_rate_holds_the_spread_calls_in_nginx(tmp_path):
    """`--rate`: nginx itself limits the calls it spreads over the hosts, per client address,
    and answers a refusal as a referee would (RESOURCE_EXHAUSTED and its reason trailer)."""
    nginx = _nginx()
    if nginx is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light)")
    out = _cli("proxy-config", "--shard", "w1=127.0.0.1:50051", "--shard", "w2=127.0.0.1:50052",
               "--listen", "127.0.0.1:50999", "--rate", "5", "--burst", "3",
               "--dir", str(tmp_path / "px"))
    assert out.returncode == 0, out.stderr
    assert "limit_req_zone $referee_spread_client zone=referee_spread:10m rate=300r/m;" \
        in out.stdout
    assert "limit_req zone=referee_spread burst=2 nodelay;" in out.stdout
    assert "add_header referee-reason RESOURCE_EXHAUSTED always;" in out.stdout
    without = _cli("proxy-config", "--shard", "w1=127.0.0.1:50051", "--dir", str(tmp_path / "px"))
    assert "limit_req" not in without.stdout
    conf = tmp_path / "nginx.conf"
    conf.write_text(out.stdout)
    check = subprocess.run([nginx, "-t", "-q", "-e", str(tmp_path / "px" / "e.log"), "-p",
                            str(tmp_path / "px"), "-c", str(conf)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stderr


@pytest.mark.parametrize(("args", "said"), [
    (["--shard", "w2=10.0.0.2:50051"], "no --shard w1=HOST:PORT"),
    (["--shard", "w1=10.0.0.1:50051", "--shard", "w1=10.0.0.2:50051"], "given twice"),
    (["--shard", "w1=10.0.0.1:50051", "--shard", "w2=10.0.0.1:50051"], "already shard w1"),
    (["--shard", "w1=10.0.0.1"], "expected HOST:PORT"),
    (["--shard", "w1=10.0.0.1:99999"], "not a port number"),
    (["--shard", "x1=10.0.0.1:5"], "a shard is w1"),
    (["--shard", "10.0.0.1:5"], "expected SHARD=HOST:PORT"),
    ([], "--shard"),
    (["--shard", "w1=10.0.0.1:5", "--rate", "-1"], "--rate is at least 0"),
])
def test_proxy_config_says_what_is_wrong(tmp_path, args, said):
    out = _cli("proxy-config", "--dir", str(tmp_path / "px"), *args)
    assert out.returncode == 2 and said in out.stderr, out.stderr
    assert not out.stdout


def test_advertise_is_one_referee_per_host_not_a_cluster(tmp_path):
    out = _cli("serve", "--workers", "2", "--advertise", "10.0.0.1:50051", "--data-dir",
               str(tmp_path / "d"))
    assert out.returncode == 2 and "not with --workers" in out.stderr, out.stderr
    out = _cli("serve", "--advertise", "nowhere", "--data-dir", str(tmp_path / "d"))
    assert out.returncode == 2 and "expected HOST:PORT" in out.stderr, out.stderr
    out = _cli("serve", "--trusted-proxy", "nginx.local", "--data-dir", str(tmp_path / "d"))
    assert out.returncode == 2 and "expected an IP address" in out.stderr, out.stderr


def test_a_refusal_is_passed_on_as_the_owner_gave_it_and_an_unreachable_owner_as_not_owner():
    """What a referee that handed a call on tells its caller (forward._passed_on): the owner's
    status, message and reason; and when the owner could not be reached at all (a dead host
    whose lease has not expired yet), UNAVAILABLE with reason NOT_OWNER, which clients retry."""
    from grpc.aio import AioRpcError, Metadata

    from referee.server.front.forward import _passed_on

    refused = AioRpcError(grpc.StatusCode.FAILED_PRECONDITION, Metadata(),
                          Metadata(("referee-reason", "MATCH_OVER")), "match w1-00 is over")
    assert _passed_on(refused) == (grpc.StatusCode.FAILED_PRECONDITION, "match w1-00 is over",
                                   (("referee-reason", "MATCH_OVER"),))
    gone = AioRpcError(grpc.StatusCode.UNAVAILABLE, Metadata(), Metadata(),
                       "failed to connect to all addresses; last error: UNKNOWN: "
                       "ipv4:127.0.0.1:9: Failed to connect to remote host: Connection refused")
    code, _, trailers = _passed_on(gone)
    assert code == grpc.StatusCode.UNAVAILABLE
    assert ("referee-reason", "NOT_OWNER") in trailers
