"""Batavia's observation planes for learners (``Game.observation_planes``; referee/core/planes.py).

Everything a seat's View shows (view.py), as a compact float vector, and nothing else: the
seat's own hand, the other seats' hand sizes, never the draw pile's order, face-down stall
tiles or the die of a round whose auction is over. The seats are written **relative to the
viewer** (slot 0 is the viewer, slot k the k-th seat after it clockwise), so a learner's
features mean the same from every chair; ``seat`` keeps the absolute seat too.

What is summarised rather than copied: the stall tiles a seat keeps are counted per company
and per good, not listed pair by pair (an exchange counts companies; nothing scores a kept
tile's good, and where each taken tile's crate went is in the counting houses' plane), and the
next stall of each company ahead of the viewer's merchant is given as a distance (what the
rules read when it lays cards: ``stalls_ahead``).

Counts are scaled by the component sheet the match plays with (``State.rules``: the cards of a
company, the bills and crates a seat starts with, the cannon's last space...), so a value near
1 is "all there is"; nothing here is a number of the box.

Speed: the row of stalls and the counting houses change only when a tile is taken or
revealed, so their slots are written from small caches keyed by exactly what they show; the
rest is a few dozen stores.
"""
from __future__ import annotations

from collections.abc import MutableSequence
from functools import lru_cache
from typing import Any, cast

from referee.core.planes import ObservationPlanes, PlaneLayout

from .catalog import ARRIVAL, COMPANY_IDS, GOOD_IDS, MAX_SEATS, MIN_SEATS, N_COMPANIES, N_GOODS
from .catalog import N_STALL_TILES as SPACES
from .state import ACTIONS, AUCTION, EXCHANGE, OVER, State, face_up_total, seal_holder

_PHASES = (AUCTION, ACTIONS, EXCHANGE, OVER)
_COMPANIES = ", ".join(COMPANY_IDS)
_GOODS = ", ".join(GOOD_IDS)
#: a stall space's slots: face down, taken, then (face up) its company and its good one-hot
_STALL = 2 + N_COMPANIES + N_GOODS
#: what the table shows of each seat: (plane, slots per seat, what each holds); each plane has
#: ``MAX_SEATS`` times that many slots, the viewer's first
_SEAT_PARTS = (
    ("seated", 1, "1 if the seat is at the table (the match has that many seats)"),
    ("merchant", 1, f"merchant's space / {ARRIVAL} (0: start, 1: the arrival tile)"),
    ("hand_size", 1, "ship cards in hand / all ship cards of the sheet"),
    ("bills", 1, "bills of exchange / the bills a seat starts with"),
    ("gold", 1, ("gold (the final total once the game is over) / the most gold a seat can "
                "score with the sheet")),
    ("face_up", N_COMPANIES, (f"ship cards laid face up per company ({_COMPANIES}) / that "
                             "company's cards")),
    ("seals", N_COMPANIES, "1 per company whose seal the seat holds (a strict majority)"),
    ("tiles_by_company", N_COMPANIES, ("stall tiles kept (not exchanged), per company / "
                                      f"{N_GOODS}")),
    ("tiles_by_good", N_GOODS, f"stall tiles kept, per good ({_GOODS}) / {N_COMPANIES}"),
    ("crates_left", 1, "crates left / the crates a seat starts with"),
    ("arrival_tile", 1, "1 if the seat holds the arrival tile"),
    ("in_auction", 1, "1 if the seat is still bidding in this round's auction"),
)
#: fragments keyed by what they show (a few hundred distinct keys per match)
_CACHE_LIMIT = 4_096


class _Scales:
    """The divisors of one component sheet (``State.rules``), computed once per sheet."""

    __slots__ = ("bills", "cannon", "cards", "cards_total", "crates", "die", "gold")

    def __init__(self, rules: Any):
        self.cards = tuple(1.0 / k for k in rules.cards_per_company)
        self.cards_total = 1.0 / sum(rules.cards_per_company)
        self.bills = 1.0 / max(1, rules.bills_per_player)
        self.crates = 1.0 / max(1, rules.crates_per_player)
        self.cannon = 1.0 / rules.cannon_max
        self.die = 1.0 / max(rules.die_faces)
        # one seat's most gold with this sheet: every stall tile exchanged at the best rate,
        # every good's majority, the bills' majority and the arrival tile (game.py's MAX_GOLD
        # for the default sheet)
        best = max(rules.exchange_gold.items())
        most = (SPACES * best[1] // best[0] + sum(g[0] for g in rules.goods_gold)
                + rules.bills_gold[0] + rules.arrival_gold)
        self.gold = 1.0 / max(1, most)


