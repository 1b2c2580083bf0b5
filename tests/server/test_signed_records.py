"""Signed, verifiable match records (issue 31 item 7; docs/organizer/records.md).

On main, `referee replay verify` said OK for a record whose notes, elapsed times, timeout flags or
seat names were edited: nothing but the replay was checked. Now a finished record is signed with
the referee's Ed25519 key (over every field), reveals the salt of the seed commitment each seat's
Welcome carried, names the engine and rules versions, and every accepted MoveResult carries the
state hash the record stores (a receipt)."""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import random
import shutil
import stat
from pathlib import Path

import grpc
import jsonschema
import pytest

from referee.cli import main as cli_main
from referee.core import registry
from referee.core.provenance import engine_version, rules_version
from referee.schema import record_schema
from referee.server.base import signing
from referee.server.startup import StartupError
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ServerHandle
from .helpers import create, md, play_match

RECORDS_V1 = Path(__file__).parent.parent / "contract" / "records_v1"


class Played:
    def __init__(self, server: ServerHandle, mid: str, logs: list, path: Path,
                 key: pb.SigningKey):
        self.server, self.mid, self.logs, self.path, self.key = server, mid, logs, path, key
        self.record = json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One finished 3-seat Batavia match among random bots (one server for the module)."""
    server = ServerHandle(tmp_path_factory.mktemp("signed") / "data")
    server.start()

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=424242, names=["ann", "bob", "cy"])
        logs = await play_match(server.target, mid, tokens, seed=3)
        async with grpc.aio.insecure_channel(server.target) as ch:
            try:
                key = await referee_pb2_grpc.RefereeStub(ch).GetSigningKey(
                    pb.GetSigningKeyRequest())
            except grpc.aio.AioRpcError:  # each test that needs it says so
                key = pb.SigningKey()
        return mid, logs, key

    try:
        mid, logs, key = asyncio.run(run())
        yield Played(server, mid, logs, server.data_dir / "records" / f"{mid}.json", key)
    finally:
        server.close()


def _verify(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli_main(["replay", "verify", *argv])
    return code, capsys.readouterr().out


def _tampered(played: Played, tmp_path: Path, change) -> Path:
    doc = json.loads(played.path.read_text(encoding="utf-8"))
    change(doc)
    out = tmp_path / "tampered.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def test_a_finished_record_is_signed_and_verifies(played, capsys):
    """Issue 31 item 7: an untampered signed record verifies (signature by the data
    directory's key, commitment, replay), and names the engine and rules versions and the
    component sheet's digest."""
    rec = played.record
    assert rec["signature"]["algorithm"] == "ed25519"
    assert rec["signature"]["key_id"] == played.key.key_id
    assert rec["engine_version"] == engine_version()
    assert rec["rules_version"] == rules_version(registry.get("batavia"))
    assert rec["rules_version"].startswith("sha256:") and rec["components"]["sha256"]
    assert len(rec["seed_salt"]) == 64
    jsonschema.validate(rec, record_schema())  # the published schema describes it
    code, out = _verify(capsys, str(played.path))
    assert code == 0, out
    assert out.startswith(f"OK {len(rec['moves'])} moves")
    assert "signature: OK" in out and "commitment: OK" in out and "replay: OK" in out


def _note(doc):
    doc["moves"][3]["note"] = "I meant to play that"


def _elapsed(doc):
    doc["moves"][2]["elapsed_ms"] += 1


def _timeout(doc):
    doc["moves"][4].update(timeout=True, policy="DEFAULT_MOVE")


def _seat_name(doc):
    doc["seat_names"][1] = "mallory"


def _engine(doc):
    doc["engine_version"] = "99.0.0"


def _rejected(doc):
    doc["rejected_moves"][0] += 1


@pytest.mark.parametrize("change", [_note, _elapsed, _timeout, _seat_name, _engine, _rejected],
                         ids=["note", "elapsed_ms", "timeout", "seat_name", "engine_version",
                              "rejected_moves"])
def test_any_edit_breaks_the_signature_and_verify_names_it(played, tmp_path, capsys, change):
    """Issue 31 item 7: each of these edits leaves the replay intact (main said OK); verify
    now fails, naming the signature as the failed check."""
    path = _tampered(played, tmp_path, change)
    code, out = _verify(capsys, str(path), "--data-dir", str(played.server.data_dir))
    assert code == 1, out
    assert out.splitlines()[0] == "FAIL signature"
    assert "signature: FAIL the signature does not match" in out
    assert "replay: OK" in out  # the replay alone would not have seen it


def test_a_changed_seed_salt_fails_the_commitment_and_the_signature(played, tmp_path, capsys):
    """Issue 31 item 7: the revealed salt must hash, with the seed, to the commitment."""
    path = _tampered(played, tmp_path, lambda d: d.update(seed_salt="0" * 64))
    code, out = _verify(capsys, str(path), "--data-dir", str(played.server.data_dir))
    assert code == 1
    assert out.splitlines()[0] == "FAIL signature, commitment"
    assert "commitment: FAIL the salt and seed hash to" in out


def test_a_removed_signature_is_not_taken_for_an_old_record(played, tmp_path, capsys):
    """Issue 31 item 7: taking the signature off a finished signed record does not make it
    pass as an unsigned old one."""
    path = _tampered(played, tmp_path, lambda d: d.pop("signature"))
    code, out = _verify(capsys, str(path))
    assert code == 1 and "the signature was removed" in out


def test_another_key_or_no_key_fails(played, tmp_path, capsys):
    """Issue 31 item 7: a signed record checked against another referee's key, or with no key
    at all, fails and says why (it is not taken as verified)."""
    other = signing.load_signer(tmp_path / "other")
    key_file = tmp_path / "other.pub"
    key_file.write_text(other.public_raw.hex() + "\n")
    copy = tmp_path / "copy.json"
    copy.write_text(played.path.read_text())
    code, out = _verify(capsys, str(copy), "--public-key", str(key_file))
    assert code == 1 and f"the key given is {other.key_id}" in out
    code, out = _verify(capsys, str(copy))
    assert code == 1 and "no key to check it with" in out


@pytest.mark.parametrize("name", sorted(p.name for p in RECORDS_V1.glob("*.json")))
def test_old_records_verify_and_say_unsigned(name, capsys):
    """Issue 31 item 7: records from before signing still verify as before, and say so."""
    code, out = _verify(capsys, str(RECORDS_V1 / name))
    assert code == 0, out
    assert out.startswith("OK ") and "signature: UNSIGNED" in out


def test_the_welcome_commits_to_the_revealed_seed(played):
    """Issue 31 item 7: every seat's Welcome carried the commitment, and the record's salt and
    seed hash to it (SHA-256 of "referee-seed/1:<salt>:<seed>")."""
    rec = played.record
    want = hashlib.sha256(f"referee-seed/1:{rec['seed_salt']}:{rec['seed']}".encode()).hexdigest()
    assert rec["seed_commitment"] == want
    assert [log.welcome.seed_commitment for log in played.logs] == [want] * 3


def test_every_accepted_move_result_carries_the_records_state_hash(played):
    """Issue 31 item 7: MoveResult.state_hash is the record's hash at that state version."""
    after = {m["version_before"] + 1: m["state_hash"] for m in played.record["moves"]}
    results = [r for log in played.logs for r in log.results if r.accepted]
    assert len(results) == len(played.record["moves"])
    for r in results:
        assert r.state_hash == after[r.state_version]


def test_get_signing_key_and_the_referee_flag_verify_the_record(played, tmp_path, capsys):
    """Issue 31 item 7: GetSigningKey serves the key that verifies records, and verify can
    fetch it from the referee; the key file is 0600 and survives a restart unchanged."""
    key = played.key
    assert key.algorithm == "ed25519" and len(key.public_key) == 32
    assert key.key_id == hashlib.sha256(key.public_key).hexdigest()[:16]
    assert signing.check_signature(played.record, key.public_key) is None
    copy = tmp_path / "copy.json"
    # re-indented as the tournament runner keeps records: the same JSON, still verifies
    copy.write_text(json.dumps(json.loads(played.path.read_text()), indent=1))
    code, out = _verify(capsys, str(copy), "--referee", played.server.target)
    assert code == 0, out
    key_file = played.server.data_dir / "record-signing.key"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert signing.load_signer(played.server.data_dir).public_raw == key.public_key
    pem = tmp_path / "key.b64"
    pem.write_text(base64.b64encode(key.public_key).decode())
    code, out = _verify(capsys, str(copy), "--public-key", str(pem))
    assert code == 0, out


def test_receipts_check_the_record(played, tmp_path, capsys):
    """Issue 31 item 7: a bot's receipts (the SDK's Receipts file) agree with the record;
    a record whose state hash was changed disagrees, and verify --receipts says so."""
    from referee_client import Receipts, check_record

    log = played.logs[1]
    rc = Receipts()
    rc.welcome(log.welcome.match_id, log.seat, log.welcome.seed_commitment)
    for r in log.results:
        if r.accepted:
            rc.accepted(r.state_version, r.state_hash)
    assert rc.state_hashes and check_record(played.record, rc) == []
    rc.save(tmp_path / "receipts.json")
    code, out = _verify(capsys, str(played.path), "--receipts", str(tmp_path / "receipts.json"))
    assert code == 0 and "receipts: OK" in out, out
    version = min(rc.state_hashes)
    forged = json.loads(played.path.read_text())
    for m in forged["moves"]:
        if m["version_before"] + 1 == version:
            m["state_hash"] = "f" * 64
    assert any("state hash" in p for p in check_record(forged, rc))
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    code, out = _verify(capsys, str(path), "--data-dir", str(played.server.data_dir),
                        "--receipts", str(tmp_path / "receipts.json"))
    assert code == 1 and "receipts: FAIL version" in out


def test_the_sdk_keeps_receipts_while_it_plays(server):
    """Issue 31 item 7: the SDK's play keeps the Welcome's commitment and every accepted
    move's state hash (PlayStats.receipts), and they check against the record."""
    from referee_client import Bot, check_record, play

    class Rand(Bot):
        def __init__(self, seed: int):
            self.rng = random.Random(seed)

        def choose(self, decision):
            return self.rng.choice(list(decision.legal_moves))

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=99)
        played = await asyncio.gather(*(play(Rand(i), server.target, mid, t)
                                        for i, t in enumerate(tokens)))
        return mid, [stats for _over, stats in played]

    mid, stats = asyncio.run(run())
    record = json.loads((server.data_dir / "records" / f"{mid}.json").read_text())
    for s in stats:
        assert s.receipts.seed_commitment == record["seed_commitment"]
        assert s.receipts.state_hashes and check_record(record, s.receipts) == []
    assert sum(len(s.receipts.state_hashes) for s in stats) == len(record["moves"])


