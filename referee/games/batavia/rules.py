"""Batavia rules, pure: the set-up, the decision of each phase (its legal moves and its effect
together) and the players' actions; the auction is in auction.py, the state, the compiled
component values and the queries in state.py. Section names follow the French rulebook (Batavia, Queen Games 2008; an OCR of the
French rules): "Préparation", "A. Vente aux enchères", "B. Actions des joueurs" ("Piocher",
"Jouer des cartes", "Avancer son commerçant", "Echanger des tuiles"), "Attaque de pirates",
"Fin du jeu", "Décompte". Open points: RULINGS.md.
"""
from __future__ import annotations

from typing import Any

from referee.core.contract import Decision, Event, IllegalMove
from referee.core.pending import Pending
from referee.core.rng import Chance, Rng
from referee.v1 import batavia_pb2 as pb

from .auction import Auction, start_round
from .catalog import (
    ARRIVAL,
    COMPANY_IDS,
    GOOD_IDS,
    N_COMPANIES,
    N_GOODS,
    SETUP_FACE_DOWN,
    SETUP_FACE_UP,
    START,
    Rules,
)
from .moves import (
    ADVANCE,
    DRAW_CARDS,
    EXCHANGE_TILES,
    KEEP_TILES,
    PLAY_CARD,
    TAKE_ARRIVAL,
    AdvanceMerchant,
    DrawCards,
    ExchangeTiles,
    KeepTiles,
    Move,
    PlayCard,
    TakeArrival,
)
from .scoring import final_scoring
from .state import (
    ACTIONS,
    AUCTION,
    EXCHANGE,
    OVER,
    State,
    can_play,
    company_name,
    company_totals,
    draw_from_pile,
    face_up_total,
    pirate_threshold,
    seal_holder,
    seals_of,
    stalls_ahead,
    state_digest,
)
from .view_parts import stall_tile
from .wording import count, tile_text

__all__ = [
    "ACTIONS", "AUCTION", "COMPANY_IDS", "EXCHANGE", "GOOD_IDS", "N_COMPANIES", "N_GOODS", "OVER",
    "SETUP_FACE_DOWN", "SETUP_FACE_UP", "STEPS", "Rules", "State", "apply", "company_totals",
    "decision", "default_move", "face_up_total", "final_scoring", "pirate_threshold",
    "seal_holder", "seals_of", "setup", "stalls_ahead", "state_digest",
]

# ---------------------------------------------------------------------------- set-up


def setup(options: dict[str, Any], n: int, rng: Chance, rules: Rules) -> tuple[State, list[Event]]:
    """Préparation: stall tiles, ship cards (10 each), 15 bills, 12 crates, merchants on the
    start space. The oldest player (seat 0) is the first auctioneer."""
    if options["setup"] == SETUP_FACE_UP:
        track = list(rules.face_up_layout)
        revealed = rules.track_spaces
    else:
        track = _face_down_track(rules, rng.stream("stall_track"))
        revealed = rules.initially_face_up
    pile = [c for c in range(N_COMPANIES) for _ in range(rules.cards_per_company[c])]
    rng.stream("ship_cards").shuffle(pile)
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


# ---------------------------------------------------------------------------- the decisions


class Actions(Pending[State, Any, pb.View]):
    """B. Actions des joueurs: draw 2 ship cards, or lay cards and then move the merchant. Its
    state is the turn's fields of the state; it hashes as its phase; the View shows the cards laid
    this turn in every phase, so it adds nothing."""

    __slots__ = ()

    def decision(self, state: State) -> Decision:
        seat = state.current
        hand = state.hands[seat]
        if not any(state.played):
            listed: list[Move] = [DRAW_CARDS]
            if can_play(state, seat):
                listed += [PLAY_CARD[c] for c in range(N_COMPANIES) if hand[c]]
            return Decision(seat, "batavia.turn", listed, "Draw 2 ship cards, or lay ship cards")
        listed = [PLAY_CARD[c] for c in range(N_COMPANIES) if hand[c]]
        listed += _move_options(state, seat)
        return Decision(seat, "batavia.play", listed, "Lay another card, or move your merchant")

    def play(self, state: State, move: Any) -> list[Event]:
        seat = state.current
        kind = type(move)
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

    def hash_form(self) -> tuple:
        return (ACTIONS,)

    def view_key(self, state: State) -> tuple:
        """``pending_view`` shows nothing."""
        return ()

    def default_move(self, state: State, d: Decision) -> Any:
        """Draw; with cards already laid, the first merchant move offered (or, if none yet, the
        first card offered)."""
        if not any(state.played):
            return DRAW_CARDS
        moving = [m for m in d.moves if not isinstance(m, PlayCard)]
        return (moving or list(d.moves))[0]


