"""Batavia's forward-model support (issue 21): a hand-written ``clone`` of the state and the
sampler that builds a full state from what seats saw (``sample_state``). SAMPLING.md in this
folder says what is hidden, how each part is drawn and which bias remains.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from referee.core.contract import Event, sample_fitting
from referee.core.rng import Rng, Streams
from referee.v1 import batavia_pb2 as pb

from . import rules as R
from .catalog import COMPANY_IDS, GOOD_IDS, N_COMPANIES, N_GOODS, SETUP_FACE_DOWN
from .state import ACTIONS, AUCTION, EXCHANGE, OVER, State, can_play
from .view import build_view

# ---------------------------------------------------------------------------- clone


def clone_state(s: State) -> State:
    """An independent copy: lists are copied (nested ones per row), immutable parts (the
    compiled ``Rules``, the options, ints and strings) are shared. Every field of ``State`` is
    assigned here; ``tests/batavia/test_sim.py`` reads this function's source and fails if one is
    missing. ``final`` (the scoring dicts) is copied a level deep: nothing changes it in place
    once it is written."""
    c = State.__new__(State)  # not object.__new__: the compiled build's State refuses it
    c.n = s.n
    c.options = s.options
    c.rules = s.rules
    c.rng = copy.deepcopy(s.rng)  # a Streams copies its root and counts only
    c.track = s.track[:]
    c.revealed = s.revealed
    c.draw_pile = s.draw_pile[:]
    c.discards = s.discards[:]
    c.hands = [h[:] for h in s.hands]
    c.face_up = [f[:] for f in s.face_up]
    c.bills = s.bills[:]
    c.gold = s.gold[:]
    c.merchant = s.merchant[:]
    c.tiles = [t[:] for t in s.tiles]
    c.crates_left = s.crates_left[:]
    c.crate_owner = s.crate_owner[:]
    c.arrival_holder = s.arrival_holder
    c.round = s.round
    c.phase = s.phase
    c.first_player = s.first_player
    c.auctioneer = s.auctioneer
    c.die = s.die
    c.lot = s.lot[:]
    c.high_bid = s.high_bid
    c.high_bidder = s.high_bidder
    c.in_auction = s.in_auction[:]
    c.current = s.current
    c.turns_taken = s.turns_taken
    c.played = s.played[:]
    c.pending_tile = s.pending_tile
    c.plays_this_round = s.plays_this_round
    c.end_reason = s.end_reason
    c.final = [dict(f) for f in s.final]
    return c


# ---------------------------------------------------------------------------- sampler

_COMPANY = {name: i for i, name in enumerate(COMPANY_IDS)}
_GOOD = {name: i for i, name in enumerate(GOOD_IDS)}
#: deals tried before giving up on a constraint no deal meets (the true state meets it)
_MAX_REDRAWS = 10_000
_PHASE = {pb.AUCTION: AUCTION, pb.ACTIONS: ACTIONS, pb.EXCHANGE: EXCHANGE, pb.GAME_OVER: OVER}


def _tile(company: int, good: int) -> int:
    """A stall tile id from the View's 1-based Company and Good."""
    if not (1 <= company <= N_COMPANIES and 1 <= good <= N_GOODS):
        raise ValueError(f"no stall tile of company {company} and good {good}")
    return (company - 1) * N_GOODS + good - 1