def test_no_seed_or_salt_reaches_a_seat_or_spectator_before_the_end(server):
    """Issue 31 item 7: while the match runs, no seat's Welcome, Decision, MoveResult or event
    and no spectator's Watch message carries the seed or the commitment's salt (only the
    commitment); GetRecord of a running match needs the admin token."""
    seed = 918273645546372

    async def run():
        async with grpc.aio.insecure_channel(server.target) as ch:
            stub = referee_pb2_grpc.RefereeStub(ch)
            mid, tokens = await create(stub, seats=3, seed=seed)
            salt = server.service.matches[mid].seed_salt
            frames: list[bytes] = []  # the seats'
            watched: list[bytes] = []  # the spectator's
            watch = stub.Watch(pb.WatchRequest(match_id=mid))

            async def seat(token: str, rng: random.Random):
                out: asyncio.Queue = asyncio.Queue()
                out.put_nowait(pb.ClientMessage(join=pb.Join(match_id=mid, events=True)))

                async def requests():
                    while (m := await out.get()) is not None:
                        yield m

                call = stub.Play(requests(), metadata=md(token))
                try:
                    async for msg in call:
                        frames.append(msg.SerializeToString())
                        if msg.WhichOneof("msg") == "decision":
                            d = msg.decision
                            out.put_nowait(pb.ClientMessage(submit=pb.Submit(
                                state_version=d.state_version,
                                move=rng.choice(list(d.legal_moves)))))
                finally:
                    call.cancel()

            async def spectator():
                async for msg in watch:
                    watched.append(msg.SerializeToString())

            rt = server.service.matches[mid]
            tasks = [asyncio.ensure_future(seat(t, random.Random(i)))
                     for i, t in enumerate(tokens)]
            tasks.append(asyncio.ensure_future(spectator()))
            for _ in range(3000):  # some moves in, far from the end
                if rt.match.version >= 15 or rt.game_over is not None:
                    break
                await asyncio.sleep(0.01)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            watch.cancel()
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.GetRecord(pb.GetRecordRequest(match_id=mid))
            assert err.value.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                        grpc.StatusCode.PERMISSION_DENIED)
            assert server.service.matches[mid].game_over is None  # still running
            return salt, frames, watched

    salt, frames, watched = asyncio.run(run())
    assert len(salt) == 64 and len(frames) > 20 and len(watched) > 5
    welcomes = [pb.ServerMessage.FromString(f).welcome for f in frames
                if pb.ServerMessage.FromString(f).WhichOneof("msg") == "welcome"]
    assert len(welcomes) == 3 and all(w.seed_commitment for w in welcomes)
    for f in frames + watched:
        for secret in (salt.encode(), bytes.fromhex(salt), str(seed).encode()):
            assert secret not in f


