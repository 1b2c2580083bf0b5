"""Expedition cards in play: which bonus cards can be played, playing one (one per action), and the
Expedition action's draw under the hand limit (with the option hand_limit=always, discarding
down at once)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from referee.core.contract import Decision, Event

from .catalog import (
    EFFECT_COLONISTS,
    EFFECT_DUCATS,
    EFFECT_PROGRESS_DUCATS,
    EFFECT_SELL,
    EFFECT_SHIPS,
    EFFECT_SPICES,
    LAST_ROW,
)
from .moves import DiscardCard, Draw, Move, discard_card, draw, play_card
from .resources import discard_expedition_card, gain_cards
from .spices import UNLIMITED, BonusSacks, SpiceSale
from .state import State, SubDecision, card_played, current_action_turn, hand_limit, has_empty_field
from .tiles import PaidProgressChoice
from .wording import card_effect_text, count

if TYPE_CHECKING:
    from referee.v1 import goa_pb2 as pb


def card_usable(state: State, p: int, card: int) -> bool:
    c = state.rules.cards[card]
    e = c.effect
    if e in (EFFECT_SHIPS, EFFECT_COLONISTS, EFFECT_DUCATS):
        return True
    if e == EFFECT_SPICES:
        return has_empty_field(state, p)
    if e == EFFECT_SELL:
        return any(s >= 0 for land in state.lands[p] for s in land.spices)
    if e == EFFECT_PROGRESS_DUCATS:
        return state.ducats[p] >= c.price and min(state.rows[p]) < LAST_ROW
    return False


@dataclass(slots=True)
class ExpeditionDraw(SubDecision):
    """5. Expedition: draw up to the number on the board without ending above the hand limit; one
    may first play one card and discard cards to make room, or draw fewer. The limit binds 'at any
    time when doing the Expedition action' (EN; 2004 FR 'après avoir pioché'): a seat holding more
    cards than it (from tiles or progress bonuses) is offered no draw, not even 0, until it has
    played or discarded down to the limit."""

    most: int
    limit: int
    NUMBER: ClassVar[int] = 7

    def decision(self, state: State) -> Decision:
        p = self.seat
        hand = state.hands[p]
        room = self.limit - len(hand)
        moves: list[Move] = [draw(k) for k in range(min(self.most, room), -1, -1)] if room >= 0 else []
        if not card_played(state):
            for card in hand:
                if card_usable(state, p, card):
                    moves.append(play_card(card))
        for card in hand:
            moves.append(discard_card(card))
        return Decision(p, "goa.expedition", moves,
                        f"Draw up to {self.most} (hand limit {self.limit}); discard or play first to make room")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.draw_max = self.most
        view.hand_limit = self.limit

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        t = type(move)
        if t is Draw:
            state.stack.pop()
            gain_cards(state, p, move.count)
            return [Event("goa.expedition", p, f"seat {p} draws {count(move.count, 'Expedition card')}",
                          {"count": move.count})]
        if t is DiscardCard:
            return discard_expedition_card(state, p, move.card)
        return play_bonus_card(state, p, move.card)


@dataclass(slots=True)
class HandLimitDiscard(SubDecision):
    """Option hand_limit=always: a seat above its hand limit discards down at once."""

    NUMBER: ClassVar[int] = 13

    def decision(self, state: State) -> Decision | None:
        p = self.seat
        limit = hand_limit(state, p)
        if len(state.hands[p]) <= limit:
            return None
        return Decision(p, "goa.hand_limit", [discard_card(c) for c in state.hands[p]],
                        f"Discard down to your hand limit of {limit}")

    def play(self, state: State, move: Any) -> list[Event]:
        return discard_expedition_card(state, self.seat, move.card)


def spend_card(state: State, p: int, card: int) -> None:
    """An Expedition card played: to the discard pile; it is the action's one card."""
    state.hands[p].remove(card)
    state.discard.append(card)
    turn = current_action_turn(state)
    if turn is not None:
        turn.card_played = True


def play_bonus_card(state: State, p: int, card: int) -> list[Event]:
    """A bonus Expedition card: 2 ships, 2 colonists, 5 ducats, 2 spices onto empty fields, sell
    spices at 3 ducats (2012: at most 4), or pay its price to move one marker one row."""
    r = state.rules
    c = r.cards[card]
    spend_card(state, p, card)
    e = c.effect
    if e == EFFECT_SHIPS:
        state.ships[p] += r.card_ships
    elif e == EFFECT_COLONISTS:
        state.colonists[p] += r.card_colonists
    elif e == EFFECT_DUCATS:
        state.ducats[p] += r.card_ducats
    elif e == EFFECT_SPICES:
        state.stack.append(BonusSacks(p, r.card_spices))
    elif e == EFFECT_SELL:
        state.stack.append(SpiceSale(p, r.sell_max if r.sell_max > 0 else UNLIMITED))
    elif e == EFFECT_PROGRESS_DUCATS:
        state.ducats[p] -= c.price
        state.stack.append(PaidProgressChoice(p))
    return [Event("goa.card_played", p, f"seat {p} plays an Expedition card: {card_effect_text(r, e)}",
                  {"card": card})]
