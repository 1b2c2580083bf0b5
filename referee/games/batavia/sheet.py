"""The Batavia component sheet's schema: every key and the shape of its value (every game keeps
this job in ``sheet.py``); ``Rules.from_sheet`` (catalog.py) compiles a checked sheet."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.core.components import (
    ComponentSheet,
    SheetError,
    exactly,
    int_at_least,
    int_map,
    is_int,
)

from .catalog import (
    COMPANY_IDS,
    GOOD_IDS,
    MAX_SEATS,
    MIN_SEATS,
    N_COMPANIES,
    N_STALL_TILES,
    TRACK_SPACES,
)


def _pair_list(length: int) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or len(v) != length:
            return f"expected a list of {length} [company, good] pairs"
        for pair in v:
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or pair[0] not in COMPANY_IDS
                or pair[1] not in GOOD_IDS
            ):
                return f"bad [company, good] pair {pair!r}"
        if len({tuple(p) for p in v}) != length:
            return "every (company, good) pair must appear once"
        return None

    return check


def _gold_pair(v: Any) -> str | None:
    if isinstance(v, list) and len(v) == 2 and all(is_int(x) for x in v) and v[0] >= v[1]:
        return None
    return "expected [majority, tie each] with majority >= tie"


def _die(v: Any) -> str | None:
    if isinstance(v, list) and v and all(is_int(x, 1) for x in v):
        return None
    return "expected a non-empty list of positive faces"


#: every key of a Batavia component sheet and the check of its value (SheetGame loads a sheet
#: against it; catalog.Rules.from_sheet compiles a checked one)
SHEET_SCHEMA: dict[str, Callable[[Any], str | None]] = {
    "companies": exactly(list(COMPANY_IDS)),
    "goods": exactly(list(GOOD_IDS)),
    "stall_tiles": _pair_list(N_STALL_TILES),
    "track_spaces": lambda v: None if v == TRACK_SPACES else f"the track has {TRACK_SPACES} spaces",
    "initially_face_up": int_at_least(1),
    "reveal_block": int_at_least(1),
    "ship_cards_per_company": int_map(COMPANY_IDS, 1),
    "starting_hand": int_at_least(0),
    "draw_count": int_at_least(1),
    "bills_per_player": int_at_least(0),
    "crates_per_player": int_at_least(0),
    "die_faces": _die,
    # gold for 1..5 different companies' tiles exchanged; the pirates' space per seat count
    "exchange_gold": int_map(tuple(str(k) for k in range(1, N_COMPANIES + 1))),
    "pirate_threshold": int_map(tuple(str(n) for n in range(MIN_SEATS, MAX_SEATS + 1)), 1),
    "cannon_max": int_at_least(1),
    **{f"goods_gold_{g}": _gold_pair for g in GOOD_IDS},
    "bills_majority_gold": _gold_pair,
    "arrival_gold": int_at_least(0),
    "face_up_layout": _pair_list(N_STALL_TILES),
}


def check_consistency(sheet: ComponentSheet) -> None:
    """The checks across keys: the revealed spaces fit on the track, the cards deal every hand."""
    v = sheet.values
    if v["initially_face_up"] > TRACK_SPACES or v["reveal_block"] > TRACK_SPACES:
        raise SheetError(
            f"{sheet.name}: initially_face_up and reveal_block must be at most {TRACK_SPACES}")
    total = sum(v["ship_cards_per_company"].values())
    if total < MAX_SEATS * v["starting_hand"]:
        raise SheetError(
            f"{sheet.name}: {total} ship cards cannot deal {MAX_SEATS} starting hands")
