"""A match's state: the phases, the ``State`` dataclass, the ``SubDecision`` base class of the
pending sub-decisions kept on ``State.stack``, the ``PhaseDecision`` base class of each phase's
own decision (never stored), the state hash, and small read-only queries.

A seat's lands (``Land``) are its plantations and colonies in the order gained; moves name a land
by its index in that list."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from referee.core.contract import Decision, Event
from referee.core.hashing import digest
from referee.core.pending import Pending
from referee.core.rng import Chance
from referee.v1 import goa_pb2 as pb

from .catalog import (
    COLUMN_EXPEDITION,
    FIRST_BONUSES_PER_COLUMN,
    GRID_SQUARES,
    N_COLUMNS,
    N_SPICES,
    Rules,
)

# phases: Quick starter choices, "1. Place auction tokens", "2. Tile auctions", "3. Player
# actions", the Extra actions at the end of a round, the game over
QUICK, PLACE, AUCTION, ACTIONS, EXTRA, OVER = range(1, 7)


@dataclass(slots=True)
class Land:
    """A plantation or a colony on a seat's board. Per field: the spices it takes (a bitmask over
    the 5 spices) and the spice on it (-1: empty)."""

    colony: bool
    tile: int  # the plantation tile id, or the colony-tile id
    takes: list[int]
    spices: list[int]

    def hash_form(self) -> tuple:
        """The form the state hash uses: (0 plantation / 1 colony, tile, takes, spices)."""
        return (int(self.colony), self.tile, list(self.takes), list(self.spices))


@dataclass(slots=True)
class State:
    n: int
    options: dict[str, Any]
    rules: Rules = field(metadata={"hash": False})
    rng: Chance
    edition: str
    phase: int = QUICK
    round: int = 0
    first: int = 0
    # board
    grid: list[int] = field(default_factory=lambda: [-1] * GRID_SQUARES)  # tile per square
    bonanza: list[int] = field(default_factory=lambda: [-1] * GRID_SQUARES)  # face-down Bonanza
    box: list[int] = field(default_factory=list)  # tiles removed at set-up (revealed; Favor)
    stacks: dict[str, list[int]] = field(default_factory=dict)  # tiles not yet laid out
    tile_discard: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)  # cell per placed token (-1: none)
    token_seats: list[int] = field(default_factory=list)
    flag_cell: int = -1
    lot: int = 0
    bid_pos: int = 1
    high: int = 0
    high_bidder: int = -1
    bids: list[int] = field(default_factory=list)  # this lot: per bidder in order, -1 = pass
    turns: int = 0
    extra_pos: int = 0
    extra_passed: list[bool] = field(default_factory=list)
    quick_pos: int = 0
    # supplies
    deck: list[int] = field(default_factory=list)
    discard: list[int] = field(default_factory=list)
    colony_supply: list[list[int]] = field(default_factory=list)
    extra_supply: int = 0
    # players
    ducats: list[int] = field(default_factory=list)
    ships: list[int] = field(default_factory=list)
    colonists: list[int] = field(default_factory=list)
    extra_cards: list[int] = field(default_factory=list)
    hands: list[list[int]] = field(default_factory=list)
    rows: list[list[int]] = field(default_factory=list)
    lands: list[list[Land]] = field(default_factory=list)  # per seat, in the order gained
    colonies: list[list[int]] = field(default_factory=list)
    kept: list[list[int]] = field(default_factory=list)
    red_used: list[list[int]] = field(default_factory=list)
    singles_down: list[int] = field(default_factory=list)
    duty_face_down: list[list[int]] = field(default_factory=list)  # fulfilled Duty tiles, kept
    # who was first to each bonus row of each column (-1: nobody yet)
    first_bonus: list[int] = field(
        default_factory=lambda: [-1] * (N_COLUMNS * FIRST_BONUSES_PER_COLUMN))
    all_bonus: list[int] = field(default_factory=list)
    stack: list[SubDecision] = field(default_factory=list)  # pending sub-decisions, top last
    final: list[dict[str, Any]] = field(default_factory=list)
    # the decision the settled state waits for (None: game over), set by setup and apply
    pending: Decision | None = field(default=None, metadata={"hash": False})


def state_digest(state: State) -> str:
    """The state hash: ``referee.core.hashing``'s canonical JSON and SHA-256, each pending
    sub-decision and each land in its ``hash_form`` (a JSON array), so the typed sub-decisions
    hash exactly as the records made before them."""
    return digest(state)


def spice_counts(state: State, p: int) -> list[int]:
    counts = [0] * N_SPICES
    for land in state.lands[p]:
        for s in land.spices:
            if s >= 0:
                counts[s] += 1
    return counts


def has_empty_field(state: State, p: int) -> bool:
    return any(-1 in land.spices for land in state.lands[p])


def plantation_count(state: State, p: int) -> int:
    return sum(1 for land in state.lands[p] if not land.colony)


def current_action_turn(state: State) -> TurnInProgress | None:
    """The action turn under way (always at the bottom of the stack), if any."""
    st = state.stack
    return st[0] if st and isinstance(st[0], TurnInProgress) else None


def card_played(state: State) -> bool:
    """Whether this action's one Expedition card is spent (outside a turn: no card may be)."""
    t = current_action_turn(state)
    return t is None or t.card_played