class BataviaPlanes(ObservationPlanes):
    """Batavia's planes (see the module docstring); ``BataviaGame.observation_planes``."""

    def __init__(self) -> None:
        layout = self.planes = PlaneLayout()
        add = layout.add
        self._seat = add("seat", MAX_SEATS, "the viewer's seat, one-hot (seat 0 first)")
        self._seats = add("seat_count", MAX_SEATS - MIN_SEATS + 1,
                          f"the number of seats, one-hot ({MIN_SEATS} to {MAX_SEATS})")
        self._phase = add("phase", len(_PHASES),
                          "the phase, one-hot: auction, players' actions, exchange, game over")
        self._round = add("round", 1, "the round / the match's max_rounds option")
        self._first = add("first_player", MAX_SEATS,
                          "the first player, one-hot by seat relative to the viewer (all 0 "
                          "before the first auction is decided)")
        self._current = add("current_seat", MAX_SEATS,
                            "the seat to decide, one-hot relative to the viewer (all 0 once "
                            "the game is over)")
        self._stalls = add("stalls", SPACES * _STALL,
                           f"per track space 1..{SPACES}: face down, taken, then a face-up "
                           f"tile's company ({_COMPANIES}) and good ({_GOODS}) one-hot")
        self._ahead = add("stalls_ahead", N_COMPANIES,
                          "per company, (space of the next face-up stall of the company ahead "
                          f"of the viewer's merchant - the merchant's space) / {SPACES}; 0 if "
                          "none")
        self._part = {name: add(name, MAX_SEATS * width,
                                "per seat, relative to the viewer (its own first)"
                                + (f", {width} slots each" if width > 1 else "") + f": {meaning}")
                      for name, width, meaning in _SEAT_PARTS}
        self._houses = add("counting_houses", N_GOODS * N_COMPANIES * MAX_SEATS,
                           f"per counting house ({_GOODS}), per company's space ({_COMPANIES})"
                           ": the seat whose crate is on it, one-hot relative to the viewer "
                           "(all 0: empty)")
        self._auction = add("auction", 1 + N_COMPANIES + 1 + 2 * MAX_SEATS,
                            "during the auction (else 0): the die / its highest face; the lot "
                            "per company / that company's cards; the high bid / the bills a "
                            "seat starts with; the high bidder and the auctioneer, one-hot "
                            "relative to the viewer")
        self._pile = add("draw_pile", 1, "cards in the draw pile / all ship cards")
        self._discards = add("discards", N_COMPANIES,
                             "sunk ship cards per company / that company's cards")
        self._cannon = add("cannon", 3,
                           "cards face up in play capped at the cannon's last space, the real "
                           "count, and the pirates' space for this seat count, each / the "
                           "cannon's last space")
        self._hand = add("my_hand", N_COMPANIES,
                         "the viewer's hand per company / that company's cards")
        self._played = add("played_this_turn", N_COMPANIES,
                           "cards the current player laid this turn, per company / that "
                           "company's cards")
        self._pending = add("pending_tile", N_COMPANIES + N_GOODS,
                            "the exchange phase's tile just taken: company and good one-hot")
        self._final = add("final_round", 1, "1 once the arrival tile was taken, until the end")
        self._scales: dict[int, tuple[Any, _Scales]] = {}
        self._rows: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._house_rows: dict[tuple[int, ...], tuple[int, ...]] = {}

    def _scale(self, rules: Any) -> _Scales:
        entry = self._scales.get(id(rules))
        if entry is None or entry[0] is not rules:  # keeps the rules alive: the id stays theirs
            if len(self._scales) >= _CACHE_LIMIT:
                self._scales.clear()
            entry = self._scales[id(rules)] = (rules, _Scales(rules))
        return entry[1]

    def _stall_ones(self, state: State) -> tuple[int, ...]:
        """The slots set to 1 in the stalls plane (what the View's stalls show)."""
        key = (state.revealed, *state.track)
        ones = self._rows.get(key)
        if ones is None:
            out = []
            for i, tile in enumerate(state.track):
                at = self._stalls + i * _STALL
                if tile < 0:
                    out.append(at + 1)
                elif i < state.revealed:
                    out += (at + 2 + tile // N_GOODS, at + 2 + N_COMPANIES + tile % N_GOODS)
                else:
                    out.append(at)
            if len(self._rows) >= _CACHE_LIMIT:
                self._rows.clear()
            ones = self._rows[key] = tuple(out)
        return ones

    def _house_ones(self, crate_owner: list[int], n: int, seat: int) -> tuple[int, ...]:
        key = (n, seat, *crate_owner)
        ones = self._house_rows.get(key)
        if ones is None:
            out = []
            for tile, owner in enumerate(crate_owner):
                if owner >= 0:
                    c, g = divmod(tile, N_GOODS)
                    out.append(self._houses + (g * N_COMPANIES + c) * MAX_SEATS
                               + (owner - seat) % n)
            if len(self._house_rows) >= _CACHE_LIMIT:
                self._house_rows.clear()
            ones = self._house_rows[key] = tuple(out)
        return ones

    def encode(self, state: State, seat: int, out: MutableSequence[float]) -> None:
        out = _items(out)
        n = state.n
        sc = self._scale(state.rules)
        cards = sc.cards
        phase = state.phase
        over = phase == OVER
        out[self._seat + seat] = 1.0
        out[self._seats + n - MIN_SEATS] = 1.0
        out[self._phase + _PHASES.index(phase)] = 1.0
        out[self._round] = state.round / state.options["max_rounds"]
        if state.first_player >= 0:
            out[self._first + (state.first_player - seat) % n] = 1.0
        if not over:
            out[self._current + (state.current - seat) % n] = 1.0
        for i in self._stall_ones(state):
            out[i] = 1.0
        # the stalls ahead of the viewer's merchant, from the face-up row it sees
        track, mine = state.track, state.merchant[seat]
        todo = N_COMPANIES
        for space in range(mine + 1, min(state.revealed, SPACES) + 1):
            tile = track[space - 1]
            if tile >= 0:
                at = self._ahead + tile // N_GOODS
                if not out[at]:
                    out[at] = (space - mine) / SPACES
                    todo -= 1
                    if not todo:
                        break
        # the seats' public holdings, the viewer's first
        holders = [seal_holder(state, c) for c in range(N_COMPANIES)]
        auction = phase == AUCTION
        part = self._part
        p_seated, p_merchant, p_hand, p_bills, p_gold, p_face_up, p_seals = (
            part["seated"], part["merchant"], part["hand_size"], part["bills"], part["gold"],
            part["face_up"], part["seals"])
        p_by_company, p_by_good, p_crates, p_arrival, p_in_auction = (
            part["tiles_by_company"], part["tiles_by_good"], part["crates_left"],
            part["arrival_tile"], part["in_auction"])
        for k in range(n):
            s = (seat + k) % n
            out[p_seated + k] = 1.0
            out[p_merchant + k] = state.merchant[s] / ARRIVAL
            out[p_hand + k] = sum(state.hands[s]) * sc.cards_total
            out[p_bills + k] = state.bills[s] * sc.bills
            out[p_gold + k] = (state.final[s]["total"] if over else state.gold[s]) * sc.gold
            face_up = state.face_up[s]
            at = k * N_COMPANIES
            for c in range(N_COMPANIES):
                if face_up[c]:
                    out[p_face_up + at + c] = face_up[c] * cards[c]
                if holders[c] == s:
                    out[p_seals + at + c] = 1.0
            tiles = state.tiles[s]
            if tiles:  # counted before the one store each (out may be float32)
                by_company = [0] * N_COMPANIES
                by_good = [0] * N_GOODS
                for tile in tiles:
                    by_company[tile // N_GOODS] += 1
                    by_good[tile % N_GOODS] += 1
                for c in range(N_COMPANIES):
                    if by_company[c]:
                        out[p_by_company + at + c] = by_company[c] / N_GOODS
                for g in range(N_GOODS):
                    if by_good[g]:
                        out[p_by_good + k * N_GOODS + g] = by_good[g] / N_COMPANIES
            out[p_crates + k] = state.crates_left[s] * sc.crates
            if state.arrival_holder == s:
                out[p_arrival + k] = 1.0
            if auction and state.in_auction[s]:
                out[p_in_auction + k] = 1.0
        for i in self._house_ones(state.crate_owner, n, seat):
            out[i] = 1.0
        if auction:  # the View's auction part is set in this phase only
            at = self._auction
            out[at] = state.die * sc.die
            for c in range(N_COMPANIES):
                out[at + 1 + c] = state.lot[c] * cards[c]
            out[at + 1 + N_COMPANIES] = state.high_bid * sc.bills
            if state.high_bidder >= 0:
                out[at + 2 + N_COMPANIES + (state.high_bidder - seat) % n] = 1.0
            out[at + 2 + N_COMPANIES + MAX_SEATS + (state.auctioneer - seat) % n] = 1.0
        out[self._pile] = len(state.draw_pile) * sc.cards_total
        total = face_up_total(state)
        rules = state.rules
        out[self._cannon] = min(total, rules.cannon_max) * sc.cannon
        out[self._cannon + 1] = total * sc.cannon
        out[self._cannon + 2] = rules.pirate_threshold[n] * sc.cannon
        hand = state.hands[seat]
        for c in range(N_COMPANIES):
            out[self._discards + c] = state.discards[c] * cards[c]
            out[self._hand + c] = hand[c] * cards[c]
            out[self._played + c] = state.played[c] * cards[c]
        if phase == EXCHANGE:  # the View's pending tile is set in this phase only
            c, g = divmod(state.pending_tile, N_GOODS)
            out[self._pending + c] = 1.0
            out[self._pending + N_COMPANIES + g] = 1.0
        if state.arrival_holder >= 0 and not over:
            out[self._final] = 1.0


def _items(out: MutableSequence[float]) -> MutableSequence[float]:
    """``out``, or a memoryview of its buffer where it has a flat one (a numpy array): an item
    store into a memoryview costs about half of one into the array."""
    try:
        view = memoryview(out)  # type: ignore[arg-type]  # a list has no buffer: TypeError
    except TypeError:
        return out
    return cast(MutableSequence[float], view) if view.ndim == 1 else out


@lru_cache(maxsize=1)  # no argument: one entry
def declared_planes() -> BataviaPlanes:
    """The one declaration (its caches shared by every match of the process)."""
    return BataviaPlanes()
