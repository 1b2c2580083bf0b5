"""A heuristic Santa Maria bot: reads its ``santa_maria.View`` and plays one-ply greedy. Which
decision it faces picks the handler below, and each handler plays the move worth most by the
valuation in ``santa_maria_values`` (its docstring says how each kind of move is valued); free
actions are never churned. It sees only what its seat may see, exactly as a bot written in any
other language would.
"""
from __future__ import annotations

import random
from dataclasses import asdict
from typing import Any

from referee.v1 import referee_pb2
from referee.v1 import santa_maria_pb2 as sm

from ..bot import Bot
from .santa_maria_values import LINE_PROGRESS, SCHOLAR_EFFECT, Ctx, Weights, goods_res


def _first(by_kind: dict[str, list], key: str):
    """The first offered move of a kind, or None."""
    moves = by_kind.get(key)
    return moves[0] if moves else None


class GreedySantaMariaBot(Bot):
    """One-ply greedy Santa Maria bot (see the module docstring for its valuation)."""

    games = ("santa_maria",)

    name = "greedy-santa-maria"

    def __init__(self, seed: int | None = None, weights: Weights | None = None):
        self.rng = random.Random(seed)
        self.w = weights or Weights()

    def knobs(self) -> dict[str, Any]:
        """The bot's tuning by name (its ``Weights``, the worth it gives each Scholar's effect
        and a line's progress): what a search's rollouts hand the engine's copy of this bot
        (``Game.heuristic_policy``) so that it plays exactly as this one."""
        return {**asdict(self.w), "scholar_effect": dict(SCHOLAR_EFFECT),
                "line_progress": LINE_PROGRESS}

    # ------------------------------------------------------------------ entry point
    def choose(self, decision: referee_pb2.Decision) -> referee_pb2.Move:
        moves = decision.legal_moves
        if not decision.view.HasField("santa_maria") or not all(
            m.HasField("santa_maria") for m in moves
        ):
            return moves[self.rng.randrange(len(moves))]  # not a Santa Maria match: play anything
        if len(moves) == 1:
            return moves[0]
        ctx = Ctx(decision.view.santa_maria, self.w)
        by_kind: dict[str, list[referee_pb2.Move]] = {}
        for m in moves:
            by_kind.setdefault(m.santa_maria.WhichOneof("kind"), []).append(m)
        kind = ctx.view.pending.kind or decision.kind
        handler = {
            "santa_maria.turn": self._turn,
            "santa_maria.place_tile": self._place_tile,
            "santa_maria.exchange": self._exchange,
            "santa_maria.ship": self._ship,
            "santa_maria.astronomy": self._astronomy,
            "santa_maria.religion": self._religion,
            "santa_maria.monk": self._monk,
            "santa_maria.place_die": self._place_die,
            "santa_maria.road": self._road,
            "santa_maria.mathematics": self._mathematics,
            "santa_maria.board": self._board,
            "santa_maria.draft": self._draft,
        }.get(kind)
        if handler is not None:
            move = handler(ctx, by_kind)
            if move is not None:
                return move
        # Unknown or unhandled: anything but free-action churn.
        for key in ("end_turn", "decline"):
            if key in by_kind:
                return by_kind[key][0]
        return moves[self.rng.randrange(len(moves))]

    # ------------------------------------------------------------------ the turn
    def _turn(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        if "end_turn" in by_kind:
            return by_kind["end_turn"][0]  # main action done: no free-action churn
        options: list[tuple[float, referee_pb2.Move]] = []
        for m in by_kind.get("use_die", []):
            options.append((ctx.die_value(m.santa_maria.use_die), m))
        free = ctx.free_buildings()
        for m in by_kind.get("activate_building", []):
            a = m.santa_maria.activate_building
            c = (a.row - 1) * 6 + a.col - 1
            if c not in free:
                continue
            value = ctx.building(ctx.grid[c].content, ctx.sim())
            value -= ctx.me.activation_cost * ctx.coin
            options.append((value, m))
        for m in by_kind.get("expand", []):
            e = m.santa_maria.expand
            options.append((ctx.tile_value(e.slot) - ctx.pay_value(e.pay), m))
        best = max((o[0] for o in options), default=-1e9)
        buy = self._buy_to_expand(ctx, by_kind, best)
        if buy is not None:
            return buy
        if options:
            value, move = max(options, key=lambda o: o[0])
            if value >= self.w.retreat_below:
                return move
        retreats = by_kind.get("retreat", [])
        if retreats:
            return max(retreats, key=lambda m: ctx.retreat_value(m.santa_maria.retreat.space))
        if options:
            return max(options, key=lambda o: o[0])[1]
        return None

    def _buy_to_expand(self, ctx: Ctx, by_kind, best: float) -> referee_pb2.Move | None:
        """Buy the wood or wheat a tile lacks when that tile would then beat every action on
        offer. Buying again at the next decision follows the same plan (the resource bought is
        then held and counts for less than its price), so this never churns."""
        buys = {m.santa_maria.buy.resource: m for m in by_kind.get("buy", [])}
        if not (buys.keys() & {sm.WOOD, sm.WHEAT}):
            return None
        price = 2 if "basic_economy" in ctx.scholars else 3
        offered = {m.santa_maria.expand.slot for m in by_kind.get("expand", [])}
        have = goods_res(ctx.me.resources)
        plan_value, plan = max(best, self.w.retreat_below), None
        for slot, tile in enumerate(ctx.view.display):
            if not tile.present or slot in offered:
                continue
            cost = goods_res(tile.cost)
            missing = [max(0, cost[i] - have[i]) for i in (0, 1)]  # wood, wheat (keep gold)
            if sum(missing) == 0 or sum(missing) * price > ctx.me.coins:
                continue
            if any(n and (sm.WOOD + i) not in buys for i, n in enumerate(missing)):
                continue
            spent = [min(cost[i], have[i]) for i in (0, 1)]
            value = (ctx.tile_value(slot) - sum(missing) * price * ctx.coin
                     - sum(n * ctx.rv[i] for i, n in enumerate(spent)))
            if value > plan_value:
                plan_value = value
                plan = buys[sm.WOOD] if missing[0] else buys[sm.WHEAT]
        return plan

    # ------------------------------------------------------------------ placing
    def _place_tile(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        places = by_kind.get("place_tile", [])
        if not places:
            return None
        tile = list(ctx.view.pending.tile)
        if not tile:
            return places[0]
        best, choice = -1e9, places[0]
        for m in places:
            p = m.santa_maria.place_tile
            offs = [(tc.dr, tc.dc) for tc in tile]
            for _ in range(p.rotation):
                offs = [(dc, -dr) for dr, dc in offs]
            cells = [((p.row - 1 + dr) * 6 + (p.col - 1 + dc), tc.content.building,
                      tc.content.colonists) for (dr, dc), tc in zip(offs, tile)]
            if any(not (0 <= c < 36) for c, _, _ in cells):
                continue
            value = ctx.placement_bonus(cells)
            if value > best:
                best, choice = value, m
        return choice

    def _road(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        best, choice = 0.05 if ctx.year < 3 else 0.0, None
        for m in by_kind.get("place_road", []):
            p = m.santa_maria.place_road
            value = ctx.placement_bonus([((p.row - 1) * 6 + p.col - 1, False, 1)])
            if value > best:
                best, choice = value, m
        if choice is None:
            return _first(by_kind, "decline") or _first(by_kind, "place_road")
        return choice

    def _place_die(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        """Construction: block the building we would miss least."""
        def worth(m):
            p = m.santa_maria.place_die
            cell = ctx.grid.get((p.row - 1) * 6 + p.col - 1)
            return ctx.building_alone(cell.content) if cell else 0.0
        targets = by_kind.get("place_die", [])
        return min(targets, key=worth) if targets else None

    # ------------------------------------------------------------------ paying decisions
    def _exchange(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        options = list(ctx.view.pending.options)
        best, choice = 0.0, None
        for m in by_kind.get("exchange", []):
            e = m.santa_maria.exchange
            if e.option >= len(options):
                continue
            value = ctx.gain(options[e.option].gain, ctx.sim()) - ctx.pay_value(e.pay)
            if value > best:
                best, choice = value, m
        return choice if choice is not None else _first(by_kind, "decline")

    def _ship(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        slots = {s.dock: s for s in ctx.view.ship_slots}
        best, choice = 0.0, None
        for m in by_kind.get("ship", []):
            sh = m.santa_maria.ship
            slot = slots.get(sh.slot)
            if slot is None or not slot.present:
                continue
            value = ctx.ship_worth(sh.slot, slot.ship.points) - ctx.pay_value(sh.pay)
            if value > best:
                best, choice = value, m
        return choice if choice is not None else _first(by_kind, "decline")

    def _astronomy(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        dock = ctx.view.pending.dock
        docks = list(ctx.me.port.ships_per_dock)
        if dock < len(docks) and docks[dock] > 0:
            docks[dock] -= 1  # the new ship is already counted where it landed

        def value(m):
            d = m.santa_maria.shift_ship.dock
            return ctx.ship_worth(d, 0, docks) - abs(d - dock) * ctx.coin if d < 4 else -1e9
        shifts = by_kind.get("shift_ship", [])
        return max(shifts, key=value) if shifts else None

    def _religion(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        plain, best, choice = None, 0.0, None
        s = ctx.sim()
        step2 = ctx.religion_step(s.religion + 2, s)
        for m in by_kind.get("religion", []):
            r = m.santa_maria.religion
            if not r.extra:
                plain = m
                continue
            value = step2 - ctx.pay_value(r.pay)
            if value > best:
                best, choice = value, m
        return choice if choice is not None else plain

    def _monk(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        spaces = {m.space: m for m in ctx.view.monk_spaces}
        best, choice = 0.0, None
        for m in by_kind.get("recruit_monk", []):
            space = spaces.get(m.santa_maria.recruit_monk.space)
            if space is None:
                continue
            value = ctx.monk_space_value(space)
            if value > best:
                best, choice = value, m
        return choice if choice is not None else _first(by_kind, "decline")

    def _mathematics(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        def coins(m):
            p = m.santa_maria.recover_coins
            cell = ctx.grid.get((p.row - 1) * 6 + p.col - 1)
            return cell.coins if cell else 0
        recovers = by_kind.get("recover_coins", [])
        return max(recovers, key=coins) if recovers else None

    # ------------------------------------------------------------------ set-up choices
    def _board(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        boards = {b.board: b for b in ctx.view.colony_boards}

        def value(m):
            board = boards.get(m.santa_maria.choose_board.board)
            if board is None:
                return -1e9
            return sum(ctx.content_worth(c.content) + c.content.colonists * 0.3 for c in board.cells)
        choices = by_kind.get("choose_board", [])
        return max(choices, key=value) if choices else None

    def _draft(self, ctx: Ctx, by_kind) -> referee_pb2.Move | None:
        lots = {lot.lot: lot for lot in ctx.view.lots}

        def value(m):
            lot = lots.get(m.santa_maria.draft_lot.lot)
            if lot is None:
                return -1e9
            hall = sum(ctx.content_worth(tc.content) for tc in lot.town_hall)
            return hall + 3 * SCHOLAR_EFFECT.get(lot.scholar, 0.5)
        choices = by_kind.get("draft_lot", [])
        return max(choices, key=value) if choices else None