class TileExchange(Pending[State, Any, pb.View]):
    """3. Echanger des tuiles: after taking a stall tile, exchange one stall tile of each company
    held for gold, or keep them. Its state is the tile just taken (``State.pending_tile``); it
    hashes as its phase."""

    __slots__ = ()
    kind = "batavia.exchange"

    def decision(self, state: State) -> Decision:
        return Decision(state.current, self.kind, [EXCHANGE_TILES, KEEP_TILES],
                        "Exchange one stall tile of each company you hold for gold, or keep them")

    def play(self, state: State, move: Any) -> list[Event]:
        seat = state.current
        kind = type(move)
        if kind is ExchangeTiles:
            return exchange_tiles(state, seat)
        if kind is KeepTiles:
            return keep_tiles(state, seat)
        raise IllegalMove(
            "ILLEGAL_MOVE", "3. Echanger des tuiles: choose to exchange your stall tiles or keep them"
        )

    def hash_form(self) -> tuple:
        return (EXCHANGE,)

    def view_key(self, state: State) -> tuple:
        """What ``pending_view`` shows (the View caches its encoding under this key)."""
        return (state.pending_tile,)

    def pending_view(self, state: State, view: pb.View) -> None:
        """The stall tile just taken, waiting to be exchanged or kept."""
        view.pending_tile.CopyFrom(stall_tile(state.pending_tile))

    def default_move(self, state: State, d: Decision) -> Any:
        return KEEP_TILES


#: the decision of each phase (``referee.core.pending``): its legal moves, its effect, its View
#: and its time-policy default together
STEPS: dict[int, Auction | Actions | TileExchange] = {
    AUCTION: Auction(), ACTIONS: Actions(), EXCHANGE: TileExchange(),
}
_DECIDE = {phase: step.decision for phase, step in STEPS.items()}
_PLAY = {phase: step.play for phase, step in STEPS.items()}


def decision(state: State) -> Decision | None:
    if state.phase == OVER:
        return None
    return _DECIDE[state.phase](state)


def apply(state: State, seat: int, move: Any) -> list[Event]:
    """Play one move. Every check comes before any change, so an IllegalMove leaves the state
    untouched."""
    if state.phase == OVER:
        raise IllegalMove("MATCH_OVER", "the game is over")
    if seat != state.current:
        raise IllegalMove("NOT_YOUR_TURN", f"seat {state.current} is to act, not seat {seat}")
    return _PLAY[state.phase](state, move)


def default_move(state: State, d: Decision) -> Any:
    """The time policy's DEFAULT_MOVE: pass, draw, keep; with cards already laid, the first
    merchant move offered (or, if none yet, the first card offered)."""
    return STEPS[state.phase].default_move(state, d)


def _move_options(state: State, seat: int) -> list:
    """Where the merchant may go now that cards are laid: to the next stall of any company whose
    seal the seat holds; if none lies ahead, to the arrival tile (once, by one player)."""
    seals = seals_of(state, seat)
    if not seals:
        return []
    ahead = stalls_ahead(state, seat)
    options: list[Move] = [ADVANCE[c] for c in seals if ahead[c]]
    if not options and state.arrival_holder < 0:
        options.append(TAKE_ARRIVAL)
    return options


# ---------------------------------------------------------------------------- the moves' effects


# ---- B. Actions des joueurs


def draw_cards(state: State, seat: int) -> list[Event]:
    if any(state.played):
        raise IllegalMove(
            "ILLEGAL_MOVE",
            "B. Actions des joueurs: only one of the two actions per turn; you have laid cards, "
            "so move your merchant",
        )
    drawn = draw_from_pile(state, state.rules.draw_count)
    for c in drawn:
        state.hands[seat][c] += 1
    ev = Event("batavia.draw", seat, f"seat {seat} draws {count(len(drawn), 'ship card')}", {"count": len(drawn)})
    return [ev] + end_turn(state, seat)


def play_card(state: State, seat: int, company: int) -> list[Event]:
    if not 0 <= company < N_COMPANIES or not state.hands[seat][company]:
        raise IllegalMove(
            "ILLEGAL_MOVE", f"1. Poser des cartes: you hold no {company_name(company)} ship card"
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
            f"seat {seat} lays {'an' if company_name(company)[0] in 'AEIOU' else 'a'} "
            f"{company_name(company)} ship card face up",
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
            f"2. Avancer son commerçant: you must hold the {company_name(company)} seal "
            "(a strict majority of its face-up ship cards)",
        )
    space = stalls_ahead(state, seat)[company]
    if not space:
        raise IllegalMove(
            "ILLEGAL_MOVE",
            f"2. Avancer son commerçant: no {company_name(company)} stall tile lies ahead of your merchant",
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
            f"seat {seat} moves its merchant to stall {space} and takes {tile_text(company, good)}"
            + (f" (a crate goes to the {GOOD_IDS[good]} counting house)" if crate else ""),
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
    return [Event("batavia.stalls_revealed", -1, f"stalls {first} to {state.revealed} are turned face up", {"stalls": shown})]


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
            f"Fin du jeu: you hold the {company_name(reachable[0])} seal and its stall lies ahead; "
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
        f"seat {seat} exchanges {count(len(handed), 'stall tile')} ("
        + ", ".join(company_name(t // N_GOODS) for t in handed) + f") for {count(gold, 'gold piece')}",
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
                "pirates attack the largest company: the face-up ship cards of "
                + " and ".join(company_name(c) for c in sunk)
                + f" are sunk ({count(most, 'card')}{' each' if len(sunk) > 1 else ''})",
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
