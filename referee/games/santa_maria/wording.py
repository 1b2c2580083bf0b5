"""The words of Santa Maria's public events, as the rulebook names things: goods counted in
wood, wheat, sugar, gems, gold, coins and points; the four docks by their symbol (top to bottom
on the board: coins, religion, conquistador, points); the retreat spaces by their action; the
monk spaces by their Scholar, Bishop or Missionary camp; every number 1-based as the board
prints it. Texts only: the events' kinds and data stay the machine-readable part."""
from __future__ import annotations

from collections.abc import Sequence

from .catalog import GOODS_NAMES, Rules

_PLURAL = {"wood": "wood", "wheat": "wheat", "sugar": "sugar", "gem": "gems", "gold": "gold",
           "coins": "coins", "points": "points"}
_SINGULAR = {"coins": "coin", "points": "point"}
_ACTIONS = {"coins": "gain coins", "religion": "a Religion action",
            "conquistador": "a Conquistador action", "ship": "a Ship action",
            "road": "a road tile"}


def goods_text(g: Sequence[int]) -> str:
    """``(1, 0, 1, 0, 0)`` -> "1 wood and 1 sugar"; a 7-tuple adds coins and points."""
    parts = []
    for name, n in zip(GOODS_NAMES, g):
        if n:
            word = _SINGULAR.get(name, name) if n == 1 else _PLURAL[name]
            parts.append(f"{n} {word}")
    if not parts:
        return "nothing"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def coins_text(n: int) -> str:
    return "1 coin" if n == 1 else f"{n} coins"


def dock_name(rules: Rules, slot: int) -> str:
    """Dock ``slot`` (0-based) by its symbol, e.g. "the Religion dock"."""
    return f"the {rules.docks[slot][0].capitalize()} dock"


def retreat_name(rules: Rules, space: int) -> str:
    """Retreat space ``space`` (0-based) by its number on the board and its action."""
    action, g = rules.retreat[space]
    what = "gain " + goods_text(g) if action == "coins" and any(g) else _ACTIONS.get(action, action)
    return f"space {space + 1} ({what})"


def scholar_name(tile: str) -> str:
    return tile.replace("_", " ").capitalize()


def monk_space_name(rules: Rules, monk_tiles: Sequence[str], space: int) -> str:
    """A monk space (0-based, Scholars, then Bishops, then Missionary camps) by its tile."""
    ns, nb = rules.scholars_drawn, rules.bishops_drawn
    if space < ns:
        return f"the {scholar_name(monk_tiles[space])} Scholar"
    if space < ns + nb:
        return f"the {scholar_name(monk_tiles[space])} Bishop"
    camp = space - ns - nb
    return f"Missionary camp {camp + 1} ({goods_text(rules.camps[camp])})"


def display_slot_name(rules: Rules, slot: int) -> str:
    """A development tile of the display by its row (doubles, then triples) and place, 1-based."""
    if slot < rules.display_doubles:
        return f"double development tile {slot + 1}"
    return f"triple development tile {slot - rules.display_doubles + 1}"
