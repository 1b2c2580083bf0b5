"""Every kit's session mode (`--session`, issue 19: a remote league entrant in any language)
against a real referee process: it connects once with the bot token from
$REFEREE_BOT_TOKEN, plays the assignments of several matches (several at once), survives a
referee killed and restarted mid-match (the referee sends the unfinished assignment again,
`resent`, and the kit only acknowledges it: never two streams for one seat), logs each result,
stops cleanly on SIGTERM, and ends with a clear message when its token is replaced
(TOKEN_REPLACED: the bot registered again)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import grpc
import pytest
from referee_client import register_bot, run_bot
from referee_client.bots import BOTS
from referee_tournament.procs import LocalReferee

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .toolchains import KITS

SESSION_KITS = ["node", "typescript", "go", "cpp"]
BOT = "entrant"


def _create(referee: LocalReferee, seat_bots: list[str], seed: int) -> tuple[str, list[str]]:
    with grpc.insecure_channel(referee.address) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        resp = stub.CreateMatch(
            pb.CreateMatchRequest(game="santa_maria", seats=len(seat_bots), seed=seed,
                                  seat_bots=seat_bots),
            metadata=(("authorization", f"Bearer {referee.admin_token}"),), timeout=30)
    return resp.match_id, [s.token for s in sorted(resp.seats, key=lambda s: s.seat)]


def _record(referee: LocalReferee, match_id: str) -> dict:
    with grpc.insecure_channel(referee.address) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        rec = stub.GetRecord(pb.GetRecordRequest(match_id=match_id),
                             metadata=(("authorization", f"Bearer {referee.admin_token}"),),
                             timeout=30)
    assert rec.complete
    return json.loads(rec.record_json)


class Kit:
    """A kit's session process, its JSON-line log in a file."""

    def __init__(self, argv: list[str], token: str, log: Path):
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.startswith("REFEREE_")}
        env["REFEREE_BOT_TOKEN"] = token  # never on its command line
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env=env)

    def lines(self) -> list[dict]:
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def events(self, event: str, **fields) -> list[dict]:
        return [e for e in self.lines() if e.get("event") == event
                and all(e.get(k) == v for k, v in fields.items())]

    def wait_for(self, event: str, count: int = 1, timeout: float = 60, **fields) -> None:
        deadline = time.monotonic() + timeout
        while len(self.events(event, **fields)) < count:
            if self.proc.poll() is not None:
                pytest.fail(f"the kit exited ({self.proc.returncode}) before {count} "
                            f"{event!r}:\n{self.text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {count} {event!r} within {timeout}s:\n{self.text()}")
            time.sleep(0.05)

    def wait(self, timeout: float = 60) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"the kit did not exit within {timeout}s:\n{self.text()}")

    def text(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.mark.parametrize("kit", SESSION_KITS)
def test_kit_session_plays_survives_a_restart_stops_and_ends_on_token_replaced(kit, tmp_path):
    argv = [*KITS[kit](), "--session"]
    referee = LocalReferee(tmp_path / "referee").start()
    kits: list[Kit] = []
    try:
        address = referee.address
        token = register_bot(address, referee.admin_token, BOT)
        # match 1: seat 0 is the kit's, seat 1 the test's, which joins only after the restart
        m1, m1_tokens = _create(referee, [BOT, ""], seed=1)
        k = Kit([*argv, "--address", address, "--capacity", "2", "--max-matches", "3",
                 "--seed", "5", "--give-up-after", "60"], token, tmp_path / "kit1.log")
        kits.append(k)
        k.wait_for("joined", match=m1)
        referee.kill()  # a crash, mid-match
        time.sleep(0.3)
        referee.launch(referee.port)
        referee.wait_ready()
        k.wait_for("session open", count=2)  # reconnected to the new referee process
        k.wait_for("assignment resent; already playing it", match=m1, seat=0)
        other = threading.Thread(target=run_bot, args=(BOTS["random"](3), address, m1,
                                                       m1_tokens[1]), daemon=True)
        other.start()
        # match 2: both seats the kit's, played at once
        m2, _ = _create(referee, [BOT, BOT], seed=2)
        assert k.wait(120) == 0, k.text()
        other.join(60)
        over = k.events("game over")
        assert sorted((e["match"], e["seat"]) for e in over) == sorted(
            [(m1, 0), (m2, 0), (m2, 1)]), k.text()
        assert all("rank" in e and "score" in e for e in over), k.text()
        # one stream per seat: each assignment started once, whatever was sent again
        assert len(k.events("assignment", match=m1, seat=0)) == 1, k.text()
        for m in (m1, m2):
            rec = _record(referee, m)
            assert rec["result"] and not any(mv.get("timeout") for mv in rec["moves"]), m

        # SIGTERM stops it cleanly
        k = Kit([*argv, "--address", address], token, tmp_path / "kit2.log")
        kits.append(k)
        k.wait_for("session open")
        k.proc.send_signal(signal.SIGTERM)
        assert k.wait(30) == 0, k.text()
        assert k.events("stopped"), k.text()

        # the bot registered again: the old token's session ends with a clear message
        k = Kit([*argv, "--address", address, "--bot-token-file", "-"], "", tmp_path / "k3.log")
        kits.append(k)
        assert k.wait(30) == 2  # no token: bad usage
        k = Kit([*argv, "--address", address], token, tmp_path / "kit3.log")
        kits.append(k)
        k.wait_for("session open")
        assert register_bot(address, referee.admin_token, BOT) != token
        assert k.wait(30) == 1, k.text()
        assert "TOKEN_REPLACED" in k.text() and "replaced" in k.text().replace(
            "TOKEN_REPLACED", ""), k.text()
    finally:
        for k in kits:
            k.stop()
        referee.stop()


@pytest.mark.parametrize("kit", SESSION_KITS)
def test_kit_session_reads_its_token_from_a_file_and_refuses_a_bad_one(kit, tmp_path):
    argv = [*KITS[kit](), "--session"]
    with LocalReferee(tmp_path / "referee") as referee:
        path = tmp_path / "bot.token"
        path.write_text("not-a-token\n")
        path.chmod(0o600)
        k = Kit([*argv, "--address", referee.address, "--bot-token-file", str(path)], "",
                tmp_path / "kit.log")
        try:
            assert k.wait(30) == 1, k.text()
            assert "session refused" in k.text(), k.text()
            assert "not-a-token" not in " ".join(k.proc.args)
        finally:
            k.stop()
