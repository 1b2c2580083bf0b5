"""The events end to end (issue 35): every format on every game with the reference bots, the
shipped examples (shortened), a crashing entrant that forfeits and is withdrawn without stalling
the event, and a Swiss killed mid-event that resumes without replaying or losing a match."""
from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from referee_tournament.config import load, parse
from referee_tournament.runner import Runner

from .conftest import RANDOM, ROOT, cli_command, run_cli, write_toml
from .test_fail_fast import CRASH
from .test_resume import _processes_mentioning, _status

GREEDY = {"batavia": "greedy-batavia", "goa": "greedy-goa", "santa_maria": "greedy-santa-maria"}
SEATS = {"batavia": 3, "goa": 2, "santa_maria": 2}


def _bot(kind: str) -> str:
    return (f"referee-bot {kind} --address {{address}} --match {{match}} --seed {{seed}} "
            "--log-level warning")


def _run(cfg, referee, console, **kw):
    return asyncio.run(Runner(cfg, address=referee.address, admin_token=referee.admin_token,
                              console=console, progress=False, **kw).run())


def _event_doc(tmp_path, game: str, fmt: dict, entrants: list[tuple[str, str]]) -> dict:
    return {"name": f"{game}-{fmt['type']}", "output": str(tmp_path / "out"), "seed": 7,
            "game": {"name": game, "seats": SEATS[game]},
            "entrants": [{"name": n, "command": c} for n, c in entrants],
            "format": fmt, "time": {"move_ms": 5000, "match_wall_s": 120}}


FORMATS = {
    "swiss": {"type": "swiss", "rounds": 2},
    "knockout": {"type": "knockout", "best_of": 1},
    "arena": {"type": "arena", "duration_s": 600},
}


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(SEATS))
@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_every_format_on_every_game(tmp_path, referee, quiet_console, game, kind):
    entrants = [("greedy", _bot(GREEDY[game])), ("random-1", _bot("random")),
                ("random-2", _bot("random")), ("random-3", _bot("random"))]
    cfg = parse(_event_doc(tmp_path, game, FORMATS[kind], entrants), base_dir=tmp_path)
    # an arena of 600 s is cut short by --max-matches (it then stops forming tables)
    data = _run(cfg, referee, quiet_console, max_matches=3 if kind == "arena" else None)
    event = data["event"]
    assert data["status"].get("failed", 0) == 0, data["matches"]
    assert sorted(s["name"] for s in event["standings"]) == sorted(n for n, _ in entrants)
    if kind == "swiss":
        assert event["complete"] and len(event["rounds"]) == 2
        per_round = len(entrants) // SEATS[game]
        assert data["status"] == {"done": 2 * per_round}
    elif kind == "knockout":
        assert event["complete"]
        final = event["bracket"][-1]["tables"][0]
        assert final["advance"] == 0 and len(final["members"]) == SEATS[game]
        assert [s["name"] for s in event["standings"][: SEATS[game]]] == final["order"]
    else:
        assert data["status"] == {"done": 3}
        assert sum(s["matches"] for s in event["standings"]) == 3 * SEATS[game]
    html = (tmp_path / "out" / "index.html").read_text()
    assert 'id="event-standings"' in html
    assert ('id="bracket"' in html) == (kind == "knockout")
    assert ('id="rounds"' in html) == (kind == "swiss")


EXAMPLES = {"swiss.toml": ("rounds = 4", "rounds = 2"),
            "knockout.toml": ("best_of = 3", "best_of = 1"),
            "arena.toml": ("duration_s = 120", "duration_s = 600")}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_examples_run_shortened(tmp_path, referee, quiet_console, name):
    text = (ROOT / "examples" / "tournaments" / name).read_text()
    old, new = EXAMPLES[name]
    assert old in text
    text = text.replace(old, new).replace("\n[game]", f'\noutput = "{tmp_path / "out"}"\n[game]', 1)
    cfg = load(write_toml(tmp_path / name, text))
    data = _run(cfg, referee, quiet_console, max_matches=4 if name == "arena.toml" else None)
    assert data["status"].get("failed", 0) == 0
    assert data["event"]["type"] == cfg.format.type
    if name != "arena.toml":
        assert data["event"]["complete"]
    # `report DIR` rebuilds it from the folder alone
    rep = run_cli("report", str(tmp_path / "out"))
    assert rep.returncode == 0, rep.stderr[-2000:]
    assert f"{cfg.format.type.capitalize()} standings" in rep.stdout