def test_referees_on_one_store_sign_with_one_key(store_url, make_server, tmp_path):
    """Issue 31 item 7: every referee sharing a store signs with the same key (a record
    verifies with the one key whichever host finished it): a referee whose data directory has
    another record-signing.key refuses to start and says which file to copy."""
    if not store_url:
        pytest.skip("one SQLite store means one data directory, hence one key file")
    a = make_server(tmp_path / "a", store_url=store_url, lease_owner="A")
    (tmp_path / "b").mkdir()
    shutil.copy(tmp_path / "a" / "bot-seats.key", tmp_path / "b" / "bot-seats.key")
    with pytest.raises(StartupError, match=r"record-signing\.key"):
        make_server(tmp_path / "b", store_url=store_url, lease_owner="B")
    shutil.copy(tmp_path / "a" / "record-signing.key", tmp_path / "b" / "record-signing.key")
    b = make_server(tmp_path / "b", store_url=store_url, lease_owner="B")
    assert b.service.signer.key_id == a.service.signer.key_id


def test_a_signed_record_without_a_commitment_says_none(played, tmp_path, capsys):
    """Issue 31 item 7: a match created before seed commitments and finished after is signed
    without one; verify says so and passes (the signature shows nothing was taken off)."""
    doc = {k: v for k, v in played.record.items()
           if k not in ("seed_salt", "seed_commitment", "signature")}
    path = tmp_path / "old-match.json"
    path.write_text(json.dumps(signing.load_signer(played.server.data_dir).sign(doc)))
    code, out = _verify(capsys, str(path), "--data-dir", str(played.server.data_dir))
    assert code == 0, out
    assert "commitment: NONE" in out and "signature: OK" in out


