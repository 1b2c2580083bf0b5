"""Batavia's public events in the rulebook's words (issue 20): bids in bills (lettres de change),
ship cards by company, stalls by their number on the route, stall tiles by company and good."""
from __future__ import annotations

from pathlib import Path

from referee.games.batavia.wording import cards_text, count
from tests.golden_events import assert_all_match, game_event_texts

GOLDEN = Path(__file__).parent / "golden"




def test_cards_and_counts():
    assert cards_text([2, 0, 0, 0, 1]) == "2 England and 1 Sweden ship cards"
    assert cards_text([0, 0, 1, 0, 0]) == "1 France ship card"
    assert count(1, "bill") == "1 bill" and count(3, "bill") == "3 bills"


def test_auction_and_route_texts():
    """Vente aux enchères: 'les enchères se font en lettres de change'; the winner hands the
    bills to the opponents one at a time. Avancer son commerçant: the stall and its tile. Every
    such text of every golden replay has that shape."""
    t = game_event_texts(GOLDEN)
    co = r"(England|Denmark|France|Netherlands|Sweden)"
    bills = r"(1 bill|\d+ bills)"
    assert_all_match(t, "batavia.bid", rf"seat \d bids {bills}")
    assert_all_match(t, "batavia.auction_won",
                     rf"seat \d buys ((\d+ {co}(, | and ))*\d+ {co} ship cards?( and the first-player ship)?"
                     rf"|the first-player ship) for {bills}(: {bills} to seat \d(, {bills} to seat \d)*)?")
    assert_all_match(t, "batavia.merchant_moved",
                     rf"seat \d moves its merchant to stall \d+ and takes the {co} [a-z]+ tile"
                     r" \(a crate goes to the [a-z]+ counting house\)")
    assert_all_match(t, "batavia.card_played", rf"seat \d lays an? {co} ship card face up")
    assert_all_match(t, "batavia.exchange",
                     rf"seat \d exchanges (1 stall tile \({co}\)|\d stall tiles \({co}(, {co})+\))"
                     r" for (1 gold piece|\d+ gold pieces)")
    assert not any("card(s)" in x for ts in t.values() for x in ts)
