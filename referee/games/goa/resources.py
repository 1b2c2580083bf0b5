"""What seats gain and spend outside any choice: Expedition cards drawn (the pile reshuffled from
the discards), Extra action cards from their limited supply, spice sacks put on and taken off
fields, and Progress markers moving down with their bonuses."""
from __future__ import annotations

from referee.core.contract import Event

from .catalog import FIRST_BONUSES_PER_COLUMN
from .state import State


def draw_cards(state: State, k: int) -> list[int]:
    """Draw up to k Expedition cards; an empty pile is replaced by the shuffled discards
    ('Expedition cards': 'If the draw pile ever runs out, shuffle the discard pile')."""
    out = []
    for _ in range(k):
        if not state.deck:
            if not state.discard:
                break
            state.deck = state.discard
            state.discard = []
            state.rng.next_stream("expedition_reshuffle").shuffle_cards(state.deck)
        out.append(state.deck.pop())
    return out


def gain_cards(state: State, p: int, k: int) -> None:
    state.hands[p].extend(draw_cards(state, k))


def gain_extra(state: State, p: int, k: int) -> None:
    """Extra action cards come from the supply of 10 (RULINGS.md: limited)."""
    g = min(k, state.extra_supply)
    state.extra_supply -= g
    state.extra_cards[p] += g


def place_spice(state: State, p: int, land: int, s: int) -> None:
    target = state.lands[p][land]
    masks, contents = target.takes, target.spices
    bit = 1 << s
    for i, x in enumerate(contents):
        if x < 0 and masks[i] & bit:
            contents[i] = s
            return
    raise AssertionError("no empty field for that spice")


def remove_spice(state: State, p: int, land: int, s: int) -> None:
    contents = state.lands[p][land].spices
    for i in range(len(contents) - 1, -1, -1):
        if contents[i] == s:
            contents[i] = -1
            return
    raise AssertionError("no such spice on that land")


def advance_marker(state: State, p: int, c: int) -> None:
    """Move a Progress marker one row down, then the special cases: the first seat to reach the
    row before last and the last row of a column draws 1 Expedition card (hand limit ignored);
    all five markers at least in row 2 (3, 4, 5) gives 1 Extra action card each time."""
    r = state.rules
    rows = state.rows[p]
    rows[c] += 1
    row = rows[c]
    if row in r.first_to_rows:
        idx = c * FIRST_BONUSES_PER_COLUMN + r.first_to_rows.index(row)
        if state.first_bonus[idx] < 0:
            state.first_bonus[idx] = p
            gain_cards(state, p, 1)
    low = min(rows)
    for threshold in r.all_rows:
        if low >= threshold and state.all_bonus[p] < threshold:
            state.all_bonus[p] = threshold
            gain_extra(state, p, 1)


def discard_expedition_card(state: State, p: int, card: int) -> list[Event]:
    state.hands[p].remove(card)
    state.discard.append(card)
    return [Event("goa.discard", p, f"seat {p} discards an Expedition card", {"card": card})]
