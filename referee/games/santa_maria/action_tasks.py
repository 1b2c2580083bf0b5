"""Santa Maria's set-up choices and the steps of the main actions as typed tasks: the board or
lot draft ("Mise en place des colonies", "Règles avancées"), placing a bought tile ("(A)
Agrandir sa Colonie"), placing the die ("(C)", Construction), and retreating ("(D) Se retirer":
a road, the dock bonuses, Mathématiques)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from referee.core.contract import Event

from . import moves
from .catalog import HALL_SLOT, HALL_TILE, N_CELLS, SCHOLAR_BIT, tile_cells, tile_shape
from .effect_tasks import ConquistadorAdvance, Production, ReligionAdvance
from .geometry import ALL, COL_CELLS, ROW_CELLS, cell_name, fits, placements
from .moves import DECLINE, ROW
from .state import DRAFT, Player, State, Task, push_tasks
from .view_parts import tile_cells_view
from .wording import scholar_name

if TYPE_CHECKING:
    from referee.v1 import santa_maria_pb2 as pb

# ============================================================================ set-up choices


def after_draft_step(state: State) -> None:
    """During the set-up draft, the seat of the next board or lot choice is the one to act."""
    q = state.queue
    if state.phase == DRAFT and q and type(q[0]) in (BoardChoice, LotDraft):
        state.current = q[0].seat


@dataclass(slots=True)
class BoardChoice(Task):
    """Mise en place des colonies, later games: choose an A side, anticlockwise from the seat on
    the first player's right."""

    seat: int
    tag: ClassVar[str] = "board"
    kind: ClassVar[str] = "santa_maria.board"
    prompt: ClassVar[str] = "Choose your colony board (A side)"
    rule: ClassVar[str] = "Mise en place des colonies: a board not yet chosen"

    def legal_moves(self, state: State) -> list:
        return [moves.choose_board(i) for i in state.boards_left]

    def play(self, state: State, move: moves.ChooseBoard) -> list[Event]:
        state.boards_left.remove(move.board)
        board, grid = state.rules.boards_a[move.board]
        state.players[self.seat].take_board(state.rules, board, grid)
        after_draft_step(state)
        return [Event("santa_maria.board", self.seat,
                      f"seat {self.seat} chooses colony board {board}", {"board": board})]


@dataclass(slots=True)
class LotDraft(Task):
    """Règles avancées: take a lot (town hall + Scholar); the town hall is placed at once."""

    seat: int
    tag: ClassVar[str] = "draft"
    kind: ClassVar[str] = "santa_maria.draft"
    prompt: ClassVar[str] = "Choose a lot: a town hall and a Scholar"
    rule: ClassVar[str] = "Règles avancées: a lot not yet taken"

    def legal_moves(self, state: State) -> list:
        return [moves.draft_lot(i) for i, taken in enumerate(state.lot_taken) if not taken]

    def play(self, state: State, move: moves.DraftLot) -> list[Event]:
        seat = self.seat
        hall, scholar = state.lots[move.lot]
        state.lot_taken[move.lot] = True
        p = state.players[seat]
        p.own_scholar = scholar
        p.scholars |= SCHOLAR_BIT[scholar]
        if fits(tile_shape(state.rules, HALL_TILE + hall), p.occ):  # (a B side always has room)
            push_tasks(state, TilePlacement(seat, HALL_TILE + hall, HALL_SLOT))
        else:
            after_draft_step(state)
        return [Event("santa_maria.draft", seat, f"seat {seat} takes lot {move.lot + 1}: a town hall and the "
                      f"{scholar_name(scholar)} Scholar",
                      {"lot": move.lot, "scholar": scholar})]


# ============================================================================ (A) expand


@dataclass(slots=True)
class TilePlacement(Task):
    """(A) Agrandir sa Colonie: the bought tile (or a drafted town hall) goes on empty cells."""

    seat: int
    tile: int
    slot: int  # display slot it came from (HALL_SLOT: a town hall)
    tag: ClassVar[str] = "place"
    kind: ClassVar[str] = "santa_maria.place_tile"
    prompt: ClassVar[str] = "Place the tile on empty cells"
    rule: ClassVar[str] = "(A): the tile goes on empty cells of your colony"

    def _placements(self, state: State) -> tuple:
        r = state.rules
        return placements(tile_shape(r, self.tile), tile_cells(r, self.tile),
                          state.players[self.seat].occ)

    def legal_moves(self, state: State) -> list:
        return [moves.place_tile(anchor, rotation) for anchor, rotation, _ in self._placements(state)]

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.slot = self.slot
        view.tile.extend(tile_cells_view(state.rules, self.tile))

    def play(self, state: State, move: moves.PlaceTile) -> list[Event]:
        r = state.rules
        content = tile_cells(r, self.tile)
        for anchor, rotation, cells in self._placements(state):  # noqa: B007 - used below
            if anchor == move.cell and rotation == move.rotation:
                break
        p = state.players[self.seat]
        for c, k in zip(cells, content):
            p.set_cell(r, c, k)
        after_draft_step(state)
        return [Event("santa_maria.place_tile", self.seat,
                      f"seat {self.seat} places "
                      + ("its town hall" if self.tile >= HALL_TILE else "the development tile")
                      + " on " + ", ".join(cell_name(c) for c in cells),
                      {"tile": self.tile if self.tile < HALL_TILE else -1, "cells": list(cells),
                       "rotation": move.rotation})]


