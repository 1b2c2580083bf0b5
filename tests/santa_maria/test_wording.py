"""The public events of Santa Maria say what happened in the rulebook's words (issue 20): what an
exchange paid and gained, which dock a ship came from by its symbol, which retreat space and monk
space by what the board prints, every number 1-based. Replays of the golden records carry them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.games.santa_maria.wording import goods_text
from tests.golden_events import event_texts

GOLDEN = Path(__file__).parent / "golden"


def texts(name: str) -> dict[str, list[str]]:
    return event_texts(GOLDEN / name)


@pytest.fixture(scope="module")
def advanced() -> dict[str, list[str]]:
    return texts("santa_maria-3p-advanced-33.json")


def test_goods_are_counted_in_words():
    """'Payer' / 'Gagner' name resources, coins and points (Santa Maria, French rules, Termes)."""
    assert goods_text((1, 0, 1, 0, 0)) == "1 wood and 1 sugar"
    assert goods_text((0, 0, 0, 2, 0, 1, 3)) == "2 gems, 1 coin and 3 points"
    assert goods_text((0, 0, 0, 0, 0)) == "nothing"


def test_exchange_says_what_was_paid_and_gained(advanced):
    """Échange: 'payer la Ressource indiquée pour gagner les Pièces / Points / Ressources'."""
    ex = advanced["santa_maria.exchange"]
    assert "seat 1 exchanges 1 gem for 4 coins at (2,4)" in ex
    assert not any("option" in t for t in ex)


def test_ship_names_its_dock_by_symbol(advanced):
    """Navire: the ship goes beside 'le Dock marqué du même symbole' (coins, religion,
    conquistador, points), not a 0-based slot number."""
    ships = advanced["santa_maria.ship"]
    assert "seat 2 takes the ship of the Religion dock for 1 wheat" in ships
    assert all(re.search(r"the (Coins|Religion|Conquistador|Points) dock", t) for t in ships)
    assert not any("dock 0" in t for t in ships)


def test_retreat_monk_draft_and_dice_in_board_terms(advanced):
    """Se retirer: the space (1st at the top) and its action; Recruter un Moine: the Scholar,
    Bishop or Missionary camp; dice and lots counted as the board prints them."""
    assert "seat 2 retreats to space 1 (gain 2 coins)" in advanced["santa_maria.retreat"]
    assert "seat 0 places a monk on the Diversity Bishop" in advanced["santa_maria.monk"]
    assert any(t.startswith("seat 0 places a monk on Missionary camp 3 (4 coins)")
               for t in advanced["santa_maria.monk"])
    assert "seat 2 takes lot 3: a town hall and the Mathematics Scholar" in advanced["santa_maria.draft"]
    assert "seat 0 places a blue die (6) on row 4: 2 buildings activated" in advanced["santa_maria.use_die"]
    assert any(t.endswith("for 2 wood and 1 wheat") and "triple development tile" in t
               for t in advanced["santa_maria.expand"])
    assert "seat 2 sells 1 gem for 2 coins" in advanced["santa_maria.sell"]


def test_every_text_names_seats_as_seat_n(advanced):
    """The viewer maps "seat N" to player names: every seat in a text is written that way."""
    for kind, ts in advanced.items():
        for t in ts:
            assert not re.search(r"\bplayer \d", t), (kind, t)
