"""Santa Maria as a referee game: options, component sheet, proto mapping; rules in rules.py."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from referee.core import hashing
from referee.core.components import ComponentSheet, derived, load_sheet_file, parse_sheet
from referee.core.contract import (
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
from referee.v1 import santa_maria_pb2 as pb

from . import moves as mv
from . import rules as R
from .sheet import SCHEMA, check_consistency
from .view import build_view

COMPONENTS_DIR = Path(__file__).parent / "components"
DEFAULT_SHEET = COMPONENTS_DIR / "santa-maria-aporta-2017.json"

SPEC = GameSpec(
    name="santa_maria",
    title="Santa Maria (Aporta Games 2017 / Pixie Games 2018)",
    min_seats=1,
    max_seats=4,
    rulebook="shared/rules/santa-maria-fr.txt (French rules)",
    options=(
        OptionSpec(
            "setup",
            "enum",
            R.SETUP_STANDARD,
            "standard: colony boards on their A side, dealt at random; advanced: B sides, each "
            "seat drafts a town hall + Scholar lot (Règles avancées). One seat always plays the "
            "advanced set-up (Jeu en solo).",
            choices=(R.SETUP_STANDARD, R.SETUP_ADVANCED),
        ),
        OptionSpec(
            "colony_boards",
            "enum",
            R.BOARDS_RANDOM,
            "standard set-up: random = A-side boards dealt at random (first game); pick = seats "
            "choose them anticlockwise from the first player's right (later games)",
            choices=(R.BOARDS_RANDOM, R.BOARDS_PICK),
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


class SantaMariaGame(Game[R.State, mv.Move]):
    spec = SPEC
    move_message = pb.Move
    view_message = pb.View

    def __init__(self) -> None:
        self._default: ComponentSheet | None = None

    # ---- components
    def default_components(self, options: Mapping[str, Any]) -> ComponentSheet:
        if self._default is None:
            self._default = self.load_components(str(DEFAULT_SHEET))
        return self._default

    def load_components(self, path: str) -> ComponentSheet:
        sheet = load_sheet_file(path, game="santa_maria", required=SCHEMA)
        check_consistency(dict(sheet.values), str(path))
        return sheet

    def parse_components(self, document: Mapping[str, Any]) -> ComponentSheet:
        sheet = parse_sheet(document, game="santa_maria", required=SCHEMA)
        check_consistency(dict(sheet.values), "<sheet>")
        return sheet

    def rules_for(self, sheet: ComponentSheet) -> R.Rules:
        return derived(sheet, R.Rules.from_sheet)

    # ---- rules
    def setup(self, options, seat_count, rng: Rng, components: ComponentSheet) -> R.State:
        options = self.spec.parse_options(options)
        state, _ = R.setup(dict(options), seat_count, rng, self.rules_for(components))
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

    def default_move(self, state: R.State, decision: Decision) -> mv.Move:
        return R.default_move(state, decision)

    def hash_state(self, state: R.State) -> str:
        return hashing.digest(state)

    def seat_count(self, state: R.State) -> int:
        return state.n

    # ---- proto mapping
    def move_to_proto(self, move: mv.Move) -> pb.Move:
        return move_to_proto(move)

    def move_from_proto(self, message: Message) -> mv.Move:
        return move_from_proto(message)


def _rc(cell: int) -> dict[str, int]:
    return {"row": cell // 6 + 1, "col": cell % 6 + 1}


def _pay(pay: tuple[int, ...]) -> pb.Goods:
    return pb.Goods(wood=pay[0], wheat=pay[1], sugar=pay[2], gem=pay[3], gold=pay[4])


def move_to_proto(move: mv.Move) -> pb.Move:
    k = type(move)
    if k is mv.ChooseBoard:
        return pb.Move(choose_board=pb.ChooseBoard(board=move.board))
    if k is mv.DraftLot:
        return pb.Move(draft_lot=pb.DraftLot(lot=move.lot))
    if k is mv.Expand:
        return pb.Move(expand=pb.Expand(slot=move.slot, pay=_pay(move.pay)))
    if k is mv.PlaceTile:
        return pb.Move(place_tile=pb.PlaceTile(rotation=move.rotation, **_rc(move.cell)))
    if k is mv.ActivateBuilding:
        return pb.Move(activate_building=pb.ActivateBuilding(**_rc(move.cell)))
    if k is mv.UseDie:
        return pb.Move(use_die=pb.UseDie(color=move.color, face=move.face, line=move.line,
                                         target=move.target, botany=move.botany + 1))
    if k is mv.Retreat:
        return pb.Move(retreat=pb.Retreat(space=move.space))
    if k is mv.Sell:
        return pb.Move(sell=pb.Sell(resource=move.resource + 1))
    if k is mv.Buy:
        return pb.Move(buy=pb.Buy(resource=move.resource + 1))
    if k is mv.MoveDie:
        a, b = _rc(move.src), _rc(move.dst)
        return pb.Move(move_die=pb.MoveDie(from_row=a["row"], from_col=a["col"], to_row=b["row"], to_col=b["col"]))
    if k is mv.EndTurn:
        return pb.Move(end_turn=pb.EndTurn())
    if k is mv.Exchange:
        return pb.Move(exchange=pb.Exchange(option=move.option, pay=_pay(move.pay)))
    if k is mv.Ship:
        return pb.Move(ship=pb.Ship(slot=move.slot, pay=_pay(move.pay)))
    if k is mv.ShiftShip:
        return pb.Move(shift_ship=pb.ShiftShip(dock=move.dock))
    if k is mv.Religion:
        return pb.Move(religion=pb.Religion(extra=move.extra, pay=_pay(move.pay)))
    if k is mv.RecruitMonk:
        return pb.Move(recruit_monk=pb.RecruitMonk(space=move.space))
    if k is mv.PlaceDie:
        return pb.Move(place_die=pb.PlaceDie(**_rc(move.cell)))
    if k is mv.PlaceRoad:
        return pb.Move(place_road=pb.PlaceRoad(**_rc(move.cell)))
    if k is mv.RecoverCoins:
        return pb.Move(recover_coins=pb.RecoverCoins(**_rc(move.cell)))
    if k is mv.Decline:
        return pb.Move(decline=pb.Decline())
    raise TypeError(f"not a Santa Maria move: {move!r}")


def _cell(row: int, col: int, what: str) -> int:
    if not (1 <= row <= 6 and 1 <= col <= 6):
        raise MalformedMove(f"{what}: row and col are 1..6, not ({row}, {col})")
    return (row - 1) * 6 + col - 1


def _unpay(g: pb.Goods, what: str) -> tuple[int, ...]:
    if g.coins or g.points:
        raise MalformedMove(f"{what}.pay holds resources only (no coins or points)")
    vals = (g.wood, g.wheat, g.sugar, g.gem, g.gold)
    if any(v > 99 for v in vals):
        raise MalformedMove(f"{what}.pay: amounts out of range")
    return vals


def _res(value: int, what: str, allow_none: bool = False) -> int:
    if value == 0 and allow_none:
        return -1
    if not 1 <= value <= 5:
        raise MalformedMove(f"{what}: a resource WOOD..GOLD, not {value}")
    return value - 1


def _small(value: int, hi: int, what: str) -> int:
    if value > hi:
        raise MalformedMove(f"{what} out of range: {value}")
    return value


def move_from_proto(message: Message) -> mv.Move:
    if not isinstance(message, pb.Move):
        raise MalformedMove("not a santa_maria.Move")
    kind = message.WhichOneof("kind")
    if kind is None:
        raise MalformedMove("empty santa_maria.Move: set exactly one kind")
    m = getattr(message, kind)
    if kind == "choose_board":
        return mv.choose_board(_small(m.board, 99, "choose_board.board"))
    if kind == "draft_lot":
        return mv.draft_lot(_small(m.lot, 99, "draft_lot.lot"))
    if kind == "expand":
        return mv.expand(_small(m.slot, 99, "expand.slot"), _unpay(m.pay, "expand"))
    if kind == "place_tile":
        return mv.place_tile(_cell(m.row, m.col, "place_tile"), _small(m.rotation, 3, "place_tile.rotation"))
    if kind == "activate_building":
        return mv.activate_building(_cell(m.row, m.col, "activate_building"))
    if kind == "use_die":
        if m.color not in (pb.WHITE, pb.BLUE) or m.line not in (pb.ROW, pb.COLUMN):
            raise MalformedMove("use_die: color WHITE/BLUE and line ROW/COLUMN are required")
        if not 1 <= m.face <= 6 or not 1 <= m.target <= 6:
            raise MalformedMove("use_die: face and target are 1..6")
        return mv.use_die(m.color, m.face, m.line, m.target, _res(m.botany, "use_die.botany", True))
    if kind == "retreat":
        return mv.retreat(_small(m.space, 99, "retreat.space"))
    if kind == "sell":
        return mv.sell(_res(m.resource, "sell.resource"))
    if kind == "buy":
        return mv.buy(_res(m.resource, "buy.resource"))
    if kind == "move_die":
        return mv.move_die(_cell(m.from_row, m.from_col, "move_die.from"), _cell(m.to_row, m.to_col, "move_die.to"))
    if kind == "end_turn":
        return mv.END_TURN
    if kind == "exchange":
        return mv.exchange(_small(m.option, 99, "exchange.option"), _unpay(m.pay, "exchange"))
    if kind == "ship":
        return mv.ship(_small(m.slot, 99, "ship.slot"), _unpay(m.pay, "ship"))
    if kind == "shift_ship":
        return mv.shift_ship(_small(m.dock, 99, "shift_ship.dock"))
    if kind == "religion":
        return mv.religion(m.extra, _unpay(m.pay, "religion"))
    if kind == "recruit_monk":
        return mv.recruit_monk(_small(m.space, 99, "recruit_monk.space"))
    if kind == "place_die":
        return mv.place_die(_cell(m.row, m.col, "place_die"))
    if kind == "place_road":
        return mv.place_road(_cell(m.row, m.col, "place_road"))
    if kind == "recover_coins":
        return mv.recover_coins(_cell(m.row, m.col, "recover_coins"))
    if kind == "decline":
        return mv.DECLINE
    raise MalformedMove(f"unknown santa_maria move kind {kind!r}")
