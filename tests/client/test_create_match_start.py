"""`referee-bot create-match --start-record FILE --start-move N [--redraw]` (issue 21, item 6):
the match starts where the record stood after N moves, with the record's game, seats and
options unless given; the flags go together; a record the referee cannot use is its refusal,
quoted."""
from __future__ import annotations

import json

import pytest

from ..sim.records import played
from .test_cli_errors import assert_usage_error, referee_bot


def record_file(tmp_path, options=None):
    record = played("batavia", 4, 12, options, note="mine")
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    return path, record


def test_create_match_starts_at_a_recorded_position(referee_server, tmp_path):
    from referee_client import AdminClient

    path, source = record_file(tmp_path, {"setup": "face_up"})
    done = referee_bot("create-match", "--address", referee_server.address, "--start-record",
                       str(path), "--start-move", "25", "--seed", "3",
                       "--admin-token", referee_server.admin_token)
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    assert len(created["seats"]) == 4  # the record's seat count
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        record = json.loads(admin.record(created["match_id"]).record_json)
    assert record["options"]["setup"] == "face_up" and record["seats"] == 4
    assert record["initial_state_hash"] == source["moves"][24]["state_hash"]
    assert record["start"]["move"] == 25 and not record["start"]["redraw_hidden"]
    assert all("note" not in e for e in record["start"]["record"]["moves"])


def test_a_start_the_referee_refuses_is_quoted(referee_server, tmp_path):
    path, _source = record_file(tmp_path)
    done = referee_bot("create-match", "--address", referee_server.address, "--start-record",
                       str(path), "--start-move", "100000",
                       "--admin-token", referee_server.admin_token)
    assert done.returncode == 1
    assert "INVALID_ARGUMENT" in done.stderr or "MALFORMED" in done.stderr, done.stderr
    assert "cannot start after move 100000" in done.stderr, done.stderr


@pytest.mark.parametrize(("flags", "message"), [
    (["--seats", "3", "--start-move", "4"], "--start-move and --redraw go with --start-record"),
    (["--seats", "3", "--redraw"], "--start-move and --redraw go with --start-record"),
    (["--start-record", "nowhere.json"], "--start-record needs --start-move N"),
    (["--start-record", "nowhere.json", "--start-move", "1"],
     "--start-record: cannot read a record from nowhere.json"),
    ([], "the following arguments are required: --seats"),
])
def test_start_flags_are_checked_before_anything_is_sent(flags, message):
    done = referee_bot("create-match", "--admin-token", "a", *flags)
    assert_usage_error(done, "create-match", message)