def test_a_crashing_entrant_forfeits_and_is_withdrawn_without_stalling_a_swiss(
        tmp_path, referee, quiet_console):
    entrants = [("crasher", CRASH), ("a", RANDOM), ("b", RANDOM), ("c", RANDOM)]
    doc = _event_doc(tmp_path, "batavia", {"type": "swiss", "rounds": 3, "withdraw_after": 1},
                     entrants)
    doc["time"] = {"move_ms": 120000, "on_expiry": "forfeit", "match_wall_s": 60,
                   "bot_grace_s": 0.5}
    data = _run(parse(doc, base_dir=tmp_path), referee, quiet_console)
    event = data["event"]
    assert event["complete"] and not data["status"].get("failed")
    crasher = next(s for s in event["standings"] if s["name"] == "crasher")
    assert crasher["withdrawn"] and crasher["tables"] == 1 and crasher["points"] == 0
    assert event["standings"][-1]["name"] == "crasher"
    # rounds 2 and 3 seat the three others at one table, no bye
    for r in event["rounds"][1:]:
        assert r["byes"] == [] and sorted(r["tables"][0]["seating"]) == ["a", "b", "c"]


def test_a_killed_swiss_resumes_without_replaying_or_losing_a_match(tmp_path):
    out = tmp_path / "res"
    entrants = "\n".join(f'[[entrants]]\nname = "{n}"\ncommand = "{RANDOM}"'
                         for n in ("a", "b", "c", "d", "e", "f", "g"))
    toml = write_toml(tmp_path / "swiss.toml",
                      f'name = "swiss-resume"\noutput = "{out}"\n[game]\nname = "batavia"\n'
                      f'seats = 3\n{entrants}\n[format]\ntype = "swiss"\nrounds = 3\n'
                      '[run]\nconcurrency = 2\n')
    db = out / "tournament.sqlite"
    proc = subprocess.Popen([*cli_command(), "run", str(toml), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # round 2 under way: round 1's two matches are done and one of round 2's is running
        deadline = time.monotonic() + 240  # a bound on the wait, not a timing assertion
        while time.monotonic() < deadline:
            st = _status(db)
            if st.get("done", 0) >= 2 and st.get("running", 0) >= 1:
                break
            assert proc.poll() is None, "the runner finished before it could be interrupted"
            time.sleep(0.05)
        else:
            raise AssertionError(f"no progress: {_status(db)}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    con = sqlite3.connect(db)
    done_before = {r[0]: r[1] for r in con.execute(
        "SELECT idx, match_id FROM matches WHERE status='done'")}
    rows_before = con.execute("SELECT idx, seating, seed FROM matches ORDER BY idx").fetchall()
    con.close()
    assert done_before
    deadline = time.monotonic() + 60
    while _processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)

    again = run_cli("run", str(toml), "--no-progress", timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    assert data["status"] == {"done": 6}  # 3 rounds of 2 tables (7 entrants: a bye a round)
    assert data["event"]["complete"] and len(data["event"]["rounds"]) == 3
    con = sqlite3.connect(db)
    after = {r[0]: (r[1], r[2]) for r in con.execute(
        "SELECT idx, match_id, attempts FROM matches")}
    rows_after = con.execute("SELECT idx, seating, seed FROM matches ORDER BY idx").fetchall()
    con.close()
    assert rows_after[: len(rows_before)] == rows_before  # the same rounds were derived again
    for idx, match_id in done_before.items():
        assert after[idx] == (match_id, 1)  # finished matches were not replayed
    # every match counted once: 6 records, each entrant at 2 tables and 1 bye... or 3 tables
    assert len(list((out / "records").glob("*.json"))) == 6
    tables = {s["name"]: s["tables"] + s["byes"] for s in data["event"]["standings"]}
    assert set(tables.values()) == {3}


def test_an_arena_stops_forming_tables_when_its_time_is_used(tmp_path, referee, quiet_console):
    # the time is already used (as after a resume whose arena had run its course): no match
    entrants = [("a", RANDOM), ("b", RANDOM), ("c", RANDOM)]
    cfg = parse(_event_doc(tmp_path, "batavia", {"type": "arena", "duration_s": 5}, entrants),
                base_dir=tmp_path)
    data = _run(cfg, referee, quiet_console, max_matches=2)
    assert data["status"] == {"done": 2}
    from referee_tournament.store import Store

    store = Store(Path(tmp_path / "out" / "tournament.sqlite"))
    store.set_meta("arena_elapsed_s", "5")
    store.close()
    again = _run(cfg, referee, quiet_console)
    assert again["status"] == {"done": 2}


def _kill_mid_event(toml: Path, out: Path) -> tuple[dict, list, list]:
    """Run ``toml`` and SIGKILL the runner once two matches are done and one is running; the
    finished matches (index: match id), every stored row and the matches in flight."""
    db = out / "tournament.sqlite"
    proc = subprocess.Popen([*cli_command(), "run", str(toml), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240  # a bound on the wait, not a timing assertion
        while time.monotonic() < deadline:
            st = _status(db)
            if st.get("done", 0) >= 2 and st.get("running", 0) >= 1:
                break
            assert proc.poll() is None, "the runner finished before it could be interrupted"
            time.sleep(0.05)
        else:
            raise AssertionError(f"no progress: {_status(db)}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    con = sqlite3.connect(db)
    done = dict(con.execute("SELECT idx, match_id FROM matches WHERE status='done'"))
    rows = con.execute("SELECT idx, seating, seed FROM matches ORDER BY idx").fetchall()
    running = [r[0] for r in con.execute("SELECT idx FROM matches WHERE status='running'")]
    con.close()
    deadline = time.monotonic() + 60
    while _processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return done, rows, running


def _after(out: Path) -> tuple[dict, list]:
    con = sqlite3.connect(out / "tournament.sqlite")
    after = {r[0]: (r[1], r[2], r[3]) for r in con.execute(
        "SELECT idx, match_id, attempts, status FROM matches")}
    rows = con.execute("SELECT idx, seating, seed FROM matches ORDER BY idx").fetchall()
    con.close()
    return after, rows


@pytest.mark.parametrize("fmt", ['type = "knockout"\nbest_of = 2',
                                 'type = "arena"\nduration_s = 10'])
def test_a_killed_knockout_or_arena_resumes_without_replaying_or_losing_a_match(tmp_path, fmt):
    out = tmp_path / "res"
    entrants = "\n".join(f'[[entrants]]\nname = "{n}"\ncommand = "{RANDOM}"'
                         for n in ("a", "b", "c", "d", "e", "f", "g"))
    toml = write_toml(tmp_path / "event.toml",
                      f'name = "event-resume"\noutput = "{out}"\n[game]\nname = "batavia"\n'
                      f'seats = 3\n{entrants}\n[format]\n{fmt}\n[run]\nconcurrency = 2\n')
    done_before, rows_before, running_before = _kill_mid_event(toml, out)
    assert done_before and running_before
    again = run_cli("run", str(toml), "--no-progress", timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    assert data["event"]["complete"] and set(data["status"]) == {"done"}
    after, rows_after = _after(out)
    assert rows_after[: len(rows_before)] == rows_before  # the same tables, seeds and seats
    for idx, match_id in done_before.items():
        assert after[idx] == (match_id, 1, "done")  # finished matches were not replayed
    for idx in running_before:
        assert after[idx][1:] == (2, "done")  # the ones in flight were played again, once
    assert len(list((out / "records").glob("*.json"))) == data["status"]["done"]
    if "knockout" in fmt:
        # 7 at tables of 3: 2 tables and a bye, then the final; best of 2 each
        assert data["status"] == {"done": 6}
        assert [len(r["tables"]) for r in data["event"]["bracket"]] == [2, 1]
