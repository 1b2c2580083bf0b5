"""Santa Maria as a referee game: options, result and proto mapping; the rest is the common
adapter (referee/core/adapter.py) over the sheet schema (sheet.py) and the rules (rules.py)."""
from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from google.protobuf.message import Message

from referee.core.adapter import SheetGame, field_in_range
from referee.core.components import ComponentSheet
from referee.core.contract import GameSpec, MalformedMove, OptionSpec, Result, competition_ranks
from referee.v1 import santa_maria_pb2 as pb

from . import moves, rules
from . import view as views
from .sheet import SCHEMA, check_consistency

COMPONENTS_DIR = Path(__file__).parent / "components"
DEFAULT_SHEET = COMPONENTS_DIR / "santa-maria-aporta-2017.json"

SPEC = GameSpec(
    name="santa_maria",
    title="Santa Maria (Aporta Games 2017 / Pixie Games 2018)",
    min_seats=1,
    max_seats=4,
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


class SantaMariaGame(SheetGame[rules.State, moves.Move]):
    spec = SPEC
    move_message = pb.Move
    view_message = pb.View
    sheet_schema = SCHEMA
    default_sheets = MappingProxyType({"": DEFAULT_SHEET})
    engine = rules
    views = views

    def check_sheet(self, sheet: ComponentSheet) -> None:
        check_consistency(sheet)

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

    # ---- proto mapping
    def move_to_proto(self, move: moves.Move) -> pb.Move:
        return move_to_proto(move)

    def move_from_proto(self, message: Message) -> moves.Move:
        return move_from_proto(message)


def _rc(cell: int) -> dict[str, int]:
    return {"row": cell // 6 + 1, "col": cell % 6 + 1}


def _pay(pay: tuple[int, ...]) -> pb.Goods:
    return pb.Goods(wood=pay[0], wheat=pay[1], sugar=pay[2], gem=pay[3], gold=pay[4])


def move_to_proto(move: moves.Move) -> pb.Move:
    k = type(move)
    if k is moves.ChooseBoard:
        return pb.Move(choose_board=pb.ChooseBoard(board=move.board))
    if k is moves.DraftLot:
        return pb.Move(draft_lot=pb.DraftLot(lot=move.lot))
    if k is moves.Expand:
        return pb.Move(expand=pb.Expand(slot=move.slot, pay=_pay(move.pay)))
    if k is moves.PlaceTile:
        return pb.Move(place_tile=pb.PlaceTile(rotation=move.rotation, **_rc(move.cell)))
    if k is moves.ActivateBuilding:
        return pb.Move(activate_building=pb.ActivateBuilding(**_rc(move.cell)))
    if k is moves.UseDie:
        return pb.Move(use_die=pb.UseDie(color=move.color, face=move.face, line=move.line,
                                         target=move.target, botany=move.botany + 1))
    if k is moves.Retreat:
        return pb.Move(retreat=pb.Retreat(space=move.space))
    if k is moves.Sell:
        return pb.Move(sell=pb.Sell(resource=move.resource + 1))
    if k is moves.Buy:
        return pb.Move(buy=pb.Buy(resource=move.resource + 1))
    if k is moves.MoveDie:
        a, b = _rc(move.src), _rc(move.dst)
        return pb.Move(move_die=pb.MoveDie(from_row=a["row"], from_col=a["col"], to_row=b["row"], to_col=b["col"]))
    if k is moves.EndTurn:
        return pb.Move(end_turn=pb.EndTurn())
    if k is moves.Exchange:
        return pb.Move(exchange=pb.Exchange(option=move.option, pay=_pay(move.pay)))
    if k is moves.Ship:
        return pb.Move(ship=pb.Ship(slot=move.slot, pay=_pay(move.pay)))
    if k is moves.ShiftShip:
        return pb.Move(shift_ship=pb.ShiftShip(dock=move.dock))
    if k is moves.Religion:
        return pb.Move(religion=pb.Religion(extra=move.extra, pay=_pay(move.pay)))
    if k is moves.RecruitMonk:
        return pb.Move(recruit_monk=pb.RecruitMonk(space=move.space))
    if k is moves.PlaceDie:
        return pb.Move(place_die=pb.PlaceDie(**_rc(move.cell)))
    if k is moves.PlaceRoad:
        return pb.Move(place_road=pb.PlaceRoad(**_rc(move.cell)))
    if k is moves.RecoverCoins:
        return pb.Move(recover_coins=pb.RecoverCoins(**_rc(move.cell)))
    if k is moves.Decline:
        return pb.Move(decline=pb.Decline())
    raise TypeError(f"not a Santa Maria move: {move!r}")


def _cell(row: int, col: int, what: str) -> int:
    return (field_in_range(row, 1, 6, f"{what}.row") - 1) * 6 + field_in_range(col, 1, 6, f"{what}.col") - 1


def _unpay(g: pb.Goods, what: str) -> tuple[int, ...]:
    if g.coins or g.points:
        raise MalformedMove(f"{what}.pay holds resources only (no coins or points)")
    return tuple(field_in_range(getattr(g, name), 0, 99, f"{what}.pay.{name}") for name in rules.RES_NAMES)


def _res(value: int, what: str, allow_none: bool = False) -> int:
    if value == 0 and allow_none:
        return -1
    return field_in_range(value, 1, 5, f"{what} (a resource WOOD..GOLD)") - 1


def _small(value: int, hi: int, what: str) -> int:
    return field_in_range(value, 0, hi, what)


def move_from_proto(message: Message) -> moves.Move:
    if not isinstance(message, pb.Move):
        raise MalformedMove("not a santa_maria.Move")
    kind = message.WhichOneof("kind")
    if kind is None:
        raise MalformedMove("empty santa_maria.Move: set exactly one kind")
    m = getattr(message, kind)
    if kind == "choose_board":
        return moves.choose_board(_small(m.board, 99, "choose_board.board"))
    if kind == "draft_lot":
        return moves.draft_lot(_small(m.lot, 99, "draft_lot.lot"))
    if kind == "expand":
        return moves.expand(_small(m.slot, 99, "expand.slot"), _unpay(m.pay, "expand"))
    if kind == "place_tile":
        return moves.place_tile(_cell(m.row, m.col, "place_tile"), _small(m.rotation, 3, "place_tile.rotation"))
    if kind == "activate_building":
        return moves.activate_building(_cell(m.row, m.col, "activate_building"))
    if kind == "use_die":
        if m.color not in (pb.WHITE, pb.BLUE) or m.line not in (pb.ROW, pb.COLUMN):
            raise MalformedMove("use_die: color WHITE/BLUE and line ROW/COLUMN are required")
        face = field_in_range(m.face, 1, 6, "use_die.face")
        target = field_in_range(m.target, 1, 6, "use_die.target")
        return moves.use_die(m.color, face, m.line, target, _res(m.botany, "use_die.botany", True))
    if kind == "retreat":
        return moves.retreat(_small(m.space, 99, "retreat.space"))
    if kind == "sell":
        return moves.sell(_res(m.resource, "sell.resource"))
    if kind == "buy":
        return moves.buy(_res(m.resource, "buy.resource"))
    if kind == "move_die":
        return moves.move_die(_cell(m.from_row, m.from_col, "move_die.from"), _cell(m.to_row, m.to_col, "move_die.to"))
    if kind == "end_turn":
        return moves.END_TURN
    if kind == "exchange":
        return moves.exchange(_small(m.option, 99, "exchange.option"), _unpay(m.pay, "exchange"))
    if kind == "ship":
        return moves.ship(_small(m.slot, 99, "ship.slot"), _unpay(m.pay, "ship"))
    if kind == "shift_ship":
        return moves.shift_ship(_small(m.dock, 99, "shift_ship.dock"))
    if kind == "religion":
        return moves.religion(m.extra, _unpay(m.pay, "religion"))
    if kind == "recruit_monk":
        return moves.recruit_monk(_small(m.space, 99, "recruit_monk.space"))
    if kind == "place_die":
        return moves.place_die(_cell(m.row, m.col, "place_die"))
    if kind == "place_road":
        return moves.place_road(_cell(m.row, m.col, "place_road"))
    if kind == "recover_coins":
        return moves.recover_coins(_cell(m.row, m.col, "recover_coins"))
    if kind == "decline":
        return moves.DECLINE
    raise MalformedMove(f"unknown santa_maria move kind {kind!r}")
