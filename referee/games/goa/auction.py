""""1. Place auction tokens" and "2. Tile auctions", each phase's own decision
(``TokenPlacement``, ``Auction``): who places which token, the auction of each token's lot in
turn (one round of bids; the auctioneer sells or keeps), and awarding the lot."""
from __future__ import annotations

from collections.abc import Sequence

from referee.core.contract import Decision, Event
from referee.v1 import goa_pb2 as pb

from .board import flag_cells, grid_index, rc_of, token_cells, token_seat
from .moves import (
    KEEP_LOT,
    PASS,
    PLACE_FLAG,
    PLACE_TOKEN,
    Bid,
    KeepLot,
    Move,
    Pass,
    PlaceFlag,
    PlaceToken,
    bid,
)
from .resources import gain_extra
from .state import ACTIONS, AUCTION, PLACE, PhaseDecision, State
from .tiles import gain_tile, take_bonanza
from .view_parts import tile_info
from .wording import count, square_name


class TokenPlacement(PhaseDecision):
    """1. Place auction tokens: the flag holder places the flag with token 1, the others clockwise
    tokens 2..n, the flag holder the last one; a token with no cell left is skipped."""

    __slots__ = ()
    PHASE = PLACE

    def settle(self, state: State, events: list[Event]) -> None:
        k = len(state.tokens)
        if k > state.n:
            state.phase = AUCTION
            state.lot = 0
            open_lot(state)
            return
        state.tokens.append(-1)  # no cell left for this token
        state.token_seats.append(token_seat(state, k))

    def decision(self, state: State) -> Decision | None:
        k = len(state.tokens)
        if k > state.n:
            return None
        cells = flag_cells(state) if k == 0 else token_cells(state)
        if not cells:
            return None
        seat = token_seat(state, k)
        if k == 0:
            return Decision(seat, "goa.place_flag", [PLACE_FLAG[c] for c in cells],
                            "Place the flag with your number 1 token")
        return Decision(seat, "goa.place_token", [PLACE_TOKEN[c] for c in cells],
                        f"Place your number {k + 1} auction token")

    def play(self, state: State, move: Move) -> list[Event]:
        """The flag (token 1) or the next numbered token on its cell."""
        assert type(move) is PlaceFlag or type(move) is PlaceToken
        k = len(state.tokens)
        p = token_seat(state, k)
        state.tokens.append(move.cell)
        state.token_seats.append(p)
        if k == 0:
            state.flag_cell = move.cell
        r, c = rc_of(move.cell)
        return [Event("goa.token", p, (f"seat {p} places the flag (token 1) {square_name(r, c)}" if k == 0 else
                       f"seat {p} places auction token {k + 1} on {_tile_at(state, move.cell)} "
                       f"at {square_name(r, c)}"),
                      {"token": k + 1, "row": r, "col": c})]


def open_lot(state: State) -> None:
    state.bid_pos = 1
    state.high = 0
    state.high_bidder = -1
    state.bids = []


def auctioneer(state: State) -> int:
    return state.token_seats[state.lot]