class _History:
    """What the public events say that the View does not (see SAMPLING.md, "The history")."""

    def __init__(self, history: Sequence[Event], n: int, rules: R.Rules):
        self.known = [[0] * N_COMPANIES for _ in range(n)]  # cards surely in each hand
        self.space_tile: dict[int, int] = {}  # track space -> tile seen there
        self.last_open: Event | None = None  # this round's auction_opened
        self.outcome: Event | None = None  # this round's auction_won / auction_unsold
        self.moves_this_round = 0  # merchant moves and arrivals since the auction opened
        self.final_reason = ""
        pile = sum(rules.cards_per_company) - n * rules.starting_hand
        discards, reshuffles = 0, 0
        for ev in history:
            kind, data = ev.kind, ev.data
            drawn = 0
            if kind == "batavia.auction_opened":
                self.last_open, self.outcome, self.moves_this_round = ev, None, 0
                drawn = sum(data["revealed"])
            elif kind == "batavia.draw":
                drawn = data["count"]
            elif kind == "batavia.auction_won":
                self.outcome = ev
                for c, k in enumerate(data["cards"]):
                    self.known[ev.seat][c] += k
            elif kind == "batavia.auction_unsold":
                self.outcome = ev
            elif kind == "batavia.card_played":
                c = _COMPANY[data["company"]]
                self.known[ev.seat][c] = max(self.known[ev.seat][c] - 1, 0)
            elif kind == "batavia.pirates":
                discards += data["cards_each"] * len(data["companies"])
            elif kind in ("batavia.merchant_moved", "batavia.arrival_taken"):
                self.moves_this_round += 1
                if kind == "batavia.merchant_moved":
                    self.space_tile[data["space"]] = (
                        _COMPANY[data["company"]] * N_GOODS + _GOOD[data["good"]])
            elif kind == "batavia.stalls_revealed":
                for st in data["stalls"]:
                    self.space_tile[st["space"]] = (
                        _COMPANY[st["company"]] * N_GOODS + _GOOD[st["good"]])
            elif kind == "batavia.final_scoring":
                self.final_reason = data["reason"]
            for _ in range(drawn):  # draw_from_pile, one card at a time
                if not pile:
                    reshuffles += 1
                    pile, discards = discards, 0
                pile -= 1
        self.pile, self.discards, self.reshuffles = pile, discards, reshuffles


def sample_state(
    views: Mapping[int, pb.View], history: Sequence[Event], rng: Rng,
    options: Mapping[str, Any], seat_count: int, rules: R.Rules,
) -> State:
    """A full state that shows every seat in ``views`` exactly its view, the hidden parts drawn
    with ``rng`` (SAMPLING.md). Views that no Batavia position shows (or several seats' views of
    different positions) raise ValueError."""
    return sample_fitting(
        lambda: _sample_state(views, history, rng, options, seat_count, rules), views,
        build_view, "Batavia")


def _sample_state(
    views: Mapping[int, pb.View], history: Sequence[Event], rng: Rng,
    options: Mapping[str, Any], seat_count: int, rules: R.Rules,
) -> State:
    """A full state that shows every seat in ``views`` exactly its view, the hidden parts drawn
    with ``rng`` (SAMPLING.md)."""
    if not views:
        raise ValueError("sample_state needs at least one seat's view")
    seats = sorted(views)
    v = views[seats[0]]
    n = seat_count
    if v.seat_count != n or len(v.players) != n:
        raise ValueError(f"the view is of a {v.seat_count}-seat match, not {n}")
    h = _History(history, n, rules)
    phase = _PHASE[v.phase]
    players = list(v.players)

    s = State.__new__(State)  # not object.__new__: the compiled build's State refuses it
    s.n = n
    s.options = dict(options)
    s.rules = rules
    s.round = v.round
    s.phase = phase
    s.first_player = v.first_player
    s.current = v.current_seat
    s.arrival_holder = v.arrival_holder
    s.discards = list(v.discards.count) or [0] * N_COMPANIES
    s.face_up = [list(p.face_up.count) or [0] * N_COMPANIES for p in players]
    s.bills = [p.bills for p in players]
    s.gold = [p.gold for p in players]
    s.merchant = [p.merchant_space for p in players]
    s.tiles = [[_tile(t.company, t.good) for t in p.tiles] for p in players]
    s.crates_left = [p.crates_left for p in players]
    s.crate_owner = [-1] * (N_COMPANIES * N_GOODS)
    for house in v.counting_houses:
        for c, owner in enumerate(house.crate_owner):
            s.crate_owner[c * N_GOODS + house.good - 1] = owner
    s.played = list(v.played_this_turn.count) or [0] * N_COMPANIES
    s.pending_tile = _tile(v.pending_tile.company, v.pending_tile.good) \
        if phase == EXCHANGE else -1
    s.end_reason = ""
    s.final = []
    _turn_fields(s, v, h, players)
    s.track, s.revealed = _sample_track(s, v, h, rng)
    _sample_cards(s, views, h, rng, players, v)
    counts: dict[tuple[Any, ...], int] = {}
    if (h.reshuffles and h.pile == len(s.draw_pile)
            and h.discards == sum(s.discards)):
        counts[("ship_cards_reshuffle",)] = h.reshuffles
    s.rng = Streams.from_root(rng.next64(), counts)
    if phase == OVER:
        _rescore(s, h)
    return s


