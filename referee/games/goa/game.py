"""Goa as a referee game: options, component sheets, result and proto mapping; the rest is the
common adapter (referee/core/adapter.py) over the rules, which live in modules by concern
(README.md) entered through ``rules`` (``setup``, ``decision``, ``apply``, ``default_move``).
States are hashed with Goa's own ``state.state_digest``."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from google.protobuf.message import Message

from referee.core.adapter import SheetGame, field_in_range
from referee.core.components import ComponentSheet
from referee.core.contract import (
    BadOptions,
    GameSpec,
    MalformedMove,
    OptionSpec,
    Result,
    competition_ranks,
)
from referee.v1 import goa_pb2 as pb

from . import moves, rules
from . import view as views
from .board import cell_of, rc_of
from .catalog import Rules
from .sheet import SHEET_SCHEMA, check_consistency
from .state import OVER, State, state_digest

COMPONENTS_DIR = Path(__file__).parent / "components"
SHEETS = {"2012": COMPONENTS_DIR / "goa-2012.json", "2004": COMPONENTS_DIR / "goa-2004.json"}

SPEC = GameSpec(
    name="goa",
    title="Goa (Rüdiger Dorn): 2012 'A New Expedition' or the 2004 original",
    min_seats=2,
    max_seats=4,
    rulebook="Goa - A New Expedition, English and French rules (Z-Man, 2012); Goa, French "
             "rules (Hans im Glück, 2004)",
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


class GoaGame(SheetGame[State, moves.Move]):
    spec = SPEC
    move_message = pb.Move
    view_message = pb.View
    sheet_schema = SHEET_SCHEMA
    default_sheets = MappingProxyType(SHEETS)
    engine = rules
    views = views

    # ---- components
    def check_sheet(self, sheet: ComponentSheet) -> None:
        check_consistency(sheet)

    def sheet_variant(self, options: Mapping[str, Any]) -> str:
        return options.get("edition", "2012")

    def sheet_variant_of(self, sheet: ComponentSheet) -> str:
        return sheet["edition"]

    # ---- rules
    def check_setup(self, options: Mapping[str, Any], rules: Rules) -> None:
        if rules.edition != options["edition"]:
            raise BadOptions(f"edition {options['edition']} with a {rules.edition}-edition sheet")
        if options["bonanza"] and options["edition"] != "2012":
            raise BadOptions("the Bonanza variant belongs to the 2012 edition")

    def result(self, state: State) -> Result | None:
        if state.phase != OVER:
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

    def hash_state(self, state: State) -> str:
        return state_digest(state)

    # ---- proto mapping
    def move_to_proto(self, move: moves.Move) -> pb.Move:
        return _to_proto(move)

    def move_from_proto(self, message: Message) -> moves.Move:
        return _from_proto(message)


def _cell(cell: int) -> pb.Cell:
    r, c = rc_of(cell)
    return pb.Cell(row=r, col=c)


def _to_proto(m) -> pb.Move:
    t = type(m)
    if t is moves.QuickDucats:
        return pb.Move(quick_ducats=pb.QuickDucats())
    if t is moves.QuickAdvance:
        return pb.Move(quick_advance=pb.QuickAdvance(first=m.first + 1, second=m.second + 1))
    if t is moves.PlaceFlag:
        return pb.Move(place_flag=pb.PlaceFlag(cell=_cell(m.cell)))
    if t is moves.PlaceToken:
        return pb.Move(place_token=pb.PlaceToken(cell=_cell(m.cell)))
    if t is moves.Bid:
        return pb.Move(bid=pb.Bid(amount=m.amount))
    if t is moves.Progress:
        return pb.Move(progress=pb.Progress(column=m.column + 1, card=m.card + 1))
    if t is moves.Harvest:
        return pb.Move(harvest=pb.Harvest(card=m.card + 1))
    if t is moves.FoundColony:
        return pb.Move(found_colony=pb.FoundColony(colony=m.colony + 1, card=m.card + 1))
    if t is moves.Espionage:
        return pb.Move(espionage=pb.Espionage(opponent=m.opponent))
    if t is moves.PlayCard:
        return pb.Move(play_card=pb.PlayCard(card=m.card))
    if t is moves.UseTile:
        return pb.Move(use_tile=pb.UseTile(tile=m.tile))
    if t is moves.PaySpice:
        return pb.Move(pay_spice=pb.PaySpice(land=m.land, spice=m.spice + 1))
    if t is moves.PlaceSpice:
        return pb.Move(place_spice=pb.PlaceSpice(land=m.land, spice=m.spice + 1))
    if t is moves.SellSpice:
        return pb.Move(sell_spice=pb.SellSpice(land=m.land, spice=m.spice + 1))
    if t is moves.RevealMore:
        return pb.Move(reveal_more=pb.RevealMore(card=m.card))
    if t is moves.ChooseColonyTile:
        return pb.Move(choose_colony_tile=pb.ChooseColonyTile(tile=m.tile))
    if t is moves.Draw:
        return pb.Move(draw=pb.Draw(count=m.count))
    if t is moves.DiscardCard:
        return pb.Move(discard_card=pb.DiscardCard(card=m.card))
    if t is moves.ChooseColumn:
        return pb.Move(choose_column=pb.ChooseColumn(column=m.column + 1))
    if t is moves.ChooseResource:
        return pb.Move(choose_resource=pb.ChooseResource(kind=m.kind + 1))
    if t is moves.DiscardPlantation:
        return pb.Move(discard_plantation=pb.DiscardPlantation(land=m.land))
    if t is moves.TakeFavor:
        return pb.Move(take_favor=pb.TakeFavor(tile=m.tile))
    if t is moves.SwapTake:
        return pb.Move(swap_take=pb.SwapTake(cell=_cell(m.cell)))
    name = _SINGLETON_FIELDS.get(t)
    if name is None:
        raise TypeError(f"not a Goa move: {m!r}")
    msg = pb.Move()
    getattr(msg, name).SetInParent()
    return msg


_SINGLETONS = {
    "quick_ducats": moves.QUICK_DUCATS, "pass": moves.PASS, "keep_lot": moves.KEEP_LOT,
    "build_ships": moves.BUILD_SHIPS, "taxes": moves.TAXES, "expedition": moves.EXPEDITION,
    "end_turn": moves.END_TURN, "take_ship": moves.TAKE_SHIP, "take_colonist": moves.TAKE_COLONIST,
    "done": moves.DONE, "recruit": moves.RECRUIT, "decline": moves.DECLINE,
    "play_extra_action": moves.PLAY_EXTRA, "pass_extra_action": moves.PASS_EXTRA,
}
_SINGLETON_FIELDS = {type(m): name for name, m in _SINGLETONS.items()}


def _cell_from(c: pb.Cell, what: str) -> int:
    r = field_in_range(c.row, -1, 5, f"{what}.row")
    col = field_in_range(c.col, -1, 5, f"{what}.col")
    return cell_of(r, col)


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
        a = field_in_range(m.first, 1, 5, "quick_advance.first") - 1
        b = field_in_range(m.second, 1, 5, "quick_advance.second") - 1
        return moves.QUICK_ADVANCE.get((a, b)) or moves.QuickAdvance(a, b)
    if kind == "place_flag":
        return moves.PLACE_FLAG[_cell_from(m.cell, "place_flag.cell")]
    if kind == "place_token":
        return moves.PLACE_TOKEN[_cell_from(m.cell, "place_token.cell")]
    if kind == "swap_take":
        return moves.SWAP_TAKE[_cell_from(m.cell, "swap_take.cell")]
    if kind == "bid":
        return moves.bid(field_in_range(m.amount, 0, 100_000, "bid.amount"))
    if kind == "progress":
        return moves.progress(field_in_range(m.column, 1, 5, "progress.column") - 1, field_in_range(m.card, 0, 10_000, "progress.card") - 1)
    if kind == "harvest":
        return moves.harvest(field_in_range(m.card, 0, 10_000, "harvest.card") - 1)
    if kind == "found_colony":
        return moves.found_colony(field_in_range(m.colony, 1, 4, "found_colony.colony") - 1,
                               field_in_range(m.card, 0, 10_000, "found_colony.card") - 1)
    if kind == "espionage":
        return moves.ESPIONAGE[field_in_range(m.opponent, 0, 3, "espionage.opponent")]
    if kind == "play_card":
        return moves.play_card(field_in_range(m.card, 0, 10_000, "play_card.card"))
    if kind == "use_tile":
        return moves.use_tile(field_in_range(m.tile, 0, 10_000, "use_tile.tile"))
    if kind in ("pay_spice", "place_spice", "sell_spice"):
        land = field_in_range(m.land, 0, moves.MAX_LANDS - 1, f"{kind}.land")
        spice = field_in_range(m.spice, 1, 5, f"{kind}.spice") - 1
        table = {"pay_spice": moves.PAY_SPICE, "place_spice": moves.PLACE_SPICE, "sell_spice": moves.SELL_SPICE}[kind]
        return table[land][spice]
    if kind == "reveal_more":
        return moves.reveal_more(field_in_range(m.card, 0, 10_000, "reveal_more.card"))
    if kind == "choose_colony_tile":
        return moves.choose_colony_tile(field_in_range(m.tile, 0, 10_000, "choose_colony_tile.tile"))
    if kind == "draw":
        return moves.draw(field_in_range(m.count, 0, 100, "draw.count"))
    if kind == "discard_card":
        return moves.discard_card(field_in_range(m.card, 0, 10_000, "discard_card.card"))
    if kind == "choose_column":
        return moves.CHOOSE_COLUMN[field_in_range(m.column, 1, 5, "choose_column.column") - 1]
    if kind == "choose_resource":
        return moves.CHOOSE_RESOURCE[field_in_range(m.kind, 1, 3, "choose_resource.kind") - 1]
    if kind == "discard_plantation":
        return moves.DISCARD_PLANTATION[field_in_range(m.land, 0, moves.MAX_LANDS - 1, "discard_plantation.land")]
    if kind == "take_favor":
        return moves.take_favor(field_in_range(m.tile, 0, 10_000, "take_favor.tile"))
    raise MalformedMove(f"unknown goa move kind {kind}")
