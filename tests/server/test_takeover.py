"""Several `referee serve` processes on one store (issue 22): leases and take-over.

Two referees, A and B, share one store: one SQLite file (both on one data directory) or one
PostgreSQL database (each with a data directory of its own, as on two hosts; the bot seat key
copied, as docs/organizer/postgresql.md says). Leases last 1 s here (`--lease-ttl 1`).

* A is killed with -9: a seat's next call to B succeeds once A's lease has expired (until then
  B answers UNAVAILABLE / NOT_OWNER and the client calls again), with every move A
  acknowledged, and B plays the match on; the record of a match A finished is served by B.
* A is stopped (SIGSTOP) past its lease: B takes the match over; A, resumed (SIGCONT), is
  refused (NOT_OWNER) and writes nothing.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, play_match, reason_of

TTL = "1"


class Referee:
    """One `referee serve` process on the shared store."""

    def __init__(self, tmp: Path, name: str, data: Path, store_url: str):
        self.name = name
        self.data = data
        self.port_file = tmp / f"{name}.port"
        token_file = tmp / "admin.token"
        token_file.write_text(ADMIN + "\n")
        token_file.chmod(0o600)
        args = [sys.executable, "-m", "referee.cli", "serve", "--port", "0", "--port-file",
                str(self.port_file), "--data-dir", str(data), "--admin-token-file",
                str(token_file), "--lease-owner", name, "--lease-ttl", TTL,
                "--log-level", "info"]
        if store_url:
            args += ["--store", store_url]  # no password in it: the test cluster trusts its socket
        self.log = open(tmp / f"{name}.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not self.port_file.exists():
            assert self.proc.poll() is None, (tmp / f"{name}.log").read_text()
            assert time.monotonic() < deadline, f"referee {name} did not start"
            time.sleep(0.05)
        self.target = f"127.0.0.1:{int(self.port_file.read_text())}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


def pair(tmp_path: Path, store_url: str) -> tuple[Referee, Referee]:
    data_a = tmp_path / "a"
    a = Referee(tmp_path, "A", data_a, store_url)
    if not store_url:  # one SQLite file: one data directory
        return a, Referee(tmp_path, "B", data_a, store_url)
    data_b = tmp_path / "b"  # "another host": its own data directory, the same seat key
    data_b.mkdir()
    shutil.copy(data_a / "bot-seats.key", data_b / "bot-seats.key")
    shutil.copy(data_a / "record-signing.key", data_b / "record-signing.key")
    return a, Referee(tmp_path, "B", data_b, store_url)


async def actor(stub, mid: str, tokens: list[str]) -> tuple[int, pb.Decision]:
    for seat, token in enumerate(tokens):
        d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid), metadata=md(token))
        if d.legal_moves:
            return seat, d
    raise AssertionError("nobody to act")


async def play(stub, mid: str, tokens: list[str], n: int) -> int:
    """``n`` moves (the first legal one each time); the version after them."""
    version = 0
    for _ in range(n):
        seat, d = await actor(stub, mid, tokens)
        r = await stub.SubmitMove(pb.SubmitMoveRequest(
            match_id=mid, state_version=d.state_version, move=d.legal_moves[0]),
            metadata=md(tokens[seat]))
        assert r.accepted
        version = r.state_version
    return version


async def until_served(stub, mid: str, token: str) -> tuple[pb.Decision, set[str]]:
    """Call until the referee serves the match, as a client retries UNAVAILABLE; the reasons
    of the refusals on the way."""
    refusals: set[str] = set()
    deadline = time.monotonic() + 30
    while True:
        try:
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                         metadata=md(token))
            return d, refusals
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.UNAVAILABLE, err
            refusals.add(reason_of(err) or "")
            assert time.monotonic() < deadline, "never taken over"
            await asyncio.sleep(0.1)


def test_a_killed_referees_match_is_taken_over_with_every_acknowledged_move(store_url,
                                                                           tmp_path):
    a, b = pair(tmp_path, store_url)
    try:
        async def on_a():
            async with grpc.aio.insecure_channel(a.target) as ch:
                stub = referee_pb2_grpc.RefereeStub(ch)
                done, done_tokens = await create(stub, seats=3, seed=1)
                mid, tokens = await create(stub, seats=3, seed=77)
                version = await play(stub, mid, tokens, 15)
            await play_match(a.target, done, done_tokens, seed=2)
            return done, mid, tokens, version

        done, mid, tokens, version = asyncio.run(on_a())
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait(10)

        async def on_b():
            async with grpc.aio.insecure_channel(b.target) as ch:
                stub = referee_pb2_grpc.RefereeStub(ch)
                d, refusals = await until_served(stub, mid, tokens[0])
                assert refusals <= {"NOT_OWNER"}
                assert d.state_version == version  # every move A acknowledged
                after = await play(stub, mid, tokens, 5)
                # a match A finished: its record, from any referee (PostgreSQL: from the store)
                rec = await stub.GetRecord(pb.GetRecordRequest(match_id=done))
                return after, rec

        after, rec = asyncio.run(on_b())
        assert after > version
        assert rec.complete and json.loads(rec.record_json)["match_id"] == done
        logs = asyncio.run(play_match(b.target, mid, tokens, seed=3))
        assert all(log.game_over is not None for log in logs)
    finally:
        a.stop()
        b.stop()


def test_a_stalled_referee_is_fenced_off_after_a_take_over(store_url, tmp_path):
    a, b = pair(tmp_path, store_url)
    try:
        async def before():
            async with grpc.aio.insecure_channel(a.target) as ch:
                stub = referee_pb2_grpc.RefereeStub(ch)
                mid, tokens = await create(stub, seats=3, seed=99)
                return mid, tokens, await play(stub, mid, tokens, 8)

        mid, tokens, version = asyncio.run(before())
        os.kill(a.proc.pid, signal.SIGSTOP)
        try:
            async def take_over():
                async with grpc.aio.insecure_channel(b.target) as ch:
                    stub = referee_pb2_grpc.RefereeStub(ch)
                    d, _ = await until_served(stub, mid, tokens[0])
                    assert d.state_version == version
                    return await play(stub, mid, tokens, 3)

            taken = asyncio.run(take_over())
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)

        async def stale():
            """A still holds its old copy: whatever it is asked for this match now, it is
            refused with NOT_OWNER, and no move of A's reaches the store."""
            async with grpc.aio.insecure_channel(a.target) as ch:
                stub = referee_pb2_grpc.RefereeStub(ch)
                reasons = set()
                for token in tokens:
                    try:
                        d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=mid),
                                                     metadata=md(token))
                        if d.legal_moves:
                            await stub.SubmitMove(pb.SubmitMoveRequest(
                                match_id=mid, state_version=d.state_version,
                                move=d.legal_moves[0]), metadata=md(token))
                            reasons.add("accepted")
                    except grpc.aio.AioRpcError as err:
                        assert err.code() == grpc.StatusCode.UNAVAILABLE, err
                        reasons.add(reason_of(err))
                return reasons

        assert asyncio.run(stale()) == {"NOT_OWNER"}

        async def after():
            async with grpc.aio.insecure_channel(b.target) as ch:
                stub = referee_pb2_grpc.RefereeStub(ch)
                _, d = await actor(stub, mid, tokens)
                return d.state_version

        assert asyncio.run(after()) == taken  # B's state is the store's: nothing of A's
    finally:
        a.stop()
        b.stop()


