"""Santa Maria as a referee game: options, result and proto mapping; the rest is the common
adapter (referee/core/adapter.py) over the sheet schema (sheet.py) and the rules (rules.py)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from google.protobuf.message import Message

from referee.core.adapter import SheetGame
from referee.core.codec import Bool, Cell, Counts, EnumInt, Int, MoveCodec, constant, kind
from referee.core.components import ComponentSheet
from referee.core.contract import (
    ChanceMode,
    Event,
    GameSpec,
    Information,
    OptionSpec,
    Result,
    competition_ranks,
)
from referee.core.rng import Rng
from referee.v1 import santa_maria_pb2 as pb

from . import heuristic, moves, planes, rules, scoring, sim, text
from . import view as views
from .catalog import DIE_FACES, RES_NAMES
from .geometry import N_ROTATIONS
from .sheet import GRID_SIDE, SHEET_SCHEMA, check_consistency

COMPONENTS_DIR = Path(__file__).parent / "components"
DEFAULT_SHEET = COMPONENTS_DIR / "santa-maria-aporta-2017.json"

SPEC = GameSpec(
    name="santa_maria",
    title="Santa Maria (Aporta Games 2017 / Pixie Games 2018)",
    min_seats=1,
    max_seats=4,
    # the development tiles' and ships' piles, the Scholars and Bishops drawn are hidden in
    # their order; the engine rolls the dice and shuffles from its keyed streams. The length and
    # score bounds are not derived yet (RULINGS.md, "Bounds of a match").
    information=Information.IMPERFECT,
    chance=ChanceMode.SAMPLED_STOCHASTIC,
    rulebook="Santa Maria, French rules (Aporta Games 2017)",
    options=(
        OptionSpec(
            "setup",
            "enum",
            rules.SETUP_STANDARD,
            "standard: colony boards on their A side, dealt at random; advanced: B sides, each "
            "seat drafts a town hall + Scholar lot (Règles avancées). One seat always plays the "
            "advanced set-up (Jeu en solo).",
            choices=(rules.SETUP_STANDARD, rules.SETUP_ADVANCED),
        ),
        OptionSpec(
            "colony_boards",
            "enum",
            rules.BOARDS_RANDOM,
            "standard set-up: random = A-side boards dealt at random (first game); pick = seats "
            "choose them anticlockwise from the first player's right (later games)",
            choices=(rules.BOARDS_RANDOM, rules.BOARDS_PICK),
        ),
        OptionSpec(
            "shared_blue_dice",
            "bool",
            False,
            "Variante: réserve commune de dés bleus — blue dice in a common pool; each seat uses "
            "per year at most as many blue dice as it has unlocked (no effect with one seat)",
        ),
    ),
)


# Engine moves <-> santa_maria.Move (referee/core/codec.py). A colony cell is row * GRID_SIDE + col in
# the engine, (row, col) with both 1..GRID_SIDE on the wire; a resource is 0..4 in the engine and the
# Resource enum (WOOD = 1 ...) on the wire, where Botany's 0 means none; die colours and lines are
# the enums' own numbers in both; a payment is the 5-tuple of resources handed in, as Goods.
CELL = Cell(1, GRID_SIDE)
RESOURCE = EnumInt(offset=1, note="a resource WOOD..GOLD")
INDEX = Int(0, 99)  # into a list of the view (a sanity bound: the legal list decides)
PAY = Counts(RES_NAMES, Int(0, 99), "resources")  # per resource (a sanity bound, too)

MOVES: MoveCodec[moves.Move] = MoveCodec(pb.Move, (
    kind("choose_board", moves.ChooseBoard, moves.choose_board, board=INDEX),
    kind("draft_lot", moves.DraftLot, moves.draft_lot, lot=INDEX),
    kind("expand", moves.Expand, moves.expand, slot=INDEX, pay=PAY),
    kind("place_tile", moves.PlaceTile, moves.place_tile, cell=CELL, rotation=Int(0, N_ROTATIONS - 1)),
    kind("activate_building", moves.ActivateBuilding, moves.activate_building, cell=CELL),
    kind("use_die", moves.UseDie, moves.use_die, color=EnumInt(), face=Int(1, DIE_FACES),
         line=EnumInt(), target=Int(1, GRID_SIDE),
         botany=EnumInt(offset=1, note="a resource WOOD..GOLD", optional=True)),
    kind("retreat", moves.Retreat, moves.retreat, space=INDEX),
    kind("sell", moves.Sell, moves.sell, resource=RESOURCE),
    kind("buy", moves.Buy, moves.buy, resource=RESOURCE),
    kind("move_die", moves.MoveDie, moves.move_die, src=Cell(1, GRID_SIDE, "from_row", "from_col"),
         dst=Cell(1, GRID_SIDE, "to_row", "to_col")),
    constant("end_turn", moves.END_TURN),
    kind("exchange", moves.Exchange, moves.exchange, option=INDEX, pay=PAY),
    kind("ship", moves.Ship, moves.ship, slot=INDEX, pay=PAY),
    kind("shift_ship", moves.ShiftShip, moves.shift_ship, dock=INDEX),
    kind("religion", moves.Religion, moves.religion, extra=Bool(), pay=PAY),
    kind("recruit_monk", moves.RecruitMonk, moves.recruit_monk, space=INDEX),
    kind("place_die", moves.PlaceDie, moves.place_die, cell=CELL),
    kind("place_road", moves.PlaceRoad, moves.place_road, cell=CELL),
    kind("recover_coins", moves.RecoverCoins, moves.recover_coins, cell=CELL),
    constant("decline", moves.DECLINE),
))


class SantaMariaGame(SheetGame[rules.State, moves.Move]):
    spec = SPEC
    move_codec = MOVES
    move_message = pb.Move
    view_message = pb.View
    sheet_schema = SHEET_SCHEMA
    default_sheets = MappingProxyType({"": DEFAULT_SHEET})
    engine = rules
    views = views
    text_table = text.TABLE
    _planes: planes.SantaMariaPlanes | None = None

    def check_sheet(self, sheet: ComponentSheet) -> None:
        check_consistency(sheet)

    def view_bytes(self, state: rules.State, seat: int | None) -> bytes:
        return views.build_view_bytes(state, seat)

    def clone(self, state: rules.State) -> rules.State:
        return sim.clone_state(state)

    def observation_planes(self) -> planes.SantaMariaPlanes:
        """The compact planes (planes.py), laid out once from the default sheet."""
        if self._planes is None:
            self._planes = planes.SantaMariaPlanes(
                self.rules_for(self.default_components({})), SPEC.max_seats)
        return self._planes

    def heuristic_policy(self, params: Mapping[str, Any]) -> Any:
        """The greedy bot's choice from the state (heuristic.py)."""
        return heuristic.policy(params)

    def provisional_scores(self, state: rules.State) -> list[float] | None:
        """Final scoring's totals now, applied to a copy (it ends the copy's game)."""
        copy = sim.clone_state(state)
        if len(copy.last_retreat) < copy.n:  # before the first year's end: no tie-break yet
            copy.last_retreat = [0] * copy.n
        scoring.final_scoring(copy)
        return [float(f["total"]) for f in copy.final]

    def sample_state(
        self, views: Mapping[int, Message], history: Sequence[Event], rng: Rng,
        options: Mapping[str, Any], seat_count: int, components: ComponentSheet,
    ) -> rules.State:
        """See SAMPLING.md in this folder."""
        return sim.sample_state(views, history, rng, options, seat_count,  # type: ignore[arg-type]
                                self.rules_for(components))

    def sampler(
        self, views: Mapping[int, Message], history: Sequence[Event], options: Mapping[str, Any],
        seat_count: int, components: ComponentSheet,
    ) -> Callable[[Rng], rules.State]:
        """What is on the table read once, the hidden parts dealt at each draw (sim.sampler)."""
        return sim.sampler(views, history, options, seat_count,  # type: ignore[arg-type]
                           self.rules_for(components))

    def result(self, state: rules.State) -> Result | None:
        if state.phase != rules.OVER:
            return None
        scores = [f["total"] for f in state.final]
        # tie-break: the retreat space nearest "1st" in the last year
        key = [(scores[s], -state.final[s]["last_retreat"]) for s in range(state.n)]
        ranks = competition_ranks(key)
        winners = [s for s in range(state.n) if ranks[s] == 1]
        summary = "scores " + ", ".join(map(str, scores))
        if state.n == 1:
            summary += "; achievements: " + (", ".join(state.final[0]["achievements"]) or "none")
        return Result(scores=scores, ranks=ranks, winners=winners,
                      details=[dict(f) for f in state.final], summary=summary)
