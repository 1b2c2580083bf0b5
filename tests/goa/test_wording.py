"""Goa's public events in the rulebook's words (issue 20): bids in ducats, Development board
columns by name with rows 1 to 5, auction tokens on the tile they mark, Expedition cards by what
they do."""
from __future__ import annotations

from pathlib import Path

from referee.games.goa.wording import square_name
from tests.golden_events import assert_all_match, game_event_texts

GOLDEN = Path(__file__).parent / "golden"




def test_squares_are_counted_from_one():
    assert square_name(0, 0) == "row 1, column 1"
    assert square_name(5, 3) == "below column 4"
    assert square_name(2, -1) == "left of row 3"


def test_auction_and_progress_texts():
    """Auction: tokens placed on tiles, bids in ducats, the auctioneer sells or pays the bank;
    Progress: 'move your marker down' a named column (Goa 2012, Actions phase). Every such text
    of every golden replay has the rulebook's shape: no 0-based squares, no "(s)"."""
    t = game_event_texts(GOLDEN)
    sq = r"(row [1-5], column [1-5]|below column [1-5]|right of row [1-5]|left of row [1-5]|above column [1-5])"
    assert_all_match(t, "goa.token",
                     rf"seat \d places (the flag \(token 1\)|auction token [2-5] on the tile [A-Z][^,]*) (at )?{sq}")
    assert_all_match(t, "goa.bid", r"seat \d bids (1 ducat|\d+ ducats)")
    assert_all_match(t, "goa.sold", r"seat \d sells the lot to seat \d for (1 ducat|\d+ ducats)")
    assert_all_match(t, "goa.kept",
                     r"seat \d (keeps the lot|outbids the high bid), paying (1 ducat|\d+ ducats) to the bank")
    assert_all_match(t, "goa.progress",
                     r"seat \d moves down to row [2-5] in the (Ships|Harvest|Taxes|Expedition|Colonists) column(, paying [a-z ]+)?")
    assert_all_match(t, "goa.card_played", r"seat \d plays an Expedition card: [a-z].*")
    assert_all_match(t, "goa.harvest", r"seat \d harvests up to (1 spice sack|\d+ spice sacks)")
    assert not any("(s)" in x for ts in t.values() for x in ts)
