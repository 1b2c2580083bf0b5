"""Opening a tournament on a game whose component sheet still holds provisional values warns
the organizer, with the count and the command that fixes it (issue 19, item 6: Goa 2012, 71 of
106). Read from ListGames, so it names the sheet the referee will really use."""
from __future__ import annotations

import copy

from referee_tournament.config import parse
from referee_tournament.registry import sheet_warnings

from referee.core import registry
from referee.server.front.service import list_games

from .conftest import RANDOM, run_cli, write_toml


def _cfg(game, seats, **options):
    return parse({"game": {"name": game, "seats": seats, "options": options},
                  "entrants": [{"name": n, "command": "bot {address} {match}"}
                               for n in ("a", "b")]})


def test_the_default_goa_sheet_is_announced_with_its_count_and_the_fix():
    games = list_games({}).games
    (warning,) = sheet_warnings(_cfg("goa", 3), games)
    assert "goa-2012" in warning and "71 of 106 values provisional" in warning
    assert "referee sheet verify goa --variant 2012" in warning
    assert "referee serve --components goa=FILE" in warning
    (old,) = sheet_warnings(_cfg("goa", 3, edition="2004"), games)
    assert "goa-2004" in old and "--variant 2004" in old
    (bat,) = sheet_warnings(_cfg("batavia", 3), games)
    assert "2 of 25" in bat and "--variant" not in bat


def test_a_fully_verified_sheet_raises_no_warning():
    goa = registry.get("goa")
    doc = copy.deepcopy(dict(goa.component_sheets()["2012"].document))
    for key, e in doc["values"].items():
        if e["provenance"] == "provisional":
            doc["values"][key] = {**e, "provenance": "verified", "source": "the box"}
    sheet = goa.parse_components(doc)
    games = list_games({("goa", "2012"): sheet}).games
    assert sheet_warnings(_cfg("goa", 3), games) == []
    assert len(sheet_warnings(_cfg("goa", 3, edition="2004"), games)) == 1


def test_check_shows_the_warning(tmp_path, referee):
    toml = write_toml(tmp_path / "t.toml", f"""
        name = "warned"
        [game]
        name = "goa"
        seats = 3
        [[entrants]]
        name = "a"
        command = "{RANDOM}"
        [[entrants]]
        name = "b"
        command = "{RANDOM}"
    """)
    done = run_cli("check", str(toml), "--address", referee.address, "--no-smoke")
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert "71 of 106 values provisional" in said and "referee sheet verify goa" in said
