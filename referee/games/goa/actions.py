"""3. Player actions: the action turn (``ActionTurn``) listing the actions (Progress, Build ships,
Harvest, Taxes, Expedition, Found a colony, Espionage) and the free moves around them (one
Expedition card, tiles), and playing each action."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from referee.core.contract import Decision, Event

from .cards import ExpeditionDraw, card_usable, play_bonus_card, spend_card
from .catalog import (
    COLONIES,
    COLONY_REVEAL,
    COLUMN_COLONISTS,
    COLUMN_EXPEDITION,
    COLUMN_HARVEST,
    COLUMN_SHIPS,
    COLUMN_TAXES,
    COLUMNS,
    EFFECT_COLONY_EXTRA,
    EFFECT_HARVEST_MIX,
    EFFECT_PROGRESS_SHIPS_ONLY,
    EFFECT_PROGRESS_SPICES_ONLY,
    LAST_ROW,
    N_COLONIES,
    N_COLUMNS,
    N_SPICES,
    TILE_ESPIONAGE,
)
from .colonies import ColonyFounding
from .moves import (
    BUILD_SHIPS,
    END_TURN,
    ESPIONAGE,
    EXPEDITION,
    FOUND_COLONY,
    TAXES,
    BuildShips,
    EndTurn,
    Espionage,
    Expedition,
    FoundColony,
    Harvest,
    PlayCard,
    Progress,
    Taxes,
    UseTile,
    found_colony,
    harvest,
    play_card,
    progress,
    use_tile,
)
from .resources import advance_marker, draw_cards
from .spices import HarvestSacks, ProgressPayment
from .state import State, TurnInProgress, spice_counts
from .tiles import tile_usable, use_tile_effect
from .wording import column_name, count


@dataclass(slots=True)
class ActionTurn(TurnInProgress):
    """3. Player actions: one seat's action turn (a regular one, or one bought with an Extra
    action card). Before and after the action the seat may play one Expedition bonus card and use
    its tiles; Espionage, announced first, makes the action read an opponent's board. Its fields
    are ``TurnInProgress``'s (the state's module)."""

    NUMBER: ClassVar[int] = 0

    def decision(self, state: State) -> Decision:
        p = self.seat
        moves: list = []
        if not self.action_done:
            moves += self.action_moves(state)
            kind = "goa.action"
        else:
            kind = "goa.after_action"
        moves += self.free_moves(state)
        if self.action_done:
            moves.append(END_TURN)
        prompt = "End your turn" if self.action_done else "Choose your action"
        return Decision(p, kind, moves, prompt)

    def action_moves(self, state: State) -> list:
        r = state.rules
        p = self.seat
        spying = self.spied >= 0
        hand = state.hands[p]
        free_card = not self.card_played
        moves: list = []
        if not spying:
            ships = state.ships[p]
            have = None
            for c in range(N_COLUMNS):
                row = state.rows[p][c]
                if row >= LAST_ROW:
                    continue
                k = row + 1
                need = r.costs[c][row]
                if have is None:
                    have = spice_counts(state, p)
                spices_ok = all(have[s] >= need[s] for s in range(N_SPICES))
                if spices_ok and ships >= k:
                    moves.append(progress(c, -1))
                if free_card:
                    for card in hand:
                        e = r.cards[card].effect
                        if (e == EFFECT_PROGRESS_SHIPS_ONLY and ships >= k) or (
                            e == EFFECT_PROGRESS_SPICES_ONLY and spices_ok
                        ):
                            moves.append(progress(c, card))
        moves.append(BUILD_SHIPS)
        moves.append(harvest(-1))
        if free_card:
            for card in hand:
                if r.cards[card].effect == EFFECT_HARVEST_MIX:
                    moves.append(harvest(card))
        moves.append(TAXES)
        if not spying:
            moves.append(EXPEDITION)
        before = state.options.get("colony_card_timing") == "before"
        for col in range(N_COLONIES):
            if state.colonies[p][col] < 0 and state.colony_supply[col]:
                moves.append(FOUND_COLONY[col])
                if before and free_card:
                    for card in hand:
                        if r.cards[card].effect == EFFECT_COLONY_EXTRA:
                            moves.append(found_colony(col, card))
        if not spying:
            for t in state.kept[p]:
                if r.tiles[t].type == TILE_ESPIONAGE:
                    moves += [ESPIONAGE[o] for o in range(state.n) if o != p]
                    break
        return moves

    def free_moves(self, state: State) -> list:
        """Not actions: one Expedition bonus card per action, and usable tiles, before or after
        the action ('Expedition cards', 'Description of the tiles')."""
        p = self.seat
        moves: list = []
        if not self.card_played:
            for card in state.hands[p]:
                if card_usable(state, p, card):
                    moves.append(play_card(card))
        used = state.red_used[p]
        for t in state.kept[p]:
            if tile_usable(state, p, t, used):
                moves.append(use_tile(t))
        return moves

    def play(self, state: State, move: Any) -> list[Event]:
        p = self.seat
        t = type(move)
        if t is EndTurn:
            state.stack.pop()
            return []
        if t is PlayCard:
            return play_bonus_card(state, p, move.card)
        if t is UseTile:
            return use_tile_effect(state, p, move.tile)
        if t is Espionage:
            tl = next(x for x in state.kept[p] if state.rules.tiles[x].type == TILE_ESPIONAGE)
            state.kept[p].remove(tl)
            state.tile_discard.append(tl)
            self.spied = move.opponent
            return [Event("goa.espionage", p, f"seat {p} spies on seat {move.opponent}")]
        # the action itself
        self.action_done = True
        r = state.rules
        row = state.rows[self.spied if self.spied >= 0 else p]
        if t is Progress:
            return start_progress(state, p, move.column, move.card)
        if t is BuildShips:
            k = r.yields[COLUMN_SHIPS][row[COLUMN_SHIPS]]
            state.ships[p] += k
            return [Event("goa.build_ships", p, f"seat {p} builds {count(k, 'ship')}", {"ships": k})]
        if t is Harvest:
            mix = False
            if move.card >= 0:
                spend_card(state, p, move.card)
                mix = True
            k = r.yields[COLUMN_HARVEST][row[COLUMN_HARVEST]]
            state.stack.append(HarvestSacks(p, k, ships_or_colonists=mix))
            data = {"sacks": k, "card": move.card} if mix else {"sacks": k}
            return [Event("goa.harvest", p, f"seat {p} harvests up to {count(k, 'spice sack')}", data)]
        if t is Taxes:
            k = r.yields[COLUMN_TAXES][row[COLUMN_TAXES]]
            state.ducats[p] += k
            return [Event("goa.taxes", p, f"seat {p} collects taxes", {"ducats": k})]
        if t is Expedition:
            most, limit = r.yields[COLUMN_EXPEDITION][row[COLUMN_EXPEDITION]]
            state.stack.append(ExpeditionDraw(p, most, limit))
            return [Event("goa.expedition_action", p, f"seat {p} takes the Expedition action")]
        if t is FoundColony:
            extra = False
            if move.card >= 0:  # colony_card_timing=before: the third card is announced first
                spend_card(state, p, move.card)
                extra = True
            cards = draw_cards(state, COLONY_REVEAL + extra)
            state.discard.extend(cards)
            revealed = sum(r.cards[c].colonists for c in cards)
            board = r.yields[COLUMN_COLONISTS][row[COLUMN_COLONISTS]]
            state.stack.append(ColonyFounding(p, move.colony, revealed, board, extra))
            return [Event("goa.found_colony", p,
                          f"seat {p} names {COLONIES[move.colony].title()} and reveals {revealed} colonists",
                          {"colony": COLONIES[move.colony], "revealed": cards}
                          | ({"card": move.card} if extra else {}))]
        raise AssertionError(f"unexpected move {move!r}")


def start_progress(state: State, p: int, c: int, card: int) -> list[Event]:
    """1. Progress: one row in one column, paying the spices shown (field by field) and one ship
    per spice; a modifier card waives the spices or the ships."""
    r = state.rules
    row = state.rows[p][c]
    effect = r.cards[card].effect if card >= 0 else -1
    if card >= 0:
        spend_card(state, p, card)
    if effect != EFFECT_PROGRESS_SPICES_ONLY:
        state.ships[p] -= row + 1
    if effect == EFFECT_PROGRESS_SHIPS_ONLY:
        advance_marker(state, p, c)
        return [Event("goa.progress", p, f"seat {p} moves down to row {row + 2} in {column_name(c)}, paying ships only",
                      {"column": COLUMNS[c], "card": card})]
    state.stack.append(ProgressPayment(p, c, list(r.costs[c][row])))
    return [Event("goa.progress_started", p, f"seat {p} progresses in {column_name(c)} (from row {row + 1})",
                  {"column": COLUMNS[c]} | ({"card": card} if card >= 0 else {}))]
