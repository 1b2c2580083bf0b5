"""The public events of Santa Maria say what happened in the rulebook's words (issue 20): what an
exchange paid and gained, which dock a ship came from by its symbol, which retreat space and monk
space by what the board prints, every number 1-based. Replays of the golden records carry them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.games.santa_maria.wording import goods_text
from tests.golden_events import assert_all_match, game_event_texts

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def texts() -> dict[str, list[str]]:
    return game_event_texts(GOLDEN)


GOODS = r"(nothing|\d+ [a-z]+(, \d+ [a-z]+)*( and \d+ [a-z]+)?)"


def test_goods_are_counted_in_words():
    """'Payer' / 'Gagner' name resources, coins and points (Santa Maria, French rules, Termes)."""
    assert goods_text((1, 0, 1, 0, 0)) == "1 wood and 1 sugar"
    assert goods_text((0, 0, 0, 2, 0, 1, 3)) == "2 gems, 1 coin and 3 points"
    assert goods_text((0, 0, 0, 0, 0)) == "nothing"


def test_exchange_says_what_was_paid_and_gained(texts):
    """Échange: 'payer la Ressource indiquée pour gagner les Pièces / Points / Ressources'."""
    assert_all_match(texts, "santa_maria.exchange", rf"seat \d exchanges {GOODS} for {GOODS} at \([1-6],[1-6]\)")


def test_ship_names_its_dock_by_symbol(texts):
    """Navire: the ship goes beside 'le Dock marqué du même symbole' (coins, religion,
    conquistador, points), not a 0-based slot number."""
    assert_all_match(texts, "santa_maria.ship",
                     rf"seat \d takes the ship of the (Coins|Religion|Conquistador|Points) dock for {GOODS}")


def test_retreat_monk_draft_and_dice_in_board_terms(texts):
    """Se retirer: the space (1st at the top) and its action; Recruter un Moine: the Scholar,
    Bishop or Missionary camp; dice and lots counted as the board prints them."""
    assert_all_match(texts, "santa_maria.retreat", r"seat \d retreats to space [1-6] \((gain|a|an) [^)]+\)")
    assert_all_match(texts, "santa_maria.monk",
                     rf"seat \d places a monk on (Missionary camp [1-4] \({GOODS}\)"
                     rf"|the [A-Z][a-z ]+ (Scholar|Bishop))(, paying {GOODS})?")
    assert_all_match(texts, "santa_maria.draft", r"seat \d takes lot [1-9]: a town hall and the [A-Z][a-z ]+ Scholar")
    assert_all_match(texts, "santa_maria.use_die",
                     r"seat \d places an? (blue|white) die \([1-6]\) on (row|column) [1-6]: (1 building|\d+ buildings) activated")
    assert_all_match(texts, "santa_maria.expand",
                     rf"seat \d expands: buys the (single|double|triple) development tile \d+ for {GOODS}")
    assert_all_match(texts, "santa_maria.sell", rf"seat \d sells {GOODS} for {GOODS}")


def test_every_text_names_seats_as_seat_n(texts):
    """The viewer maps "seat N" to player names: every seat in a text is written that way."""
    for kind, ts in texts.items():
        for t in ts:
            assert not re.search(r"\bplayer \d", t), (kind, t)
