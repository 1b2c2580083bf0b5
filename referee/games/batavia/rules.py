"""Batavia rules, pure. Section names follow the French rulebook (shared/rules/
east-india-fr-ocr.txt): "Préparation", "A. Vente aux enchères", "B. Actions des joueurs"
("Piocher", "Jouer des cartes", "Avancer son commerçant", "Echanger des tuiles"),
"Attaque de pirates", "Fin du jeu", "Décompte". Open points: RULINGS.md.

Indices: companies 0..4 (EN, DK, FR, NL, SE), goods 0..6 (tea … pepper), a stall tile is
``company * 7 + good``. Spaces are 1..35 on the track; 0 is the start space, 36 the arrival tile.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from referee.core.components import ComponentSheet
from referee.core.contract import Decision, Event, IllegalMove
from referee.core.rng import Rng

from .moves import (
    ADVANCE,
    DRAW_CARDS,
    EXCHANGE_TILES,
    KEEP_TILES,
    PASS_BID,
    PLAY_CARD,
    TAKE_ARRIVAL,
    AdvanceMerchant,
    Bid,
    DrawCards,
    ExchangeTiles,
    KeepTiles,
    PassBid,
    PlayCard,
    TakeArrival,
    bid,
)

N_COMPANIES = 5
N_GOODS = 7
START, ARRIVAL = 0, 36
COMPANY_IDS = ("EN", "DK", "FR", "NL", "SE")
GOOD_IDS = ("tea", "cotton", "porcelain", "silk", "ginger", "nutmeg", "pepper")
COMPANY_NAMES = ("England", "Denmark", "France", "Netherlands", "Sweden")

# phases
AUCTION, ACTIONS, EXCHANGE, OVER = 1, 2, 3, 4

SETUP_FACE_DOWN, SETUP_FACE_UP = "face_down", "face_up"


@dataclass(frozen=True)
class Rules:
    """The component values the rules use, read once from the sheet."""

    track_spaces: int
    initially_face_up: int
    reveal_block: int
    cards_per_company: tuple[int, ...]
    starting_hand: int
    draw_count: int
    bills_per_player: int
    crates_per_player: int
    die_faces: tuple[int, ...]
    exchange_gold: dict[int, int]
    pirate_threshold: dict[int, int]
    cannon_max: int
    goods_gold: tuple[tuple[int, int], ...]  # per good: (majority, tie each)
    bills_gold: tuple[int, int]
    arrival_gold: int
    stall_tiles: tuple[int, ...]
    face_up_layout: tuple[int, ...]

    @classmethod
    def from_sheet(cls, sheet: ComponentSheet) -> Rules:
        v = sheet.values
        tile = lambda pair: COMPANY_IDS.index(pair[0]) * N_GOODS + GOOD_IDS.index(pair[1])
        return cls(
            track_spaces=v["track_spaces"],
            initially_face_up=v["initially_face_up"],
            reveal_block=v["reveal_block"],
            cards_per_company=tuple(v["ship_cards_per_company"][c] for c in COMPANY_IDS),
            starting_hand=v["starting_hand"],
            draw_count=v["draw_count"],
            bills_per_player=v["bills_per_player"],
            crates_per_player=v["crates_per_player"],
            die_faces=tuple(v["die_faces"]),
            exchange_gold={int(k): g for k, g in v["exchange_gold"].items()},
            pirate_threshold={int(k): t for k, t in v["pirate_threshold"].items()},
            cannon_max=v["cannon_max"],
            goods_gold=tuple(tuple(v[f"goods_gold_{g}"]) for g in GOOD_IDS),
            bills_gold=tuple(v["bills_majority_gold"]),
            arrival_gold=v["arrival_gold"],
            stall_tiles=tuple(tile(p) for p in v["stall_tiles"]),
            face_up_layout=tuple(tile(p) for p in v["face_up_layout"]),
        )


@dataclass(slots=True)
class State:
    n: int
    options: dict[str, Any]
    rules: Rules = field(metadata={"hash": False})
    rng: Rng
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
        state.n, sorted(state.options.items()), state.rng.state, state.track, state.revealed,
        state.draw_pile, state.discards, state.hands, state.face_up, state.bills, state.gold,
        state.merchant, state.tiles, state.crates_left, state.crate_owner, state.arrival_holder,
        state.round, state.phase, state.first_player, state.auctioneer, state.die, state.lot,
        state.high_bid, state.high_bidder, state.in_auction, state.current, state.turns_taken,
        state.played, state.pending_tile, state.plays_this_round, state.end_reason, state.final,
    )
    return hashlib.sha256(repr(key).encode()).hexdigest()


# ---------------------------------------------------------------------------- set-up


def setup(options: dict[str, Any], n: int, rng: Rng, rules: Rules) -> tuple[State, list[Event]]:
    """Préparation: stall tiles, ship cards (10 each), 15 bills, 12 crates, merchants on the
    start space. The oldest player (seat 0) is the first auctioneer."""
    if options["setup"] == SETUP_FACE_UP:
        track = list(rules.face_up_layout)
        revealed = rules.track_spaces
    else:
        track = _face_down_track(rules, rng)
        revealed = rules.initially_face_up
    pile = [c for c in range(N_COMPANIES) for _ in range(rules.cards_per_company[c])]
    rng.shuffle(pile)
    hands = [[0] * N_COMPANIES for _ in range(n)]
    for seat in range(n):
        for _ in range(rules.starting_hand):
            hands[seat][pile.pop()] += 1
    state = State(
        n=n,
        options=dict(options),
        rules=rules,
        rng=rng,
        track=track,
        revealed=revealed,
        draw_pile=pile,
        discards=[0] * N_COMPANIES,
        hands=hands,
        face_up=[[0] * N_COMPANIES for _ in range(n)],
        bills=[rules.bills_per_player] * n,
        gold=[0] * n,
        merchant=[START] * n,
        tiles=[[] for _ in range(n)],
        crates_left=[rules.crates_per_player] * n,
        crate_owner=[-1] * (N_COMPANIES * N_GOODS),
        in_auction=[True] * n,
    )
    events = [Event("batavia.setup", -1, f"{n} players; setup {options['setup']}")]
    events += start_round(state)
    return state, events


def _face_down_track(rules: Rules, rng: Rng) -> list[int]:
    """Sort the tiles by company into 5 face-down piles and shuffle each; then repeatedly take the
    top tile of every pile, shuffle those 5 and lay them on the next 5 spaces."""
    piles = [[t for t in rules.stall_tiles if t // N_GOODS == c] for c in range(N_COMPANIES)]
    for pile in piles:
        rng.shuffle(pile)
    track: list[int] = []
    while any(piles):
        block = [pile.pop() for pile in piles if pile]
        rng.shuffle(block)
        track.extend(block)
    return track


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


def _max_other(state: State, seat: int, company: int) -> int:
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
        if own[c] + hand[c] > _max_other(state, seat, c):
            return True
    return False


def pirate_threshold(state: State) -> int:
    return state.rules.pirate_threshold[state.n]


def face_up_total(state: State) -> int:
    return sum(sum(row) for row in state.face_up)


def company_totals(state: State) -> list[int]:
    return [sum(state.face_up[s][c] for s in range(state.n)) for c in range(N_COMPANIES)]


# ---------------------------------------------------------------------------- decisions


def decision(state: State) -> Decision | None:
    if state.phase == OVER:
        return None
    seat = state.current
    if state.phase == AUCTION:
        lo = _lowest_bid(state)
        moves = [PASS_BID] + [bid(a) for a in range(lo, state.bills[seat] + 1)]
        return Decision(seat, "batavia.auction", moves, _auction_prompt(state, seat, lo))
    if state.phase == EXCHANGE:
        return Decision(
            seat,
            "batavia.exchange",
            [EXCHANGE_TILES, KEEP_TILES],
            "Exchange one stall tile of each company you hold for gold, or keep them",
        )
    hand = state.hands[seat]
    if not any(state.played):
        moves = [DRAW_CARDS]
        if can_play(state, seat):
            moves += [PLAY_CARD[c] for c in range(N_COMPANIES) if hand[c]]
        return Decision(seat, "batavia.turn", moves, "Draw 2 ship cards, or lay ship cards")
    moves = [PLAY_CARD[c] for c in range(N_COMPANIES) if hand[c]]
    moves += _move_options(state, seat)
    return Decision(seat, "batavia.play", moves, "Lay another card, or move your merchant")


def _move_options(state: State, seat: int) -> list:
    """Where the merchant may go now that cards are laid: to the next stall of any company whose
    seal the seat holds; if none lies ahead, to the arrival tile (once, by one player)."""
    seals = seals_of(state, seat)
    if not seals:
        return []
    ahead = stalls_ahead(state, seat)
    options = [ADVANCE[c] for c in seals if ahead[c]]
    if not options and state.arrival_holder < 0:
        options.append(TAKE_ARRIVAL)
    return options


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


def default_move(state: State, d: Decision):
    """The time policy's DEFAULT_MOVE: pass, draw, keep; with cards already laid, the first
    merchant move offered (or, if none yet, the first card offered)."""
    if state.phase == AUCTION:
        return PASS_BID
    if state.phase == EXCHANGE:
        return KEEP_TILES
    if not any(state.played):
        return DRAW_CARDS
    moving = [m for m in d.moves if not isinstance(m, PlayCard)]
    return (moving or list(d.moves))[0]


# ---------------------------------------------------------------------------- apply


def apply(state: State, seat: int, move) -> list[Event]:
    """Play one move. Every check comes before any change, so an IllegalMove leaves the state
    untouched."""
    if state.phase == OVER:
        raise IllegalMove("MATCH_OVER", "the game is over")
    if seat != state.current:
        raise IllegalMove("NOT_YOUR_TURN", f"seat {state.current} is to act, not seat {seat}")
    kind = type(move)
    if state.phase == AUCTION:
        if kind is Bid:
            return place_bid(state, seat, move.amount)
        if kind is PassBid:
            return pass_bid(state, seat)
        raise IllegalMove("ILLEGAL_MOVE", "A. Vente aux enchères: during the auction you may only bid or pass")
    if state.phase == EXCHANGE:
        if kind is ExchangeTiles:
            return exchange_tiles(state, seat)
        if kind is KeepTiles:
            return keep_tiles(state, seat)
        raise IllegalMove(
            "ILLEGAL_MOVE", "3. Echanger des tuiles: choose to exchange your stall tiles or keep them"
        )
    if kind is DrawCards:
        return draw_cards(state, seat)
    if kind is PlayCard:
        return play_card(state, seat, move.company)
    if kind is AdvanceMerchant:
        return advance_merchant(state, seat, move.company)
    if kind is TakeArrival:
        return take_arrival(state, seat)
    raise IllegalMove(
        "ILLEGAL_MOVE", "B. Actions des joueurs: draw 2 ship cards, or lay cards and move your merchant"
    )


# ---- A. Vente aux enchères


def start_round(state: State) -> list[Event]:
    """A new round: the first player of the last round (the oldest player in round 1) is the
    auctioneer, rolls the die and reveals that many ship cards, added to any unsold lot."""
    state.round += 1
    state.auctioneer = max(state.first_player, 0)
    faces = state.rules.die_faces
    state.die = faces[state.rng.below(len(faces))]
    drawn = _draw(state, state.die)
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
            f"round {state.round}: seat {state.auctioneer} rolls {state.die} and reveals "
            f"{len(drawn)} card(s); lot now {sum(state.lot)} card(s)",
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
    events = [Event("batavia.bid", seat, f"seat {seat} bids {amount}", {"amount": amount})]
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
        f"seat {winner} buys {sum(cards)} card(s) and the first-player ship for {price}",
        {"price": price, "cards": cards, "paid": paid, "hand_sizes": _hand_sizes(state)},
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
        f"everybody passed; {sum(state.lot)} card(s) stay for the next auction; "
        f"seat {state.first_player} remains first player",
        {"lot": list(state.lot), "first_player": state.first_player},
    )
    return [event] + _start_actions(state)


def _hand_sizes(state: State) -> list[int]:
    return [sum(h) for h in state.hands]


def _start_actions(state: State) -> list[Event]:
    state.phase = ACTIONS
    state.turns_taken = 0
    state.current = state.first_player
    state.played = [0] * N_COMPANIES
    return []


# ---- B. Actions des joueurs


def _draw(state: State, k: int) -> list[int]:
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
            state.rng.shuffle(pile)
        out.append(pile.pop())
    return out


def draw_cards(state: State, seat: int) -> list[Event]:
    if any(state.played):
        raise IllegalMove(
            "ILLEGAL_MOVE",
            "B. Actions des joueurs: only one of the two actions per turn; you have laid cards, "
            "so move your merchant",
        )
    drawn = _draw(state, state.rules.draw_count)
    for c in drawn:
        state.hands[seat][c] += 1
    ev = Event("batavia.draw", seat, f"seat {seat} draws {len(drawn)} card(s)", {"count": len(drawn)})
    return [ev] + end_turn(state, seat)


def play_card(state: State, seat: int, company: int) -> list[Event]:
    if not 0 <= company < N_COMPANIES or not state.hands[seat][company]:
        raise IllegalMove(
            "ILLEGAL_MOVE", f"1. Poser des cartes: you hold no {_cname(company)} ship card"
        )
    if not can_play(state, seat):
        if state.arrival_holder >= 0:
            rule = (
                "Fin du jeu: once the arrival tile is taken you may only lay cards if you can "
                "still reach a stall tile with a seal you hold; draw 2 cards"
            )
        else:
            rule = (
                "1. Poser des cartes: you cannot hold a strict majority of any company after "
                "laying your cards (cases 1 and 2), so you must draw 2 cards"
            )
        raise IllegalMove("ILLEGAL_MOVE", rule)
    state.hands[seat][company] -= 1
    state.face_up[seat][company] += 1
    state.played[company] += 1
    return [
        Event(
            "batavia.card_played",
            seat,
            f"seat {seat} lays a {_cname(company)} ship card",
            {"company": COMPANY_IDS[company], "cannon": _cannon(state)},
        )
    ]


def _cannon(state: State) -> int:
    return min(face_up_total(state), state.rules.cannon_max)


def _must_have_played(state: State) -> None:
    if not any(state.played):
        raise IllegalMove(
            "ILLEGAL_MOVE", "1. Poser des cartes: lay at least one ship card before moving"
        )


def advance_merchant(state: State, seat: int, company: int) -> list[Event]:
    """2. Avancer son commerçant: to the next stall tile of a sealed company; take the tile and
    put a crate in that good's counting house on that company's space."""
    _must_have_played(state)
    if not 0 <= company < N_COMPANIES or seal_holder(state, company) != seat:
        raise IllegalMove(
            "ILLEGAL_MOVE",
            f"2. Avancer son commerçant: you must hold the {_cname(company)} seal "
            "(a strict majority of its face-up ship cards)",
        )
    space = stalls_ahead(state, seat)[company]
    if not space:
        raise IllegalMove(
            "ILLEGAL_MOVE",
            f"2. Avancer son commerçant: no {_cname(company)} stall tile lies ahead of your merchant",
        )
    tile = state.track[space - 1]
    state.track[space - 1] = -1
    state.merchant[seat] = space
    good = tile % N_GOODS
    crate = state.crates_left[seat] > 0
    if crate:
        state.crates_left[seat] -= 1
        state.crate_owner[tile] = seat
    events = [
        Event(
            "batavia.merchant_moved",
            seat,
            f"seat {seat} moves to space {space} and takes {COMPANY_IDS[company]} {GOOD_IDS[good]}",
            {"space": space, "company": COMPANY_IDS[company], "good": GOOD_IDS[good], "crate": crate},
        )
    ]
    events += _reveal_if_needed(state, space)
    if any(t // N_GOODS == company for t in state.tiles[seat]):
        state.tiles[seat].append(tile)
        return events + end_turn(state, seat)
    state.pending_tile = tile
    state.phase = EXCHANGE
    return events


def _reveal_if_needed(state: State, space: int) -> list[Event]:
    """When a merchant lands on one of the last 5 face-up tiles, the next 5 are revealed."""
    block = state.rules.reveal_block
    if state.revealed >= len(state.track) or space <= state.revealed - block:
        return []
    first = state.revealed + 1
    state.revealed = min(len(state.track), state.revealed + block)
    shown = [
        {"space": s, "company": COMPANY_IDS[state.track[s - 1] // N_GOODS],
         "good": GOOD_IDS[state.track[s - 1] % N_GOODS]}
        for s in range(first, state.revealed + 1)
    ]
    return [Event("batavia.stalls_revealed", -1, f"spaces {first}-{state.revealed} revealed", {"stalls": shown})]


def take_arrival(state: State, seat: int) -> list[Event]:
    """Fin du jeu: having laid cards with no stall of a sealed company ahead, the merchant goes
    to the arrival tile and takes it; the round is played to its end."""
    _must_have_played(state)
    if state.arrival_holder >= 0:
        raise IllegalMove("ILLEGAL_MOVE", "Fin du jeu: the arrival tile has already been taken")
    seals = seals_of(state, seat)
    if not seals:
        raise IllegalMove(
            "ILLEGAL_MOVE", "1. Poser des cartes: you must hold a strict majority of some company"
        )
    ahead = stalls_ahead(state, seat)
    reachable = [c for c in seals if ahead[c]]
    if reachable:
        raise IllegalMove(
            "ILLEGAL_MOVE",
            f"Fin du jeu: you hold the {_cname(reachable[0])} seal and its stall lies ahead; "
            "you must advance to it",
        )
    state.merchant[seat] = ARRIVAL
    state.arrival_holder = seat
    ev = Event("batavia.arrival_taken", seat, f"seat {seat} takes the arrival tile; last round")
    return [ev] + end_turn(state, seat)


# ---- 3. Echanger des tuiles « Echoppe » contre des pièces d'or


def exchange_tiles(state: State, seat: int) -> list[Event]:
    """Hand in one tile of each company held (the new one included) for 1/3/6/10/15 gold. Which
    tile of a company goes is immaterial (goods play no role); the oldest goes (RULINGS.md)."""
    tiles = state.tiles[seat] + [state.pending_tile]
    handed: list[int] = []
    seen: set[int] = set()
    for t in tiles:
        if t // N_GOODS not in seen:
            seen.add(t // N_GOODS)
            handed.append(t)
    gold = state.rules.exchange_gold[len(handed)]
    state.gold[seat] += gold
    state.tiles[seat] = [t for t in tiles if t not in handed]
    state.pending_tile = -1
    ev = Event(
        "batavia.exchange",
        seat,
        f"seat {seat} exchanges {len(handed)} stall tile(s) for {gold} gold",
        {"companies": [COMPANY_IDS[t // N_GOODS] for t in handed], "gold": gold},
    )
    return [ev] + end_turn(state, seat)


def keep_tiles(state: State, seat: int) -> list[Event]:
    state.tiles[seat].append(state.pending_tile)
    state.pending_tile = -1
    return [Event("batavia.keep", seat, f"seat {seat} keeps its stall tiles")] + end_turn(state, seat)


# ---- after each turn


def end_turn(state: State, seat: int) -> list[Event]:
    """After a player's turn: a possible pirate attack, then the next player; after the last
    player, the game end check or a new round."""
    if any(state.played):
        state.plays_this_round += 1
    state.played = [0] * N_COMPANIES
    state.phase = ACTIONS
    events = pirate_attack(state)
    state.turns_taken += 1
    if state.turns_taken < state.n:
        state.current = (state.first_player + state.turns_taken) % state.n
        return events
    return events + end_round(state)


def pirate_attack(state: State) -> list[Event]:
    """Attaque de pirates: with 21 (3 players) / 25 (4-5) or more face-up cards, every face-up
    card of the company with the most face-up cards — of every company tied for most — is
    discarded. One attack per turn unless the option pirates_repeat is set (RULINGS.md)."""
    events: list[Event] = []
    while face_up_total(state) >= pirate_threshold(state):
        totals = company_totals(state)
        most = max(totals)
        sunk = [c for c in range(N_COMPANIES) if totals[c] == most]
        for c in sunk:
            for s in range(state.n):
                state.discards[c] += state.face_up[s][c]
                state.face_up[s][c] = 0
        events.append(
            Event(
                "batavia.pirates",
                -1,
                f"pirates sink {most} card(s) of {', '.join(_cname(c) for c in sunk)}",
                {"companies": [COMPANY_IDS[c] for c in sunk], "cards_each": most,
                 "cannon": _cannon(state)},
            )
        )
        if not state.options["pirates_repeat"]:
            break
    return events


def end_round(state: State) -> list[Event]:
    if state.arrival_holder >= 0:
        return final_scoring(state, "the arrival tile was taken")
    if state.round >= state.options["max_rounds"]:
        return final_scoring(state, f"the round limit ({state.options['max_rounds']}) was reached")
    if _deadlocked(state):
        return final_scoring(state, "no card can be drawn, sold or laid any more")
    return start_round(state)


def _deadlocked(state: State) -> bool:
    """Nothing can change any more: no card to draw or auction, and no seat may lay cards
    (RULINGS.md, 'Stalemate')."""
    if state.draw_pile or any(state.discards) or any(state.lot):
        return False
    return not any(can_play(state, s) for s in range(state.n))


# ---- Décompte


def final_scoring(state: State, reason: str) -> list[Event]:
    """Décompte: goods majorities per counting house (ties: the bracketed value each), 5 gold for
    the most bills (ties: 2 each), 4 gold for the arrival tile; no pirate attack now."""
    r = state.rules
    n = state.n
    final = [
        {"exchange": state.gold[s], "goods": {}, "bills": 0, "arrival": 0} for s in range(n)
    ]
    for g in range(N_GOODS):
        crates = [0] * n
        for c in range(N_COMPANIES):
            owner = state.crate_owner[c * N_GOODS + g]
            if owner >= 0:
                crates[owner] += 1
        most = max(crates)
        if most == 0:
            continue
        leaders = [s for s in range(n) if crates[s] == most]
        value = r.goods_gold[g][0] if len(leaders) == 1 else r.goods_gold[g][1]
        for s in leaders:
            final[s]["goods"][GOOD_IDS[g]] = value
    most_bills = max(state.bills)
    rich = [s for s in range(n) if state.bills[s] == most_bills]
    for s in rich:
        final[s]["bills"] = r.bills_gold[0] if len(rich) == 1 else r.bills_gold[1]
    if state.arrival_holder >= 0:
        final[state.arrival_holder]["arrival"] = r.arrival_gold
    for s in range(n):
        f = final[s]
        f["total"] = f["exchange"] + sum(f["goods"].values()) + f["bills"] + f["arrival"]
    state.final = final
    state.phase = OVER
    state.current = -1
    state.end_reason = reason
    return [
        Event(
            "batavia.final_scoring",
            -1,
            f"game over ({reason}); gold: " + ", ".join(str(f["total"]) for f in final),
            {"final": final, "reason": reason},
        )
    ]


def _cname(company: int) -> str:
    return COMPANY_NAMES[company] if 0 <= company < N_COMPANIES else f"company #{company}"
