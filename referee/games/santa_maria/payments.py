"""Santa Maria's payments: paying a cost with gold standing in ("Utilisation de l'Or"), gaining
goods within the storage limit ("Limite de stockage"), and the sell/buy free actions ("Actions
gratuites") with the Scholars' prices."""
from __future__ import annotations

from functools import lru_cache

from . import moves
from .catalog import (
    COINS,
    GEM,
    GOLD,
    N_RESOURCES,
    POINTS,
    SCHOLAR_BIT,
    SCHOLAR_ECONOMY,
    SUGAR,
    WHEAT,
    WOOD,
    Goods,
    Rules,
)
from .state import Player, State

#: Scholars: "Économie de base : ... acheter 1 Bois ou 1 Blé pour 2 Pièces (au lieu de 3)";
#: "Économie avancée : ... acheter 1 Gemme ou 1 Sucre pour 3 Pièces" (Santa Maria, French rules,
#: "Tuiles Savant"). No purchase costs more than MAX_BUY_PRICE ("Acheter des Ressources : payez 3
#: Pièces", "Actions gratuites"), so coins above it never change what may be bought.
BASIC_ECONOMY_PRICE = 2
ADVANCED_ECONOMY_PRICE = 3
MAX_BUY_PRICE = 3


@lru_cache(maxsize=65536)
def payments(cost: tuple[int, ...], have: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """'Utilisation de l'Or': every way to pay ``cost`` (5 resources) from ``have``, gold standing
    in for any resource. A payment is the exact resources handed in."""
    need_gold = cost[GOLD]
    if have[GOLD] < need_gold:
        return ()
    spare = have[GOLD] - need_gold
    out: list[tuple[int, ...]] = []

    def rec(r: int, gold_used: int, acc: list[int]) -> None:
        if r == GOLD:
            out.append(tuple(acc) + (need_gold + gold_used,))
            return
        need = cost[r]
        for own in range(min(need, have[r]), -1, -1):
            g = need - own
            if gold_used + g > spare:
                break
            rec(r + 1, gold_used + g, acc + [own])

    rec(0, 0, [])
    return tuple(out)


def hand_in(p: Player, pay: tuple[int, ...]) -> None:
    """Pay resources (a 5-tuple) from the player's stores."""
    res = p.res
    for r in range(N_RESOURCES):
        res[r] -= pay[r]


def gain(state: State, seat: int, g: Goods) -> None:
    """Production: gain resources, coins and points; 'Limite de stockage': a resource over 3 is
    not taken, its sale price is gained instead."""
    p = state.players[seat]
    r = state.rules
    for i in range(N_RESOURCES):
        k = g[i]
        if k:
            room = r.limit - p.res[i]
            take = k if k <= room else max(room, 0)
            p.res[i] += take
            p.coins += (k - take) * r.sell[i]
    p.coins += g[COINS]
    p.points += g[POINTS]


@lru_cache(maxsize=65536)
def _sell_buy_moves(r: Rules, res: tuple[int, ...], coins: int, economy: int) -> tuple:
    out: list[moves.Sell | moves.Buy] = [moves.sell(i) for i in range(N_RESOURCES) if res[i]]
    for i in range(N_RESOURCES):
        price = _buy_price(r, economy, i)
        if price and coins >= price and res[i] < r.limit:
            out.append(moves.buy(i))
    return tuple(out)


def _buy_price(r: Rules, scholars: int, res: int) -> int:
    if res in (WOOD, WHEAT):
        return BASIC_ECONOMY_PRICE if scholars & SCHOLAR_BIT["basic_economy"] else r.buy[res]
    if res in (SUGAR, GEM) and scholars & SCHOLAR_BIT["advanced_economy"]:
        return ADVANCED_ECONOMY_PRICE
    return r.buy[res]


def sell_buy_moves(state: State, p: Player) -> list:
    """Sell/buy free actions, also offered inside your own paying decisions (exchange, ship,
    religion, monk): 'Actions gratuites' example — Anna buys a wheat to pay a ship."""
    return list(_sell_buy_moves(state.rules, tuple(p.res), min(p.coins, MAX_BUY_PRICE), p.scholars & SCHOLAR_ECONOMY))


def buy_price(r: Rules, p: Player, res: int) -> int:
    """Acheter: 3 coins for wood or wheat; Basic economy 2; Advanced economy: sugar/gem for 3."""
    return _buy_price(r, p.scholars, res)
