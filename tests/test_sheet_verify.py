"""`referee sheet verify GAME` (issue 19, item 6): walk the provisional values of a component
sheet with the box at hand, driven here through standard input as an organizer would type:
Enter keeps the guess, a value replaces it (checked by the game's schema, asked again when
wrong), s skips, q (or the end of the input) stops with what was entered saved, and the next
run goes on from the file. The file is a sheet `referee serve --components` loads, its values
marked verified; the default sheets keep their hashes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from referee.cli import _load_components
from referee.cli import main as cli_main
from referee.core import registry
from referee.core.components import sheet_hash

ROOT = Path(__file__).resolve().parents[1]
GOA = registry.get("goa")


def _verify(tmp_path: Path, typed: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", "sheet", "verify", "goa", *args],
        input=typed, capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)


def _provisional(doc):
    return [k for k, e in doc["values"].items() if e["provenance"] == "provisional"]


def test_a_walk_records_the_printed_values_and_the_sheet_loads(tmp_path, capsys):
    default = GOA.component_sheets()["2012"]
    keys = _provisional(default.document)
    assert len(keys) == 71 and len(default.values) == 106  # the count for Goa 2012
    first, second, third, fourth = keys[:4]
    # keep the guess; type a new value; a word and a list are refused, then 7; skip; stop
    done = _verify(tmp_path, "\n9\nbanana\n[1]\n7\ns\nq\n")
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert "71 of 106 values to check" in said
    assert f"[1/71] {first}" in said and "printed on: development board" in said
    assert "not a value for" in said and "expected an integer" in said
    out = tmp_path / "goa-2012-verified.json"
    doc = json.loads(out.read_text())
    assert doc["sheet"] == "goa-2012-verified" and doc["game"] == "goa"
    v = doc["values"]
    assert v[first]["value"] == default.values[first] and v[first]["provenance"] == "verified"
    assert (v[second]["value"], v[second]["provenance"]) == (9, "verified")
    assert (v[third]["value"], v[third]["provenance"]) == (7, "verified")
    assert v[fourth]["provenance"] == "provisional"  # skipped: asked again next time
    assert all(v[k]["source"] for k in (first, second, third))
    assert doc["verification"]["from_sha256"] == default.sha256
    assert (doc["verification"]["verified"], doc["verification"]["provisional"]) == (3, 68)
    # what `referee serve --components goa=FILE` loads, for the 2012 edition
    sheets = _load_components([("goa", str(out))])
    sheet = sheets[("goa", "2012")]
    assert sheet.values[second] == 9 and sheet.provenance_counts["verified"] == 3
    assert cli_main(["games", "--components", f"goa={out}", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    goa = next(g for g in listed["games"] if g["name"] == "goa")
    mine = next(c for c in goa["components"] if c["variant"] == "2012")
    assert mine["provenance_counts"]["verified"] == 3 and mine["organizer"]


def test_the_next_walk_goes_on_where_the_last_stopped(tmp_path):
    keys = _provisional(GOA.component_sheets()["2012"].document)
    assert _verify(tmp_path, "\n\ns\nq\n").returncode == 0
    # the end of the input stops too, saving what was typed
    done = _verify(tmp_path, "\n")
    assert done.returncode == 0, done.stderr
    assert "Going on from goa-2012-verified.json" in done.stdout
    assert f"[1/69] {keys[2]}" in done.stdout  # the skipped one comes first
    doc = json.loads((tmp_path / "goa-2012-verified.json").read_text())
    assert [doc["values"][k]["provenance"] for k in keys[:4]] == ["verified"] * 3 + [
        "provisional"]


def test_include_asks_for_inferred_values_too(tmp_path):
    doc = GOA.component_sheets()["2004"].document
    inferred = [k for k, e in doc["values"].items() if e["provenance"] == "inferred"]
    count = len(_provisional(doc)) + len(inferred)
    done = _verify(tmp_path, "q\n", "--variant", "2004", "--include", "inferred")
    assert f"{count} of {len(doc['values'])} values to check" in done.stdout
    assert not (tmp_path / "goa-2004-verified.json").exists()  # nothing entered, nothing written


def test_a_wrong_variant_is_a_usage_error(tmp_path):
    done = _verify(tmp_path, "", "--variant", "1999")
    assert done.returncode == 2 and "no sheet variant '1999'" in done.stderr


def test_the_default_sheets_keep_their_hashes():
    """Adding the `verified` provenance changed no sheet: each still hashes as its golden
    records pin it."""
    for path in sorted((ROOT / "tests").glob("*/golden/*.json")):
        record = json.loads(path.read_text())
        game = registry.get(record["game"])
        pinned = record["components"]["sha256"]
        assert pinned in {s.sha256 for s in game.component_sheets().values()}, path
    for game_name in ("goa", "santa_maria", "batavia"):
        for s in registry.get(game_name).component_sheets().values():
            assert s.sha256 == sheet_hash(s.document)


def test_a_long_value_comes_from_a_file_and_help_is_at_hand(tmp_path):
    """Batavia: the split of the 110 ship cards per company, read from a JSON file."""
    (tmp_path / "split.json").write_text('{"EN": 23, "DK": 22, "FR": 22, "NL": 22, "SE": 21}')
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "sheet", "verify", "batavia"],
        input="?\n@missing.json\n@split.json\ns\n", capture_output=True, text=True,
        cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert said.count("Enter keeps the value shown") == 2  # the header, then the ?
    assert "cannot read that" in said and "printed on: the ship cards" in said
    doc = json.loads((tmp_path / "batavia-queen-2008-verified.json").read_text())
    entry = doc["values"]["ship_cards_per_company"]
    assert entry["value"]["EN"] == 23 and entry["provenance"] == "verified"
    assert doc["values"]["face_up_layout"]["provenance"] == "provisional"
    assert registry.get("batavia").load_components(
        str(tmp_path / "batavia-queen-2008-verified.json")).provenance_counts["verified"] == 1