class Auction(PhaseDecision):
    """2. Tile auctions: each token's lot in turn (the flag first), one round of bids from the
    auctioneer's left; the auctioneer last sells to the high bidder (who pays him), or keeps the
    lot paying the bank the high bid minus 1 (2004: outbids and pays his bid to the bank). A
    token with no cell has no lot; a lot nobody bids on goes free to the auctioneer."""

    __slots__ = ()
    PHASE = AUCTION

    def settle(self, state: State, events: list[Event]) -> None:
        while state.lot < len(state.tokens) and state.tokens[state.lot] < 0 and state.lot > 0:
            state.lot += 1
            open_lot(state)
        if state.lot >= len(state.tokens):
            state.phase = ACTIONS
            state.turns = 0
        elif state.bid_pos >= state.n and state.high == 0:
            a = auctioneer(state)
            events.append(Event("goa.no_bid", a, f"nobody bids: seat {a}, the auctioneer, takes the lot for free"))
            events.extend(award(state, a))

    def decision(self, state: State) -> Decision | None:
        lot = state.lot
        if lot >= len(state.tokens) or (lot > 0 and state.tokens[lot] < 0):
            return None
        n = state.n
        seat = (state.token_seats[state.lot] + state.bid_pos) % n
        money = state.ducats[seat]
        high = state.high
        if state.bid_pos < n:
            moves: Sequence[Move] = [PASS] + [bid(x) for x in range(high + 1, money + 1)]
            return Decision(seat, "goa.bid", moves, f"Bid more than {high} ducats, or pass")
        if high == 0:
            return None
        if state.edition == "2004":
            moves = [PASS] + [bid(x) for x in range(high + 1, money + 1)]
            prompt = f"Sell to the high bidder for {high} (pass), or outbid and pay the bank"
        else:
            moves = [PASS, KEEP_LOT] if money >= high - 1 else [PASS]
            prompt = f"Sell to the high bidder for {high} (pass), or keep it paying the bank {high - 1}"
        return Decision(seat, "goa.auctioneer", moves, prompt)

    def play(self, state: State, move: Move) -> list[Event]:
        n = state.n
        a = state.token_seats[state.lot]
        p = (a + state.bid_pos) % n
        kind = type(move)
        if state.bid_pos < n:
            state.bid_pos += 1
            if kind is Bid:
                assert type(move) is Bid
                state.high = move.amount
                state.high_bidder = p
                state.bids.append(move.amount)
                return [Event("goa.bid", p, f"seat {p} bids {count(move.amount, 'ducat')}", {"amount": move.amount})]
            state.bids.append(-1)
            return [Event("goa.pass", p, f"seat {p} passes")]
        # the auctioneer
        if kind is Pass:
            winner, price = state.high_bidder, state.high
            state.ducats[winner] -= price
            state.ducats[a] += price
            ev = Event("goa.sold", a, f"seat {a} sells the lot to seat {winner} for {count(price, 'ducat')}", {"price": price})
        elif kind is KeepLot:
            winner, price = a, state.high - 1
            state.ducats[a] -= price
            ev = Event("goa.kept", a, f"seat {a} keeps the lot, paying {count(price, 'ducat')} to the bank", {"price": price})
        else:
            assert type(move) is Bid
            winner, price = a, move.amount
            state.ducats[a] -= price
            ev = Event("goa.kept", a, f"seat {a} outbids the high bid, paying {count(price, 'ducat')} to the bank", {"price": price})
        return [ev] + award(state, winner)

    def pending_view(self, state: State, view: pb.View) -> None:
        """The lot under auction: its number, the flag or its tile, the auctioneer, the bids so
        far and who is to act."""
        k = state.lot
        if k >= len(state.tokens):
            return
        a = state.token_seats[k]
        auction = pb.Auction(lot=k + 1, is_flag=k == 0, auctioneer=a, high_bid=state.high,
                             high_bidder=state.high_bidder, to_act=_bidder(state),
                             bids=list(state.bids))
        if k > 0 and state.tokens[k] >= 0:
            t = state.grid[grid_index(state.tokens[k])]
            if t >= 0:
                auction.tile.CopyFrom(tile_info(state.rules, t))
        view.auction.CopyFrom(auction)


def _bidder(state: State) -> int:
    """Who acts on the lot: the bidders from the auctioneer's left, the auctioneer last."""
    return (auctioneer(state) + state.bid_pos) % state.n


def _tile_at(state: State, cell: int) -> str:
    """The name of the tile on an auction board square."""
    t = state.grid[grid_index(cell)]
    return f"the tile {state.rules.tiles[t].name}" if t >= 0 else "an empty square"


def award(state: State, winner: int) -> list[Event]:
    """The lot goes to the winner: the flag (first player, 1 Extra action card) or the tile under
    the token; then the next token's auction opens."""
    k = state.lot
    state.lot += 1
    open_lot(state)
    if k == 0:
        state.first = winner
        gain_extra(state, winner, 1)
        return [Event("goa.flag_won", winner, f"seat {winner} obtains the flag")]
    gi = grid_index(state.tokens[k])
    t = state.grid[gi]
    state.grid[gi] = -1
    gain_tile(state, winner, t)
    take_bonanza(state, winner, gi)
    return [Event("goa.tile_won", winner, f"seat {winner} obtains the tile {state.rules.tiles[t].name}",
                  {"tile": t})]