def _turn_fields(s: State, v: pb.View, h: _History, players: list) -> None:
    """The auction's and the turn's fields: from the View while they show (the auction phase,
    the cards laid this turn), else from this round's events, else the documented default."""
    n = s.n
    if s.phase == AUCTION:
        a = v.auction
        s.auctioneer, s.die = a.auctioneer, a.die
        s.lot = list(a.lot.count) or [0] * N_COMPANIES
        s.high_bid, s.high_bidder = a.high_bid, a.high_bidder
        s.in_auction = [p.in_auction for p in players]
        s.turns_taken = 0 if s.round == 1 else n
        s.plays_this_round = 0
        return
    opened, outcome = h.last_open, h.outcome
    s.auctioneer = opened.seat if opened else max(s.first_player, 0)
    s.die = opened.data["die"] if opened else s.rules.die_faces[0]
    if outcome is not None and outcome.kind == "batavia.auction_won":
        s.lot = [0] * N_COMPANIES
        s.high_bid, s.high_bidder = outcome.data["price"], outcome.seat
        s.in_auction = [seat == outcome.seat for seat in range(n)]
    else:
        s.lot = list(outcome.data["lot"]) if outcome is not None else [-1] * N_COMPANIES
        s.high_bid, s.high_bidder = 0, -1
        s.in_auction = [False] * n
    if s.phase == OVER:
        s.turns_taken = n
    else:
        s.turns_taken = (s.current - s.first_player) % n
    s.plays_this_round = h.moves_this_round - (1 if s.phase == EXCHANGE else 0)
    if opened is None:
        s.plays_this_round = 0


