"""Batavia's auction ("A. Vente aux enchères"): each round the auctioneer rolls the die and
reveals that many ship cards; seats bid bills clockwise for the lot and the first-player ship."""
from __future__ import annotations

from typing import Any

from referee.core.contract import Decision, Event, IllegalMove
from referee.core.pending import Pending
from referee.v1 import batavia_pb2 as pb

from .catalog import COMPANY_IDS, N_COMPANIES
from .moves import PASS_BID, Bid, PassBid, bid
from .state import ACTIONS, AUCTION, State, draw_from_pile, hand_sizes
from .view_parts import counts
from .wording import cards_text, count


class Auction(Pending[State, Any, pb.View]):
    """A. Vente aux enchères: the seat to act bids above the last bid (up to the bills it holds)
    or passes. Its state is the auction's fields of the state; it hashes as its phase."""

    __slots__ = ()
    kind = "batavia.auction"

    def decision(self, state: State) -> Decision:
        seat = state.current
        lo = _lowest_bid(state)
        listed = [PASS_BID] + [bid(a) for a in range(lo, state.bills[seat] + 1)]
        return Decision(seat, self.kind, listed, _auction_prompt(state, seat, lo))

    def play(self, state: State, move: Any) -> list[Event]:
        seat = state.current
        kind = type(move)
        if kind is Bid:
            return place_bid(state, seat, move.amount)
        if kind is PassBid:
            return pass_bid(state, seat)
        raise IllegalMove("ILLEGAL_MOVE", "A. Vente aux enchères: during the auction you may only bid or pass")

    def hash_form(self) -> tuple:
        return (AUCTION,)

    def view_key(self, state: State) -> tuple:
        """What ``pending_view`` shows (the View caches its encoding under this key)."""
        return (state.die, *state.lot, state.high_bid, state.high_bidder, state.auctioneer,
                state.current)

    def pending_view(self, state: State, view: pb.View) -> None:
        """The lot, the die, the high bid and who acts."""
        view.auction.CopyFrom(
            pb.Auction(
                die=state.die,
                lot=counts(state.lot),
                high_bid=state.high_bid,
                high_bidder=state.high_bidder,
                auctioneer=state.auctioneer,
                to_act=state.current,
            )
        )

    def default_move(self, state: State, d: Decision) -> Any:
        return PASS_BID


def _lowest_bid(state: State) -> int:
    """The opening bid is free down to the match minimum; every later bid covers the last."""
    if state.high_bidder < 0:
        return state.options["min_bid"]
    return max(state.high_bid + 1, state.options["min_bid"])


def _auction_prompt(state: State, seat: int, lo: int) -> str:
    lot = ", ".join(f"{k} {COMPANY_IDS[c]}" for c, k in enumerate(state.lot) if k) or "no cards"
    if lo > state.bills[seat]:
        return f"Auction of {lot} + first-player ship: you cannot bid above {state.high_bid}; pass"
    return (
        f"Auction of {lot} + first-player ship: bid {lo}..{state.bills[seat]} bills, or pass"
    )


def start_round(state: State) -> list[Event]:
    """A new round: the first player of the last round (the oldest player in round 1) is the
    auctioneer, rolls the die and reveals that many ship cards, added to any unsold lot."""
    state.round += 1
    state.auctioneer = max(state.first_player, 0)
    faces = state.rules.die_faces
    state.die = faces[state.rng.stream("die", state.round).below(len(faces))]
    drawn = draw_from_pile(state, state.die)
    for c in drawn:
        state.lot[c] += 1
    state.phase = AUCTION
    state.high_bid, state.high_bidder = 0, -1
    state.in_auction = [True] * state.n
    state.current = (state.auctioneer + 1) % state.n
    state.plays_this_round = 0
    counts = [drawn.count(c) for c in range(N_COMPANIES)]
    return [
        Event(
            "batavia.auction_opened",
            state.auctioneer,
            f"round {state.round}: seat {state.auctioneer} rolls {state.die} and turns up "
            f"{cards_text(counts)}" + ("" if list(state.lot) == counts else
                                      f"; the lot now holds {cards_text(state.lot)}"),
            {"round": state.round, "die": state.die, "revealed": counts, "lot": list(state.lot)},
        )
    ]


