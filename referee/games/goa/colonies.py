"""6. Found a colony: recruiting with the board's, the revealed cards' and the hand's colonists (or
declining for 1 colonist), choosing the Quilon/Madras tile, and placing and filling it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from referee.core.contract import Decision, Event

from .cards import play_bonus_card, spend_card
from .catalog import COLONIES, EFFECT_COLONISTS, EFFECT_COLONY_EXTRA, TILE_RED_COLONIST
from .moves import (
    DECLINE,
    RECRUIT,
    Decline,
    Move,
    PlayCard,
    RevealMore,
    UseTile,
    choose_colony_tile,
    play_card,
    reveal_more,
    use_tile,
)
from .resources import draw_cards
from .spices import FillLand
from .state import Land, State, SubDecision, card_played
from .tiles import use_tile_effect

if TYPE_CHECKING:
    from referee.v1 import goa_pb2 as pb


@dataclass(slots=True)
class ColonyFounding(SubDecision):
    """6. Found a colony, after naming it and revealing the 2 cards: recruit (completing with
    Colonist cards from the hand) or give up and take 1 colonist."""

    colony: int
    revealed: int  # colonists on the revealed cards
    board: int  # colonists the (possibly spied) development board gives
    third_card: bool = False  # the 'reveal 3 cards instead of 2' card was played
    NUMBER: ClassVar[int] = 5

    def decision(self, state: State) -> Decision:
        r = state.rules
        p = self.seat
        need = r.colony_need[self.colony]
        moves: list[Move] = []
        free_card = not card_played(state)
        before = state.options.get("colony_card_timing") == "before"
        if free_card:
            for card in state.hands[p]:
                e = r.cards[card].effect
                if e == EFFECT_COLONY_EXTRA and not self.third_card and not before:
                    moves.append(reveal_more(card))
                elif e == EFFECT_COLONISTS:
                    moves.append(play_card(card))
        for t in state.kept[p]:
            if r.tiles[t].type == TILE_RED_COLONIST and t not in state.red_used[p]:
                moves.append(use_tile(t))
        if self.board + self.revealed + state.colonists[p] >= need:
            moves.append(RECRUIT)
        moves.append(DECLINE)
        return Decision(p, "goa.colony", moves,
                        f"{COLONIES[self.colony].title()} needs {need}: board {self.board} + revealed "
                        f"{self.revealed} + colonist cards {state.colonists[p]}")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.colony = self.colony + 1  # type: ignore[assignment]  # protoc types enums as classes
        view.colonists_needed = state.rules.colony_need[self.colony]
        view.colonists_board = self.board
        view.colonists_revealed = self.revealed

    def play(self, state: State, move: Any) -> list[Event]:
        r = state.rules
        p = self.seat
        t = type(move)
        if t is RevealMore:
            spend_card(state, p, move.card)
            cards = draw_cards(state, 1)
            state.discard.extend(cards)
            self.revealed += sum(r.cards[c].colonists for c in cards)
            self.third_card = True
            return [Event("goa.reveal_more", p, f"seat {p} reveals one more Expedition card", {"revealed": cards})]
        if t is PlayCard:
            return play_bonus_card(state, p, move.card)
        if t is UseTile:
            return use_tile_effect(state, p, move.tile)
        state.stack.pop()
        col = self.colony
        name = COLONIES[col].title()
        if t is Decline:
            state.colonists[p] += 1
            return [Event("goa.colony_failed", p, f"seat {p} does not found {name}; takes 1 colonist")]
        state.colonists[p] -= max(0, r.colony_need[col] - self.revealed - self.board)
        founded = [Event("goa.colony_founded", p, f"seat {p} founds {name}")]
        supply = state.colony_supply[col]
        if len({r.colony_tiles[ct].masks for ct in supply}) > 1:
            state.stack.append(ColonyTileChoice(p, col))
            return founded
        place_colony(state, p, supply.pop())
        return founded


@dataclass(slots=True)
class ColonyTileChoice(SubDecision):
    """Found a colony (Quilon, Madras): 'choose the tile you want among the remaining ones'."""

    colony: int
    NUMBER: ClassVar[int] = 6

    def decision(self, state: State) -> Decision:
        moves = []
        seen = set()
        for ct in state.colony_supply[self.colony]:
            masks = state.rules.colony_tiles[ct].masks
            if masks not in seen:
                seen.add(masks)
                moves.append(choose_colony_tile(ct))
        return Decision(self.seat, "goa.colony_tile", moves, "Choose the colony tile")

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.colony = self.colony + 1  # type: ignore[assignment]  # protoc types enums as classes

    def play(self, state: State, move: Any) -> list[Event]:
        state.stack.pop()
        state.colony_supply[self.colony].remove(move.tile)
        place_colony(state, self.seat, move.tile)
        return []


def place_colony(state: State, p: int, ct: int) -> None:
    """The colony tile goes on its space and is filled with spices of choice among its own."""
    spec = state.rules.colony_tiles[ct]
    state.colonies[p][spec.colony] = ct
    state.lands[p].append(Land(True, ct, list(spec.masks), [-1] * len(spec.masks)))
    state.stack.append(FillLand(p, len(spec.masks), land=len(state.lands[p]) - 1, may_stop=False))
