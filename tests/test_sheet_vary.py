"""``referee sheet vary`` (issue 35, item 6): only provisional values change, within what their
notes document, and every copy is a sheet the game accepts."""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from referee.cli import main
from referee.core import registry, sheet_vary


def _doc(values: dict) -> dict:
    return {"sheet": "t", "game": "t", "format": 1, "values": values}


def test_families_shuffle_within_their_shape_and_ranges_are_drawn():
    doc = _doc({
        "fact": {"value": 7, "provenance": "rulebook", "source": "R"},
        "a": {"value": ["x"], "provenance": "provisional", "note": "same guess"},
        "b": {"value": ["y"], "provenance": "provisional", "note": "same guess"},
        "c": {"value": ["y", "z"], "provenance": "provisional", "note": "same guess"},
        "p": {"value": 2, "provenance": "provisional", "note": "R says 1 to 3 points"},
        "q": {"value": 2, "provenance": "provisional", "note": "R says 1 to 3 points"},
        "n": {"value": [1, 2], "provenance": "provisional", "note": "chosen increasing"},
        "o": {"value": [3, 4], "provenance": "provisional", "note": "chosen increasing"},
    })
    seen_p = set()
    seen_ab = set()
    for seed in range(40):
        out, changed = sheet_vary.vary(doc, random.Random(seed), lambda d: True, name="t+v")
        v = out["values"]
        assert v["fact"]["value"] == 7 and v["c"]["value"] == ["y", "z"]  # a list of 2 alone
        assert sorted([v["a"]["value"], v["b"]["value"]]) == [["x"], ["y"]]  # the multiset
        assert v["n"]["value"] == [1, 2] and v["o"]["value"] == [3, 4]  # no range: kept
        assert 1 <= v["p"]["value"] <= 3
        assert set(changed) <= {"a", "b", "p", "q"}
        seen_p.add(v["p"]["value"])
        seen_ab.add(v["a"]["value"][0])
        assert out["sheet"] == "t+v"
    assert seen_p == {1, 2, 3} and seen_ab == {"x", "y"}


def test_a_draw_the_game_refuses_is_not_kept():
    doc = _doc({"a": {"value": 1, "provenance": "provisional", "note": "1 to 9"}})
    out, changed = sheet_vary.vary(doc, random.Random(1), lambda d: d["values"]["a"]["value"] == 1,
                                   name="x")
    assert out["values"]["a"]["value"] == 1 and changed == []


@pytest.mark.parametrize("game", ["santa_maria", "goa"])
def test_referee_sheet_vary_writes_sheets_the_game_loads(tmp_path, game):
    assert main(["sheet", "vary", game, "--count", "2", "--seed", "3", "--out",
                 str(tmp_path)]) == 0
    index = json.loads((tmp_path / "vary.json").read_text())
    g = registry.get(game)
    base = g.default_components(g.spec.parse_options({})).document
    assert len(index["sheets"]) == 2
    for s in index["sheets"]:
        sheet = g.load_components(str(tmp_path / s["file"]))
        assert s["changed"]  # something provisional moved
        for key, entry in base["values"].items():
            if entry["provenance"] != "provisional":
                assert sheet.document["values"][key] == entry, key
            elif key in s["changed"]:
                assert sheet.values[key] != entry["value"]
        # families keep their multiset unless a documented range was drawn
        same = Counter(json.dumps(e["value"], sort_keys=True) for k, e in base["values"].items()
                       if k.startswith(("card.", "development_tile_double")))
        got = Counter(json.dumps(sheet.document["values"][k]["value"], sort_keys=True)
                      for k in base["values"]
                      if k.startswith(("card.", "development_tile_double")))
        assert same == got
