"""The search bot's commands: `referee-research duel` (in process, against greedy) and the bot
as a process playing a seat through a real referee, with notes on its moves; the bench phase."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from referee_client import AdminClient
from referee_research import cli

from bench import ismcts as ismcts_bench
from referee.core import registry
from tests.client.conftest import referee_server  # noqa: F401 - the fixture


def test_duel_reports_a_win_rate_with_its_interval(tmp_path, capsys):
    out = tmp_path / "duel.json"
    assert cli.main(["duel", "batavia", "--seats", "3", "--matches", "3", "--iterations", "2",
                     "--rollout-depth", "10", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["matches"] == 3 and report["seats"] == 3 and report["iterations"] == 2
    lo, hi = report["interval"]
    assert 0 <= lo <= report["win_rate"] <= hi <= 1
    assert report["baseline"] == round(1 / 3, 4)
    assert "ismcts wins" in capsys.readouterr().out


def test_duel_with_sprt_reports_its_test_and_time_per_move(tmp_path, capsys):
    out = tmp_path / "duel.json"
    assert cli.main(["duel", "goa", "--seats", "2", "--matches", "2", "--iterations", "2",
                     "--rollout-depth", "6", "--sprt", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["sprt"]["p0"] == 0.5 and report["sprt"]["p1"] == 0.65
    assert report["sprt"]["decision"] is None  # two matches cannot decide it
    assert report["settings"]["rollout"] == "prior" and report["searched_moves"] > 0
    assert report["seconds_per_move"] > 0
    assert 0 < report["iterations_per_move"] <= 2  # a search stopped at the horizon ran one
    assert "SPRT undecided" in capsys.readouterr().out


def test_duel_at_cpu_seconds_a_move_with_the_fast_profile(tmp_path, capsys):
    out = tmp_path / "duel.json"
    assert cli.main(["duel", "goa", "--seats", "2", "--matches", "1", "--seconds", "0.01",
                     "--cpu", "--profile", "fast", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["iterations"] is None and report["matches"] == 2  # one seed, both seats
    settings = report["settings"]
    assert settings["profile"] == "fast" and settings["cpu"] is True
    assert settings["seconds"] == 0.01 and settings["rollout"] == "heuristic"
    assert report["iterations_per_move"] >= 1
    assert "0.01 s of CPU a move" in capsys.readouterr().out


def test_duel_refuses_bad_usage(capsys):
    assert cli.main(["duel", "chess", "--seats", "2"]) == 2
    assert cli.main(["duel", "batavia", "--seats", "9"]) == 2
    assert cli.main(["duel", "batavia", "--seats", "3", "--iterations", "0"]) == 2
    assert cli.main(["duel", "goa", "--seats", "2", "--sprt", "--sprt-delta", "0.6"]) == 2
    assert cli.main(["duel", "goa", "--seats", "2", "--epsilon", "2"]) == 2
    err = capsys.readouterr().err
    assert "unknown game 'chess'" in err and "3 to 5 seats" in err


def test_bench_phase_reports_every_game():
    games = registry.games()
    results = {"ismcts": ismcts_bench.run_phase({"batavia": games["batavia"]}, 3, 2,
                                                late_seconds=0.05)}
    flat = ismcts_bench.flat(results)
    assert set(flat) == {"ismcts.batavia.win_rate_vs_greedy", "ismcts.batavia.interval",
                         "ismcts.batavia.matches", "ismcts.batavia.iterations_per_cpu_s",
                         "ismcts.batavia.iterations_per_cpu_s_min",
                         "ismcts.batavia.iterations_per_cpu_s_strong",
                         "ismcts.batavia.iterations_per_cpu_s_strong_late"}
    assert results["ismcts"]["batavia"]["rate"]["strong_late"]["iterations"] > 0
    rate = results["ismcts"]["batavia"]["rate"]
    assert [r["seats"] for r in rate["by_seats"]] == [3, 4, 5]  # every seat count
    assert all(r["iterations"] > 0 for r in rate["by_seats"])
    assert flat["ismcts.batavia.iterations_per_cpu_s"] > 0
    assert flat["ismcts.batavia.matches"] == 3


def test_the_bot_plays_a_seat_through_a_referee_with_notes(referee_server):  # noqa: F811
    """`python -m referee_research.ismcts_bot` in one seat, random bots in the others: the match
    ends, and the record carries the search's notes on the bot's moves (rollouts cut at 10
    moves, so that it searches every decision: no horizon applies)."""
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=5)
        seats = sorted(created.seats, key=lambda s: s.seat)
        procs = []
        for s in seats:
            env = {**os.environ, "REFEREE_TOKEN": s.token}
            command = ([sys.executable, "-m", "referee_research.ismcts_bot", "--iterations", "3",
                        "--rollout-depth", "10"]
                       if s.seat == 0 else
                       [sys.executable, "-m", "referee_client.cli", "random", "--seed", "1"])
            procs.append(subprocess.Popen(
                [*command, "--address", referee_server.address, "--match", created.match_id],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for p in procs:
            out, _ = p.communicate(timeout=240)
            assert p.returncode == 0, out[-2000:]
        record = json.loads(admin.record(created.match_id).record_json)
    notes = [m["note"] for m in record["moves"] if m.get("note")]
    assert notes and all(m["seat"] == 0 for m in record["moves"] if m.get("note"))
    assert all(n.startswith("ismcts 3 it") for n in notes)


def test_the_bot_without_a_seat_token_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.delenv("REFEREE_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["ismcts", "--match", "m1"])
    assert exit_.value.code == 2
    assert "no seat token" in capsys.readouterr().err


def test_every_flag_of_referee_research_has_help():
    from tests.test_cli_help import _flags_without_help

    assert _flags_without_help(cli.build_parser(), "referee-research") == []
