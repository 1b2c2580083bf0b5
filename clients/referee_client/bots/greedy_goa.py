"""A greedy reference bot for Goa: one ply, no search, a few readable rules of thumb.

It reads only the Decision it is sent (its view and the legal moves), and answers in well under a
millisecond. The plan it follows is the backbone of the game: **Progress** scores most of the
points (0/1/3/6/10 VP per column), so every action either moves a marker down or gathers what the
next step costs.

* **Progress** whenever a step is affordable, choosing the column by its VP gain plus the value of
  the better yield for the rounds left and the progress bonuses (first to row 4/5, all markers).
* Otherwise pick a **target** step (best value per missing resource) and gather for it: Build
  ships for missing ships, Harvest for missing spices we can grow, Found a colony when the
  colonists are there (or likely with the two revealed cards), Expedition for cards (they score
  in sets), Taxes for ducats.
* **Tiles and cards**: red tiles every round, Vice-king and other one-shot tiles when they help;
  bonus Expedition cards only when they close a gap (ships, spices, colonists, a cheap progress);
  otherwise cards are kept for their symbol sets. Extra action cards are always played.
* **Auctions**: each tile has a worth in ducats (plantations and red tiles highest, scaled by the
  rounds left); bid the minimum while it stays under that worth and what we hold; as auctioneer
  keep the lot when its worth beats the ducats passing would bring.
* **Tokens**: the flag and our tokens go on (or next to) the tiles we value most, since we are
  the auctioneer of the lots under our own tokens.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from referee.v1 import goa_pb2 as goa
from referee.v1 import referee_pb2

from ..bot import Bot

#: Yield weight per column (index 0..4 = Ships, Harvest, Taxes, Expedition, Colonists): what one
#: more unit per action is worth in VP-ish units over a whole game.
YIELD_WEIGHT = (0.5, 0.8, 0.15, 1.0, 0.7)
ROUNDS = 8


@dataclass(frozen=True, slots=True)
class Weights:
    """Tuning knobs: the worth of one more unit of each column's yield, and the rounds of a game
    the bot plans for."""

    yield_weight: tuple[float, ...] = YIELD_WEIGHT
    rounds: int = ROUNDS


class GreedyGoaBot(Bot):
    """One-ply greedy Goa bot (see the module docstring for its plan)."""

    games = ("goa",)

    name = "greedy-goa"

    def __init__(self, seed: int | None = None, weights: Weights | None = None):
        self.rng = random.Random(seed)
        self.w = weights or Weights()

    def knobs(self) -> dict[str, Any]:
        """The bot's tuning weights by name: what a search's rollouts hand the engine's copy of
        this bot (``Game.heuristic_policy``) so that it plays exactly as this one."""
        return asdict(self.w)

    # ------------------------------------------------------------------ entry point
    def choose(self, decision: referee_pb2.Decision) -> referee_pb2.Move:
        moves = decision.legal_moves
        if not decision.view.HasField("goa") or not all(m.HasField("goa") for m in moves):
            return moves[self.rng.randrange(len(moves))]  # not a Goa match: play anything
        self.view = view = decision.view.goa
        self.me = next(p for p in view.players if p.seat == view.seat)
        self._memo: dict = {}  # per-decision caches (spices held, room, target, grid)
        kind = decision.kind or view.decision_kind
        handler = self.HANDLERS.get(kind)
        if handler is not None:
            best = handler(self, moves)
            if best is not None:
                return best
        return self._fallback(moves)

    def _fallback(self, moves):
        """The cheapest sensible move: stop, pass, end the turn, else the first listed."""
        for name in ("done", "pass", "end_turn", "decline", "pass_extra_action"):
            for m in moves:
                if m.goa.WhichOneof("kind") == name:
                    return m
        return moves[0]

    # ------------------------------------------------------------------ view helpers
    @property
    def rounds_left(self) -> int:
        """Rounds still to play after this one (0 in round 8)."""
        return max(0, self.w.rounds - self.view.round)

    def _have(self) -> list[int]:
        """Spice sacks we hold, indexed by Spice (1..5)."""
        if "have" in self._memo:
            return self._memo["have"]
        have = self._memo["have"] = [0] * 6
        for land in self.me.lands:
            for f in land.fields:
                if f.spice:
                    have[f.spice] += 1
        return have

    def _room(self) -> list[int]:
        """Empty fields that accept each spice, indexed by Spice (1..5)."""
        if "room" in self._memo:
            return self._memo["room"]
        room = self._memo["room"] = [0] * 6
        for land in self.me.lands:
            for f in land.fields:
                if not f.spice:
                    for s in f.takes:
                        room[s] += 1
        return room

    def _yield(self, column: int, row: int | None = None) -> int:
        """Yield of ``column`` (0-based) at ``row`` (default: our row)."""
        row = self.me.rows[column] if row is None else row
        return getattr(self.view.board.columns[column], "yield")[row - 1]

    def _step_cost(self, column: int) -> list[int] | None:
        """Spices of our next step in ``column`` (None at the bottom row)."""
        row = self.me.rows[column]
        if row >= 5:
            return None
        return list(self.view.board.columns[column].steps[row - 1].spices)

    def _progress_value(self, column: int) -> float:
        """VP-ish worth of moving our marker in ``column`` one row down."""
        view, rows = self.view, self.me.rows
        row = rows[column]
        if row >= 5:
            return -1.0
        vp = view.board.row_vp
        value = float(vp[row] - vp[row - 1])
        gain = self._yield(column, row + 1) - self._yield(column, row)
        value += self.w.yield_weight[column] * gain * self.rounds_left / self.w.rounds * 2.5
        new_row = row + 1
        if new_row in (4, 5) and view.progress_bonus[2 * column + new_row - 4] < 0:
            value += 1.0  # first there: an Expedition card
        low = min(rows)
        if row == low and sum(1 for r in rows if r == low) == 1:
            value += 1.5  # all markers one row lower: an Extra action card
        return value

    def _deficit(self, column: int) -> tuple[int, int, int] | None:
        """(missing ships, missing spices we can grow, missing spices we cannot grow)."""
        cost = self._step_cost(column)
        if cost is None:
            return None
        have, room = self._have(), self._room()
        need = [0] * 6
        for s in cost:
            need[s] += 1
        growable = hard = 0
        for s in range(1, 6):
            miss = max(0, need[s] - have[s])
            if miss:
                if room[s] >= miss:
                    growable += miss
                else:
                    growable += room[s]
                    hard += miss - room[s]
        return max(0, len(cost) - self.me.ships), growable, hard

    def _target(self) -> int | None:
        """The column whose next step we gather for: best value per missing unit."""
        if "target" in self._memo:
            return self._memo["target"]
        best, best_score = None, -1e9
        for c in range(5):
            d = self._deficit(c)
            if d is None:
                continue
            ships, grow, hard = d
            score = self._progress_value(c) / (1 + 0.5 * ships + grow + 3 * hard)
            if score > best_score:
                best, best_score = c, score
        self._memo["target"] = best
        return best

    def _target_deficit(self, target: int | None) -> tuple[int, int, int]:
        """The deficit of the column ``_target`` chose (never a finished one), or none."""
        deficit = self._deficit(target) if target is not None else None
        return deficit or (0, 0, 0)

    def _spice_need(self) -> list[float]:
        """How much we want one more sack of each spice, indexed by Spice (1..5)."""
        have = self._have()
        want = [0.0] * 6
        target = self._target()
        for c in range(5):
            cost = self._step_cost(c)
            if not cost:
                continue
            weight = 3.0 if c == target else 1.0
            for s in set(cost):
                if cost.count(s) > have[s]:
                    want[s] += weight
        return want

    def _colony_chance(self) -> tuple[float, int | None]:
        """(how sure a colony founding is, 0..1, and which colony) for our cheapest open one."""
        view, me = self.view, self.me
        open_colonies = {t.colony for t in view.colony_supply} - set(me.colonies)
        if not open_colonies:
            return 0.0, None
        colony = min(open_colonies, key=lambda c: view.colony_need[c - 1])
        gap = view.colony_need[colony - 1] - self._yield(4) - me.colonists
        if gap <= 0:
            return 1.0, colony
        cards_col = sum(c.amount or 2 for c in view.my_hand if c.effect == goa.CARD_COLONISTS)
        gap -= cards_col
        chance = {1: 0.95, 2: 0.9, 3: 0.7, 4: 0.45, 5: 0.25, 6: 0.1}.get(max(gap, 1), 0.0)
        return chance, colony

    def _tile_worth(self, tile: goa.TileInfo) -> float:
        """What a tile is worth to us, in ducats."""
        t, n, left = tile.type, tile.n, self.rounds_left + 1
        plantations = sum(1 for land in self.me.lands if not land.colony)
        if t == goa.PLANTATION:
            worth = 2.0 + 2.5 * tile.fields + 0.6 * left
            if plantations >= 4:
                worth -= 4
            return worth + (2.0 if tile.fields == 1 and self._has_tile(goa.FOREMAN) else 0)
        if t == goa.CROP_ROTATION:
            return 2.0 + 0.5 * left
        if t == goa.FOREMAN:
            singles = sum(1 for land in self.me.lands
                          if not land.colony and land.plantation.fields == 1)
            return 1.0 + 2.0 * (singles + self.me.single_plantations_face_down)
        if t == goa.MISSION:
            return 1.8 * tile.vp
        if t in (goa.RED_SHIP, goa.RED_COLONIST, goa.RED_SPICE, goa.RED_EXPEDITION):
            return 1.5 * n * left
        if t == goa.RED_DUCATS:
            return 0.7 * n * left
        table = {
            goa.SWAP: 3.0, goa.FAVOR: 5.0, goa.SETTLEMENT: 7.0, goa.ESPIONAGE: 2.0,
            goa.EXTRA_HARVEST: 4.0, goa.RESUPPLY: 4.0, goa.VICE_KING: 6.0,
            goa.DUTY: 1.5 * tile.vp,
        }
        if t in table:
            return table[t]
        if t in (goa.SHIPS_TILE, goa.COLONISTS_TILE, goa.SHIPS_OR_COLONISTS):
            return 1.3 * n
        if t == goa.EXTRA_ACTIONS_TILE:
            return 3.5 * n
        if t == goa.EXPEDITIONS_TILE:
            return 2.0 * n
        return 2.0

    def _has_tile(self, tile_type: int) -> bool:
        return any(t.type == tile_type for t in self.me.tiles)

    def _square_worth(self, row: int, col: int) -> float:
        """Worth of the tile on grid square (row, col); -1 for an empty or edge square."""
        if "grid" not in self._memo:
            self._memo["grid"] = {
                (sq.cell.row, sq.cell.col): self._tile_worth(sq.tile)
                for sq in self.view.grid if sq.HasField("tile")
            }
        return self._memo["grid"].get((row, col), -1.0)

    def _symbol_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for c in self.view.my_hand:
            counts[c.symbol] = counts.get(c.symbol, 0) + 1
        return counts

    def _card(self, card_id: int) -> goa.CardInfo | None:
        return next((c for c in self.view.my_hand if c.id == card_id), None)

    # ------------------------------------------------------------------ set-up and tokens
    def _quick_start(self, moves):
        for m in moves:
            q = m.goa
            if q.HasField("quick_advance") and {q.quick_advance.first, q.quick_advance.second} \
                    == {goa.HARVEST, goa.SHIPS}:
                return m
        return None

    def _place_flag(self, moves):
        def score(m):
            cell = m.goa.place_flag.cell
            return max(self._square_worth(cell.row + dr, cell.col + dc)
                       for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)))
        return max(moves, key=score)

    def _place_token(self, moves):
        return max(moves, key=lambda m: self._square_worth(m.goa.place_token.cell.row,
                                                            m.goa.place_token.cell.col))

    # ------------------------------------------------------------------ auctions
    def _lot_worth(self) -> float:
        auction = self.view.auction
        if auction.is_flag:
            return 4.0
        return self._tile_worth(auction.tile)

    def _bid(self, moves):
        worth = self._lot_worth()
        cap = min(worth, self.view.my_ducats - (0 if self.view.round >= 7 else 2))
        bids = sorted((m for m in moves if m.goa.HasField("bid")),
                      key=lambda m: m.goa.bid.amount)
        if bids and bids[0].goa.bid.amount <= cap:
            return bids[0]
        return None  # fallback: pass

    def _auctioneer(self, moves):
        worth = self._lot_worth()
        high = self.view.auction.high_bid
        for m in moves:
            g = m.goa
            if g.HasField("keep_lot") and worth >= (high - 1) + 0.6 * high:
                return m
        bids = sorted((m for m in moves if m.goa.HasField("bid")),
                      key=lambda m: m.goa.bid.amount)
        if bids and worth >= bids[0].goa.bid.amount + 0.6 * high:
            return bids[0]
        return None  # pass: sell to the high bidder

    # ------------------------------------------------------------------ action turn
    def _free_move(self, moves):
        """A tile or bonus card worth using now (before or after the action), else None."""
        target = self._target()
        deficit = self._deficit(target) if target is not None else None
        chance, _ = self._colony_chance()
        for m in moves:
            g = m.goa
            if g.HasField("use_tile"):
                tile = next((t for t in self.me.tiles if t.id == g.use_tile.tile), None)
                if tile is None:
                    continue
                if tile.type in (goa.RED_SHIP, goa.RED_COLONIST, goa.RED_DUCATS,
                                 goa.RED_EXPEDITION, goa.RED_SPICE, goa.VICE_KING,
                                 goa.EXTRA_HARVEST, goa.RESUPPLY):
                    return m
                if tile.type == goa.DUTY and (self.rounds_left == 0 or sum(self._have()) >= 10):
                    return m
        for m in moves:
            g = m.goa
            if not g.HasField("play_card"):
                continue
            card = self._card(g.play_card.card)
            if card is None:
                continue
            e = card.effect
            if e == goa.CARD_PROGRESS_DUCATS and self.view.my_ducats >= card.price + 2:
                return m
            if self.rounds_left <= 1:
                continue  # late: keep cards for their symbol sets
            if e == goa.CARD_SHIPS and deficit and deficit[0] > 0:
                return m
            if e == goa.CARD_SPICES and deficit and deficit[1] > 0:
                return m
            if e == goa.CARD_COLONISTS and 0.3 < chance < 1.0:
                return m
            if e == goa.CARD_DUCATS and self.view.my_ducats < 4:
                return m
        return None

    def _action(self, moves):
        free = self._free_move(moves)
        if free is not None:
            return free
        view, me = self.view, self.me
        target = self._target()
        deficit = self._target_deficit(target)
        chance, colony = self._colony_chance()
        room = self._room()
        hand_room = self._hand_limit() - len(view.my_hand)
        scored = []
        for m in moves:
            g = m.goa
            k = g.WhichOneof("kind")
            value = None
            if k == "progress":
                value = 10.0 + self._progress_value(g.progress.column - 1)
                if g.progress.card:
                    value -= 1.5  # spends a card
            elif k == "build_ships":
                gets = self._yield(0)
                value = 1.5 * min(gets, deficit[0]) + 0.15 * gets
            elif k == "harvest":
                gets = self._yield(1)
                fill = min(gets, sum(room[1:]))  # an upper bound, good enough
                value = 1.5 * min(gets, deficit[1]) + 0.35 * fill
                if g.harvest.card:
                    value -= 0.5
            elif k == "taxes":
                value = 0.12 * self._yield(2) + (1.0 if view.my_ducats < 6 else 0.0)
            elif k == "expedition":
                draws = min(self._yield(3), max(0, hand_room))
                value = 0.9 * draws
            elif (k == "found_colony" and g.found_colony.colony == colony
                  and not g.found_colony.card):
                ncol = len(me.colonies)  # VP gain of one more colony, plus its spice fields
                vp = view.colony_vp[ncol] - (view.colony_vp[ncol - 1] if ncol else 0)
                value = chance * (vp + 4.0) + (1 - chance) * 0.5
            if value is not None:
                scored.append((value, m))
        if scored:
            return max(scored, key=lambda p: p[0])[1]
        return None

    def _hand_limit(self) -> int:
        row = self.me.rows[3]
        col = self.view.board.columns[3]
        return col.hand_limit[row - 1] if len(col.hand_limit) >= row else 1

    def _after_action(self, moves):
        free = self._free_move(moves)
        if free is not None:
            return free
        return None  # end the turn

    # ------------------------------------------------------------------ sub-decisions
    def _pay_spice(self, moves):
        return moves[0]

    def _place_spice(self, moves):
        want = self._spice_need()
        target = self._target()
        deficit = self._target_deficit(target)
        chance, _ = self._colony_chance()
        best, best_score = None, -1e9
        for m in moves:
            g = m.goa
            if g.HasField("place_spice"):
                score = 1.0 + want[g.place_spice.spice]
            elif g.HasField("take_ship"):
                score = 2.5 if deficit[0] > 0 else 0.2
            elif g.HasField("take_colonist"):
                score = 2.0 if 0 < chance < 1 else 0.1
            else:
                continue
            if score > best_score:
                best, best_score = m, score
        return best

    def _sell_spice(self, moves):
        return None  # keep the sacks for Progress

    def _colony(self, moves):
        p = self.view.pending
        gap = p.colonists_needed - p.colonists_board - p.colonists_revealed - self.me.colonists
        by = {m.goa.WhichOneof("kind"): m for m in moves}
        if "recruit" in by:
            return by["recruit"]
        for m in moves:
            g = m.goa
            if g.HasField("reveal_more"):
                return m
            if g.HasField("use_tile"):
                return m
            if g.HasField("play_card"):
                card = self._card(g.play_card.card)
                if card is not None and (card.amount or 2) >= gap:
                    return m
        return by.get("decline")

    def _colony_tile(self, moves):
        want = self._spice_need()
        tiles = {t.id: t for t in self.view.colony_supply}

        def score(m):
            t = tiles.get(m.goa.choose_colony_tile.tile)
            if t is None:
                return 0.0
            return sum(max(want[s] for s in f.spices) for f in t.fields if f.spices)
        return max(moves, key=score)

    def _expedition(self, moves):
        draws = [m for m in moves if m.goa.HasField("draw")]
        best = max(draws, key=lambda m: m.goa.draw.count, default=None)
        if best is not None and best.goa.draw.count > 0:
            return best
        play = self._free_move(moves)
        if play is not None:
            return play
        return best

    def _column(self, moves):
        return max(moves, key=lambda m: self._progress_value(m.goa.choose_column.column - 1))

    def _resource(self, moves):
        target = self._target()
        deficit = self._target_deficit(target)
        chance, _ = self._colony_chance()
        if deficit[0] > 0:
            want = goa.RESOURCE_SHIPS
        elif 0 < chance < 1:
            want = goa.RESOURCE_COLONISTS
        elif deficit[1] > 0:
            want = goa.RESOURCE_SPICES
        else:
            want = goa.RESOURCE_SHIPS
        return next((m for m in moves if m.goa.choose_resource.kind == want), None)

    def _discard_plantation(self, moves):
        lands = {land.index: land for land in self.me.lands}

        def keep_score(m):
            land = lands.get(m.goa.discard_plantation.land)
            if land is None:
                return 0
            return len(land.fields) * 2 + sum(1 for f in land.fields if f.spice)
        return min(moves, key=keep_score)

    def _favor(self, moves):
        tiles = {t.id: t for t in self.view.box}
        return max(moves, key=lambda m: self._tile_worth(tiles[m.goa.take_favor.tile])
                   if m.goa.take_favor.tile in tiles else 0.0)

    def _swap(self, moves):
        return max(moves, key=lambda m: self._square_worth(m.goa.swap_take.cell.row,
                                                           m.goa.swap_take.cell.col))

    def _extra_action(self, moves):
        return next((m for m in moves if m.goa.HasField("play_extra_action")), None)

    def _discard_card(self, moves):
        counts = self._symbol_counts()

        def keep(m):
            card = self._card(m.goa.discard_card.card)
            return counts.get(card.symbol, 0) if card is not None else 0
        discards = [m for m in moves if m.goa.HasField("discard_card")]
        return min(discards, key=keep) if discards else None

    #: Decision kind -> handler; a handler returning None falls back to stop/pass/end turn.
    HANDLERS: ClassVar[dict] = {
        "goa.quick_start": _quick_start,
        "goa.place_flag": _place_flag,
        "goa.place_token": _place_token,
        "goa.bid": _bid,
        "goa.auctioneer": _auctioneer,
        "goa.action": _action,
        "goa.after_action": _after_action,
        "goa.pay_spice": _pay_spice,
        "goa.duty": _pay_spice,
        "goa.place_spice": _place_spice,
        "goa.sell_spice": _sell_spice,
        "goa.colony": _colony,
        "goa.colony_tile": _colony_tile,
        "goa.expedition": _expedition,
        "goa.column": _column,
        "goa.resource": _resource,
        "goa.discard_plantation": _discard_plantation,
        "goa.favor": _favor,
        "goa.swap": _swap,
        "goa.extra_action": _extra_action,
        "goa.hand_limit": _discard_card,
    }
