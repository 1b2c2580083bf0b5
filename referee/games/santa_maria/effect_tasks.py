"""Santa Maria's building effects and tracks as typed tasks ("Activation des bâtiments":
Production, Échange, Transport maritime with Astronomie, Conquistador, Religion, Recruter un
Moine). Paying tasks also offer the sell/buy free actions ("Actions gratuites" example: Anna
buys a wheat to pay a ship); the turn plays those, leaving the task in front."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from referee.core.contract import Event

from . import moves
from .catalog import (
    EFFECT_CONQUISTADOR,
    EFFECT_PRODUCE,
    EFFECT_RELIGION,
    EFFECT_SHIP,
    GOLD,
    SCHOLAR_BIT,
    WHEAT,
    Goods,
)
from .geometry import cell_name
from .moves import DECLINE, NO_PAY
from .payments import gain, hand_in, payments, sell_buy_moves
from .sheet import GRID_SIDE
from .state import N_DOCKS, Player, State, Task, push_tasks
from .tracks import conquistador_step, unlock_blue_die
from .view_parts import goods
from .wording import coins_text, dock_name, goods_text, monk_space_name

if TYPE_CHECKING:
    from referee.v1 import santa_maria_pb2 as pb


@dataclass(slots=True)
class BuildingActivation(Task):
    """Activation des bâtiments: every effect of the building, in its printed order."""

    seat: int
    cell: int
    tag: ClassVar[str] = "bld"

    def settle(self, state: State) -> bool:
        state.queue.pop(0)
        seat = self.seat
        r = state.rules
        tasks: list[Task] = []
        for e in r.cells[state.players[seat].grid[self.cell]].effects:
            effect = r.effects[e]
            k = effect.kind
            if k == EFFECT_PRODUCE:
                tasks.append(Production(seat, effect.gain))
            elif k == EFFECT_CONQUISTADOR:
                tasks.append(ConquistadorAdvance(seat))
            elif k == EFFECT_RELIGION:
                tasks.append(ReligionAdvance(seat))
            elif k == EFFECT_SHIP:
                tasks.append(ShippingOffer(seat))
            else:
                tasks.append(ExchangeOffer(seat, e, self.cell, 0))
        push_tasks(state, *tasks)
        return True


@dataclass(slots=True)
class Production(Task):
    """Production: gain the goods (within the storage limit)."""

    seat: int
    goods: Goods
    tag: ClassVar[str] = "gain"

    def settle(self, state: State) -> bool:
        state.queue.pop(0)
        gain(state, self.seat, self.goods)
        return True


@dataclass(slots=True)
class ConquistadorAdvance(Task):
    """Conquistador: one step on the conquistador track."""

    seat: int
    tag: ClassVar[str] = "conq"

    def settle(self, state: State) -> bool:
        state.queue.pop(0)
        conquistador_step(state, self.seat)
        return True


def exchange_moves(state: State, p: Player, effect: int) -> list:
    have = tuple(p.res)
    out: list[moves.Exchange] = []
    for i, (pay, _) in enumerate(state.rules.effects[effect].options):
        out.extend(moves.exchange(i, v) for v in payments(pay, have))
    return out


@dataclass(slots=True)
class ExchangeOffer(Task):
    """Échange: pay one option's resources (gold wild) and gain, or decline; once per activation
    (Industrialisation: a second time)."""

    seat: int
    effect: int  # index into Rules.effects
    cell: int  # the building
    second: int  # 1 for Industrialisation's second exchange
    tag: ClassVar[str] = "exch"
    kind: ClassVar[str] = "santa_maria.exchange"
    prompt: ClassVar[str] = "Exchange (pay one option) or decline; you may sell/buy first"
    rule: ClassVar[str] = "Échange: one listed option, paid exactly, or Decline"

    def settle(self, state: State) -> bool:
        p = state.players[self.seat]
        if exchange_moves(state, p, self.effect) or sell_buy_moves(state, p):
            return False
        state.queue.pop(0)
        return True

    def legal_moves(self, state: State) -> list:
        p = state.players[self.seat]
        return exchange_moves(state, p, self.effect) + [DECLINE] + sell_buy_moves(state, p)

    def pending_view(self, state: State, view: pb.Pending) -> None:
        """The building (row, column 1-based), whether this is the second exchange, and every
        option of the effect."""
        view.row, view.col = self.cell // GRID_SIDE + 1, self.cell % GRID_SIDE + 1
        view.second = self.second
        for pay, g in state.rules.effects[self.effect].options:
            view.options.add(pay=goods(pay), gain=goods(g))

    def play(self, state: State, move: Any) -> list[Event]:
        if move is DECLINE:
            return []
        seat = self.seat
        p = state.players[seat]
        hand_in(p, move.pay)
        got = state.rules.effects[self.effect].options[move.option][1]
        gain(state, seat, got)
        if not self.second and p.scholars & SCHOLAR_BIT["industrialization"]:
            push_tasks(state, ExchangeOffer(seat, self.effect, self.cell, 1))
        return [Event("santa_maria.exchange", seat, f"seat {seat} exchanges {goods_text(move.pay)} for {goods_text(got)} "
                      f"at {cell_name(self.cell)}",
                      {"option": move.option, "pay": list(move.pay)})]


def ship_moves(state: State, p: Player) -> list:
    have = tuple(p.res)
    out: list[moves.Ship] = []
    for slot, ship in enumerate(state.ship_slots):
        if ship >= 0:
            out.extend(moves.ship(slot, v) for v in payments(state.rules.ships[ship][0], have))
    return out


@dataclass(slots=True)
class ShippingOffer(Task):
    """Transport maritime: take a face-up ship paying its cost, or decline."""

    seat: int
    tag: ClassVar[str] = "ship"
    kind: ClassVar[str] = "santa_maria.ship"
    prompt: ClassVar[str] = "Take a face-up ship (pay its cost) or decline; you may sell/buy first"
    rule: ClassVar[str] = "Transport maritime: a face-up ship whose cost you pay, or Decline"

    def settle(self, state: State) -> bool:
        p = state.players[self.seat]
        if any(x >= 0 for x in state.ship_slots) and (
                ship_moves(state, p) or sell_buy_moves(state, p)):
            return False
        state.queue.pop(0)
        return True

    def legal_moves(self, state: State) -> list:
        p = state.players[self.seat]
        return ship_moves(state, p) + [DECLINE] + sell_buy_moves(state, p)

    def play(self, state: State, move: Any) -> list[Event]:
        """The ship goes in the port beside the dock of the same symbol; the slot is refilled from
        the face-down pile (an empty pile leaves it empty). Astronomie: it may move."""
        if move is DECLINE:
            return []
        seat = self.seat
        p = state.players[seat]
        ship = state.ship_slots[move.slot]
        hand_in(p, move.pay)
        p.port[move.slot].append(ship)
        state.ship_slots[move.slot] = state.ship_pile.pop() if state.ship_pile else -1
        if p.scholars & SCHOLAR_BIT["astronomy"]:
            push_tasks(state, AstronomyShift(seat, move.slot))
        new = state.ship_slots[move.slot]
        data: dict[str, Any] = {"slot": move.slot, "pay": list(move.pay)}
        if new >= 0:
            data["refill"] = {"cost": list(state.rules.ships[new][0]),
                              "points": state.rules.ships[new][1]}
        return [Event("santa_maria.ship", seat, f"seat {seat} takes the ship of {dock_name(state.rules, move.slot)} for "
                      f"{goods_text(move.pay)}",
                      data)]


@dataclass(slots=True)
class AstronomyShift(Task):
    """Astronomie: the new ship may move to another dock, 1 coin per dock moved."""

    seat: int
    dock: int
    tag: ClassVar[str] = "astro"
    kind: ClassVar[str] = "santa_maria.astronomy"
    prompt: ClassVar[str] = "Astronomy: choose the dock of your new ship (1 coin per dock moved)"
    rule: ClassVar[str] = "Astronomie: a dock you can pay to move to"

    def settle(self, state: State) -> bool:
        if state.players[self.seat].coins >= 1:
            return False
        state.queue.pop(0)
        return True

    def legal_moves(self, state: State) -> list:
        coins = state.players[self.seat].coins
        return [moves.shift_ship(d) for d in range(N_DOCKS) if abs(d - self.dock) <= coins]

    def pending_view(self, state: State, view: pb.Pending) -> None:
        view.dock = self.dock

    def play(self, state: State, move: moves.ShiftShip) -> list[Event]:
        p = state.players[self.seat]
        if move.dock != self.dock:
            p.coins -= abs(move.dock - self.dock)
            p.port[move.dock].append(p.port[self.dock].pop())
        return [Event("santa_maria.astronomy", self.seat,
                      (f"seat {self.seat} keeps its new ship at {dock_name(state.rules, move.dock)}"
                       if move.dock == self.dock else
                       f"seat {self.seat} pays {coins_text(abs(move.dock - self.dock))} (Astronomy) to move "
                       f"its new ship to {dock_name(state.rules, move.dock)}"),
                      {"from": self.dock, "to": move.dock})]


# ============================================================================ religion and monks


def religion_steps(state: State, seat: int, steps: int) -> None:
    """Religion: advance; each monk symbol reached lets the seat recruit a monk, the 1st and 3rd
    also unlock a blue die. At the last space each step that cannot be taken scores 1 point."""
    p = state.players[seat]
    r = state.rules
    tasks: list[Task] = []
    for _ in range(steps):
        if p.religion >= r.religion_length:
            p.points += 1
            continue
        p.religion += 1
        if p.religion in r.monk_symbols:
            k = r.monk_symbols.index(p.religion) + 1
            if k in r.blue_die_symbols:
                unlock_blue_die(state, seat)
            tasks.append(MonkRecruitment(seat))
    push_tasks(state, *tasks)


def religion_moves(p: Player) -> list:
    out = [moves.religion(False, NO_PAY)]
    if p.res[WHEAT]:
        out.append(moves.religion(True, (0, 1, 0, 0, 0)))
    if p.res[GOLD]:
        out.append(moves.religion(True, (0, 0, 0, 0, 1)))
    return out


@dataclass(slots=True)
class ReligionAdvance(Task):
    """Religion: advance 1, or pay 1 wheat (gold standing in) to advance 2."""

    seat: int
    tag: ClassVar[str] = "rel"
    kind: ClassVar[str] = "santa_maria.religion"
    prompt: ClassVar[str] = ("Religion: advance 1, or pay 1 wheat (or gold) to advance 2; "
                             "you may sell/buy first")
    rule: ClassVar[str] = "Religion: advance 1, or 2 paying 1 wheat"

    def settle(self, state: State) -> bool:
        p = state.players[self.seat]
        if p.res[WHEAT] or p.res[GOLD] or sell_buy_moves(state, p):
            return False
        state.queue.pop(0)
        religion_steps(state, self.seat, 1)
        return True

    def legal_moves(self, state: State) -> list:
        p = state.players[self.seat]
        return religion_moves(p) + sell_buy_moves(state, p)

    def play(self, state: State, move: moves.Religion) -> list[Event]:
        p = state.players[self.seat]
        if move.extra:
            hand_in(p, move.pay)
        religion_steps(state, self.seat, 2 if move.extra else 1)
        return [Event("santa_maria.religion", self.seat,
                      f"seat {self.seat} advances to space {p.religion} of the religion track"
                      + (" paying 1 wheat for the extra step" if move.extra else ""),
                      {"extra": move.extra, "religion": p.religion})]


def monk_moves(state: State, seat: int) -> list:
    p = state.players[seat]
    fee = state.rules.monk_fee
    return [moves.recruit_monk(i) for i, seats in enumerate(state.monks)
            if seat not in seats and p.coins >= fee * len(seats)]


@dataclass(slots=True)
class MonkRecruitment(Task):
    """Recruter un Moine: a monk on a space without one of the seat's, 2 coins to each other
    owner there; Scholar = permanent effect, Bishop = end-game objective, camp = reward now."""

    seat: int
    tag: ClassVar[str] = "monk"
    kind: ClassVar[str] = "santa_maria.monk"
    prompt: ClassVar[str] = "Recruit a monk on a monk space, or decline; you may sell/buy first"
    rule: ClassVar[str] = ("Recruter un Moine: a space without your monk, paying 2 coins per "
                           "monk there")

    def settle(self, state: State) -> bool:
        seat = self.seat
        p = state.players[seat]
        if p.monks_left > 0 and (monk_moves(state, seat) or (
                sell_buy_moves(state, p) and any(seat not in m for m in state.monks))):
            return False
        state.queue.pop(0)
        return True

    def legal_moves(self, state: State) -> list:
        p = state.players[self.seat]
        return monk_moves(state, self.seat) + [DECLINE] + sell_buy_moves(state, p)

    def play(self, state: State, move: Any) -> list[Event]:
        if move is DECLINE:
            return []
        seat = self.seat
        p = state.players[seat]
        space = move.space
        r = state.rules
        owners = state.monks[space]
        for o in owners:
            p.coins -= r.monk_fee
            state.players[o].coins += r.monk_fee
        owners.append(seat)
        p.monks_left -= 1
        ns = r.scholars_drawn
        if space < ns:
            p.scholars |= SCHOLAR_BIT[state.monk_tiles[space]]
        elif space >= ns + r.bishops_drawn:
            gain(state, seat, r.camps[space - ns - r.bishops_drawn])
        return [Event("santa_maria.monk", seat, f"seat {seat} places a monk on {monk_space_name(r, state.monk_tiles, space)}"
                      + (f", paying {coins_text(r.monk_fee * len(owners[:-1]))}" if owners[:-1] else ""),
                      {"space": space, "paid_to": list(owners[:-1])})]
