"""Goa's public events in the rulebook's words (issue 20): bids in ducats, Development board
columns by name with rows 1 to 5, auction tokens on the tile they mark, Expedition cards by what
they do."""
from __future__ import annotations

from pathlib import Path

from referee.games.goa.wording import square_name
from tests.golden_events import event_texts

GOLDEN = Path(__file__).parent / "golden"


def texts(name: str) -> dict[str, list[str]]:
    return event_texts(GOLDEN / name)


def test_squares_are_counted_from_one():
    assert square_name(0, 0) == "row 1, column 1"
    assert square_name(5, 3) == "below column 4"
    assert square_name(2, -1) == "left of row 3"


def test_auction_and_progress_texts():
    """Auction: tokens placed on tiles, bids in ducats, the auctioneer sells or pays the bank;
    Progress: 'move your marker down' a named column (Goa 2012, Actions phase)."""
    t = texts("goa-4p-303.json")
    assert "seat 0 places the flag (token 1) below column 4" in t["goa.token"]
    assert "seat 1 places auction token 2 on the tile Ducats at row 5, column 5" in t["goa.token"]
    assert "seat 1 bids 6 ducats" in t["goa.bid"]
    assert "seat 1 sells the lot to seat 3 for 10 ducats" in t["goa.sold"]
    assert "seat 0 keeps the lot, paying 8 ducats to the bank" in t["goa.kept"]
    assert "seat 0 moves down to row 2 in the Taxes column" in t["goa.progress"]
    assert "seat 1 plays an Expedition card: take 2 colonists" in t["goa.card_played"]
    assert "seat 3 harvests up to 2 spice sacks" in t["goa.harvest"]
    assert not any("(s)" in x for ts in t.values() for x in ts)
