"""Batavia as a referee game: options, component sheet, proto mapping; rules in rules.py."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from referee.core.components import (
    ComponentSheet,
    derived,
    int_at_least,
    int_map,
    is_int,
    load_sheet_file,
    parse_sheet,
)
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
from referee.v1 import batavia_pb2 as pb

from . import moves as mv
from . import rules as R
from .view import build_view, build_view_bytes

COMPONENTS_DIR = Path(__file__).parent / "components"
DEFAULT_SHEET = COMPONENTS_DIR / "batavia-queen-2008.json"

SPEC = GameSpec(
    name="batavia",
    title="Batavia (Queen Games, 2008)",
    min_seats=3,
    max_seats=5,
    rulebook="shared/rules/east-india-fr-ocr.txt (French rules, OCR)",
    options=(
        OptionSpec(
            "setup",
            "enum",
            R.SETUP_FACE_DOWN,
            "face_down: stall tiles shuffled face down and revealed five at a time (the rules' "
            "set-up); face_up: the quick set-up with every tile face up by its number",
            choices=(R.SETUP_FACE_DOWN, R.SETUP_FACE_UP),
        ),
        OptionSpec(
            "min_bid",
            "int",
            1,
            "smallest opening bid; the rulebook lets the opening amount be chosen freely "
            "(RULINGS.md: 1, since a bid is paid in bills; 0 allows free bids)",
            min=0,
            max=1,
        ),
        OptionSpec(
            "pirates_repeat",
            "bool",
            False,
            "after a pirate attack, attack again while the cannon is still at the threshold "
            "(default: one attack per turn, RULINGS.md)",
        ),
        OptionSpec(
            "max_rounds",
            "int",
            100,
            "end and score the game after this many rounds (a safety net against stalling "
            "bots; real games end by the arrival tile long before)",
            min=1,
            max=1000,
        ),
    ),
)


def _pair_list(length: int):
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or len(v) != length:
            return f"expected a list of {length} [company, good] pairs"
        for pair in v:
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or pair[0] not in R.COMPANY_IDS
                or pair[1] not in R.GOOD_IDS
            ):
                return f"bad [company, good] pair {pair!r}"
        if len({tuple(p) for p in v}) != length:
            return "every (company, good) pair must appear once"
        return None

    return check


def _gold_pair(v: Any) -> str | None:
    if isinstance(v, list) and len(v) == 2 and all(is_int(x) for x in v) and v[0] >= v[1]:
        return None
    return "expected [majority, tie each] with majority >= tie"


def _die(v: Any) -> str | None:
    if isinstance(v, list) and v and all(is_int(x, 1) for x in v):
        return None
    return "expected a non-empty list of positive faces"


def _names(expected: tuple[str, ...]):
    return lambda v: None if v == list(expected) else f"expected {list(expected)}"


SHEET_SCHEMA = {
    "companies": _names(R.COMPANY_IDS),
    "goods": _names(R.GOOD_IDS),
    "stall_tiles": _pair_list(35),
    "track_spaces": lambda v: None if v == 35 else "the track has 35 spaces",
    "initially_face_up": int_at_least(1),
    "reveal_block": int_at_least(1),
    "ship_cards_per_company": int_map(R.COMPANY_IDS, 1),
    "starting_hand": int_at_least(0),
    "draw_count": int_at_least(1),
    "bills_per_player": int_at_least(0),
    "crates_per_player": int_at_least(0),
    "die_faces": _die,
    "exchange_gold": int_map(("1", "2", "3", "4", "5")),
    "pirate_threshold": int_map(("3", "4", "5"), 1),
    "cannon_max": int_at_least(1),
    **{f"goods_gold_{g}": _gold_pair for g in R.GOOD_IDS},
    "bills_majority_gold": _gold_pair,
    "arrival_gold": int_at_least(0),
    "face_up_layout": _pair_list(35),
}


def _check_consistency(sheet: ComponentSheet) -> ComponentSheet:
    v = sheet.values
    if v["initially_face_up"] > 35 or v["reveal_block"] > 35:
        raise ValueError(f"{sheet.name}: initially_face_up and reveal_block must be at most 35")
    total = sum(v["ship_cards_per_company"].values())
    if total < 5 * v["starting_hand"]:
        raise ValueError(f"{sheet.name}: {total} ship cards cannot deal 5 starting hands")
    return sheet


class BataviaGame(Game[R.State, mv.Move]):
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
        return _check_consistency(load_sheet_file(path, game="batavia", required=SHEET_SCHEMA))

    def parse_components(self, document: Mapping[str, Any]) -> ComponentSheet:
        return _check_consistency(parse_sheet(document, game="batavia", required=SHEET_SCHEMA))

    def _rules_for(self, sheet: ComponentSheet) -> R.Rules:
        return derived(sheet, R.Rules.from_sheet)

    # ---- rules
    def setup(self, options, seat_count, rng: Rng, components: ComponentSheet) -> R.State:
        state, _ = R.setup(dict(options), seat_count, rng, self._rules_for(components))
        return state

    def decision(self, state: R.State) -> Decision | None:
        return R.decision(state)

    def apply(self, state: R.State, seat: int, move: mv.Move) -> list[Event]:
        return R.apply(state, seat, move)

    def view(self, state: R.State, seat: int | None) -> pb.View:
        return build_view(state, seat)

    def view_bytes(self, state: R.State, seat: int | None) -> bytes:
        return build_view_bytes(state, seat)

    def result(self, state: R.State) -> Result | None:
        if state.phase != R.OVER:
            return None
        scores = [f["total"] for f in state.final]
        best = max(scores)
        return Result(
            scores=scores,
            ranks=competition_ranks(scores),
            winners=[s for s in range(state.n) if scores[s] == best],
            details=[dict(f) for f in state.final],
            summary=f"ended after round {state.round}: {state.end_reason}",
        )

    def default_move(self, state: R.State, decision: Decision) -> mv.Move:
        return R.default_move(state, decision)

    def hash_state(self, state: R.State) -> str:
        return R.state_digest(state)

    def seat_count(self, state: R.State) -> int:
        return state.n

    # ---- proto mapping
    def move_to_proto(self, move: mv.Move) -> pb.Move:
        kind = type(move)
        if kind is mv.Bid:
            return pb.Move(bid=pb.Bid(amount=move.amount))
        if kind is mv.PassBid:
            return pb.Move(pass_bid=pb.PassBid())
        if kind is mv.DrawCards:
            return pb.Move(draw_cards=pb.DrawCards())
        if kind is mv.PlayCard:
            return pb.Move(play_card=pb.PlayCard(company=move.company + 1))
        if kind is mv.AdvanceMerchant:
            return pb.Move(advance_merchant=pb.AdvanceMerchant(company=move.company + 1))
        if kind is mv.TakeArrival:
            return pb.Move(take_arrival=pb.TakeArrival())
        if kind is mv.ExchangeTiles:
            return pb.Move(exchange_tiles=pb.ExchangeTiles())
        if kind is mv.KeepTiles:
            return pb.Move(keep_tiles=pb.KeepTiles())
        raise TypeError(f"not a Batavia move: {move!r}")

    def move_from_proto(self, message: Message) -> mv.Move:
        if not isinstance(message, pb.Move):
            raise MalformedMove("not a batavia.Move")
        kind = message.WhichOneof("kind")
        if kind is None:
            raise MalformedMove("empty batavia.Move: set exactly one kind")
        if kind == "bid":
            return mv.bid(message.bid.amount) if message.bid.amount <= 10_000 else mv.Bid(message.bid.amount)
        if kind in ("play_card", "advance_merchant"):
            company = getattr(message, kind).company
            if not 1 <= company <= R.N_COMPANIES:
                raise MalformedMove(f"{kind}.company must name one of the five companies, not {company}")
            return (mv.PLAY_CARD if kind == "play_card" else mv.ADVANCE)[company - 1]
        return {
            "pass_bid": mv.PASS_BID,
            "draw_cards": mv.DRAW_CARDS,
            "take_arrival": mv.TAKE_ARRIVAL,
            "exchange_tiles": mv.EXCHANGE_TILES,
            "keep_tiles": mv.KEEP_TILES,
        }[kind]
