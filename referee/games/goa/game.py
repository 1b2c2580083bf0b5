"""Goa as a referee game: options, component sheets, proto mapping; rules in rules.py."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from referee.core.components import (
    ComponentSheet,
    derived,
    exactly,
    int_at_least,
    is_int,
    load_sheet_file,
    parse_sheet,
)
from referee.core.contract import (
    BadOptions,
    Decision,
    Event,
    Game,
    GameSpec,
    MalformedMove,
    OptionSpec,
    Result,
    competition_ranks,
)
from referee.core.rng import Rng
from referee.v1 import goa_pb2 as pb

from . import moves as mv
from . import rules as R
from .view import build_view

COMPONENTS_DIR = Path(__file__).parent / "components"
SHEETS = {"2012": COMPONENTS_DIR / "goa-2012.json", "2004": COMPONENTS_DIR / "goa-2004.json"}

SPEC = GameSpec(
    name="goa",
    title="Goa (Rüdiger Dorn): 2012 'A New Expedition' or the 2004 original",
    min_seats=2,
    max_seats=4,
    rulebook="shared/rules/goa-2012-en.txt (2012), goa-2012-fr.txt, goa-2004-fr.txt (2004)",
    options=(
        OptionSpec("edition", "enum", "2012",
                   "2012: Goa - A New Expedition (Z-Man); 2004: the original (Hans im Glück): "
                   "2 tiles removed, tiger + 7 ducats, the auctioneer outbids and pays the bank, "
                   "Duty 4 VP, Ducats tile 4, 5 symbols x 6; each edition has its own sheet",
                   choices=("2012", "2004")),
        OptionSpec("quick_starter", "bool", False,
                   "variant Quick starter: before round 1 each seat, from the first player, "
                   "moves 2 markers to row 2 or takes 10 ducats"),
        OptionSpec("colony_card_timing", "enum", "after",
                   "when the Expedition card 'reveal 3 cards instead of 2' (Found a colony) is "
                   "played: after: once the 2 cards are revealed (2012 rule); before: with the "
                   "Found a colony action, before revealing (2004: the players agree)",
                   choices=("after", "before")),
        OptionSpec("hand_limit", "enum", "expedition",
                   "expedition: the Expedition hand limit binds only while doing the Expedition "
                   "action (2012 and 2004 rulebooks); always: never above it, even for a moment "
                   "(reported Rio Grande 2nd printing of 2004): extra cards are discarded at once",
                   choices=("expedition", "always")),
        OptionSpec("bonanza", "bool", False,
                   "variant Bonanza (2012 only): a face-down Bonanza tile under each corner tile, "
                   "taken with it"),
    ),
)


# ---------------------------------------------------------------------------- sheet schema


def _int_list(length: int | None = None, lo: int = 0):
    def check(v):
        if not isinstance(v, list) or not v or not all(is_int(x, lo) for x in v):
            return f"expected a list of integers >= {lo}"
        if length is not None and len(v) != length:
            return f"expected {length} integers"
        return None
    return check


def _spice_list(length: int):
    def check(v):
        if not isinstance(v, list) or len(v) != length or any(s not in R.SPICES for s in v):
            return f"expected a list of {length} spice names ({', '.join(R.SPICES)})"
        return None
    return check


def _pair(v):
    if isinstance(v, list) and len(v) == 2 and all(s in R.SPICES for s in v) and v[0] != v[1]:
        return None
    return "expected two different spice names"


def _exped_cell(v):
    if isinstance(v, list) and len(v) == 2 and is_int(v[0], 0) and is_int(v[1], 1):
        return None
    return "expected [cards drawn, hand limit]"


def _keys(spec: dict[str, Any]):
    """An object with exactly these keys; each value checked by an int lower bound or a list."""
    def check(v):
        if not isinstance(v, dict) or set(v) != set(spec):
            return f"expected an object with keys {', '.join(sorted(spec))}"
        for k, want in spec.items():
            if isinstance(want, int) and not is_int(v[k], want):
                return f"{k}: expected an integer >= {want}"
            if callable(want):
                problem = want(v[k])
                if problem:
                    return f"{k}: {problem}"
        return None
    return check


def _colony(v):
    return _keys({"colonists": 1, "fields": 1, "tiles": 1})(v)


def _card(v):
    if not isinstance(v, dict) or v.get("effect") not in R.CARD_EFFECTS:
        return f"expected an object with an effect among {', '.join(R.CARD_EFFECTS)}"
    if not is_int(v.get("colonists"), 0) or not isinstance(v.get("symbol"), str):
        return "expected colonists (integer) and symbol (name)"
    if v["effect"] == "progress_ducats" and not is_int(v.get("price"), 0):
        return "a progress_ducats card needs its price"
    return None


def _tiles(v):
    if not isinstance(v, list) or not v:
        return "expected a list of tiles"
    for t in v:
        if not isinstance(t, dict) or t.get("type") not in R.TILE_TYPES:
            return f"bad tile {t!r}: type must be one of {', '.join(R.TILE_TYPES)}"
        if not isinstance(t.get("name"), str) or not is_int(t.get("count"), 1):
            return f"bad tile {t!r}: needs a name and a count >= 1"
        if t["type"] == "plantation" and (t.get("spice") not in R.SPICES or not is_int(t.get("fields"), 1)):
            return f"bad plantation {t!r}: needs a spice and fields"
        if t["type"] == "crop_rotation" and not is_int(t.get("fields"), 1):
            return f"bad tile {t!r}: needs fields"
    return None


def _bonanza(v):
    if not isinstance(v, list):
        return "expected a list of bonus objects"
    for b in v:
        if not isinstance(b, dict) or not b or set(b) - set(R.BONANZA_KEYS) or not all(is_int(x) for x in b.values()):
            return f"bad Bonanza tile {b!r}: keys among {', '.join(R.BONANZA_KEYS)}"
    return None


def _symbols(v):
    if isinstance(v, list) and v and all(isinstance(s, str) for s in v) and len(set(v)) == len(v):
        return None
    return "expected distinct symbol names"


SHEET_SCHEMA: dict[str, Any] = {
    "edition": lambda v: None if v in ("2012", "2004") else "expected \"2012\" or \"2004\"",
    "spices": exactly(list(R.SPICES)),
    "columns": exactly(list(R.COLUMNS)),
    "row_vp": _int_list(5),
    "colony_vp": _int_list(4),
    "expedition_symbols": _symbols,
    "expedition_set_vp": _int_list(),
    "card_effects": _keys({"ships": 0, "colonists": 0, "ducats": 0, "spices": 0, "sell_max": 0,
                           "sell_price": 0}),
    "start": _keys({"ships": 0, "colonists": 0, "first_ducats": 0, "other_ducats": 0,
                    "first_symbol": lambda s: None if isinstance(s, str) else "a symbol name"}),
    "tiles_removed": int_at_least(0),
    "max_plantations_removed": int_at_least(0),
    "scoring": _keys({"most_ducats_vp": 0, "single_plantation_vp": 0, "crop_rotation_vp": 0}),
    "limits": _keys({"plantations": 1, "extra_action_cards": 0, "expedition_cards": 1,
                     "rounds_per_phase": 1, "actions_per_round": 1, "keep_extra_action_cards": 0}),
    "progress_bonus": _keys({"first_to_rows": _int_list(lo=2), "cards": 0,
                             "all_markers_rows": _int_list(lo=2), "extra_action_cards": 0}),
    "tiles_A": _tiles,
    "tiles_B": _tiles,
    "bonanza": _bonanza,
}
for _col in R.COLUMNS:
    for _r in range(1, 6):
        SHEET_SCHEMA[f"yield.{_col}.{_r}"] = _exped_cell if _col == "expedition" else int_at_least(0)
    for _s in range(1, 5):
        SHEET_SCHEMA[f"cost.{_col}.{_s}"] = _spice_list(_s)
for _name in R.COLONIES:
    SHEET_SCHEMA[f"colony.{_name}"] = _colony
for _name in ("quilon", "madras"):
    for _k in range(1, 6):
        SHEET_SCHEMA[f"colony_tile.{_name}.{_k}"] = _pair
for _k in range(1, 31):
    SHEET_SCHEMA[f"card.{_k:02d}"] = _card


def _check_consistency(sheet: ComponentSheet) -> ComponentSheet:
    v = sheet.values
    name = sheet.name
    symbols = v["expedition_symbols"]
    for k in range(1, 31):
        if v[f"card.{k:02d}"]["symbol"] not in symbols:
            raise ValueError(f"{name}: card.{k:02d} has a symbol not in expedition_symbols")
    if v["start"]["first_symbol"] not in symbols:
        raise ValueError(f"{name}: start.first_symbol is not an Expedition symbol")
    for phase in ("A", "B"):
        total = sum(t["count"] for t in v[f"tiles_{phase}"])
        if total - v["tiles_removed"] < 25:
            raise ValueError(f"{name}: {total} {phase} tiles leave fewer than 25 after set-up")
    for colony in ("quilon", "madras"):
        if v[f"colony.{colony}"]["tiles"] != 5:
            raise ValueError(f"{name}: colony.{colony} must have 5 tiles (one colony_tile entry each)")
    if len(v["expedition_set_vp"]) < v["limits"]["expedition_cards"] // len(symbols):
        raise ValueError(f"{name}: expedition_set_vp must cover every set size")
    return sheet


class GoaGame(Game[R.State, mv.Move]):
    spec = SPEC
    move_message = pb.Move
    view_message = pb.View

    def __init__(self) -> None:
        self._defaults: dict[str, ComponentSheet] = {}

    # ---- components
    def default_components(self, options: Mapping[str, Any]) -> ComponentSheet:
        edition = options.get("edition", "2012")
        sheet = self._defaults.get(edition)
        if sheet is None:
            sheet = self._defaults[edition] = self.load_components(str(SHEETS[edition]))
        return sheet

    def load_components(self, path: str) -> ComponentSheet:
        return _check_consistency(load_sheet_file(path, game="goa", required=SHEET_SCHEMA))

    def sheet_variant(self, options: Mapping[str, Any]) -> str:
        return options.get("edition", "2012")

    def sheet_variant_of(self, sheet: ComponentSheet) -> str:
        return sheet["edition"]

    def component_sheets(self) -> dict[str, ComponentSheet]:
        return {e: self.default_components({"edition": e}) for e in SHEETS}

    def parse_components(self, document: Mapping[str, Any]) -> ComponentSheet:
        return _check_consistency(parse_sheet(document, game="goa", required=SHEET_SCHEMA))

    def rules_for(self, sheet: ComponentSheet) -> R.Rules:
        return derived(sheet, R.Rules.from_sheet)

    # ---- rules
    def setup(self, options, seat_count, rng: Rng, components: ComponentSheet) -> R.State:
        options = dict(options)
        for o in SPEC.options:
            options.setdefault(o.name, o.default)
        rules = self.rules_for(components)
        if rules.edition != options["edition"]:
            raise BadOptions(f"edition {options['edition']} with the {components.name} sheet")
        if options["bonanza"] and options["edition"] != "2012":
            raise BadOptions("the Bonanza variant belongs to the 2012 edition")
        state, _ = R.setup(options, seat_count, rng, rules)
        return state

    def decision(self, state: R.State) -> Decision | None:
        return R.decision(state)

    def apply(self, state: R.State, seat: int, move: mv.Move) -> list[Event]:
        return R.apply(state, seat, move)

    def view(self, state: R.State, seat: int | None) -> pb.View:
        return build_view(state, seat)

    def result(self, state: R.State) -> Result | None:
        if state.phase != R.OVER:
            return None
        keys = [(f["total"], f["ducats"]) for f in state.final]
        ranks = competition_ranks(keys)
        best = max(keys)
        return Result(
            scores=[f["total"] for f in state.final],
            ranks=ranks,
            winners=[s for s in range(state.n) if keys[s] == best],
            details=[dict(f) for f in state.final],
            summary="final scoring after round 8 (ties: most ducats)",
        )

    def default_move(self, state: R.State, decision: Decision) -> mv.Move:
        return R.default_move(state, decision)

    def hash_state(self, state: R.State) -> str:
        return R.state_digest(state)

    def seat_count(self, state: R.State) -> int:
        return state.n

    # ---- proto mapping
    def move_to_proto(self, move: mv.Move) -> pb.Move:
        return _to_proto(move)

    def move_from_proto(self, message: Message) -> mv.Move:
        return _from_proto(message)


def _cell(cell: int) -> pb.Cell:
    r, c = R.rc_of(cell)
    return pb.Cell(row=r, col=c)


def _to_proto(m) -> pb.Move:
    t = type(m)
    if t is mv.QuickDucats:
        return pb.Move(quick_ducats=pb.QuickDucats())
    if t is mv.QuickAdvance:
        return pb.Move(quick_advance=pb.QuickAdvance(first=m.first + 1, second=m.second + 1))
    if t is mv.PlaceFlag:
        return pb.Move(place_flag=pb.PlaceFlag(cell=_cell(m.cell)))
    if t is mv.PlaceToken:
        return pb.Move(place_token=pb.PlaceToken(cell=_cell(m.cell)))
    if t is mv.Bid:
        return pb.Move(bid=pb.Bid(amount=m.amount))
    if t is mv.Progress:
        return pb.Move(progress=pb.Progress(column=m.column + 1, card=m.card + 1))
    if t is mv.Harvest:
        return pb.Move(harvest=pb.Harvest(card=m.card + 1))
    if t is mv.FoundColony:
        return pb.Move(found_colony=pb.FoundColony(colony=m.colony + 1, card=m.card + 1))
    if t is mv.Espionage:
        return pb.Move(espionage=pb.Espionage(opponent=m.opponent))
    if t is mv.PlayCard:
        return pb.Move(play_card=pb.PlayCard(card=m.card))
    if t is mv.UseTile:
        return pb.Move(use_tile=pb.UseTile(tile=m.tile))
    if t is mv.PaySpice:
        return pb.Move(pay_spice=pb.PaySpice(land=m.land, spice=m.spice + 1))
    if t is mv.PlaceSpice:
        return pb.Move(place_spice=pb.PlaceSpice(land=m.land, spice=m.spice + 1))
    if t is mv.SellSpice:
        return pb.Move(sell_spice=pb.SellSpice(land=m.land, spice=m.spice + 1))
    if t is mv.RevealMore:
        return pb.Move(reveal_more=pb.RevealMore(card=m.card))
    if t is mv.ChooseColonyTile:
        return pb.Move(choose_colony_tile=pb.ChooseColonyTile(tile=m.tile))
    if t is mv.Draw:
        return pb.Move(draw=pb.Draw(count=m.count))
    if t is mv.DiscardCard:
        return pb.Move(discard_card=pb.DiscardCard(card=m.card))
    if t is mv.ChooseColumn:
        return pb.Move(choose_column=pb.ChooseColumn(column=m.column + 1))
    if t is mv.ChooseResource:
        return pb.Move(choose_resource=pb.ChooseResource(kind=m.kind + 1))
    if t is mv.DiscardPlantation:
        return pb.Move(discard_plantation=pb.DiscardPlantation(land=m.land))
    if t is mv.TakeFavor:
        return pb.Move(take_favor=pb.TakeFavor(tile=m.tile))
    if t is mv.SwapTake:
        return pb.Move(swap_take=pb.SwapTake(cell=_cell(m.cell)))
    name = _SINGLETON_FIELDS.get(t)
    if name is None:
        raise TypeError(f"not a Goa move: {m!r}")
    msg = pb.Move()
    getattr(msg, name).SetInParent()
    return msg


_SINGLETONS = {
    "quick_ducats": mv.QUICK_DUCATS, "pass": mv.PASS, "keep_lot": mv.KEEP_LOT,
    "build_ships": mv.BUILD_SHIPS, "taxes": mv.TAXES, "expedition": mv.EXPEDITION,
    "end_turn": mv.END_TURN, "take_ship": mv.TAKE_SHIP, "take_colonist": mv.TAKE_COLONIST,
    "done": mv.DONE, "recruit": mv.RECRUIT, "decline": mv.DECLINE,
    "play_extra_action": mv.PLAY_EXTRA, "pass_extra_action": mv.PASS_EXTRA,
}
_SINGLETON_FIELDS = {type(m): name for name, m in _SINGLETONS.items()}


def _in(value: int, lo: int, hi: int, what: str) -> int:
    if not lo <= value <= hi:
        raise MalformedMove(f"{what} must be within [{lo}, {hi}], not {value}")
    return value


def _cell_from(c: pb.Cell, what: str) -> int:
    r = _in(c.row, -1, 5, f"{what}.row")
    col = _in(c.col, -1, 5, f"{what}.col")
    return R.cell_of(r, col)


def _from_proto(message: Message):
    if not isinstance(message, pb.Move):
        raise MalformedMove("not a goa.Move")
    kind = message.WhichOneof("kind")
    if kind is None:
        raise MalformedMove("empty goa.Move: set exactly one kind")
    single = _SINGLETONS.get(kind)
    if single is not None:
        return single
    m = getattr(message, kind)
    if kind == "quick_advance":
        a = _in(m.first, 1, 5, "quick_advance.first") - 1
        b = _in(m.second, 1, 5, "quick_advance.second") - 1
        return mv.QUICK_ADVANCE.get((a, b)) or mv.QuickAdvance(a, b)
    if kind == "place_flag":
        return mv.PLACE_FLAG[_cell_from(m.cell, "place_flag.cell")]
    if kind == "place_token":
        return mv.PLACE_TOKEN[_cell_from(m.cell, "place_token.cell")]
    if kind == "swap_take":
        return mv.SWAP_TAKE[_cell_from(m.cell, "swap_take.cell")]
    if kind == "bid":
        return mv.bid(_in(m.amount, 0, 100_000, "bid.amount"))
    if kind == "progress":
        return mv.progress(_in(m.column, 1, 5, "progress.column") - 1, _in(m.card, 0, 10_000, "progress.card") - 1)
    if kind == "harvest":
        return mv.harvest(_in(m.card, 0, 10_000, "harvest.card") - 1)
    if kind == "found_colony":
        return mv.found_colony(_in(m.colony, 1, 4, "found_colony.colony") - 1,
                               _in(m.card, 0, 10_000, "found_colony.card") - 1)
    if kind == "espionage":
        return mv.ESPIONAGE[_in(m.opponent, 0, 3, "espionage.opponent")]
    if kind == "play_card":
        return mv.play_card(_in(m.card, 0, 10_000, "play_card.card"))
    if kind == "use_tile":
        return mv.use_tile(_in(m.tile, 0, 10_000, "use_tile.tile"))
    if kind in ("pay_spice", "place_spice", "sell_spice"):
        land = _in(m.land, 0, mv.MAX_LANDS - 1, f"{kind}.land")
        spice = _in(m.spice, 1, 5, f"{kind}.spice") - 1
        table = {"pay_spice": mv.PAY_SPICE, "place_spice": mv.PLACE_SPICE, "sell_spice": mv.SELL_SPICE}[kind]
        return table[land][spice]
    if kind == "reveal_more":
        return mv.reveal_more(_in(m.card, 0, 10_000, "reveal_more.card"))
    if kind == "choose_colony_tile":
        return mv.choose_colony_tile(_in(m.tile, 0, 10_000, "choose_colony_tile.tile"))
    if kind == "draw":
        return mv.draw(_in(m.count, 0, 100, "draw.count"))
    if kind == "discard_card":
        return mv.discard_card(_in(m.card, 0, 10_000, "discard_card.card"))
    if kind == "choose_column":
        return mv.CHOOSE_COLUMN[_in(m.column, 1, 5, "choose_column.column") - 1]
    if kind == "choose_resource":
        return mv.CHOOSE_RESOURCE[_in(m.kind, 1, 3, "choose_resource.kind") - 1]
    if kind == "discard_plantation":
        return mv.DISCARD_PLANTATION[_in(m.land, 0, mv.MAX_LANDS - 1, "discard_plantation.land")]
    if kind == "take_favor":
        return mv.take_favor(_in(m.tile, 0, 10_000, "take_favor.tile"))
    raise MalformedMove(f"unknown goa move kind {kind}")