# ============================================================================ (C) the die


def put_die(p: Player, cell: int, color: int) -> None:
    p.die_on[cell] = color
    p.blocked |= 1 << cell


@dataclass(slots=True)
class DiePlacement(Task):
    """(C): the die goes on the last free building of the activated line ('Le dé doit être placé
    sur le dernier Bâtiment libre'); Construction: on any free building of the line."""

    seat: int
    line: int  # ROW or COL
    index: int  # 0-based row or column
    color: int  # WHITE or BLUE
    tag: ClassVar[str] = "die"
    kind: ClassVar[str] = "santa_maria.place_die"
    prompt: ClassVar[str] = "Construction: choose the building the die goes on"
    rule: ClassVar[str] = "Construction: a free building of the activated line"

    def targets(self, p: Player) -> list[int]:
        cells = ROW_CELLS[self.index] if self.line == ROW else COL_CELLS[self.index]
        free = p.free_buildings()
        return [c for c in cells if free >> c & 1]

    def settle(self, state: State) -> bool:
        p = state.players[self.seat]
        targets = self.targets(p)
        if p.scholars & SCHOLAR_BIT["construction"] and len(targets) > 1:
            return False
        state.queue.pop(0)
        if targets:
            put_die(p, targets[-1], self.color)
        return True

    def legal_moves(self, state: State) -> list:
        return [moves.place_die(c) for c in self.targets(state.players[self.seat])]

    def pending_view(self, state: State, view: pb.Pending) -> None:
        """The activated line: its row or its column, 1-based."""
        if self.line == ROW:
            view.row = self.index + 1
        else:
            view.col = self.index + 1

    def play(self, state: State, move: moves.PlaceDie) -> list[Event]:
        put_die(state.players[self.seat], move.cell, self.color)
        return []


# ============================================================================ (D) retreat


@dataclass(slots=True)
class RoadPlacement(Task):
    """(D), the road retreat space: a road tile on a free cell, or decline."""

    seat: int
    tag: ClassVar[str] = "road"
    kind: ClassVar[str] = "santa_maria.road"
    prompt: ClassVar[str] = "Place a road tile on a free cell, or decline"
    rule: ClassVar[str] = "(D) road: a free cell"

    def settle(self, state: State) -> bool:
        if state.roads_left > 0 and state.players[self.seat].occ != ALL:
            return False
        state.queue.pop(0)
        return True

    def legal_moves(self, state: State) -> list:
        occ = state.players[self.seat].occ
        return [moves.place_road(c) for c in range(N_CELLS) if not occ >> c & 1] + [DECLINE]

    def play(self, state: State, move: Any) -> list[Event]:
        if move is DECLINE:
            return []
        state.roads_left -= 1
        state.players[self.seat].set_cell(state.rules, move.cell, state.rules.road)
        return [Event("santa_maria.road", self.seat,
                      f"seat {self.seat} places a road tile on {cell_name(move.cell)}",
                      {"cell": move.cell})]


@dataclass(slots=True)
class DockBonuses(Task):
    """(D): the bonus of every ship in the port, top dock first, in placement order."""

    seat: int
    tag: ClassVar[str] = "bonus"

    def settle(self, state: State) -> bool:
        state.queue.pop(0)
        seat = self.seat
        tasks: list[Task] = []
        for dock, ships in enumerate(state.players[seat].port):
            bonus, goods = state.rules.docks[dock]
            for _ in ships:
                if bonus in ("coins", "points"):
                    tasks.append(Production(seat, goods))
                elif bonus == "religion":
                    tasks.append(ReligionAdvance(seat))
                else:
                    tasks.append(ConquistadorAdvance(seat))
        push_tasks(state, *tasks)
        return True


def recover_coins(p: Player, cell: int) -> None:
    p.coins += p.coins_on[cell]
    p.coins_on[cell] = 0
    if not p.die_on[cell]:
        p.blocked &= ~(1 << cell)


@dataclass(slots=True)
class MathematicsRecovery(Task):
    """Mathématiques: after retreating, take back the coins of one building."""

    seat: int
    tag: ClassVar[str] = "math"
    kind: ClassVar[str] = "santa_maria.mathematics"
    prompt: ClassVar[str] = "Mathematics: take back the coins of one building"
    rule: ClassVar[str] = "Mathématiques: a building holding coins"

    def settle(self, state: State) -> bool:
        p = state.players[self.seat]
        holders = [c for c in range(N_CELLS) if p.coins_on[c]]
        if len(holders) > 1:
            return False
        state.queue.pop(0)
        if holders:
            recover_coins(p, holders[0])
        return True

    def legal_moves(self, state: State) -> list:
        p = state.players[self.seat]
        return [moves.recover_coins(c) for c in range(N_CELLS) if p.coins_on[c]]

    def play(self, state: State, move: moves.RecoverCoins) -> list[Event]:
        recover_coins(state.players[self.seat], move.cell)
        return []
