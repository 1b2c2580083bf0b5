"""Component sheets per variant (docs/ARCHITECTURE.md, "Component data"): ListGames reports every default sheet
with its provenance (Goa: one per edition), and an organizer's sheet replaces only the default of
its own variant — a 2004 sheet is never used for a 2012 match."""
from __future__ import annotations

import json

from referee.core import registry
from referee.games.goa.game import SHEETS
from referee.server.front.service import RefereeService, list_games
from referee.server.store.sqlite import SqliteStore


def _organizer_sheet(tmp_path, edition: str):
    doc = json.loads(SHEETS[edition].read_text())
    doc["sheet"] = f"goa-{edition}-organizer"
    path = tmp_path / f"goa-{edition}.json"
    path.write_text(json.dumps(doc))
    goa = registry.get("goa")
    sheet = goa.load_components(str(path))
    return {("goa", goa.sheet_variant_of(sheet)): sheet}


def test_list_games_reports_every_edition_sheet():
    games = {g.name: g for g in list_games().games}
    goa = games["goa"]
    assert [c.variant for c in goa.components] == ["2012", "2004"]
    for c in goa.components:
        assert not c.organizer and sum(c.provenance_counts.values()) > 0
    (batavia,) = games["batavia"].components
    assert batavia.variant == "" and batavia.provenance_counts["provisional"] == 2


def test_organizer_sheet_replaces_only_its_variant(tmp_path):
    sheets = _organizer_sheet(tmp_path, "2004")
    info = {c.variant: c for c in
            next(g for g in list_games(sheets).games if g.name == "goa").components}
    assert info["2004"].organizer and info["2004"].name == "goa-2004-organizer"
    assert not info["2012"].organizer
    store = SqliteStore(tmp_path / "data")
    service = RefereeService(store, tmp_path / "data", "admin", sheets)
    goa = registry.get("goa")
    assert service.sheet_for(goa, {"edition": "2004"}).name == "goa-2004-organizer"
    assert service.sheet_for(goa, {"edition": "2012"}).sha256 == goa.default_components(
        {"edition": "2012"}).sha256


def test_list_games_is_served_from_one_message_per_set_of_sheets(tmp_path):
    """ListGames is built once (issue 37 item 5): the same message on every call, equal to a
    fresh build; other sheets give a new one, right for them."""
    store = SqliteStore(tmp_path / "data")
    service = RefereeService(store, tmp_path / "data", "admin")
    first = service.list_games()
    assert service.list_games() is first
    assert first.SerializeToString(deterministic=True) == list_games().SerializeToString(
        deterministic=True)
    sheets = _organizer_sheet(tmp_path, "2004")
    service.registry.components.update(sheets)
    other = service.list_games()
    assert other is not first
    assert other.SerializeToString(deterministic=True) == list_games(sheets).SerializeToString(
        deterministic=True)
    assert service.list_games() is other
