"""Batavia's match state and the queries every rule asks (company seals, the stalls ahead of a
merchant, whether a seat may lay cards). The component values it reads are in ``catalog.py``.

Indices: companies 0..4 (EN, DK, FR, NL, SE), goods 0..6 (tea … pepper), a stall tile is
``company * 7 + good``. Spaces are 1..35 on the track; 0 is the start space, 36 the arrival tile.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from referee.core.rng import Chance

from .catalog import COMPANY_NAMES, N_COMPANIES, N_GOODS, Rules

# phases
AUCTION, ACTIONS, EXCHANGE, OVER = 1, 2, 3, 4


@dataclass(slots=True)
class State:
    n: int
    options: dict[str, Any]
    rules: Rules = field(metadata={"hash": False})
    rng: Chance
    track: list[int]  # per space 1..35 (index space-1): tile id, or -1 once taken
    revealed: int  # spaces 1..revealed are face up
    draw_pile: list[int]  # company per card; the order is hidden
    discards: list[int]  # per company
    hands: list[list[int]]  # per seat, per company
    face_up: list[list[int]]  # per seat, per company: cards laid in front of the seat
    bills: list[int]
    gold: list[int]  # gold from exchanges (final scoring adds the rest)
    merchant: list[int]
    tiles: list[list[int]]  # stall tiles kept, in the order taken
    crates_left: list[int]
    crate_owner: list[int]  # per tile id: the seat whose crate is on it, or -1
    arrival_holder: int = -1
    round: int = 0
    phase: int = AUCTION
    first_player: int = -1
    auctioneer: int = 0
    die: int = 0
    lot: list[int] = field(default_factory=lambda: [0] * N_COMPANIES)
    high_bid: int = 0
    high_bidder: int = -1
    in_auction: list[bool] = field(default_factory=list)
    current: int = 0
    turns_taken: int = 0
    played: list[int] = field(default_factory=lambda: [0] * N_COMPANIES)
    pending_tile: int = -1
    plays_this_round: int = 0
    end_reason: str = ""
    final: list[dict[str, Any]] = field(default_factory=list)


def state_digest(state: State) -> str:
    """SHA-256 of every field of the state, hidden parts and RNG included, in a fixed order (the
    component sheet is hashed once into the record instead). ``repr`` of ints, strings, bools and
    lists of them is canonical, so this is stable across runs and platforms, and ~20x faster than
    the generic canonical-JSON hash (``referee.core.hashing``), which
    ``test_state_digest_covers_every_field`` uses to check that no field is left out."""
    key = (
        state.n, sorted(state.options.items()), state.rng.hash_key(), state.track, state.revealed,
        state.draw_pile, state.discards, state.hands, state.face_up, state.bills, state.gold,
        state.merchant, state.tiles, state.crates_left, state.crate_owner, state.arrival_holder,
        state.round, state.phase, state.first_player, state.auctioneer, state.die, state.lot,
        state.high_bid, state.high_bidder, state.in_auction, state.current, state.turns_taken,
        state.played, state.pending_tile, state.plays_this_round, state.end_reason, state.final,
    )
    return hashlib.sha256(repr(key).encode()).hexdigest()


# ---------------------------------------------------------------------------- queries


def seal_holder(state: State, company: int) -> int:
    """Company seals: the seat with a strict majority of face-up cards of the company, or -1
    (the seal is on the board). A tie is not a majority (rulebook, 'Jouer des cartes')."""
    best, holder = 0, -1
    for seat in range(state.n):
        count = state.face_up[seat][company]
        if count > best:
            best, holder = count, seat
        elif count == best:
            holder = -1
    return holder


def seals_of(state: State, seat: int) -> list[int]:
    return [c for c in range(N_COMPANIES) if seal_holder(state, c) == seat]


def stalls_ahead(state: State, seat: int) -> list[int]:
    """Per company, the space of the next face-up stall tile ahead of the seat's merchant, or 0.
    Empty spaces, other companies' tiles and other merchants are skipped ('Avancer son
    commerçant'). Face-down tiles are never a destination (RULINGS.md)."""
    nxt = [0] * N_COMPANIES
    missing = N_COMPANIES
    track = state.track
    for space in range(state.merchant[seat] + 1, min(state.revealed, len(track)) + 1):
        tile = track[space - 1]
        if tile >= 0:
            c = tile // N_GOODS
            if not nxt[c]:
                nxt[c] = space
                missing -= 1
                if not missing:
                    break
    return nxt


def max_other(state: State, seat: int, company: int) -> int:
    """The most face-up cards of ``company`` any other seat has laid."""
    return max((state.face_up[o][company] for o in range(state.n) if o != seat), default=0)


def can_play(state: State, seat: int) -> bool:
    """May the seat lay cards this turn? It must end holding a strict majority of at least one
    company (cases 1 and 2) — once the arrival tile is taken, of a company with a stall ahead
    ('Fin du jeu'). Laying a card moves it from hand to table, so own + hand per company is
    fixed during the turn: the turn can be completed iff some eligible company has
    face-up + hand > every other seat's face-up."""
    hand, own = state.hands[seat], state.face_up[seat]
    if not any(hand) and not any(state.played):
        return False
    ahead = stalls_ahead(state, seat) if state.arrival_holder >= 0 else None
    for c in range(N_COMPANIES):
        if ahead is not None and not ahead[c]:
            continue
        if own[c] + hand[c] > max_other(state, seat, c):
            return True
    return False


def pirate_threshold(state: State) -> int:
    return state.rules.pirate_threshold[state.n]


def face_up_total(state: State) -> int:
    return sum(sum(row) for row in state.face_up)


def company_totals(state: State) -> list[int]:
    return [sum(state.face_up[s][c] for s in range(state.n)) for c in range(N_COMPANIES)]


def hand_sizes(state: State) -> list[int]:
    return [sum(h) for h in state.hands]


def company_name(company: int) -> str:
    return COMPANY_NAMES[company] if 0 <= company < N_COMPANIES else f"company #{company}"


def draw_from_pile(state: State, k: int) -> list[int]:
    """Draw up to k cards; when the pile runs out the discards are shuffled into a new pile
    (rulebook, remark under 'Vente aux enchères'). With both empty, fewer cards are drawn."""
    out: list[int] = []
    pile = state.draw_pile
    for _ in range(k):
        if not pile:
            if not any(state.discards):
                break
            pile.extend(c for c in range(N_COMPANIES) for _ in range(state.discards[c]))
            state.discards = [0] * N_COMPANIES
            state.rng.next_stream("ship_cards_reshuffle").shuffle_cards(pile)
        out.append(pile.pop())
    return out
