"""Batavia's public events in the rulebook's words (issue 20): bids in bills (lettres de change),
ship cards by company, stalls by their number on the route, stall tiles by company and good."""
from __future__ import annotations

from pathlib import Path

from referee.games.batavia.wording import cards_text, count
from tests.golden_events import event_texts

GOLDEN = Path(__file__).parent / "golden"


def texts(name: str) -> dict[str, list[str]]:
    return event_texts(GOLDEN / name)


def test_cards_and_counts():
    assert cards_text([2, 0, 0, 0, 1]) == "2 England and 1 Sweden ship cards"
    assert cards_text([0, 0, 1, 0, 0]) == "1 France ship card"
    assert count(1, "bill") == "1 bill" and count(3, "bill") == "3 bills"


def test_auction_and_route_texts():
    """Vente aux enchères: 'les enchères se font en lettres de change'; the winner hands the
    bills to the opponents one at a time. Avancer son commerçant: the stall and its tile."""
    t = texts("batavia-4p-202.json")
    assert "seat 1 bids 12 bills" in t["batavia.bid"]
    assert ("seat 2 buys 2 England, 1 Denmark and 1 Netherlands ship cards and the first-player "
            "ship for 15 bills: 5 bills to seat 0, 5 bills to seat 1, 5 bills to seat 3"
            ) in t["batavia.auction_won"]
    assert ("seat 2 moves its merchant to stall 5 and takes the Sweden cotton tile (a crate goes "
            "to the cotton counting house)") in t["batavia.merchant_moved"]
    assert "seat 2 lays an England ship card face up" in t["batavia.card_played"]
    assert "seat 0 exchanges 1 stall tile (France) for 1 gold piece" in t["batavia.exchange"]
    assert not any("card(s)" in x for ts in t.values() for x in ts)
