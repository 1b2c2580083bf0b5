"""``report --sensitivity`` (issue 35, item 6): the event played again under varied component
sheets and a control run, and which places change."""
from __future__ import annotations

import json

import pytest
from referee_tournament.sensitivity import compare, ranking

from .conftest import run_cli, write_toml


def test_compare_counts_who_took_each_place_and_each_entrants_range():
    base = ["a", "b", "c"]
    out = compare(base, [["a", "b", "c"], ["b", "a", "c"], ["b", "c", "a"]])
    assert out["runs_changing_ranking"] == 2
    assert [p["changed"] for p in out["places"]] == [2, 2, 1]
    assert out["places"][0]["instead"] == {"b": 2}
    assert {e["name"]: (e["best"], e["worst"]) for e in out["entrants"]} == {
        "a": (1, 3), "b": (1, 2), "c": (2, 3)}


def test_ranking_is_the_event_standings_else_the_leaderboard():
    data = {"leaderboard": [{"name": "x", "place": 2}, {"name": "y", "place": 1}]}
    assert ranking(data) == ["y", "x"]
    data["event"] = {"standings": [{"name": "x"}, {"name": "y"}]}
    assert ranking(data) == ["x", "y"]


@pytest.mark.slow
def test_report_sensitivity_replays_the_event_under_varied_sheets(tmp_path):
    out = tmp_path / "res"
    bot = ("referee-bot {kind} --address {{address}} --match {{match}} --seed {{seed}} "
           "--log-level warning")
    toml = write_toml(tmp_path / "sm.toml", f"""
        name = "sm-swiss"
        output = "{out}"
        [game]
        name = "santa_maria"
        seats = 2
        [[entrants]]
        name = "greedy"
        command = "{bot.format(kind='greedy-santa-maria')}"
        [[entrants]]
        name = "r1"
        command = "{bot.format(kind='random')}"
        [[entrants]]
        name = "r2"
        command = "{bot.format(kind='random')}"
        [[entrants]]
        name = "r3"
        command = "{bot.format(kind='random')}"
        [format]
        type = "swiss"
        rounds = 1
    """)
    first = run_cli("run", str(toml), "--no-progress", timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    rep = run_cli("report", str(out), "--sensitivity", "1", timeout=900)
    assert rep.returncode == 0, rep.stderr[-3000:]
    assert "Sensitivity to the provisional components" in rep.stdout
    data = json.loads((out / "sensitivity.json").read_text())
    baseline = [s["name"] for s in json.loads((out / "results.json").read_text())
                ["event"]["standings"]]
    assert data["baseline"] == baseline and len(data["places"]) == 4
    assert len(data["runs"]) == 1 and data["runs"][0]["changed_values"]
    assert data["control"]["sheet"] is None
    # the varied run played under the varied sheet, the control under the event's own
    for run, sheet in (("v0", "santa-maria-aporta-2017"),
                       ("v1", "santa-maria-aporta-2017+vary1")):
        records = sorted((out / "sensitivity" / run / "records").glob("*.json"))
        assert len(records) == 2
        for r in records:
            assert json.loads(r.read_text())["components"]["sheet"] == sheet