def test_a_twin_run_by_another_referee_embargoes_a_finished_match(store_url, make_server,
                                                                  tmp_path):
    """The embargo (docs/ARCHITECTURE.md, *Hidden information*) counts the same-seed matches
    every referee on the store runs, not only its own: A's finished match keeps its record
    back while B runs a match on the same seed."""
    a = make_server(tmp_path / "a", store_url=store_url, lease_owner="A")
    if store_url:
        (tmp_path / "b").mkdir()
        shutil.copy(tmp_path / "a" / "bot-seats.key", tmp_path / "b" / "bot-seats.key")
        shutil.copy(tmp_path / "a" / "record-signing.key", tmp_path / "b" / "record-signing.key")
    b = make_server(tmp_path / ("b" if store_url else "a"), store_url=store_url,
                    lease_owner="B")

    async def go():
        async with grpc.aio.insecure_channel(b.target) as ch:
            await create(referee_pb2_grpc.RefereeStub(ch), seats=3, seed=555)
        async with grpc.aio.insecure_channel(a.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=555)
            await play_match(a.target, mid, tokens, seed=4)
            try:
                await stub.GetRecord(pb.GetRecordRequest(match_id=mid))
            except grpc.aio.AioRpcError as err:
                return err
            return None

    err = asyncio.run(go())
    assert err is not None, "the record was served while a same-seed match runs on B"
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and reason_of(err) == "EMBARGOED"