def hand_limit(state: State, p: int) -> int:
    return state.rules.yields[COLUMN_EXPEDITION][state.rows[p][COLUMN_EXPEDITION]][1]


@dataclass(slots=True)
class SubDecision(Pending["State", Any, pb.Pending]):
    """A choice some seat must make before play goes on, kept on ``State.stack`` (the top one is
    pending): Goa's shape of the one protocol of pending decisions (``referee.core.pending``).
    ``decision`` lists the legal moves (None when none is left: the sub-decision then ends by
    itself); ``play`` plays one of them; ``pending_view`` fills the View's ``Pending`` message
    beyond what every sub-decision shows. ``hash_form`` is the form the state hash uses: the
    kind's number, then the fields in order, booleans as 0/1."""

    seat: int
    NUMBER: ClassVar[int] = -1

    def decision(self, state: State) -> Decision | None:
        raise NotImplementedError

    def play(self, state: State, move: Any) -> list[Event]:
        raise NotImplementedError

    def copy(self) -> SubDecision:
        """An independent copy (the state's clone): every field, lists copied."""
        cls = type(self)
        out = cls.__new__(cls)
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(self))
        for name in names:
            value = getattr(self, name)
            setattr(out, name, value[:] if type(value) is list else value)
        return out

    def hash_form(self) -> tuple:
        out: list = [self.NUMBER]
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) is bool:
                value = int(value)
            elif type(value) is list:
                value = list(value)
            out.append(value)
        return tuple(out)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


@dataclass(slots=True)
class TurnInProgress(SubDecision):
    """What every rule may ask of the action turn under way (``current_action_turn``): whether
    its one Expedition card is spent, its action done, whom Espionage reads. Its play is
    ``actions.ActionTurn``; the fields live here, below the rule modules that read them, so that
    the state needs no import of ``actions`` (which imports the state)."""

    action_done: bool = False
    card_played: bool = False
    spied: int = -1  # Espionage: the opponent whose development board this action reads
    extra_action: bool = False


class PhaseDecision(Pending["State", Any, pb.View]):
    """The decision of a phase itself (Quick starter, token placement, an auction, the Extra
    actions), pending whenever no sub-decision is on the stack: Goa's other shape of the one
    protocol of pending decisions. One object per phase, built once (``rules.PHASES``) and never
    stored: its own state is the state's phase fields, so it hashes as its phase and adds nothing
    to the state hash. ``decision`` only reads; where it lists nothing, what happens without a
    choice (a token with no cell left, a lot with no token or nobody bidding, the next action
    turn, the end of a round) is done by ``settle``, and the phase machine asks again.
    ``pending_view`` writes into the seat's ``View``."""

    __slots__ = ()
    PHASE: ClassVar[int] = -1

    def settle(self, state: State, events: list[Event]) -> None:
        """When ``decision`` lists nothing: take the next step that needs no choice, appending
        what happened to ``events`` (the machine then asks again)."""
        raise NotImplementedError

    def hash_form(self) -> tuple:
        return (self.PHASE,)
