"""How the greedy Santa Maria bot (``greedy_santa_maria``) values a position and a move, from
its ``santa_maria.View`` alone.

Everything is valued in happiness points (the game's score), with coins and resources converted
at a rate that depends on the year (a coin is worth about 1/3 point at the end, a little more
while it can still buy things; wood and wheat are dearer early, when they build the colony):

* **Main action.** Every offered main action is valued and the best one is played while it is
  worth more than a small threshold; otherwise the bot retreats.

  - *Use a die*: the free buildings of the line fire in order; a small simulation carries the
    resources they produce into the exchanges and ships further along the line. Minus the
    coins paid to turn the die (or the Botany resource) and a small price for spending a die.
  - *Activate a building*: the same valuation for one building, minus its coin cost.
  - *Expand*: the tile's buildings are worth their activation value times the activations
    they can still expect (fewer each year), plus their purple points, plus the best placement
    (below), minus the resources paid.
  - *Retreat*: the value of the space's action (coins, religion, conquistador, ship, road);
    the ship bonuses come whatever space is taken.

* **Placing a tile or a road** scores buildings that join lines already holding buildings (a die
  then fires them together), and colonists on rows/columns in proportion to how close the line
  is to complete (a complete line pays 1 per colonist at the end).
* **Religion** steps are worth a little progress, plus a monk (the best space we could take)
  and a blue die when a symbol is reached; the extra step is bought when it is worth its wheat.
* **Conquistador** steps are worth the change in this year's conquistador table at current
  standings (discounted: others still move), plus the gold symbols.
* **Monks** go to the space worth most: Scholars (their points plus a rough worth of the effect),
  Bishops (the objective as the colony stands now, plus growth, minus 2), camps (the reward),
  minus the fees paid to other seats.
* **Ships** are worth their points, the dock's bonus on every retreat still to come, and a
  complete port column; taken when that beats the resources paid.
* **Free actions** (sell, buy, Logistics) are never churned: once the main action is done the bot
  ends its turn, and inside paying decisions it pays with what it holds or declines.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from referee.v1 import santa_maria_pb2 as sm

RESOURCES = ("wood", "wheat", "sugar", "gem", "gold")
#: Coins a resource sells for (also what an overflow beyond the storage limit turns into).
SELL = (1, 1, 2, 2, 2)
STORAGE_LIMIT = 3
#: Rough end-game points a Scholar's effect is worth to this bot, beyond its printed points.
SCHOLAR_EFFECT = {
    "astronomy": 0.5,
    "taxation": 2.0,
    "botany": 2.5,
    "philosophy": 2.0,
    "mathematics": 1.5,
    "construction": 1.0,
    "industrialization": 1.5,
    "basic_economy": 0.5,
    "advanced_economy": 0.5,
    "logistics": 0.3,
}
#: Chance-like weight of a colonist on a line with this many empty cells left (0 = complete).
LINE_PROGRESS = (1.0, 0.55, 0.35, 0.2, 0.12, 0.06, 0.03)


@dataclass(frozen=True, slots=True)
class Weights:
    """Tuning knobs, in points."""

    coin: tuple[float, float, float] = (0.5, 0.45, 0.34)  # a coin, by year
    #: wood, wheat, sugar, gem, gold, by year
    resource: tuple[tuple[float, ...], ...] = (
        (1.3, 1.2, 1.0, 1.1, 1.5),
        (1.2, 1.1, 1.0, 1.1, 1.4),
        (0.6, 0.7, 0.9, 1.0, 1.1),
    )
    #: activations a new building can still expect (bought in year 1, 2, 3)
    uses: tuple[float, float, float] = (2.2, 1.5, 0.7)
    die_price: float = 0.3  # spending a die (there are few per year)
    retreat_below: float = 0.4  # retreat when no main action is worth this much
    religion_progress: float = 0.5
    blue_die: tuple[float, float, float] = (3.0, 1.8, 0.3)  # a blue die unlocked, by year
    conquistador_base: float = 0.3
    conquistador_discount: float = 0.6
    line_synergy: float = 0.7  # a building joining a line with buildings, per building there
    first_player: float = 0.4  # the top retreat space: first next year and the tie-break


class Sim:
    """The few numbers a chain of effects changes: resources, coins, tracks, ships taken."""

    __slots__ = ("coins", "conq", "monks", "religion", "res", "ships")

    def __init__(self, res: list[int], coins: int, conq: int, religion: int, monks: int):
        self.res = res
        self.coins = coins
        self.conq = conq
        self.religion = religion
        self.ships: set[int] = set()
        self.monks = monks

    def copy(self) -> Sim:
        s = Sim(list(self.res), self.coins, self.conq, self.religion, self.monks)
        s.ships = set(self.ships)
        return s


def goods_res(g: sm.Goods) -> list[int]:
    return [g.wood, g.wheat, g.sugar, g.gem, g.gold]


def can_pay(cost: list[int], res: list[int]) -> list[int] | None:
    """The resources spent to pay ``cost`` from ``res`` (gold stands for anything), or None."""
    pay = [0] * 5
    gold_needed = 0
    for i in range(4):
        use = min(cost[i], res[i])
        pay[i] = use
        gold_needed += cost[i] - use
    gold_needed += cost[4]
    if gold_needed > res[4]:
        return None
    pay[4] = gold_needed
    return pay


#: best placements shared by every decision (:meth:`Ctx.best_placement`), keyed by the tile and
#: all the colony facts a placement's bonus reads; cleared when it holds this many
PLACEMENT_CACHE = 1 << 15
_PLACEMENTS: dict[tuple, tuple[float, tuple[int, int, int] | None]] = {}


class Ctx:
    """What the bot knows about the position, decoded once per decision."""

    def __init__(self, view: sm.View, w: Weights):
        self.view = view
        self.w = w
        self.year = max(1, min(3, view.year or 1))
        y = self.year - 1
        self.coin = w.coin[y]
        self.rv = w.resource[y]
        self.me = next(p for p in view.players if p.seat == view.seat)
        self.others = [p for p in view.players if p.seat != view.seat]
        me = self.me
        self.grid: dict[int, sm.Cell] = {(c.row - 1) * 6 + c.col - 1: c for c in me.colony}
        self.scholars = set(me.scholars)
        self.bishops = {
            m.tile for m in view.monk_spaces if m.kind == "bishop" and view.seat in m.monks
        }
        self.retreats_left = 4 - self.year  # retreats still to come, this year's included
        self._monk_value: float | None = None
        self._building_cache: dict[bytes, float] = {}
        self._free: set[int] | None = None
        self.line_values: dict[tuple[int, int, int], float] = {}
        self._placements: dict[tuple, tuple[float, tuple[int, int, int] | None]] = {}
        self._placement_base: tuple | None = None
        self.occ_mask: int | None = None
        self.tile_values: dict[int, float] = {}
        self.row_empty: list[int] | None = None

    # ------------------------------------------------------------------ basic values
    def sim(self) -> Sim:
        me = self.me
        return Sim(goods_res(me.resources), me.coins, me.conquistador, me.religion, me.monks_left)

    def pay_value(self, pay: sm.Goods) -> float:
        return sum(n * v for n, v in zip(goods_res(pay), self.rv)) + pay.coins * self.coin

    def gain(self, g: sm.Goods, s: Sim) -> float:
        """Value of gaining ``g`` (overflow beyond the storage limit is sold), applied to ``s``."""
        value = g.points + g.coins * self.coin
        s.coins += g.coins
        for i, n in enumerate(goods_res(g)):
            for _ in range(n):
                if s.res[i] < STORAGE_LIMIT:
                    s.res[i] += 1
                    value += self.rv[i]
                else:
                    s.coins += SELL[i]
                    value += SELL[i] * self.coin
        return value

    # ------------------------------------------------------------------ tracks
    def religion_step(self, space: int, s: Sim) -> float:
        """Value of reaching religion ``space``."""
        track = self.view.religion_track
        if space > track.length:
            return 1.0
        value = self.w.religion_progress
        if space in track.monk_symbols:
            k = list(track.monk_symbols).index(space) + 1
            if s.monks > 0:
                value += self.monk_value()
            if k in (1, 3) and self.me.blue_unlocked < 3:
                value += self.w.blue_die[self.year - 1]
        return value

    def religion(self, s: Sim, allow_extra: bool = True) -> float:
        """A religion action: one step, plus the extra one when worth its wheat (or gold)."""
        value = self.religion_step(s.religion + 1, s)
        s.religion += 1
        if allow_extra:
            for i in (1, 4):  # wheat, then gold
                if s.res[i] and self.religion_step(s.religion + 1, s) > self.rv[i]:
                    value += self.religion_step(s.religion + 1, s) - self.rv[i]
                    s.res[i] -= 1
                    s.religion += 1
                    break
        if s.religion > 0 and s.religion in self.view.religion_track.monk_symbols:
            s.monks = max(0, s.monks - 1)
        return value

    def conq_points(self, pos: int, arrived_last: bool) -> float:
        """This year's conquistador points at ``pos`` if the others stood still."""
        if pos <= 0:
            return 0.0
        table = list(self.view.conquistador_points)
        if len(self.view.players) == 1 or not table:
            return 0.0
        my_rank = self.me.conquistador_rank

        def is_ahead(p: sm.PlayerPublic) -> bool:
            if p.conquistador != pos:
                return p.conquistador > pos
            # same space: the marker that arrived first (lower in the stack) is ahead
            return arrived_last or 0 < p.conquistador_rank < my_rank

        ahead = sum(1 for p in self.others if is_ahead(p))
        return float(table[ahead]) if ahead < len(table) else 0.0

    def conquistador(self, s: Sim) -> float:
        track = self.view.conquistador_track
        if s.conq >= track.length:
            return 0.0
        before = self.conq_points(s.conq, s.conq != self.me.conquistador)
        s.conq += 1
        after = self.conq_points(s.conq, True)
        value = self.w.conquistador_base + self.w.conquistador_discount * (after - before)
        if len(self.view.players) == 1:
            value += 0.5
        if s.conq in track.gold_symbols:
            value += self.gain(sm.Goods(gold=1), s)
        return value

    # ------------------------------------------------------------------ ships
    def ship_worth(self, dock: int, points: int, docks: list[int] | None = None) -> float:
        """A ship in ``dock``: its points, its dock bonus on every retreat left, port columns
        (``docks``: ships per dock before it; default the port as it stands)."""
        value = float(points)
        bonus = next((d for d in self.view.docks if d.dock == dock), None)
        if bonus is not None:
            if bonus.bonus == "coins":
                per = bonus.gain.coins * self.coin
            elif bonus.bonus == "points":
                per = float(bonus.gain.points)
            elif bonus.bonus == "religion":
                per = 1.0
            else:
                per = 0.7
            value += per * self.retreats_left
        if docks is None:
            docks = list(self.me.port.ships_per_dock) or [0, 0, 0, 0]
        if dock < len(docks):
            low = min(docks)
            if docks[dock] == low:
                value += 3.0 if sum(1 for n in docks if n == low) == 1 else 0.8
            if "ships_in_one_dock" in self.bishops and docks[dock] == max(docks):
                value += 2.0
        return value

    def best_ship(self, s: Sim) -> float:
        """Take the best affordable face-up ship when worth it (applied to ``s``)."""
        best, choice = 0.0, None
        for slot in self.view.ship_slots:
            if not slot.present or slot.dock in s.ships:
                continue
            cost = goods_res(slot.ship.cost)
            pay = can_pay(cost, s.res)
            if pay is None:
                continue
            net = self.ship_worth(slot.dock, slot.ship.points) - sum(
                n * v for n, v in zip(pay, self.rv))
            if net > best:
                best, choice = net, (slot.dock, pay)
        if choice is not None:
            s.ships.add(choice[0])
            for i, n in enumerate(choice[1]):
                s.res[i] -= n
        return best

    # ------------------------------------------------------------------ buildings
    def effect(self, e: sm.Effect, s: Sim) -> float:
        k = e.kind
        if k == sm.PRODUCE:
            return self.gain(e.gain, s)
        if k == sm.EXCHANGE:
            times = 2 if "industrialization" in self.scholars else 1
            value = 0.0
            for _ in range(times):
                best, choice = 0.0, None
                for o in e.options:
                    pay = can_pay(goods_res(o.pay), s.res)
                    if pay is None:
                        continue
                    trial = s.copy()
                    for i, n in enumerate(pay):
                        trial.res[i] -= n
                    net = self.gain(o.gain, trial) - sum(n * v for n, v in zip(pay, self.rv))
                    if net > best:
                        best, choice = net, trial
                if choice is None:
                    break
                value += best
                s.res, s.coins = choice.res, choice.coins
            return value
        if k == sm.SHIP:
            return self.best_ship(s)
        if k == sm.CONQUISTADOR:
            return self.conquistador(s)
        if k == sm.RELIGION:
            return self.religion(s)
        return 0.0

    def building(self, content: sm.CellContent, s: Sim) -> float:
        return sum(self.effect(e, s) for e in content.effects)

    def building_alone(self, content: sm.CellContent) -> float:
        """One activation of a building from the current position (for placing and buying)."""
        return self.building(content, self.sim())

    # ------------------------------------------------------------------ colony geometry
    def _geometry(self) -> None:
        """Per-line counts used by every placement: empty cells, buildings, colonists."""
        self.row_empty = [6] * 6
        self.col_empty = [6] * 6
        self.row_bld = [0] * 6
        self.col_bld = [0] * 6
        self.row_col = [0] * 6  # colonists per row
        self.col_col = [0] * 6
        for c, cell in self.grid.items():
            r, k = divmod(c, 6)
            self.row_empty[r] -= 1
            self.col_empty[k] -= 1
            if cell.content.building:
                self.row_bld[r] += 1
                self.col_bld[k] += 1
            n = cell.content.colonists
            self.row_col[r] += n
            self.col_col[k] += n
        late = self.year == 3  # few cells will still be filled: only complete lines count
        self.progress = [p if (i == 0 or not late) else 0.1 * p
                         for i, p in enumerate(LINE_PROGRESS)]
        self.synergy = self.w.line_synergy * self.w.uses[self.year - 1] / 2

    def free_buildings(self) -> set[int]:
        if self._free is None:
            self._free = {c for c, cell in self.grid.items()
                          if cell.content.building and not cell.die and not cell.coins}
        return self._free

    def line_cells(self, line: int, target: int) -> list[int]:
        i = target - 1
        if line == sm.ROW:
            return [6 * i + c for c in range(6)]
        return [6 * r + i for r in range(6)]

    def placement_bonus(self, cells: list[tuple[int, bool, int]]) -> float:
        """What putting (cell, is_building, colonists) on these empty cells adds beyond the
        contents' own worth: line synergy for buildings, colonists on lines closer to complete,
        and a little for completing a line."""
        if self.row_empty is None:
            self._geometry()
        assert self.row_empty is not None
        value = 0.0
        rows: dict[int, list[int]] = {}
        cols: dict[int, list[int]] = {}
        for c, building, colonists in cells:
            r, k = divmod(c, 6)
            if building:
                value += self.synergy * (self.row_bld[r] + self.col_bld[k])
            e = rows.setdefault(r, [0, 0])
            e[0] += 1
            e[1] += colonists
            e = cols.setdefault(k, [0, 0])
            e[0] += 1
            e[1] += colonists
        progress = self.progress
        for counts, empty, held in ((rows, self.row_empty, self.row_col),
                                    (cols, self.col_empty, self.col_col)):
            for i, (filled, added) in counts.items():
                before, after = empty[i], empty[i] - filled
                value += (held[i] + added) * progress[after] - held[i] * progress[before]
                if after == 0:
                    value += 0.3  # a full line also helps the square and keeps options tidy
        if "square" in self.bishops:
            value += 0.2 * sum(1 for c, _, _ in cells if 1 <= c // 6 <= 4 and 1 <= c % 6 <= 4)
        return value

    def content_worth(self, content: sm.CellContent) -> float:
        """A tile cell's own worth: expected activations, purple points."""
        value = float(content.end_points)
        if content.building and content.effects:
            key = content.SerializeToString()
            c = self._building_cache.get(key)
            if c is None:
                c = self.building_alone(content)
                self._building_cache[key] = c
            value += max(0.0, c) * self.w.uses[self.year - 1]
        return value

    def best_placement(self, tile_cells) -> tuple[float, tuple[int, int, int] | None]:
        """(bonus, (row, col, rotation)) of the best placement of a tile on empty cells."""
        facts = tuple((tc.content.building, tc.content.colonists) for tc in tile_cells)
        offsets = tuple((tc.dr, tc.dc) for tc in tile_cells)
        key = (offsets, facts)
        found = self._placements.get(key)
        if found is not None:
            return found
        # the same tile on the same colony scores the same from one decision to the next (a
        # turn asks several times; a search's rollouts ask thousands): keyed by all it reads
        shared = (self._placement_key(), offsets, facts)
        found = _PLACEMENTS.get(shared)
        if found is not None:
            self._placements[key] = found
            return found
        if self.occ_mask is None:
            self.occ_mask = sum(1 << c for c in self.grid)
        occ = self.occ_mask
        best, where = -1e9, None
        seen: set[tuple] = set()
        for row, col, rot, cells, mask in _orientations(offsets):
            if mask & occ:
                continue
            placed = [(c, b, n) for c, (b, n) in zip(cells, facts)]
            signature = tuple(sorted(placed))
            if signature in seen:
                continue
            seen.add(signature)
            bonus = self.placement_bonus(placed)
            if bonus > best:
                best, where = bonus, (row, col, rot)
        self._placements[key] = (best, where)
        if len(_PLACEMENTS) >= PLACEMENT_CACHE:
            _PLACEMENTS.clear()
        _PLACEMENTS[shared] = (best, where)
        return best, where

    def _placement_key(self) -> tuple:
        """What :meth:`placement_bonus` reads besides the tile: the colony's cells (building,
        colonists), the year, the square bishop and the weights it uses."""
        key = self._placement_base
        if key is None:
            key = self._placement_base = (
                tuple(sorted((c, cell.content.building, cell.content.colonists)
                             for c, cell in self.grid.items())),
                self.year, "square" in self.bishops, self.w.line_synergy, self.w.uses)
        return key

    # ------------------------------------------------------------------ main actions
    def tile_value(self, slot: int) -> float:
        """A display tile's worth before paying: its cells and its best placement."""
        cached = self.tile_values.get(slot)
        if cached is None:
            tile = self.view.display[slot]
            bonus, where = self.best_placement(tile.cells)
            if where is None:
                cached = -1e9  # fits nowhere
            else:
                cached = bonus + sum(self.content_worth(tc.content) for tc in tile.cells)
            self.tile_values[slot] = cached
        return cached

    def die_value(self, u: sm.UseDie) -> float:
        """Fire the free buildings of the line in order; minus the die's price and changes."""
        if u.botany:
            cost = self.rv[u.botany - 1]
        else:
            cost = abs(u.face - u.target) * self.coin
        key = (u.line, u.target, u.botany)
        line_value = self.line_values.get(key)
        if line_value is None:
            free = self.free_buildings()
            cells = self.line_cells(u.line, u.target)
            s = self.sim()
            if u.botany:
                s.res[u.botany - 1] -= 1
            line_value = 0.0
            if "taxation" in self.scholars:
                colonists = sum(self.grid[c].content.colonists for c in cells if c in self.grid)
                line_value += (colonists // 2) * self.coin
            for c in cells:
                if c in free:
                    line_value += self.building(self.grid[c].content, s)
            self.line_values[key] = line_value
        return line_value - cost - self.w.die_price

    def retreat_value(self, space: int) -> float:
        rs = next((r for r in self.view.retreat_spaces if r.space == space), None)
        if rs is None:
            return 0.0
        s = self.sim()
        action = rs.action
        if action == "coins":
            value = self.gain(rs.gain, s)
        elif action == "religion":
            value = self.religion(s)
        elif action == "conquistador":
            value = self.conquistador(s)
        elif action == "ship":
            value = self.best_ship(s)
        elif action == "road":
            free = [c for c in range(36) if c not in self.grid]
            value = max((self.placement_bonus([(c, False, 1)]) for c in free), default=0.0)
            if self.year < 3:
                value -= 0.3  # the cell can no longer take a building tile
        else:
            value = 0.0
        free_spaces = [r.space for r in self.view.retreat_spaces if r.occupant < 0]
        if free_spaces and space == min(free_spaces):
            value += self.w.first_player * (1.0 if space == 0 else 0.5)
        return value

    # ------------------------------------------------------------------ monks
    def monk_space_value(self, m: sm.MonkSpace) -> float:
        if self.view.seat in m.monks:
            return -1e9
        fee = 2 * len(m.monks) * (self.coin + 0.15)
        if m.kind == "scholar":
            if m.tile in self.scholars:
                return m.points - fee
            return m.points + SCHOLAR_EFFECT.get(m.tile, 0.5) * (1.0 if self.year < 3 else 0.3) - fee
        if m.kind == "bishop":
            return self.bishop_estimate(m.tile) - 2.0 - fee
        s = self.sim()
        return self.gain(m.reward, s) - fee

    def monk_value(self) -> float:
        if self._monk_value is None:
            best = max((self.monk_space_value(m) for m in self.view.monk_spaces), default=0.0)
            self._monk_value = max(0.5, best)
        return self._monk_value

    def bishop_estimate(self, bishop: str) -> float:
        """The objective as the colony stands, plus some growth while years remain."""
        grid = self.grid
        growth = (3 - self.year) * 2.0 + 1.0

        def terrain(c: int) -> int:
            return grid[c].content.terrain if c in grid else sm.TERRAIN_UNSPECIFIED

        if bishop == "square":
            best = 0
            for k in range(6, 0, -1):
                if any(all((6 * (r0 + i) + c0 + j) in grid for i in range(k) for j in range(k))
                       for r0 in range(7 - k) for c0 in range(7 - k)):
                    best = k
                    break
            now = {3: 4, 4: 7, 5: 10, 6: 10}.get(best, 0)
            return now + growth * 1.2
        if bishop == "ships_in_one_dock":
            docks = list(self.me.port.ships_per_dock) or [0]
            return min(12.0, 2.0 * max(docks) + growth)
        if bishop == "diversity":
            need = {sm.FARM, sm.FOREST, sm.MOUNTAIN, sm.CITY}
            lines = [[6 * r + c for c in range(6)] for r in range(6)]
            lines += [[6 * r + c for r in range(6)] for c in range(6)]
            n = sum(1 for line in lines if need <= {terrain(c) for c in line})
            return min(12.0, 3.0 * n + growth)
        if bishop == "largest_area":
            best, seen = 0, set()
            for c in grid:
                t = terrain(c)
                if c in seen or t not in (sm.FARM, sm.FOREST, sm.MOUNTAIN):
                    continue
                stack, size = [c], 0
                seen.add(c)
                while stack:
                    x = stack.pop()
                    size += 1
                    for y in _neighbours(x):
                        if y not in seen and terrain(y) == t:
                            seen.add(y)
                            stack.append(y)
                best = max(best, size)
            return min(12.0, 2.0 * best + growth * 0.7)
        if bishop in ("cities_to_town_hall", "colonists_to_town_hall"):
            halls = [c for c in grid if terrain(c) == sm.TOWN_HALL]
            if not halls:
                return 0.0
            reached, seen, stack = set(), set(halls), list(halls)
            while stack:  # neighbours of the halls and of road chains from them
                x = stack.pop()
                for y in _neighbours(x):
                    if y in seen or y not in grid:
                        continue
                    seen.add(y)
                    reached.add(y)
                    if terrain(y) == sm.ROAD:
                        stack.append(y)
            if bishop == "cities_to_town_hall":
                n = sum(2 for c in reached if terrain(c) == sm.CITY)
            else:
                n = sum(grid[c].content.colonists for c in reached if terrain(c) == sm.ROAD)
            return min(12.0, n + growth * 0.7)
        return growth


@lru_cache(maxsize=64)
def _orientations(offsets: tuple[tuple[int, int], ...]) -> tuple:
    """Every (row, col, rotation, cells, mask) that puts a tile with these cell offsets inside
    the 6x6 grid; a quarter-turn clockwise maps an offset (dr, dc) to (dc, -dr)."""
    out = []
    for rot in range(4):
        offs = list(offsets)
        for _ in range(rot):
            offs = [(dc, -dr) for dr, dc in offs]
        for r in range(6):
            for c in range(6):
                pos = [(r + dr, c + dc) for dr, dc in offs]
                if all(0 <= rr < 6 and 0 <= cc < 6 for rr, cc in pos):
                    cells = tuple(6 * rr + cc for rr, cc in pos)
                    out.append((r + 1, c + 1, rot, cells, sum(1 << x for x in cells)))
    return tuple(out)


def _neighbours(c: int) -> list[int]:
    r, col = divmod(c, 6)
    out = []
    if r > 0:
        out.append(c - 6)
    if r < 5:
        out.append(c + 6)
    if col > 0:
        out.append(c - 1)
    if col < 5:
        out.append(c + 1)
    return out