def _sample_track(s: State, v: pb.View, h: _History, rng: Rng) -> tuple[list[int], int]:
    """The face-down stall tiles: the set-up sorts the tiles by company into piles, shuffles
    each, and lays them in blocks of one tile per company, each block shuffled. So each hidden
    block holds the companies its revealed part lacks, in a uniform order, and each company's
    unseen goods lie in a uniform order over that company's hidden places."""
    track = [-1] * len(v.stalls)
    hidden: list[int] = []
    for i, stall in enumerate(v.stalls):
        if stall.state == pb.FACE_UP:
            track[i] = _tile(stall.company, stall.good)
        elif stall.state == pb.FACE_DOWN:
            hidden.append(i)
    revealed = len(track) - len(hidden)
    if not hidden:
        return track, revealed
    if s.options["setup"] != SETUP_FACE_DOWN:
        raise ValueError("face-down stall tiles in a face_up set-up")
    seen = {t for t in track if t >= 0}
    seen.update(h.space_tile.values())
    seen.update(t for row in s.tiles for t in row)
    seen.update(t for t, owner in enumerate(s.crate_owner) if owner >= 0)
    if s.pending_tile >= 0:
        seen.add(s.pending_tile)
    # the block layout of the face-down set-up (rules._face_down_track)
    per_company = [[t for t in s.rules.stall_tiles if t // N_GOODS == c]
                   for c in range(N_COMPANIES)]
    sizes = [len(p) for p in per_company]
    slots: list[list[int]] = [[] for _ in range(N_COMPANIES)]  # hidden places per company
    start, k = 0, 0
    hidden_set = set(hidden)
    while start < len(track):
        block = [c for c in range(N_COMPANIES) if sizes[c] > k]
        places = list(range(start, start + len(block)))
        shown = set()
        for i in places:
            tile = track[i] if track[i] >= 0 else h.space_tile.get(i + 1, -1)
            if i not in hidden_set and tile >= 0:
                shown.add(tile // N_GOODS)
        missing = [c for c in block if c not in shown]
        open_places = [i for i in places if i in hidden_set]
        rng.shuffle(missing)  # (more missing than hidden places only without the history)
        for i, c in zip(open_places, missing):
            slots[c].append(i)
        start, k = start + len(block), k + 1
    for c in range(N_COMPANIES):
        unseen = [t for t in per_company[c] if t not in seen]
        if len(unseen) < len(slots[c]):
            raise ValueError("the view's face-down stalls do not fit the component sheet")
        rng.shuffle(unseen)
        for i, t in zip(slots[c], unseen):
            track[i] = t
    return track, revealed


def _sample_cards(s: State, views: Mapping[int, pb.View], h: _History, rng: Rng,
                  players: list, v: pb.View) -> None:
    """Hands of the seats not in ``views`` (their size is public), the draw pile's order and,
    without the history, an unsold lot outside the auction: the cards nobody given sees, dealt
    uniformly, each other seat first getting the cards the events prove it still holds."""
    n = s.n
    hands: list[list[int] | None] = [None] * n
    for seat, view in views.items():
        hands[seat] = list(view.my_hand.count) or [0] * N_COMPANIES
    pool = list(s.rules.cards_per_company)
    lot_unknown = s.lot[0] < 0
    if lot_unknown:
        s.lot = [0] * N_COMPANIES
    for c in range(N_COMPANIES):
        pool[c] -= s.discards[c] + s.lot[c] + sum(row[c] for row in s.face_up)
        pool[c] -= sum(hand[c] for hand in hands if hand is not None)
    known: list[list[int]] = []
    for seat in range(n):
        hand = hands[seat]
        if hand is None:
            hand = list(h.known[seat])
            for c in range(N_COMPANIES):
                pool[c] -= hand[c]
        known.append(hand)
    if min(pool) < 0:
        raise ValueError("the views and events name more ship cards than the game has")
    base = [c for c in range(N_COMPANIES) for _ in range(pool[c])]
    # a seat in the middle of laying cards could complete its turn (RULINGS 5): deals where it
    # could not are redrawn, which keeps the draw uniform over the deals where it can
    laying = s.phase == ACTIONS and any(s.played) and s.current not in views
    for _attempt in range(_MAX_REDRAWS):
        unseen = base[:]
        rng.shuffle(unseen)
        dealt = [hand[:] for hand in known]
        for seat in range(n):
            if seat in views:
                continue
            for _ in range(players[seat].hand_size - sum(dealt[seat])):
                dealt[seat][unseen.pop()] += 1
        s.hands = dealt
        if not laying or can_play(s, s.current):
            break
    else:
        raise ValueError("no deal lets the seat laying cards complete its turn")
    if lot_unknown:
        for _ in range(len(unseen) - v.draw_pile_size):
            s.lot[unseen.pop()] += 1
    if len(unseen) != v.draw_pile_size:
        raise ValueError("the views' card counts do not add up to the game's ship cards")
    s.draw_pile = unseen


def _rescore(s: State, h: _History) -> None:
    """A finished game: the View shows each seat's final total, not the gold from exchanges, so
    score once without it and take the difference; the end's reason is the final event's, or the
    first of end_round's checks that holds."""
    reason = h.final_reason
    if not reason:
        if s.arrival_holder >= 0:
            reason = "the arrival tile was taken"
        elif s.round >= s.options["max_rounds"]:
            reason = f"the round limit ({s.options['max_rounds']}) was reached"
        else:
            reason = "no card can be drawn, sold or laid any more"
    totals = s.gold
    s.gold = [0] * s.n
    R.final_scoring(s, reason)
    s.gold = [t - f["total"] for t, f in zip(totals, s.final)]
    R.final_scoring(s, reason)
