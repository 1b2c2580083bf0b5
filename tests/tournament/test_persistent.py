"""Persistent entrants (issue 12, "Persistent bot sessions"): each is started once (or
`copies` times) and fed every match over a bot session instead of a process per seat; they mix
with per-match entrants, survive being sandboxed, and a bad entry is refused by key."""
from __future__ import annotations

import json

import pytest
from referee_tournament.config import ConfigError, parse

from .conftest import RANDOM, run_cli, write_toml
from .test_sandbox import sandbox  # noqa: F401 - the fixture (skips without bubblewrap)

SESSION = ("referee-bot session random --address {address} "
           "--capacity {capacity} --seed 5 --log-level warning")
SANDBOXED_SESSION = ("{python} -m referee_client.cli session random --address {address} "
                     "--capacity {capacity} --log-level warning")


def _played_every_seat(out, results, name: str) -> None:
    """Every seat of ``name`` in every match was played by a bot (no timeouts)."""
    for m in results["matches"]:
        record = json.loads((out / m["record"]).read_text())
        seats = {s for s, n in enumerate(m["seating"]) if n == name}
        moved = {mv["seat"] for mv in record["moves"] if not mv.get("timeout")}
        assert seats <= moved, (m["index"], seats, moved)
        assert not any(mv.get("timeout") for mv in record["moves"] if mv["seat"] in seats)


def test_persistent_entrants_are_started_once_and_play_every_match(tmp_path, referee):
    out = tmp_path / "out"
    cfg = write_toml(tmp_path / "t.toml", f"""
        name = "sessions"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "alpha"
        command = "{SESSION}"
        persistent = true
        [[entrants]]
        name = "beta"
        command = "{SESSION}"
        persistent = true
        copies = 2
        capacity = 2
        [[entrants]]
        name = "per-match"
        command = "{RANDOM}"
        [format]
        rounds = 1
        [time]
        move_ms = 5000
        [run]
        concurrency = 3
        """)
    done = run_cli("run", str(cfg), "--no-progress", "--address", referee.address,
                   "--admin-token", referee.admin_token, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == {"done": 6}
    for name in ("alpha", "beta", "per-match"):
        _played_every_seat(out, results, name)
    logs = sorted(p.name for p in (out / "bots").glob("persistent-*.log"))
    assert logs == ["persistent-alpha-r0-c0.log", "persistent-beta-r0-c0.log",
                    "persistent-beta-r0-c1.log"]  # started once each, never restarted
    per_match = list((out / "bots").glob("*-seat*-per-match.log"))
    assert len(per_match) == 6  # the per-match entrant still gets a process per seat
    bound = (out / "bots").glob("*-seat*-alpha.log")
    assert all("persistent entrant alpha" in p.read_text() for p in bound)
    assert results["persistent_exits"] == {}
    board = {e["name"]: e for e in results["leaderboard"]}
    assert board["alpha"]["matches"] == 6 and board["alpha"]["crashes"] == 0


def test_a_persistent_entrant_that_dies_is_restarted_and_loses_no_match(tmp_path, referee):
    out = tmp_path / "out"
    cfg = write_toml(tmp_path / "t.toml", f"""
        name = "crashy"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "crashy"
        command = "sh -c 'exit 3' {{address}} {{bot_token}}"
        persistent = true
        [[entrants]]
        name = "steady"
        command = "{SESSION}"
        persistent = true
        [format]
        seating = "rotate"
        [time]
        move_ms = 30
        bank_ms = 3000                  # steady's start-up; crashy spends it once
        grace_ms = 0
        join_timeout_s = 10             # crashy's seats given up on, then played (default 30)
        [run]
        concurrency = 2
        """)
    done = run_cli("run", str(cfg), "--no-progress", "--address", referee.address,
                   "--admin-token", referee.admin_token, timeout=300)
    # the run is not a success: crashy never played (it is marked, and the exit status says so)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "crashy crashed in every match" in done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == {"done": 6}  # the time policy played crashy's seats
    exits = results["persistent_exits"]
    assert set(exits) == {"crashy"} and exits["crashy"][0]["exit_code"] == 3
    assert [d["entrant"] for d in results["crashed_in_every_match"]] == ["crashy"]
    _played_every_seat(out, results, "steady")


def test_a_sandboxed_persistent_entrant_plays_through_the_unix_socket(sandbox, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    cfg = write_toml(tmp_path / "t.toml", f"""
        name = "caged-sessions"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "caged"
        command = "{SANDBOXED_SESSION}"
        persistent = true
        sandbox = true
        [[entrants]]
        name = "free"
        command = "{RANDOM}"
        [format]
        seating = "rotate"
        [time]
        move_ms = 5000
        """)
    done = run_cli("run", str(cfg), "--no-progress", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["status"]["done"] >= 2 and not results["status"].get("failed")
    _played_every_seat(out, results, "caged")


@pytest.mark.parametrize(("entrant", "key", "message"), [
    ({"command": "referee-bot session random", "persistent": True},
     "entrants[0].command", "{address}"),
    ({"command": "x --address {address} --match {match}", "persistent": True},
     "entrants[0].command", "unknown placeholder {match}"),
    ({"command": RANDOM, "copies": 2}, "entrants[0].copies", "only a persistent"),
    ({"command": SESSION, "persistent": "yes"}, "entrants[0].persistent", "true or false"),
    ({"command": SESSION, "persistent": True, "copies": 0}, "entrants[0].copies", ">= 1"),
])
def test_bad_persistent_entries_are_refused_by_key(entrant, key, message):
    data = {"game": {"name": "batavia", "seats": 3},
            "entrants": [{"name": "a", **entrant}, {"name": "b", "command": RANDOM}]}
    with pytest.raises(ConfigError) as ei:
        parse(data)
    assert ei.value.key == key and message in str(ei.value)


def test_persistent_entrants_need_the_local_backend():
    data = {"game": {"name": "batavia", "seats": 3}, "run": {"backend": "ray"},
            "entrants": [{"name": "a", "command": SESSION, "persistent": True},
                         {"name": "b", "command": RANDOM}]}
    with pytest.raises(ConfigError) as ei:
        parse(data)
    assert ei.value.key == "run.backend"
