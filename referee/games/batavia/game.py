"""Batavia as a referee game: options, component sheet schema, result and proto mapping; the
rest is the common adapter (referee/core/adapter.py) over the rules in rules.py."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from google.protobuf.message import Message

from referee.core.adapter import SheetGame
from referee.core.codec import EnumInt, Int, MoveCodec, constant, kind
from referee.core.components import (
    ComponentSheet,
)
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
from referee.v1 import batavia_pb2 as pb

from . import heuristic, moves, rules, scoring, sim, text
from . import view as views
from .catalog import MAX_SEATS, MIN_SEATS, N_STALL_TILES
from .planes import BataviaPlanes, declared_planes
from .sheet import SHEET_SCHEMA, check_consistency

COMPONENTS_DIR = Path(__file__).parent / "components"
DEFAULT_SHEET = COMPONENTS_DIR / "batavia-queen-2008.json"

#: The default sheet's (batavia-queen-2008.json) values the bounds below rest on
#: (RULINGS.md, "Bounds of a match"; tests/batavia/test_components.py checks them).
SHEET_BILLS_PER_PLAYER = 15  # bills_per_player
SHEET_SHIP_CARDS = 5 * 22  # ship_cards_per_company
#: one seat's most gold: every stall tile exchanged at the best rate (15 gold for 5 tiles), every
#: good's majority (10 + 11 + ... + 16), the most bills (5) and the arrival tile (4)
MAX_GOLD = N_STALL_TILES * 15 // 5 + sum(range(10, 17)) + 5 + 4


def _decisions_per_round(seats: int) -> int:
    """An auction's bids each cover the last, from 0 up to every bill in play, and each seat
    passes once; a seat's turn draws (1), or lays cards (at most every ship card in a round) and
    moves its merchant (1) and then exchanges or keeps (1)."""
    return (seats * SHEET_BILLS_PER_PLAYER + 1 + seats) + SHEET_SHIP_CARDS + 2 * seats


SPEC = GameSpec(
    name="batavia",
    title="Batavia (Queen Games, 2008)",
    min_seats=MIN_SEATS,
    max_seats=MAX_SEATS,
    rulebook="Batavia, French rules (Queen Games 2008), OCR transcription",
    # the ship cards in hand and the draw pile's order are hidden; the engine draws the die, the
    # cards and the face-down track from its keyed streams
    information=Information.IMPERFECT,
    chance=ChanceMode.SAMPLED_STOCHASTIC,
    # derived in RULINGS.md, "Bounds of a match", from the default sheet's values
    max_decisions=lambda options, seats: options["max_rounds"] * _decisions_per_round(seats),
    min_score=lambda options, seats: 0,
    max_score=lambda options, seats: MAX_GOLD,
    options=(
        OptionSpec(
            "setup",
            "enum",
            rules.SETUP_FACE_DOWN,
            "face_down: stall tiles shuffled face down and revealed five at a time (the rules' "
            "set-up); face_up: the quick set-up with every tile face up by its number",
            choices=(rules.SETUP_FACE_DOWN, rules.SETUP_FACE_UP),
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


#: Engine moves <-> batavia.Move (referee/core/codec.py). Companies are 0..4 in the engine and
#: the Company enum (ENGLAND = 1 ...) on the wire.
MOVES: MoveCodec[moves.Move] = MoveCodec(pb.Move, (
    kind("bid", moves.Bid, moves.any_bid, amount=Int()),
    constant("pass_bid", moves.PASS_BID),
    constant("draw_cards", moves.DRAW_CARDS),
    kind("play_card", moves.PlayCard, moves.PLAY_CARD.__getitem__, company=EnumInt(offset=1)),
    kind("advance_merchant", moves.AdvanceMerchant, moves.ADVANCE.__getitem__,
         company=EnumInt(offset=1)),
    constant("take_arrival", moves.TAKE_ARRIVAL),
    constant("exchange_tiles", moves.EXCHANGE_TILES),
    constant("keep_tiles", moves.KEEP_TILES),
))


class BataviaGame(SheetGame[rules.State, moves.Move]):
    spec = SPEC
    move_codec = MOVES
    move_message = pb.Move
    view_message = pb.View
    sheet_schema = SHEET_SCHEMA
    default_sheets = MappingProxyType({"": DEFAULT_SHEET})
    engine = rules
    views = views
    text_table = text.TABLE

    def check_sheet(self, sheet: ComponentSheet) -> None:
        check_consistency(sheet)

    def observation_planes(self) -> BataviaPlanes:
        """The compact observation for learners (planes.py), built once."""
        return declared_planes()

    def view_bytes(self, state: rules.State, seat: int | None) -> bytes:
        return views.build_view_bytes(state, seat)

    def clone(self, state: rules.State) -> rules.State:
        return sim.clone_state(state)

    def heuristic_policy(self, params: Mapping[str, Any]) -> Any:
        """The greedy bot's choice from the state (heuristic.py)."""
        return heuristic.policy(params)

    def provisional_scores(self, state: rules.State) -> list[float] | None:
        """Final scoring's totals now, applied to a copy (it ends the copy's game)."""
        copy = sim.clone_state(state)
        scoring.final_scoring(copy, "provisional")
        return [float(f["total"]) for f in copy.final]

    def sample_state(
        self, views: Mapping[int, Message], history: Sequence[Event], rng: Rng,
        options: Mapping[str, Any], seat_count: int, components: ComponentSheet,
    ) -> rules.State:
        """See SAMPLING.md in this folder."""
        return sim.sample_state(views, history, rng, options, seat_count,  # type: ignore[arg-type]
                                self.rules_for(components))

    def hash_state(self, state: rules.State) -> str:
        return rules.state_digest(state)

    def result(self, state: rules.State) -> Result | None:
        if state.phase != rules.OVER:
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
