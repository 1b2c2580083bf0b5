"""How Santa Maria's View and Moves read as text (``referee.core.text`` walks them with this
table), in the rulebook's words: goods in wood, wheat, sugar, gems, gold, coins and points; colony
cells as (row, column) with row = blue die and column = white die, 1-based as printed; docks by
their symbol, retreat spaces by their action, monk spaces by their Scholar, Bishop or Missionary
camp. A colony reads one line per row, each building with what it does. Every function here reads
only the message it is given (and, for a move, the view it was offered with), so a text says
what its view says and nothing else."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from referee.core.texttable import Field, Kind, TextTable, words
from referee.v1 import santa_maria_pb2 as pb

from .wording import goods_text, scholar_name

RULES = "Santa Maria, French rules"
TURN = f"{RULES}, « La partie peut commencer ! »"
EXPAND = f"{RULES}, « A) Agrandir sa Colonie »"
ACTIVATE = f"{RULES}, « B) Activer un de ses Bâtiments »"
DIE = f"{RULES}, « C) Activer une rangée/colonne »"
RETREAT = f"{RULES}, « D) Se retirer de la manche en cours »"
BUILDINGS = f"{RULES}, « Activation des Bâtiments »"
FREE = f"{RULES}, « Actions gratuites »"
SCHOLARS = f"{RULES}, « Tuiles Savant »"
SETUP = f"{RULES}, « Mise en place des colonies »"
ADVANCED = f"{RULES}, « Règles avancées pour la mise en place des colonies »"

_GOODS = ("wood", "wheat", "sugar", "gem", "gold", "coins", "points")


def goods(g: Any, _: Message | None = None) -> str:
    return goods_text([getattr(g, n) for n in _GOODS])


def points(n: int) -> str:
    return "1 point" if n == 1 else f"{n} points"


def resource(n: int) -> str:
    return pb.Resource.Name(n).lower() if n else "none"


def seat(n: int) -> str:
    return "nobody" if n < 0 else f"seat {n}"


def effect(e: Any) -> str:
    if e.kind == pb.PRODUCE:
        return f"+{goods(e.gain)}"
    if e.kind == pb.EXCHANGE:
        return "exchange " + " or ".join(f"{goods(o.pay)} for {goods(o.gain)}" for o in e.options)
    return {pb.SHIP: "ship action", pb.CONQUISTADOR: "conquistador +1",
            pb.RELIGION: "religion action"}.get(e.kind, "nothing")


def content(c: Any) -> str:
    out = words(pb.Terrain.Name(c.terrain)) if c.terrain else "empty"
    if c.effects:
        out += " [" + ", ".join(effect(e) for e in c.effects) + "]"
    if c.colonists:
        out += f" {c.colonists} colonist{'s' if c.colonists > 1 else ''}"
    if c.end_points:
        out += f" {points(c.end_points)} at the end"
    return out


def cell(c: Any) -> str:
    out = f"({c.row},{c.col}) {content(c.content)}"
    if c.die:
        out += f" {pb.DieColor.Name(c.die).lower()} die on it"
    if c.coins:
        out += f" {c.coins} coins on it"
    return out


def colony(cells: Sequence[Any], _: Message | None = None) -> str:
    """A colony row by row (only its non-empty cells)."""
    rows: dict[int, list[str]] = {}
    for c in cells:
        rows.setdefault(c.row, []).append(cell(c))
    return "\n".join(f"row {r}: " + "; ".join(rows[r]) for r in sorted(rows))


def tile_cells(cells: Sequence[Any]) -> str:
    return "; ".join(f"({t.dr},{t.dc}) {content(t.content)}" for t in cells)


def development(t: Any) -> str:
    if not t.present:
        return "taken"
    size = "triple" if t.triple else "double"
    return f"{size}, cost {goods(t.cost)}: {tile_cells(t.cells)}"


def display(tiles: Sequence[Any], _: Message) -> str:
    return "\n".join(f"slot {i}: {development(t)}" for i, t in enumerate(tiles))


def ship(s: Any) -> str:
    return f"ship costing {goods(s.cost)}, {points(s.points)}"


def ship_slot(s: Any) -> str:
    return f"dock {s.dock + 1}: " + (ship(s.ship) if s.present else "empty")


def dock(d: Any) -> str:
    gain = f" ({goods(d.gain)} per ship)" if any(getattr(d.gain, n) for n in _GOODS) else ""
    return f"dock {d.dock + 1} {d.bonus}{gain}"


def port(p: Any) -> str:
    out = "ships per dock " + "/".join(map(str, p.ships_per_dock))
    if p.own_ships:
        out += "; own ships: " + ", ".join(f"dock {s.dock + 1} {ship(s.ship)}" for s in p.own_ships)
    return out


def monk_space(m: Any) -> str:
    if m.kind == "camp":
        what = f"Missionary camp ({goods(m.reward)})"
    else:
        pts = f", {points(m.points)}" if m.points else ""
        what = f"{scholar_name(m.tile)} {'Scholar' if m.kind == 'scholar' else 'Bishop'}{pts}"
    monks = f": monks of {', '.join(seat(s) for s in m.monks)}" if m.monks else ""
    return f"space {m.space}: {what}{monks}"


def retreat_space(r: Any) -> str:
    what = f"gain {goods(r.gain)}" if r.action == "coins" else r.action
    return f"space {r.space} ({what}): {'free' if r.occupant < 0 else seat(r.occupant)}"


def track(t: Any) -> str:
    out = f"length {t.length}"
    for name, xs in (("monk symbols at", t.monk_symbols), ("gold at", t.gold_symbols),
                     ("trees at", t.trees)):
        if xs:
            out += f"; {name} {', '.join(map(str, xs))}"
    return out


def lot(lt: Any) -> str:
    state = " (taken)" if lt.taken else ""
    return f"lot {lt.lot}{state}: {scholar_name(lt.scholar)} Scholar; town hall {tile_cells(lt.town_hall)}"


def colony_board(b: Any) -> str:
    state = " (taken)" if b.taken else ""
    return f"board {b.board} {b.id}{state}: {colony(b.cells).replace(chr(10), ' / ')}"


def final(f: Any) -> str:
    extra = f"; achievements {', '.join(f.achievements)}" if f.achievements else ""
    return (f"seat {f.seat}: {f.total} points (during the game {f.during_game}, coins {f.coins}, "
            f"colonists {f.colonists}, Scholars {f.scholars}, Bishops {f.bishops}, port {f.port}, "
            f"ships {f.ships}, buildings {f.buildings}{extra})")


def pending(p: Any) -> str:
    out = p.kind
    if p.kind.endswith("exchange"):
        out += f" at ({p.row},{p.col}): " + " or ".join(
            f"option {i}: {goods(o.pay)} for {goods(o.gain)}" for i, o in enumerate(p.options))
        if p.second:
            out += " (second exchange)"
    if p.tile:
        out += f"; the tile: {tile_cells(p.tile)}"
    if p.kind.endswith("astronomy"):
        out += f"; the ship is at dock {p.dock + 1}"
    if p.queue:
        out += "; queued steps " + ", ".join(
            f"{q.tag}({','.join(map(str, q.args))})" for q in p.queue)
    return out


def heading(view: Message) -> str:
    v: Any = view
    who = "a spectator" if v.seat < 0 else f"seat {v.seat}"
    turn = f"; seat {v.current_seat} to act" if v.current_seat >= 0 else ""
    variants = [n for n, on in (("advanced set-up", v.advanced),
                                ("shared blue dice", v.shared_blue_dice_variant)) if on]
    var = f" ({', '.join(variants)})" if variants else ""
    done = " (main action done)" if v.main_action_done else ""
    return (f"Santa Maria{var}, {v.seat_count} players, year {v.year} of 3, phase: "
            f"{words(pb.Phase.Name(v.phase))}{turn}{done}; first player seat {v.first_player}. "
            f"You are {who}.")


# ---- moves: cells and slots named by what the view shows there

def _me(view: Any) -> Any:
    return next((p for p in view.players if p.seat == view.seat), None) if view else None


def _building(row: int, col: int, view: Any) -> str:
    me = _me(view)
    found = next((c for c in me.colony if c.row == row and c.col == col), None) if me else None
    return f"({row},{col}) {content(found.content)}" if found is not None else f"({row},{col})"


def _paid(m: Any) -> str:
    return f", paying {goods(m.pay)}" if any(getattr(m.pay, n) for n in _GOODS) else ""


def _expand(m: Any, v: Any) -> str:
    t = v.display[m.slot] if v is not None and m.slot < len(v.display) else None
    what = f" ({development(t)})" if t is not None and t.present else ""
    return f"buy development tile {m.slot}{what}{_paid(m)}"


def _use_die(m: Any, _: Any) -> str:
    line = "row" if m.line == pb.ROW else "column"
    how = (f"hand in 1 {resource(m.botany)} (Botany)" if m.botany
           else f"{abs(m.target - m.face)} coins" if m.target != m.face else "free")
    return (f"take a {pb.DieColor.Name(m.color).lower()} {m.face}, turn it to {m.target} ({how}) "
            f"and activate {line} {m.target}")


def _exchange(m: Any, v: Any) -> str:
    opts = v.pending.options if v is not None else ()
    o = opts[m.option] if m.option < len(opts) else None
    what = f" ({goods(o.pay)} for {goods(o.gain)})" if o is not None else ""
    return f"exchange option {m.option}{what}{_paid(m)}"


def _ship(m: Any, v: Any) -> str:
    slots = v.ship_slots if v is not None else ()
    s = slots[m.slot] if m.slot < len(slots) else None
    what = f" ({ship(s.ship)})" if s is not None and s.present else ""
    return f"take the ship at dock {m.slot + 1}{what}{_paid(m)}"


def _monk(m: Any, v: Any) -> str:
    spaces = v.monk_spaces if v is not None else ()
    s = next((x for x in spaces if x.space == m.space), None)
    return f"recruit a monk onto {monk_space(s) if s is not None else f'space {m.space}'}"


def _retreat(m: Any, v: Any) -> str:
    spaces = v.retreat_spaces if v is not None else ()
    s = next((x for x in spaces if x.space == m.space), None)
    what = retreat_space(s).split(":")[0] if s is not None else f"space {m.space}"
    return f"retreat to {what} (no more turns this year)"


def _lot(m: Any, v: Any) -> str:
    lots = v.lots if v is not None else ()
    found = next((x for x in lots if x.lot == m.lot), None)
    return f"take {lot(found) if found is not None else f'lot {m.lot}'}"


_DECLINED = {"exchange": "the exchange", "ship": "the ship", "monk": "the monk",
             "road": "the road tile", "mathematics": "Mathematics (keep the coins where they are)"}


def _decline(_m: Any, v: Any) -> str:
    kind = v.pending.kind.rsplit(".", 1)[-1] if v is not None else ""
    return f"decline {_DECLINED[kind]}" if kind in _DECLINED else "decline"


_SAID = "in the heading"

TABLE = TextTable(
    heading=heading,
    fields={
        "View": {
            "pending": Field("to decide", show=lambda p, _: pending(p)),
            "players": Field("players"),
            "white_dice": Field("white dice (common pool)",
                                show=lambda ds, _: ", ".join(map(str, ds))),
            "shared_blue_dice": Field("blue dice (common pool)",
                                      show=lambda ds, _: ", ".join(map(str, ds))),
            "display": Field("development tiles (slots 0-4 doubles, 5-9 triples; cells as "
                             "(row offset, column offset) before rotation)", show=display),
            "doubles_left": Field("double tiles left"),
            "triples_left": Field("triple tiles left"),
            "ship_slots": Field("ships on offer",
                                show=lambda ss, _: "; ".join(ship_slot(s) for s in ss)),
            "ships_left": Field("ships left"),
            "docks": Field("docks", show=lambda ds, _: "; ".join(dock(d) for d in ds)),
            "monk_spaces": Field("monk spaces"),
            "retreat_spaces": Field("retreat spaces",
                                    show=lambda rs, _: "; ".join(retreat_space(r) for r in rs)),
            "road_tiles_left": Field("road tiles left"),
            "religion_track": Field("religion track"),
            "conquistador_track": Field("conquistador track"),
            "conquistador_points": Field("conquistador points this year (1st first)",
                                         show=lambda ps, _: "/".join(map(str, ps))),
            "lots": Field("lots"),
            "colony_boards": Field("colony boards"),
            "final": Field("final scores"),
            "seat": Field(skip=True, why=_SAID),
            "seat_count": Field(skip=True, why=_SAID),
            "phase": Field(skip=True, why=_SAID),
            "year": Field(skip=True, why=_SAID),
            "first_player": Field(skip=True, why=_SAID),
            "current_seat": Field(skip=True, why=_SAID),
            "main_action_done": Field(skip=True, why=_SAID),
            "shared_blue_dice_variant": Field(skip=True, why=_SAID),
            "advanced": Field(skip=True, why=_SAID),
        },
        "PlayerPublic": {
            "seat": Field("", show=lambda s, _: f"seat {s}:"),
            "coins": Field("", show=lambda n, _: f"{n} coins"),
            "resources": Field("resources", show=goods),
            "points": Field("", show=lambda n, _: points(n)),
            "religion": Field("religion track"),
            "conquistador": Field("conquistador track"),
            "conquistador_rank": Field("conquistador rank", hide_zero=True),
            "blue_dice": Field("blue dice", show=lambda ds, _: ", ".join(map(str, ds))),
            "blue_unlocked": Field("blue dice unlocked"),
            "blue_used": Field("blue used"),
            "white_used": Field("white used"),
            "white_limit": Field("white limit"),
            "activation_cost": Field("next activation costs"),
            "monks_left": Field("monks left"),
            "retreat_space": Field("", show=lambda s, _: "on the market square" if s < 0
                                   else f"retreated to space {s}"),
            "scholars": Field("Scholars", show=lambda ss, _: ", ".join(scholar_name(s) for s in ss)),
            "own_scholar": Field("own Scholar", show=lambda s, _: scholar_name(s)),
            "port": Field("port", show=lambda p, _: port(p)),
            "colony_board": Field("colony board"),
            "colony": Field("colony", show=colony),
        },
    },
    phrases={
        "Goods": goods,
        "Cell": cell,
        "CellContent": content,
        "Effect": effect,
        "ExchangeOption": lambda o: f"{goods(o.pay)} for {goods(o.gain)}",
        "TileCell": lambda t: tile_cells([t]),
        "DevelopmentTile": development,
        "ShipTile": ship,
        "ShipSlot": ship_slot,
        "Dock": dock,
        "Port": port,
        "PortShip": lambda s: f"dock {s.dock + 1} {ship(s.ship)}",
        "MonkSpace": monk_space,
        "RetreatSpace": retreat_space,
        "Track": track,
        "Lot": lot,
        "ColonyBoard": colony_board,
        "Pending": pending,
        "QueuedStep": lambda q: f"{q.tag}({','.join(map(str, q.args))})",
        "FinalScore": final,
    },
    enums={
        "Line": {"ROW": "row", "COLUMN": "column"},
    },
    moves={
        "choose_board": Kind("take colony board {board}", SETUP),
        "draft_lot": Kind(_lot, ADVANCED),
        "expand": Kind(_expand, EXPAND),
        "place_tile": Kind("place the tile with its cell 0 at ({row},{col}), turned {rotation} "
                           "quarter-turns clockwise", EXPAND),
        "activate_building": Kind(lambda m, v: f"activate {_building(m.row, m.col, v)}", ACTIVATE),
        "use_die": Kind(_use_die, DIE),
        "retreat": Kind(_retreat, RETREAT),
        "sell": Kind("sell 1 {resource}", FREE),
        "buy": Kind("buy 1 {resource}", FREE),
        "move_die": Kind("move the die from ({from_row},{from_col}) to ({to_row},{to_col}) for 1 "
                         "coin (Logistics)", SCHOLARS),
        "end_turn": Kind("end your turn", TURN),
        "exchange": Kind(_exchange, BUILDINGS),
        "ship": Kind(_ship, BUILDINGS),
        "shift_ship": Kind(lambda m, _: f"move the new ship to dock {m.dock + 1} (Astronomy)", SCHOLARS),
        "religion": Kind(lambda m, _: "advance 2 on the religion track" + _paid(m) if m.extra
                         else "advance 1 on the religion track", BUILDINGS),
        "recruit_monk": Kind(_monk, BUILDINGS),
        "place_die": Kind("put the die on ({row},{col}) (Construction)", SCHOLARS),
        "place_road": Kind("put a road tile on ({row},{col})", RETREAT),
        "recover_coins": Kind("take back the coins on ({row},{col}) (Mathematics)", SCHOLARS),
        "decline": Kind(_decline, BUILDINGS),
    },
)
