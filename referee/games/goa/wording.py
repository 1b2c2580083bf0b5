"""The words of Goa's public events, as the rulebook names things: the Development board's
columns (Ships, Harvest, Taxes, Expedition, Colonists) and rows counted 1 to 5 from the top, the
auction board's squares by the tile on them (row and column 1 to 5), bids in ducats, Expedition
cards by what they do. Texts only: kinds and data stay the machine-readable part."""
from __future__ import annotations

from .catalog import (
    COLUMNS,
    EFFECT_COLONISTS,
    EFFECT_COLONY_EXTRA,
    EFFECT_DUCATS,
    EFFECT_HARVEST_MIX,
    EFFECT_PROGRESS_DUCATS,
    EFFECT_PROGRESS_SHIPS_ONLY,
    EFFECT_PROGRESS_SPICES_ONLY,
    EFFECT_SELL,
    EFFECT_SHIPS,
    EFFECT_SPICES,
    Rules,
)


def count(n: int, one: str, many: str | None = None) -> str:
    """``count(1, "ship")`` -> "1 ship"; ``count(2, "ship")`` -> "2 ships"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def column_name(c: int) -> str:
    """A Development board column (0-based), e.g. "the Harvest column"."""
    return f"the {COLUMNS[c].capitalize()} column"


def square_name(r: int, c: int) -> str:
    """Where an auction token or the flag stands (0-based; -1 and 5 are the edge spaces)."""
    if r < 0:
        return f"above column {c + 1}"
    if r > 4:
        return f"below column {c + 1}"
    if c < 0:
        return f"left of row {r + 1}"
    if c > 4:
        return f"right of row {r + 1}"
    return f"row {r + 1}, column {c + 1}"


def card_effect_text(rules: Rules, effect: int) -> str:
    """What an Expedition card does, in the rulebook's words."""
    return {
        EFFECT_SHIPS: f"take {count(rules.card_ships, 'ship')}",
        EFFECT_COLONISTS: f"take {count(rules.card_colonists, 'colonist')}",
        EFFECT_DUCATS: f"take {count(rules.card_ducats, 'ducat')}",
        EFFECT_SPICES: f"take {count(rules.card_spices, 'spice')}",
        EFFECT_SELL: f"sell spices for {count(rules.sell_price, 'ducat')} each",
        EFFECT_PROGRESS_DUCATS: "pay ducats to move one Progress marker down one row",
        EFFECT_HARVEST_MIX: "Harvest colonists, ships and/or spices",
        EFFECT_COLONY_EXTRA: "reveal one more card to found a colony",
        EFFECT_PROGRESS_SHIPS_ONLY: "Progress paying ships only",
        EFFECT_PROGRESS_SPICES_ONLY: "Progress paying spices only",
    }.get(effect, "no effect")