def place_bid(state: State, seat: int, amount: int) -> list[Event]:
    if state.high_bidder >= 0 and amount <= state.high_bid:
        raise IllegalMove(
            "ILLEGAL_MOVE",
            f"A. Vente aux enchères: each bid must cover the previous one ({state.high_bid})",
        )
    if amount < state.options["min_bid"]:
        raise IllegalMove(
            "ILLEGAL_MOVE",
            f"A. Vente aux enchères: the minimum bid in this match is {state.options['min_bid']}",
        )
    if amount > state.bills[seat]:
        raise IllegalMove(
            "ILLEGAL_MOVE",
            f"A. Vente aux enchères: a bid may not exceed the bills you hold ({state.bills[seat]})",
        )
    state.high_bid, state.high_bidder = amount, seat
    events = [Event("batavia.bid", seat, f"seat {seat} bids {count(amount, 'bill')}", {"amount": amount})]
    return events + _next_bidder(state, seat)


def pass_bid(state: State, seat: int) -> list[Event]:
    state.in_auction[seat] = False
    return [Event("batavia.pass", seat, f"seat {seat} passes")] + _next_bidder(state, seat)


def _next_bidder(state: State, seat: int) -> list[Event]:
    """Bidding goes on clockwise among those still in until one bidder remains."""
    active = sum(state.in_auction)
    if active == 0:
        return _all_passed(state)
    if active == 1 and state.high_bidder >= 0:
        return _sell_lot(state)
    nxt = seat
    while True:
        nxt = (nxt + 1) % state.n
        if state.in_auction[nxt]:
            state.current = nxt
            return []


def _sell_lot(state: State) -> list[Event]:
    """The winner pays by handing out bills one at a time clockwise from the left neighbour, to
    opponents only, takes the cards and the first-player ship."""
    winner, price = state.high_bidder, state.high_bid
    paid = [0] * state.n
    state.bills[winner] -= price
    for i in range(price):
        to = (winner + 1 + i % (state.n - 1)) % state.n
        state.bills[to] += 1
        paid[to] += 1
    cards = list(state.lot)
    for c in range(N_COMPANIES):
        state.hands[winner][c] += state.lot[c]
    state.lot = [0] * N_COMPANIES
    state.first_player = winner
    event = Event(
        "batavia.auction_won",
        winner,
        f"seat {winner} buys {cards_text(cards)} and the first-player ship for "
        f"{count(price, 'bill')}" + "".join(
            f"{', ' if i else ': '}{count(n, 'bill')} to seat {s}"
            for i, (s, n) in enumerate((s, n) for s, n in enumerate(paid) if n)),
        {"price": price, "cards": cards, "paid": paid, "hand_sizes": hand_sizes(state)},
    )
    return [event] + _start_actions(state)


def _all_passed(state: State) -> list[Event]:
    """Everybody passed: the cards stay for the next auction and the first player does not
    change — except in the game's first auction, where the auctioneer becomes first player."""
    if state.first_player < 0:
        state.first_player = state.auctioneer
    event = Event(
        "batavia.auction_unsold",
        -1,
        f"everybody passed; {cards_text(state.lot)} stay for the next auction; "
        f"seat {state.first_player} remains first player",
        {"lot": list(state.lot), "first_player": state.first_player},
    )
    return [event] + _start_actions(state)


def _start_actions(state: State) -> list[Event]:
    state.phase = ACTIONS
    state.turns_taken = 0
    state.current = state.first_player
    state.played = [0] * N_COMPANIES
    return []
