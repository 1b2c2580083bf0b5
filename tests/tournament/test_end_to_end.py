"""A real small tournament through the CLI: random vs greedy-batavia on Batavia, every output
file, and the CLI's help and errors."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from referee_tournament.cli import main

from .conftest import GREEDY, RANDOM, run_cli, write_toml


def test_small_tournament_produces_every_output(tmp_path, capsys):
    out = tmp_path / "results"
    toml = write_toml(tmp_path / "t.toml", f"""
        name = "e2e"
        seed = 5
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "random"
        command = "{RANDOM}"
        [[entrants]]
        name = "greedy"
        command = "{GREEDY}"
        [format]
        type = "round_robin"
        rounds = 1
        [time]
        move_ms = 5000
        [run]
        concurrency = 3
        referees = 2
    """)
    proc = run_cli("run", str(toml), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Leaderboard" in proc.stderr or "leaderboard" in proc.stderr
    for name in ("results.json", "matches.csv", "leaderboard.txt", "index.html",
                 "tournament.sqlite", "runner.log", "tournament.json"):
        assert (out / name).is_file(), name
    for png in ("plots/ratings.png", "plots/scores.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    data = json.loads((out / "results.json").read_text())
    assert data["status"] == {"done": 6}
    assert [e["name"] for e in data["leaderboard"]] == ["greedy", "random"]
    assert data["leaderboard"][0]["ordinal"] > data["leaderboard"][1]["ordinal"]
    assert len(data["rating_history"]) == 6
    # spread round-robin over the two referee processes
    assert len({m["referee"] for m in data["matches"]}) == 2
    seeds = {m["seed"] for m in data["matches"]}
    assert len(seeds) == 1  # one round: every seating on the same seed
    html = (out / "index.html").read_text()
    for m in data["matches"]:
        record = out / m["record"]
        assert record.is_file()
        assert m["record"] in html  # linked from the results page
        rec = json.loads(record.read_text())
        assert rec["match_id"] == m["match_id"]
        assert rec["seed"] == m["seed"]
        assert rec["seat_names"] == m["seating"]
        assert rec["result"]["ranks"] == m["ranks"]
        assert rec["time_policy"]["move_ms"] == 5000
    with open(out / "matches.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and {r["status"] for r in rows} == {"done"}
    assert rows[0]["record"].startswith("records/")
    log_events = [json.loads(line)["event"] for line in (out / "runner.log").read_text().splitlines()]
    assert log_events.count("match_end") == 6 and "session_end" in log_events
    assert "greedy" in (out / "leaderboard.txt").read_text()
    # running it again plays nothing and keeps the results
    assert main(["run", str(toml), "--no-progress"]) == 0
    assert json.loads((out / "results.json").read_text())["status"] == {"done": 6}
    assert len(list((out / "records").glob("*.json"))) == 6
    # report rebuilds from the folder alone
    (out / "results.json").unlink()
    assert main(["report", str(out)]) == 0
    assert "greedy" in capsys.readouterr().out
    assert json.loads((out / "results.json").read_text())["status"] == {"done": 6}


def test_cli_help_and_bad_file(tmp_path, capsys):
    for args in (["--help"], ["run", "--help"], ["resume", "--help"], ["report", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code == 0
        assert "usage" in capsys.readouterr().out.lower()
    bad = write_toml(tmp_path / "bad.toml", """
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "a"
        command = "bot {address} {match} {token}"
        [[entrants]]
        name = "b"
        command = "bot {address} {match} {token}"
        [format]
        rounds = "two"
    """)
    assert main(["run", str(bad)]) == 2
    assert "format.rounds" in capsys.readouterr().err
    unknown_game = write_toml(tmp_path / "nogame.toml", f"""
        output = "{tmp_path / 'x'}"
        [game]
        name = "monopoly"
        seats = 3
        [[entrants]]
        name = "a"
        command = "{RANDOM}"
        [[entrants]]
        name = "b"
        command = "{RANDOM}"
    """)
    # a game the referee does not host is a bad tournament file, like a bad key (exit 2)
    assert main(["run", str(unknown_game), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "bad tournament file" in err and "game.name" in err and "batavia" in err


def test_demo_runs_a_tournament_per_hosted_game(tmp_path):
    from referee_tournament.demo import run_demo
    from rich.console import Console

    console = Console(record=True, width=100, file=io.StringIO())
    results = run_demo(tmp_path, games=["batavia"], progress=False, console=console)
    assert list(results) == ["batavia"]
    # it ends with the path of each report, a page that works (issue 20: no "<game>" in it)
    report = console.export_text().strip().splitlines()[-1].strip()
    assert report.endswith("/batavia/index.html") and Path(report).exists(), report
    assert results["batavia"]["status"] == {"done": 3}
    assert {e["name"] for e in results["batavia"]["leaderboard"]} == {
        "random-a", "random-b", "greedy-batavia"}
    assert len(list(tmp_path.glob("*/batavia/index.html"))) == 1
