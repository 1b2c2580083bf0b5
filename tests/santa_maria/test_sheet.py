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
    provisional = [k for k, p in sheet.provenance.items() if p == "provisional"]
    for prefix, n in (("colony_board_a_", 4), ("development_tile_double_", 15),
                      ("development_tile_triple_", 15), ("ship_tile_starting_", 4),
                      ("ship_tile_standard_", 30), ("town_hall_", 4), ("scholar_points_", 10),
                      ("missionary_camp_", 3)):
        assert sum(k.startswith(prefix) for k in provisional) == n, prefix
    for key in ("colony_board_b", "religion_track", "conquistador_track", "road_tile"):
        assert sheet.provenance[key] == "provisional", key
    assert counts["provisional"] == 89
    # values the rulebook states are marked so
    for key in ("conquistador_scoring", "start_coins_by_position", "storage_limit", "sell_price",
                "expand_cost_triple", "bishops", "missionary_camp_01", "solo_achievements"):
        assert sheet.provenance[key] == "rulebook", key


def test_provisional_content_uses_every_effect_kind():
    v = GAME.default_components({}).values
    kinds = set()
    cells = []
    for key, value in v.items():
        if key.startswith("colony_board"):
            cells += [c for row in value["grid"] for c in row if c]
        elif key.startswith(("development_tile_", "town_hall_")):
            cells += value
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
        (lambda d: d["values"].pop("development_tile_double_15"), "missing"),
        (lambda d: d["values"]["development_tile_double_01"]["value"][0].__setitem__("terrain", "swamp"), "terrain"),
        (lambda d: d["values"]["development_tile_double_02"]["value"].pop(), "2 cells"),
        (lambda d: d["values"]["ship_tile_standard_01"]["value"].__setitem__("cost", {"coal": 1}), "coal"),
        (lambda d: d["values"]["conquistador_scoring"]["value"]["3"].pop(), "3 years"),
        (lambda d: d["values"]["development_tile_triple_02"]["value"][0].__setitem__(
            "effects", [{"kind": "teleport"}]), "kind"),
        (lambda d: d["values"]["colony_board_a_02"]["value"].__setitem__("id", "A1"), "distinct"),
        (lambda d: d["values"]["component_counts"]["value"].__setitem__("colony_boards", 5), "colony_boards"),
        (lambda d: d["values"]["colony_board_b"]["value"]["grid"].pop(), "6 rows"),
    ],
)
def test_bad_sheets_are_refused(mutate, words):
    doc = copy.deepcopy(_doc())
    mutate(doc)
    with pytest.raises((SheetError, ValueError)) as info:
        GAME.parse_components(doc)
    assert words in str(info.value)
