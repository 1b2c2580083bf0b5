"""The SDK against a real `referee serve` subprocess (127.0.0.1, ephemeral ports): bots run as
commands exactly as a tournament would run them, the unary helpers drive a whole match, and bots
finish their match across a kill -9 and restart of the referee."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from referee_client import AdminClient, RefereeError, SeatClient, watch
from referee_tournament.procs import LocalReferee, referee_command

from .conftest import ROOT, bot_command, bot_env

BOT_TIMEOUT_S = 90


def launch_bots(address: str, match_id: str, tokens: list[str], kinds: list[str],
                workdir: Path, extra: tuple[str, ...] = ()) -> list[tuple[subprocess.Popen, Path]]:
    bots = []
    for seat, (token, kind) in enumerate(zip(tokens, kinds, strict=True)):
        log_path = workdir / f"bot-{seat}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [*bot_command(kind), "--address", address, "--match", match_id,
                 "--seed", str(seat), *extra],
                env={**bot_env(), "REFEREE_TOKEN": token},  # token kept out of argv
                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            )
        bots.append((proc, log_path))
    return bots


def wait_bots(bots, server: LocalReferee, timeout: float = BOT_TIMEOUT_S) -> list[str]:
    deadline = time.monotonic() + timeout
    logs = []
    for proc, log_path in bots:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for p, _ in bots:
                p.kill()
            pytest.fail(
                f"bots did not finish within {timeout}s\n--- {log_path}:\n"
                f"{log_path.read_text()[-3000:]}\n--- server:\n{server.log_tail()}"
            )
        text = log_path.read_text()
        assert proc.returncode == 0, f"bot exited {proc.returncode}:\n{text[-3000:]}"
        logs.append(text)
    return logs


def tokens_of(created) -> list[str]:
    return [s.token for s in sorted(created.seats, key=lambda s: s.seat)]


def run_verify(record_json: str, tmp_path: Path) -> subprocess.CompletedProcess:
    path = tmp_path / "record.json"
    path.write_text(record_json)
    # a signed record, checked with the key in the referee's data directory (referee_server's)
    return subprocess.run([*referee_command(), "replay", "verify", str(path),
                           "--data-dir", str(tmp_path / "data")],
                          check=False, capture_output=True, text=True, cwd=ROOT, timeout=60)


def verify_record(record_json: str, tmp_path: Path) -> str:
    out = run_verify(record_json, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_reference_bots_play_a_match_as_commands(referee_server, tmp_path):
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 4, seat_names=["g1", "g2", "r1", "r2"], seed=11)
    kinds = ["greedy-batavia", "greedy-batavia", "random", "random"]
    bots = launch_bots(referee_server.address, created.match_id, tokens_of(created), kinds,
                       tmp_path)
    logs = wait_bots(bots, referee_server)
    assert all("game over" in text for text in logs)

    with SeatClient(referee_server.address, created.match_id, tokens_of(created)[0]) as seat:
        final = seat.view()
    assert final.HasField("game_over")
    assert sorted(s.name for s in final.game_over.seats) == ["g1", "g2", "r1", "r2"]
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        record = admin.record(created.match_id)
    assert record.complete
    assert verify_record(record.record_json, tmp_path).startswith("OK")


def test_unary_seat_clients_play_a_match(referee_server):
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        assert "batavia" in [g.name for g in admin.list_games()]
        created = admin.create_match("batavia", 3, options={"setup": "face_up"}, seed=5)
    seats = [SeatClient(referee_server.address, created.match_id, t) for t in tokens_of(created)]
    moves = 0
    try:
        while True:
            pending = None
            for seat in seats:
                decision = seat.legal_moves()
                if decision.legal_moves:
                    pending = (seat, decision)
                    break
            if pending is None:
                assert seats[0].view().HasField("game_over")
                break
            seat, decision = pending
            result = seat.submit(decision.state_version, decision.legal_moves[-1])
            assert result.accepted
            moves += 1
            # the same version again is stale: rejected with a reason, match unchanged
            with pytest.raises(RefereeError) as stale:
                seat.submit(decision.state_version, decision.legal_moves[-1])
            assert stale.value.reason in ("STALE_STATE", "NOT_YOUR_TURN", "MATCH_OVER")
    finally:
        for seat in seats:
            seat.close()
    assert moves > 20


def test_seat_clients_play_a_match_from_its_text(referee_server):
    """``SeatClient.describe`` (DescribeSeat): the seat to act reads its moves by id and plays
    one; the events grow with the match and the result is said once it is over."""
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, options={"setup": "face_up"}, seed=9)
    seats = [SeatClient(referee_server.address, created.match_id, t) for t in tokens_of(created)]
    try:
        for _ in range(2000):
            texts = [seat.describe() for seat in seats]
            if texts[0].result:
                break
            seat, said = next((seats[t.seat], t) for t in texts if t.moves)
            assert said.view.startswith("Batavia") and said.prompt
            chosen = said.moves[len(said.moves) // 2]
            assert seat.submit(said.state_version, chosen.move).accepted
        assert texts[0].result.startswith("Over")
        assert len(texts[0].events.splitlines()) > 20
    finally:
        for seat in seats:
            seat.close()


def test_bad_token_fails_fast_with_a_clear_error(referee_server):
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3)
    out = subprocess.run(
        [*bot_command("random"), "--address", referee_server.address,
         "--match", created.match_id, "--token", "not-a-token", "--give-up-after", "5"],
        check=False, capture_output=True, text=True, env=bot_env(), cwd=ROOT, timeout=60,
    )
    assert out.returncode == 1
    assert "UNAUTHENTICATED" in out.stderr


def _moves_so_far(server: LocalReferee, match_id: str) -> int:
    with AdminClient(server.address, server.admin_token, timeout=5) as admin:
        return len(json.loads(admin.record(match_id).record_json)["moves"])


def test_bots_finish_across_a_referee_crash_and_restart(tmp_path, tcp_proxy):
    """kill -9 the referee mid-match, restart it on the same data dir: the bots reconnect
    with their tokens (exponential backoff), the referee re-pushes the pending decision, and
    the match completes with a record that verifies."""
    from .conftest import server_available

    if not server_available():
        pytest.skip("referee/server is not there yet")
    server = LocalReferee(tmp_path / "data")
    server.start()
    tcp_proxy.target_port = server.port
    try:
        with AdminClient(server.address, server.admin_token) as admin:
            created = admin.create_match("batavia", 4, seed=99)
        bots = launch_bots(
            tcp_proxy.address, created.match_id, tokens_of(created),
            ["random", "greedy-batavia", "random", "greedy-batavia"], tmp_path,
            extra=("--delay-ms", "15", "--give-up-after", "60"),
        )
        deadline = time.monotonic() + 30
        while _moves_so_far(server, created.match_id) < 25:
            assert time.monotonic() < deadline, "the match did not get going"
            time.sleep(0.1)
        before = _moves_so_far(server, created.match_id)
        server.kill()
        time.sleep(0.5)  # bots see the drop and back off against a dead address
        server.start()
        tcp_proxy.target_port = server.port
        logs = wait_bots(bots, server)
    finally:
        server.stop()

    assert any("reconnecting" in text for text in logs), logs[0][-2000:]
    assert all("game over" in text for text in logs)
    server.start()
    try:
        with AdminClient(server.address, server.admin_token) as admin:
            record = admin.record(created.match_id)
    finally:
        server.stop()
    moves = json.loads(record.record_json)["moves"]
    assert record.complete and len(moves) > before
    assert verify_record(record.record_json, tmp_path).startswith("OK")


def test_watch_follows_a_match(referee_server, tmp_path):
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=3)
    bots = launch_bots(referee_server.address, created.match_id, tokens_of(created),
                       ["random"] * 3, tmp_path)
    kinds = [m.WhichOneof("msg") for m in watch(referee_server.address, created.match_id)]
    wait_bots(bots, referee_server)
    assert kinds[-1] == "game_over"
    assert "event" in kinds


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.parametrize("kind", ["greedy-goa", "greedy-santa-maria"])
def test_a_reference_bot_refuses_a_game_it_was_not_written_for(referee_server, tmp_path, kind):
    # issue 12: "Reference bots refuse a game they were not written for with a clear error"
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=3)
    (proc, log_path), *_ = launch_bots(referee_server.address, created.match_id,
                                       tokens_of(created)[:1], [kind], tmp_path)
    assert proc.wait(BOT_TIMEOUT_S) == 2
    text = log_path.read_text()
    assert "only" in text and "is batavia" in text
