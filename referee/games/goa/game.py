"""Goa as a referee game: options, component sheets, result and proto mapping; the rest is the
common adapter (referee/core/adapter.py) over the rules, which live in modules by concern
(README.md) entered through ``rules`` (``setup``, ``decision``, ``apply``, ``default_move``).
States are hashed with Goa's own ``state.state_digest``."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from google.protobuf.message import Message

from referee.core.adapter import SheetGame
from referee.core.codec import Cell, EnumInt, Int, MoveCodec, constant, kind
from referee.core.components import ComponentSheet
from referee.core.contract import (
    BadOptions,
    ChanceMode,
    Event,
    GameSpec,
    Information,
    OptionSpec,
    Result,
    competition_ranks,
)
from referee.core.rng import Rng
from referee.v1 import goa_pb2 as pb

from . import heuristic, moves, rules, scoring, sim, text
from . import view as views
from .catalog import GRID_SIDE, MAX_SEATS, Rules
from .planes import GoaPlanes
from .sheet import SHEET_SCHEMA, check_consistency
from .state import OVER, State, state_digest

COMPONENTS_DIR = Path(__file__).parent / "components"
SHEETS = {"2012": COMPONENTS_DIR / "goa-2012.json", "2004": COMPONENTS_DIR / "goa-2004.json"}

SPEC = GameSpec(
    name="goa",
    title="Goa (Rüdiger Dorn): 2012 'A New Expedition' or the 2004 original",
    min_seats=2,
    max_seats=MAX_SEATS,
    # Expedition cards in hand, the decks' and the tile stacks' order are hidden; the engine
    # draws them from its keyed streams. The length and score bounds are not derived yet
    # (RULINGS.md, "Bounds of a match").
    information=Information.IMPERFECT,
    chance=ChanceMode.SAMPLED_STOCHASTIC,
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


# Engine moves <-> goa.Move (referee/core/codec.py). The wire's enums count from 1 (SHIPS = 1,
# GINGER = 1, QUILON = 1, RESOURCE_SHIPS = 1) where the engine counts from 0; a card played with
# an action is its id + 1 (0 = none) while a card or tile played alone is its id; a board cell is
# its (row, col), both -1..5, -1 and 5 being the edge spaces around the grid.
COLUMN = EnumInt(offset=1)
SPICE = EnumInt(offset=1)
CELL = Cell(-1, GRID_SIDE, nested=True)  # the grid's rows and columns and the edge spaces
LAND = Int(0, moves.MAX_LANDS - 1)
#: wire sanity bounds, not rules (the legal list decides): a card or tile id of the sheet, a
#: bid in ducats, a number of Expedition cards drawn
ID = Int(0, 10_000)
ID_OR_NONE = Int(0, 10_000, offset=1)  # 0 = none, otherwise id + 1
BID = Int(0, 100_000)
DRAW_COUNT = Int(0, 100)

MOVES: MoveCodec[moves.Move] = MoveCodec(pb.Move, (
    constant("quick_ducats", moves.QUICK_DUCATS),
    kind("quick_advance", moves.QuickAdvance, moves.quick_advance, first=COLUMN, second=COLUMN),
    kind("place_flag", moves.PlaceFlag, moves.PLACE_FLAG.__getitem__, cell=CELL),
    kind("place_token", moves.PlaceToken, moves.PLACE_TOKEN.__getitem__, cell=CELL),
    kind("bid", moves.Bid, moves.bid, amount=BID),
    constant("pass", moves.PASS),
    constant("keep_lot", moves.KEEP_LOT),
    kind("progress", moves.Progress, moves.progress, column=COLUMN, card=ID_OR_NONE),
    constant("build_ships", moves.BUILD_SHIPS),
    kind("harvest", moves.Harvest, moves.harvest, card=ID_OR_NONE),
    constant("taxes", moves.TAXES),
    constant("expedition", moves.EXPEDITION),
    kind("found_colony", moves.FoundColony, moves.found_colony, colony=EnumInt(offset=1),
         card=ID_OR_NONE),
    kind("espionage", moves.Espionage, moves.ESPIONAGE.__getitem__,
         opponent=Int(0, len(moves.ESPIONAGE) - 1)),
    kind("play_card", moves.PlayCard, moves.play_card, card=ID),
    kind("use_tile", moves.UseTile, moves.use_tile, tile=ID),
    constant("end_turn", moves.END_TURN),
    kind("pay_spice", moves.PaySpice, moves.pay_spice, land=LAND, spice=SPICE),
    kind("place_spice", moves.PlaceSpice, moves.place_spice, land=LAND, spice=SPICE),
    kind("sell_spice", moves.SellSpice, moves.sell_spice, land=LAND, spice=SPICE),
    constant("take_ship", moves.TAKE_SHIP),
    constant("take_colonist", moves.TAKE_COLONIST),
    constant("done", moves.DONE),
    kind("reveal_more", moves.RevealMore, moves.reveal_more, card=ID),
    constant("recruit", moves.RECRUIT),
    constant("decline", moves.DECLINE),
    kind("choose_colony_tile", moves.ChooseColonyTile, moves.choose_colony_tile, tile=ID),
    kind("draw", moves.Draw, moves.draw, count=DRAW_COUNT),
    kind("discard_card", moves.DiscardCard, moves.discard_card, card=ID),
    kind("choose_column", moves.ChooseColumn, moves.CHOOSE_COLUMN.__getitem__, column=COLUMN),
    kind("choose_resource", moves.ChooseResource, moves.CHOOSE_RESOURCE.__getitem__,
         kind=EnumInt(offset=1)),
    kind("discard_plantation", moves.DiscardPlantation, moves.DISCARD_PLANTATION.__getitem__,
         land=LAND),
    kind("take_favor", moves.TakeFavor, moves.take_favor, tile=ID),
    kind("swap_take", moves.SwapTake, moves.SWAP_TAKE.__getitem__, cell=CELL),
    constant("play_extra_action", moves.PLAY_EXTRA),
    constant("pass_extra_action", moves.PASS_EXTRA),
))


class GoaGame(SheetGame[State, moves.Move]):
    spec = SPEC
    move_codec = MOVES
    move_message = pb.Move
    view_message = pb.View
    sheet_schema = SHEET_SCHEMA
    default_sheets = MappingProxyType(SHEETS)
    engine = rules
    views = views
    text_table = text.TABLE
    _planes: GoaPlanes | None = None

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

    # ---- the forward model
    def view_bytes(self, state: State, seat: int | None) -> bytes:
        return views.build_view_bytes(state, seat)

    def observation_planes(self) -> GoaPlanes:
        """planes.py: one layout for both editions, built once (its widths read the game's own
        sheets: the most Expedition symbols either edition names)."""
        planes = self._planes
        if planes is None:
            symbols = max(len(self.rules_for(self.default_components({"edition": e})).symbols)
                          for e in SHEETS)
            planes = self._planes = GoaPlanes(SPEC.min_seats, symbols)
        return planes

    def clone(self, state: State) -> State:
        return sim.clone_state(state)

    def heuristic_policy(self, params: Mapping[str, Any]) -> Any:
        """The greedy bot's choice from the state (heuristic.py)."""
        return heuristic.policy(params)

    def provisional_scores(self, state: State) -> list[float] | None:
        """Final scoring's totals now (``scoring.score_seat`` reads the state, changes nothing)."""
        return [float(scoring.score_seat(state, p)["total"]) for p in range(state.n)]

    def sample_state(self, views: Mapping[int, Message], history: Sequence[Event], rng: Rng,
                     options: Mapping[str, Any], seat_count: int,
                     components: ComponentSheet) -> State:
        """SAMPLING.md: a full state showing each seat in ``views`` exactly its View."""
        return sim.sample_state(views, history, rng, options, seat_count,  # type: ignore[arg-type]
                                    self.rules_for(components))
