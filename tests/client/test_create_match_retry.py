"""The SDK's create-match call is idempotent (issue 22): it sends a fresh request_id and, when
the referee is UNAVAILABLE, the same request again with backoff, so a reply lost on the way
(tests/reply_drop.py) still gives one match, the first; `referee-bot create-match
--request-id` prints the same match and tokens when run again."""
from __future__ import annotations

import json
import os
import subprocess

import grpc
import pytest
from referee_client.bot import Backoff
from referee_client.connection import RefereeError
from referee_client.unary import AdminClient

from ..reply_drop import ReplyDroppingProxy, stored_matches
from .conftest import bot_command, bot_env

FAST = Backoff(initial=0.01, maximum=0.05)


def matches(referee) -> list[str]:
    return stored_matches(referee.data_dir)


def test_a_lost_reply_is_retried_into_the_same_match(referee_server):
    proxy = ReplyDroppingProxy(referee_server.address, drop=2)
    try:
        with AdminClient(proxy.address, referee_server.admin_token) as admin:
            created = admin.create_match("batavia", 3, seed=5, backoff=FAST)
            assert proxy.created == 3  # twice lost, then answered: one match all along
            assert matches(referee_server) == [created.match_id]
            assert len({s.token for s in created.seats}) == 3
            # without a request_id there is nothing to retry safely: the error comes back
            proxy.drop = 4
            with pytest.raises(RefereeError) as err:
                admin.create_match("batavia", 3, seed=5, request_id="", backoff=FAST)
            assert err.value.code == grpc.StatusCode.UNAVAILABLE and proxy.created == 4
            # and the retries are bounded
            proxy.drop = 100
            with pytest.raises(RefereeError):
                admin.create_match("batavia", 3, seed=5, retries=2, backoff=FAST)
            assert proxy.created == 7
    finally:
        proxy.close()


def test_create_match_with_a_request_id_prints_the_same_match_again(referee_server, tmp_path):
    token_file = tmp_path / "admin.token"
    token_file.write_text(referee_server.admin_token + "\n")
    token_file.chmod(0o600)
    argv = [*bot_command("create-match"), "--address", referee_server.address,
            "--admin-token-file", str(token_file), "--seats", "3", "--game", "batavia",
            "--seed", "3", "--request-id", "nightly/42"]
    env = {k: v for k, v in bot_env().items() if k != "REFEREE_ADMIN_TOKEN"}
    runs = [subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60,
                           check=False) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout
    assert matches(referee_server) == [json.loads(runs[0].stdout)["match_id"]]
    other = subprocess.run([*argv[:-1], "nightly/43"], capture_output=True, text=True, env=env,
                           timeout=60, check=False)
    assert other.returncode == 0 and len(matches(referee_server)) == 2
    clash = subprocess.run([*argv[:-3], "5", "--request-id", "nightly/42"], capture_output=True,
                           text=True, env=env, timeout=60, check=False)
    assert clash.returncode != 0 and "REQUEST_ID_REUSED" in clash.stderr
    assert len(matches(referee_server)) == 2 and os.path.exists(token_file)
