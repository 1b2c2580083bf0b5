"""The greedy reference bot's choice, computed from the engine state (``Game.heuristic_policy``).

A search bot's rollouts play every seat as the game's greedy bot
(``referee_client.bots.greedy_goa``); handing that bot a Decision message for every rollout move
costs several times the move. This module makes the same choice from the state: each value
below is the bot's, computed from the state fields the seat's View shows (its development rows,
lands, ships, colonists, kept tiles, own ducats and hand; the grid, the lot under auction, the
colony supply, the box where the table has seen it), in the same order and with the same
arithmetic, so that ties fall the same way. It reads nothing a seat's View hides: no other
hand or purse, no deck order, no face-down tile.

The bot's tuning (the worth it gives a column's yield, the rounds it plans for) comes in as
``params`` from the caller, so it is kept in one place (``GreedyGoaBot.knobs()``).
``tests/research/test_heuristic_policy.py`` checks that this answers exactly the SDK bot's move
at random positions and at every decision of greedy games, at every seat count.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.core.contract import read_knobs

from .board import GRID_CELLS, boxed_tiles_seen, grid_index, rc_of
from .catalog import (
    COLUMN_COLONISTS,
    COLUMN_EXPEDITION,
    COLUMN_HARVEST,
    COLUMN_SHIPS,
    COLUMN_TAXES,
    EFFECT_COLONISTS,
    EFFECT_DUCATS,
    EFFECT_PROGRESS_DUCATS,
    EFFECT_SHIPS,
    EFFECT_SPICES,
    N_COLUMNS,
    N_SPICES,
    RESOURCE_COLONISTS,
    RESOURCE_SHIPS,
    RESOURCE_SPICES,
    TILE_COLONISTS,
    TILE_CROP_ROTATION,
    TILE_DUTY,
    TILE_ESPIONAGE,
    TILE_EXPEDITIONS,
    TILE_EXTRA_ACTIONS,
    TILE_EXTRA_HARVEST,
    TILE_FAVOR,
    TILE_FOREMAN,
    TILE_MISSION,
    TILE_PLANTATION,
    TILE_RED_COLONIST,
    TILE_RED_DUCATS,
    TILE_RED_EXPEDITION,
    TILE_RED_SHIP,
    TILE_RED_SPICE,
    TILE_RESUPPLY,
    TILE_SETTLEMENT,
    TILE_SHIPS,
    TILE_SHIPS_OR_COLONISTS,
    TILE_SWAP,
    TILE_VICE_KING,
    Card,
    Rules,
    Tile,
    card_amount,
)
from .colonies import ColonyFounding
from .moves import (
    Bid,
    BuildShips,
    ChooseColonyTile,
    ChooseResource,
    Decline,
    DiscardCard,
    DiscardPlantation,
    Done,
    Draw,
    EndTurn,
    Expedition,
    FoundColony,
    Harvest,
    KeepLot,
    Pass,
    PassExtraAction,
    PlaceFlag,
    PlaceSpice,
    PlayCard,
    PlayExtraAction,
    Progress,
    QuickAdvance,
    Recruit,
    RevealMore,
    TakeColonist,
    TakeShip,
    Taxes,
    UseTile,
)
from .rules import decision
from .state import State, hand_limit, plantation_count, spice_counts


@dataclass(frozen=True, slots=True)
class _Knobs:
    """The bot's tuning: per column, what one more unit a action is worth over a game, and the
    rounds of a game it plans for."""

    yield_weight: tuple[float, ...]
    rounds: int


#: the tiles the bot uses as soon as it may
_USE_AT_ONCE = frozenset((TILE_RED_SHIP, TILE_RED_COLONIST, TILE_RED_DUCATS, TILE_RED_EXPEDITION,
                          TILE_RED_SPICE, TILE_VICE_KING, TILE_EXTRA_HARVEST, TILE_RESUPPLY))
#: the fixed worths (in ducats) of the tiles the bot values by a table
_TILE_TABLE = {TILE_SWAP: 3.0, TILE_FAVOR: 5.0, TILE_SETTLEMENT: 7.0, TILE_ESPIONAGE: 2.0,
               TILE_EXTRA_HARVEST: 4.0, TILE_RESUPPLY: 4.0, TILE_VICE_KING: 6.0}
_RED_BY_N = frozenset((TILE_RED_SHIP, TILE_RED_COLONIST, TILE_RED_SPICE, TILE_RED_EXPEDITION))
#: the bot's last resort, in its order: stop, pass, end the turn, decline, pass an Extra action
_FALLBACK = (Done, Pass, EndTurn, Decline, PassExtraAction)
#: how sure a colony is with a gap of this many colonists (else 0)
_COLONY_CHANCE = {1: 0.95, 2: 0.9, 3: 0.7, 4: 0.45, 5: 0.25, 6: 0.1}


def policy(params: Mapping[str, Any]) -> Callable[[State, int, Sequence[Any]], Any]:
    """``choose(state, seat, moves)``: the move of ``moves`` (the decision's legal moves, in
    its order) the greedy bot with knobs ``params`` plays."""
    w = read_knobs(_Knobs, params, "Goa")

    def choose(state: State, seat: int, moves: Sequence[Any]) -> Any:
        return _Greedy(state, seat, w).choose(moves)

    return choose


def _spices_of(mask: int) -> list[int]:
    return [s for s in range(N_SPICES) if mask & (1 << s)]


class _Greedy:
    """One decision's valuation: the SDK bot's methods on the state. Spices, columns, colonies
    and rows count from 0 here where the bot's View counts from 1."""

    def __init__(self, state: State, seat: int, w: _Knobs):
        self.s = state
        self.r: Rules = state.rules
        self.seat = seat
        self.w = w
        self.rows = state.rows[seat]  # 0-based
        self._have: list[int] | None = None
        self._room: list[int] | None = None
        self._target: tuple[int | None] | None = None
        self._grid: dict[tuple[int, int], float] | None = None
        self._hand: list[Card] | None = None

    def choose(self, moves: Sequence[Any]) -> Any:
        d = decision(self.s)
        handler = _HANDLERS.get(d.kind if d is not None else "")
        if handler is not None:
            best = handler(self, moves)
            if best is not None:
                return best
        for kind in _FALLBACK:
            for m in moves:
                if type(m) is kind:
                    return m
        return moves[0]

    # ------------------------------------------------------------------ view helpers
    @property
    def rounds_left(self) -> int:
        return max(0, self.w.rounds - self.s.round)

    def have(self) -> list[int]:
        """Spice sacks held, per spice."""
        if self._have is None:
            self._have = spice_counts(self.s, self.seat)
        return self._have

    def room(self) -> list[int]:
        """Empty fields that take each spice."""
        if self._room is None:
            room = self._room = [0] * N_SPICES
            for land in self.s.lands[self.seat]:
                for mask, sp in zip(land.takes, land.spices):
                    if sp < 0:
                        for t in _spices_of(mask):
                            room[t] += 1
        return self._room

    def hand(self) -> list[Card]:
        if self._hand is None:
            cards = self.r.cards
            self._hand = [cards[c] for c in sorted(self.s.hands[self.seat])]
        return self._hand

    def card(self, card_id: int) -> Card | None:
        return next((c for c in self.hand() if c.id == card_id), None)

    def yield_at(self, column: int, row: int | None = None) -> int:
        """Yield of ``column`` at 0-based ``row`` (default: the seat's)."""
        row = self.rows[column] if row is None else row
        y = self.r.yields[column][row]
        return y[0] if column == COLUMN_EXPEDITION else y

    def step_cost(self, column: int) -> Sequence[int] | None:
        """The sacks of each spice the seat's next step in ``column`` costs (None at the
        bottom)."""
        row = self.rows[column]
        if row >= 4:
            return None
        return self.r.costs[column][row]

    def progress_value(self, column: int) -> float:
        rows = self.rows
        row = rows[column] + 1  # the bot's 1-based row
        if row >= 5:
            return -1.0
        vp = self.r.row_vp
        value = float(vp[row] - vp[row - 1])
        gain = self.yield_at(column, row) - self.yield_at(column, row - 1)
        value += self.w.yield_weight[column] * gain * self.rounds_left / self.w.rounds * 2.5
        new_row = row + 1
        if new_row in (4, 5) and self.s.first_bonus[2 * column + new_row - 4] < 0:
            value += 1.0
        low = min(rows)
        if rows[column] == low and sum(1 for r in rows if r == low) == 1:
            value += 1.5
        return value

    def deficit(self, column: int) -> tuple[int, int, int] | None:
        cost = self.step_cost(column)
        if cost is None:
            return None
        have, room = self.have(), self.room()
        growable = hard = 0
        for sp, need in enumerate(cost):
            miss = need - have[sp]
            if miss > 0:
                if room[sp] >= miss:
                    growable += miss
                else:
                    growable += room[sp]
                    hard += miss - room[sp]
        return max(0, sum(cost) - self.s.ships[self.seat]), growable, hard

    def target(self) -> int | None:
        if self._target is None:
            best, best_score = None, -1e9
            for c in range(N_COLUMNS):
                d = self.deficit(c)
                if d is None:
                    continue
                ships, grow, hard = d
                score = self.progress_value(c) / (1 + 0.5 * ships + grow + 3 * hard)
                if score > best_score:
                    best, best_score = c, score
            self._target = (best,)
        return self._target[0]

    def target_deficit(self, target: int | None) -> tuple[int, int, int]:
        deficit = self.deficit(target) if target is not None else None
        return deficit or (0, 0, 0)

    def spice_need(self) -> list[float]:
        have = self.have()
        want = [0.0] * N_SPICES
        target = self.target()
        for c in range(N_COLUMNS):
            cost = self.step_cost(c)
            if not cost:
                continue
            weight = 3.0 if c == target else 1.0
            for sp, need in enumerate(cost):
                if need > have[sp]:
                    want[sp] += weight
        return want

    def colony_chance(self) -> tuple[float, int | None]:
        s, r, seat = self.s, self.r, self.seat
        mine = {c for c, ct in enumerate(s.colonies[seat]) if ct >= 0}
        open_colonies = {r.colony_tiles[ct].colony for sup in s.colony_supply for ct in sup} - mine
        if not open_colonies:
            return 0.0, None
        colony = min(open_colonies, key=lambda c: r.colony_need[c])
        gap = r.colony_need[colony] - self.yield_at(COLUMN_COLONISTS) - s.colonists[seat]
        if gap <= 0:
            return 1.0, colony
        gap -= sum(card_amount(self.r, c.effect) or 2 for c in self.hand()
                   if c.effect == EFFECT_COLONISTS)
        return _COLONY_CHANCE.get(max(gap, 1), 0.0), colony

    def tile_worth(self, tile: Tile | None) -> float:
        """What a tile is worth to the seat, in ducats (None: the View's empty tile)."""
        if tile is None:
            return 2.0
        t, n, left = tile.type, tile.n, self.rounds_left + 1
        lands = self.s.lands[self.seat]
        if t == TILE_PLANTATION:
            plantations = plantation_count(self.s, self.seat)
            worth = 2.0 + 2.5 * tile.fields + 0.6 * left
            if plantations >= 4:
                worth -= 4
            return worth + (2.0 if tile.fields == 1 and self.has_tile(TILE_FOREMAN) else 0)
        if t == TILE_CROP_ROTATION:
            return 2.0 + 0.5 * left
        if t == TILE_FOREMAN:
            tiles = self.r.tiles
            singles = sum(1 for land in lands if not land.colony and tiles[land.tile].fields == 1)
            return 1.0 + 2.0 * (singles + self.s.singles_down[self.seat])
        if t == TILE_MISSION:
            return 1.8 * tile.vp
        if t in _RED_BY_N:
            return 1.5 * n * left
        if t == TILE_RED_DUCATS:
            return 0.7 * n * left
        if t == TILE_DUTY:
            return 1.5 * tile.vp
        fixed = _TILE_TABLE.get(t)
        if fixed is not None:
            return fixed
        if t in (TILE_SHIPS, TILE_COLONISTS, TILE_SHIPS_OR_COLONISTS):
            return 1.3 * n
        if t == TILE_EXTRA_ACTIONS:
            return 3.5 * n
        if t == TILE_EXPEDITIONS:
            return 2.0 * n
        return 2.0

    def has_tile(self, tile_type: int) -> bool:
        tiles = self.r.tiles
        return any(tiles[t].type == tile_type for t in self.s.kept[self.seat])

    def square_worth(self, row: int, col: int) -> float:
        if self._grid is None:
            s, tiles = self.s, self.r.tiles
            self._grid = {rc_of(GRID_CELLS[g]): self.tile_worth(tiles[t])
                          for g, t in enumerate(s.grid) if t >= 0}
        return self._grid.get((row, col), -1.0)

    # ------------------------------------------------------------------ set-up and tokens
    def quick_start(self, moves: Sequence[Any]) -> Any:
        for m in moves:
            if type(m) is QuickAdvance and {m.first, m.second} == {COLUMN_HARVEST, COLUMN_SHIPS}:
                return m
        return None

    def place_flag(self, moves: Sequence[Any]) -> Any:
        def score(m: PlaceFlag) -> float:
            row, col = rc_of(m.cell)
            return max(self.square_worth(row + dr, col + dc)
                       for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)))
        return max(moves, key=score)

    def place_token(self, moves: Sequence[Any]) -> Any:
        return max(moves, key=lambda m: self.square_worth(*rc_of(m.cell)))

    # ------------------------------------------------------------------ auctions
    def lot_worth(self) -> float:
        s = self.s
        k = s.lot
        if k >= len(s.tokens):
            return self.tile_worth(None)
        if k == 0:
            return 4.0
        tile = None
        if s.tokens[k] >= 0:
            t = s.grid[grid_index(s.tokens[k])]
            if t >= 0:
                tile = self.r.tiles[t]
        return self.tile_worth(tile)

    def bid(self, moves: Sequence[Any]) -> Any:
        worth = self.lot_worth()
        s = self.s
        cap = min(worth, s.ducats[self.seat] - (0 if s.round >= 7 else 2))
        bids = sorted((m for m in moves if type(m) is Bid), key=lambda m: m.amount)
        if bids and bids[0].amount <= cap:
            return bids[0]
        return None

    def auctioneer(self, moves: Sequence[Any]) -> Any:
        worth = self.lot_worth()
        high = self.s.high if self.s.lot < len(self.s.tokens) else 0
        for m in moves:
            if type(m) is KeepLot and worth >= (high - 1) + 0.6 * high:
                return m
        bids = sorted((m for m in moves if type(m) is Bid), key=lambda m: m.amount)
        if bids and worth >= bids[0].amount + 0.6 * high:
            return bids[0]
        return None

    # ------------------------------------------------------------------ action turn
    def free_move(self, moves: Sequence[Any]) -> Any:
        target = self.target()
        deficit = self.deficit(target) if target is not None else None
        chance, _ = self.colony_chance()
        s, tiles, seat = self.s, self.r.tiles, self.seat
        for m in moves:
            if type(m) is UseTile:
                if m.tile not in s.kept[seat]:
                    continue
                t = tiles[m.tile].type
                if t in _USE_AT_ONCE:
                    return m
                if t == TILE_DUTY and (self.rounds_left == 0 or sum(self.have()) >= 10):
                    return m
        ducats = s.ducats[seat]
        for m in moves:
            if type(m) is not PlayCard:
                continue
            card = self.card(m.card)
            if card is None:
                continue
            e = card.effect
            if e == EFFECT_PROGRESS_DUCATS and ducats >= card.price + 2:
                return m
            if self.rounds_left <= 1:
                continue
            if e == EFFECT_SHIPS and deficit and deficit[0] > 0:
                return m
            if e == EFFECT_SPICES and deficit and deficit[1] > 0:
                return m
            if e == EFFECT_COLONISTS and 0.3 < chance < 1.0:
                return m
            if e == EFFECT_DUCATS and ducats < 4:
                return m
        return None

    def action(self, moves: Sequence[Any]) -> Any:
        free = self.free_move(moves)
        if free is not None:
            return free
        s, seat = self.s, self.seat
        target = self.target()
        deficit = self.target_deficit(target)
        chance, colony = self.colony_chance()
        room = self.room()
        hand_room = hand_limit(s, seat) - len(s.hands[seat])
        ducats = s.ducats[seat]
        scored: list[tuple[float, Any]] = []
        for m in moves:
            k = type(m)
            value: float | None = None
            if k is Progress:
                value = 10.0 + self.progress_value(m.column)
                if m.card >= 0:
                    value -= 1.5
            elif k is BuildShips:
                gets = self.yield_at(COLUMN_SHIPS)
                value = 1.5 * min(gets, deficit[0]) + 0.15 * gets
            elif k is Harvest:
                gets = self.yield_at(COLUMN_HARVEST)
                fill = min(gets, sum(room))
                value = 1.5 * min(gets, deficit[1]) + 0.35 * fill
                if m.card >= 0:
                    value -= 0.5
            elif k is Taxes:
                value = 0.12 * self.yield_at(COLUMN_TAXES) + (1.0 if ducats < 6 else 0.0)
            elif k is Expedition:
                draws = min(self.yield_at(COLUMN_EXPEDITION), max(0, hand_room))
                value = 0.9 * draws
            elif k is FoundColony and m.colony == colony and m.card < 0:
                ncol = sum(1 for ct in s.colonies[seat] if ct >= 0)
                colony_vp = self.r.colony_vp
                vp = colony_vp[ncol] - (colony_vp[ncol - 1] if ncol else 0)
                value = chance * (vp + 4.0) + (1 - chance) * 0.5
            if value is not None:
                scored.append((value, m))
        if scored:
            return max(scored, key=lambda p: p[0])[1]
        return None

    def after_action(self, moves: Sequence[Any]) -> Any:
        return self.free_move(moves)

    # ------------------------------------------------------------------ sub-decisions
    def pay_spice(self, moves: Sequence[Any]) -> Any:
        return moves[0]

    def place_spice(self, moves: Sequence[Any]) -> Any:
        want = self.spice_need()
        deficit = self.target_deficit(self.target())
        chance, _ = self.colony_chance()
        best, best_score = None, -1e9
        for m in moves:
            k = type(m)
            if k is PlaceSpice:
                score = 1.0 + want[m.spice]
            elif k is TakeShip:
                score = 2.5 if deficit[0] > 0 else 0.2
            elif k is TakeColonist:
                score = 2.0 if 0 < chance < 1 else 0.1
            else:
                continue
            if score > best_score:
                best, best_score = m, score
        return best

    def sell_spice(self, moves: Sequence[Any]) -> Any:
        return None

    def colony(self, moves: Sequence[Any]) -> Any:
        s, seat = self.s, self.seat
        top = s.stack[-1]
        assert isinstance(top, ColonyFounding)
        gap = self.r.colony_need[top.colony] - top.board - top.revealed - s.colonists[seat]
        by = {type(m): m for m in moves}
        if Recruit in by:
            return by[Recruit]
        for m in moves:
            k = type(m)
            if k is RevealMore or k is UseTile:
                return m
            if k is PlayCard:
                card = self.card(m.card)
                if card is not None and (card_amount(self.r, card.effect) or 2) >= gap:
                    return m
        return by.get(Decline)

    def colony_tile(self, moves: Sequence[Any]) -> Any:
        want = self.spice_need()
        supply = {ct for sup in self.s.colony_supply for ct in sup}
        specs = self.r.colony_tiles

        def score(m: ChooseColonyTile) -> float:
            if m.tile not in supply:
                return 0.0
            return sum(max(want[sp] for sp in _spices_of(mask))
                       for mask in specs[m.tile].masks if mask)
        return max(moves, key=score)

    def expedition(self, moves: Sequence[Any]) -> Any:
        draws = [m for m in moves if type(m) is Draw]
        best = max(draws, key=lambda m: m.count, default=None)
        if best is not None and best.count > 0:
            return best
        play = self.free_move(moves)
        if play is not None:
            return play
        return best

    def column(self, moves: Sequence[Any]) -> Any:
        return max(moves, key=lambda m: self.progress_value(m.column))

    def resource(self, moves: Sequence[Any]) -> Any:
        deficit = self.target_deficit(self.target())
        chance, _ = self.colony_chance()
        if deficit[0] > 0:
            want = RESOURCE_SHIPS
        elif 0 < chance < 1:
            want = RESOURCE_COLONISTS
        elif deficit[1] > 0:
            want = RESOURCE_SPICES
        else:
            want = RESOURCE_SHIPS
        return next((m for m in moves if type(m) is ChooseResource and m.kind == want), None)

    def discard_plantation(self, moves: Sequence[Any]) -> Any:
        lands = self.s.lands[self.seat]

        def keep_score(m: DiscardPlantation) -> int:
            if not 0 <= m.land < len(lands):
                return 0
            land = lands[m.land]
            return len(land.spices) * 2 + sum(1 for sp in land.spices if sp >= 0)
        return min(moves, key=keep_score)

    def favor(self, moves: Sequence[Any]) -> Any:
        s, tiles = self.s, self.r.tiles
        box = set(s.box) if boxed_tiles_seen(s) else set()
        return max(moves, key=lambda m: self.tile_worth(tiles[m.tile]) if m.tile in box else 0.0)

    def swap(self, moves: Sequence[Any]) -> Any:
        return max(moves, key=lambda m: self.square_worth(*rc_of(m.cell)))

    def extra_action(self, moves: Sequence[Any]) -> Any:
        return next((m for m in moves if type(m) is PlayExtraAction), None)

    def discard_card(self, moves: Sequence[Any]) -> Any:
        counts: dict[int, int] = {}
        for c in self.hand():
            counts[c.symbol] = counts.get(c.symbol, 0) + 1

        def keep(m: DiscardCard) -> int:
            card = self.card(m.card)
            return counts.get(card.symbol, 0) if card is not None else 0
        discards = [m for m in moves if type(m) is DiscardCard]
        return min(discards, key=keep) if discards else None


_HANDLERS: dict[str, Callable[[_Greedy, Sequence[Any]], Any]] = {
    "goa.quick_start": _Greedy.quick_start,
    "goa.place_flag": _Greedy.place_flag,
    "goa.place_token": _Greedy.place_token,
    "goa.bid": _Greedy.bid,
    "goa.auctioneer": _Greedy.auctioneer,
    "goa.action": _Greedy.action,
    "goa.after_action": _Greedy.after_action,
    "goa.pay_spice": _Greedy.pay_spice,
    "goa.duty": _Greedy.pay_spice,
    "goa.place_spice": _Greedy.place_spice,
    "goa.sell_spice": _Greedy.sell_spice,
    "goa.colony": _Greedy.colony,
    "goa.colony_tile": _Greedy.colony_tile,
    "goa.expedition": _Greedy.expedition,
    "goa.column": _Greedy.column,
    "goa.resource": _Greedy.resource,
    "goa.discard_plantation": _Greedy.discard_plantation,
    "goa.favor": _Greedy.favor,
    "goa.swap": _Greedy.swap,
    "goa.extra_action": _Greedy.extra_action,
    "goa.hand_limit": _Greedy.discard_card,
}

__all__ = ["policy"]