def test_the_commitment_survives_a_restart_and_every_rejoin(make_server, tmp_path):
    """Issue 31 item 7: the salt is kept with the match in the store: a seat that joins again,
    on the same referee or on the referee restarted from its store, gets the same commitment,
    and the record reveals the salt that hashes to it."""
    srv = make_server(tmp_path / "data")

    async def welcome(token: str) -> str:
        async with grpc.aio.insecure_channel(srv.target) as ch:
            call = referee_pb2_grpc.RefereeStub(ch).Play(metadata=md(token))
            await call.write(pb.ClientMessage(join=pb.Join(match_id=mid)))
            msg = await call.read()
            call.cancel()
            return msg.welcome.seed_commitment

    async def new():
        async with grpc.aio.insecure_channel(srv.target) as ch:
            return await create(referee_pb2_grpc.RefereeStub(ch), seats=3, seed=5150)

    mid, tokens = asyncio.run(new())
    first = [asyncio.run(welcome(t)) for t in tokens]
    assert len(set(first)) == 1 and len(first[0]) == 64
    assert asyncio.run(welcome(tokens[1])) == first[0]  # a re-join
    srv.stop()
    srv.start()
    assert asyncio.run(welcome(tokens[2])) == first[0]  # resumed from the store
    asyncio.run(play_match(srv.target, mid, tokens, seed=8))
    record = json.loads((srv.data_dir / "records" / f"{mid}.json").read_text())
    assert record["seed_commitment"] == first[0]
    assert signing.check_signature(record, srv.service.signer.public_raw) is None
