"""The words of Batavia's public events, as the rulebook names things: ship cards by company,
bids and payments in bills (lettres de change), stall tiles and their goods, gold pieces, stalls
numbered 1 to 35 along the route. Texts only: kinds and data stay the machine-readable part."""
from __future__ import annotations

from collections.abc import Sequence

from .catalog import COMPANY_NAMES, GOOD_IDS


def count(n: int, one: str, many: str | None = None) -> str:
    """``count(1, "bill")`` -> "1 bill"; ``count(3, "bill")`` -> "3 bills"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def cards_text(counts: Sequence[int]) -> str:
    """Ship cards per company, e.g. ``[2, 0, 0, 0, 1]`` -> "2 England and 1 Sweden ship cards"."""
    parts = [f"{n} {COMPANY_NAMES[c]}" for c, n in enumerate(counts) if n]
    if not parts:
        return "no ship card"
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return listed + (" ship card" if sum(counts) == 1 else " ship cards")


def tile_text(company: int, good: int) -> str:
    """A stall tile, e.g. "the England tea tile"."""
    return f"the {COMPANY_NAMES[company]} {GOOD_IDS[good]} tile"
