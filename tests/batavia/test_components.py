"""The Batavia component sheet: every value carries provenance; bad sheets are refused with a
message naming the problem; an organizer's sheet changes the game."""
from __future__ import annotations

import json

import pytest

from referee.core.components import PROVENANCES, SheetError
from referee.core.rng import Streams
from referee.games.batavia import GAME
from referee.games.batavia import game as game_module
from referee.games.batavia.game import DEFAULT_SHEET


def doc():
    return json.loads(DEFAULT_SHEET.read_text())


def test_every_value_has_provenance_and_counts():
    sheet = GAME.default_components({})
    counts = sheet.provenance_counts
    assert set(counts) == set(PROVENANCES)
    assert sum(counts.values()) == len(doc()["values"])
    assert counts["provisional"] == 2 and counts["inferred"] == 3
    for key, entry in doc()["values"].items():
        assert entry["provenance"] in PROVENANCES, key
        assert entry["provenance"] == "provisional" or entry["source"], key


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d["values"]["exchange_gold"].update(provenance="guess"), "provenance must be one of"),
        (lambda d: d["values"].pop("arrival_gold"), "missing value(s): arrival_gold"),
        (lambda d: d["values"].update(extra={"value": 1, "provenance": "provisional"}), "unknown value(s): extra"),
        (lambda d: d["values"]["goods_gold_tea"].update(value=[3, 5]), "majority >= tie"),
        (lambda d: d["values"]["stall_tiles"]["value"].pop(), "35"),
        (lambda d: d["values"]["tea_x"] if False else d["values"]["arrival_gold"].pop("source"), "must name its source"),
        (lambda d: d.update(game="goa"), "not 'batavia'"),
    ],
)
def test_bad_sheets_are_refused(tmp_path, mutate, message):
    d = doc()
    mutate(d)
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(d))
    with pytest.raises(SheetError) as err:
        GAME.load_components(str(path))
    assert message in str(err.value)


def test_organizer_sheet_changes_values_and_hash(tmp_path):
    d = doc()
    d["values"]["goods_gold_pepper"] = {"value": [20, 10], "provenance": "rulebook", "source": "printed board"}
    path = tmp_path / "verified.json"
    path.write_text(json.dumps(d))
    sheet = GAME.load_components(str(path))
    assert sheet.sha256 != GAME.default_components({}).sha256
    s = GAME.setup(GAME.spec.parse_options({}), 3, Streams(1), sheet)
    assert s.rules.goods_gold[6] == (20, 10)


def test_unreadable_sheet(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(SheetError, match="cannot read sheet"):
        GAME.load_components(str(path))


def test_the_declared_bounds_rest_on_the_default_sheet():
    """GameSpec's length and score bounds (RULINGS.md 17) are written from the default sheet's
    values: the bills in play, the ship cards, and one seat's most gold, recomputed here."""
    rules = GAME.rules_for(GAME.default_components({}))
    assert rules.bills_per_player == game_module.SHEET_BILLS_PER_PLAYER
    assert sum(rules.cards_per_company) == game_module.SHEET_SHIP_CARDS
    best_rate = max(gold / k for k, gold in rules.exchange_gold.items())
    most = (int(len(rules.stall_tiles) * best_rate) + sum(m for m, _ in rules.goods_gold)
            + rules.bills_gold[0] + rules.arrival_gold)
    assert most == game_module.MAX_GOLD
    assert min(rules.exchange_gold.values()) >= 0 and min(rules.bills_gold) >= 0
