"""The component sheet: schema checked at load, provenance counted, organizer sheets accepted."""
import copy
import json

import pytest

from referee.core.components import SheetError
from referee.games.santa_maria.game import DEFAULT_SHEET, SantaMariaGame

GAME = SantaMariaGame()


def _doc():
    return json.loads(DEFAULT_SHEET.read_text(encoding="utf-8"))


def test_default_sheet_loads_with_provenance_counts():
    sheet = GAME.default_components({})
    counts = sheet.provenance_counts
    assert sum(counts.values()) == len(sheet.values)
    assert counts["rulebook"] >= 30
    # the printed contents no source gave are honestly provisional
    for key in ("colony_boards_a", "colony_board_b", "development_tiles_double",
                "development_tiles_triple", "ship_tiles_starting", "ship_tiles_standard",
                "town_halls", "scholar_points", "religion_track", "conquistador_track",
                "missionary_camps_2_4", "road_tile"):
        assert sheet.provenance[key] == "provisional", key
    # values the rulebook states are marked so
    for key in ("conquistador_scoring", "start_coins_by_position", "storage_limit", "sell_price",
                "expand_cost_triple", "bishops", "missionary_camp_1", "solo_achievements"):
        assert sheet.provenance[key] == "rulebook", key


def test_provisional_content_uses_every_effect_kind():
    v = GAME.default_components({}).values
    kinds = set()
    cells = []
    for b in v["colony_boards_a"] + v["colony_board_b"]:
        cells += [c for row in b["grid"] for c in row if c]
    for t in v["development_tiles_double"] + v["development_tiles_triple"] + v["town_halls"]:
        cells += t
    for c in cells:
        kinds |= {e["kind"] for e in c.get("effects", [])}
    assert kinds == {"produce", "exchange", "ship", "conquistador", "religion"}
    assert any(c.get("end_points") for c in cells)
    assert any(c.get("colonists") for c in cells)
    assert any(len(c.get("effects", [])) > 1 for c in cells)
    assert any(len(e.get("options", [])) > 1 for c in cells for e in c.get("effects", []))
    terrains = {c["terrain"] for c in cells}
    assert terrains == {"road", "farm", "forest", "mountain", "city", "town_hall"}


def test_load_components_from_file(tmp_path):
    path = tmp_path / "organizer.json"
    path.write_text(DEFAULT_SHEET.read_text(encoding="utf-8"), encoding="utf-8")
    assert GAME.load_components(str(path)).sha256 == GAME.default_components({}).sha256


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda d: d["values"].pop("docks"), "missing"),
        (lambda d: d["values"].__setitem__("dockz", d["values"]["docks"]), "unknown"),
        (lambda d: d["values"]["storage_limit"].__setitem__("provenance", "guess"), "provenance"),
        (lambda d: d["values"]["storage_limit"].pop("source"), "source"),
        (lambda d: d["values"]["development_tiles_double"]["value"].pop(), "15 tiles"),
        (lambda d: d["values"]["development_tiles_double"]["value"][0][0].__setitem__("terrain", "swamp"), "terrain"),
        (lambda d: d["values"]["ship_tiles_standard"]["value"][0].__setitem__("cost", {"coal": 1}), "coal"),
        (lambda d: d["values"]["conquistador_scoring"]["value"]["3"].pop(), "3 years"),
        (lambda d: d["values"]["development_tiles_triple"]["value"][1][0].__setitem__(
            "effects", [{"kind": "teleport"}]), "kind"),
        (lambda d: d["values"]["colony_boards_a"]["value"].pop(), "colony_boards"),
    ],
)
def test_bad_sheets_are_refused(mutate, words):
    doc = copy.deepcopy(_doc())
    mutate(doc)
    with pytest.raises((SheetError, ValueError)) as info:
        GAME.parse_components(doc)
    assert words in str(info.value)
