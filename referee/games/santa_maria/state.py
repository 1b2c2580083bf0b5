"""Santa Maria's match state: the plain data every rule reads and changes, and the index
conventions the rules share.

Indices: a cell is ``row * 6 + col`` (0-based); resources 0..4 are wood, wheat, sugar, gem,
gold; goods 7-tuples add coins (5) and points (6). Field names are part of the state hash (the
golden records pin them), so they stay short.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.core.contract import Decision, Event
from referee.core.pending import Pending
from referee.core.rng import Chance
from referee.v1 import santa_maria_pb2 as pb

from .catalog import MONKS_PER_PLAYER, Rules
from .sheet import N_DOCKS

SETUP_STANDARD, SETUP_ADVANCED = "standard", "advanced"
BOARDS_RANDOM, BOARDS_PICK = "random", "pick"
DRAFT, YEAR, OVER = 1, 2, 3  # phases


@dataclass(slots=True)
class Player:
    board: str
    grid: list[int]  # 36 cell kinds (0 = empty)
    printed: int  # bitmask of printed cells
    occ: int  # bitmask of occupied (non-empty) cells
    bld: int  # bitmask of buildings
    die_on: list[int]  # per cell: 0, WHITE or BLUE
    coins_on: list[int]  # per cell: coins placed by ActivateBuilding
    blocked: int  # bitmask: a die or coins on the cell
    coins: int
    res: list[int]  # resources, by index
    points: int = 0
    religion: int = 0
    conq: int = 0  # conquistador track space this year
    conq_stamp: int = 0  # when it got there (earlier = lower in the stack)
    blue: list[int] = field(default_factory=list)  # own unused blue dice (faces)
    blue_unlocked: int = 1
    blue_used: int = 0
    white_used: int = 0
    activations: int = 0  # (B) coin activations this year
    monks_left: int = MONKS_PER_PLAYER
    port: list[list[int]] = field(default_factory=lambda: [[] for _ in range(N_DOCKS)])  # per dock
    retreat: int = -1  # retreat space this year, or -1
    scholars: int = 0  # bit set of Scholar effects (SCHOLAR_BIT)
    own_scholar: str = ""

    def take_board(self, rules: Rules, board: str, grid: tuple[int, ...]) -> None:
        """Mise en place des colonies: the colony board and its printed cells."""
        self.board = board
        self.grid = list(grid)
        self.printed = self.occ = sum(1 << i for i, k in enumerate(grid) if k)
        self.bld = sum(1 << i for i, k in enumerate(grid) if rules.cells[k].building)

    def set_cell(self, rules: Rules, cell: int, kind: int) -> None:
        """A tile's or a road's cell laid on an empty cell of the colony."""
        self.grid[cell] = kind
        self.occ |= 1 << cell
        if rules.cells[kind].building:
            self.bld |= 1 << cell

    def free_buildings(self) -> int:
        """Bitmask of buildings without a die or coins on them."""
        return self.bld & ~self.blocked


@dataclass(slots=True)
class State:
    n: int
    options: dict[str, Any]
    rules: Rules = field(metadata={"hash": False})
    rng: Chance
    players: list[Player]
    phase: int = YEAR
    year: int = 1
    first: int = 0  # first player this year
    current: int = 0  # seat whose turn it is
    main_done: bool = False  # the main action of the turn is taken
    advanced: bool = False
    shared: bool = False  # variant: shared blue dice
    white: list[int] = field(default_factory=list)
    shared_blue: list[int] = field(default_factory=list)
    display: list[int] = field(default_factory=list)  # 10 slots: tile id or -1
    pile_d: list[int] = field(default_factory=list)  # face-down doubles (hidden order)
    pile_t: list[int] = field(default_factory=list)  # face-down triples (hidden order)
    ship_slots: list[int] = field(default_factory=list)
    ship_pile: list[int] = field(default_factory=list)
    monk_tiles: list[str] = field(default_factory=list)  # 3 scholars then 3 bishops
    monks: list[list[int]] = field(default_factory=list)  # per monk space: seats
    retreat_occ: list[int] = field(default_factory=list)
    roads_left: int = 0
    boards_left: list[int] = field(default_factory=list)  # A boards still to choose
    lots: list[tuple[int, str]] = field(default_factory=list)
    lot_taken: list[bool] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)  # scholars/bishops in the box (hidden)
    #: pending sub-decisions and steps, front first (effect_tasks.py, action_tasks.py)
    queue: list[Task] = field(default_factory=list)
    stamp: int = 0
    last_retreat: list[int] = field(default_factory=list)
    final: list[dict[str, Any]] = field(default_factory=list)
    cache: Any = field(default=None, metadata={"hash": False})  # the memoised decision

    def start_turn(self, seat: int) -> None:
        self.current = seat
        self.main_done = False


# ============================================================================ pending steps


class Task(Pending["State", Any, pb.Pending]):
    """A pending step of ``seat``'s turn (or of the set-up): a sub-decision, or a step that needs
    no choice; Santa Maria's shape of the one protocol of pending decisions
    (``referee.core.pending``). A main action queues tasks on ``state.queue``; the task at the
    front either resolves by itself (``settle`` returns True) or becomes the pending decision
    (``decision``, built from its ``legal_moves``), applying the one played (``play``) and showing
    itself in the View's ``Pending`` message (``pending_view``). Subclasses, one per rule, are
    slotted dataclasses whose first field is ``seat``; every task hashes as ``(tag, field, ...)``
    (``hash_form``), the form the golden records pin."""

    __slots__ = ()
    seat: int
    #: short name in the state hash
    tag: ClassVar[str]
    #: Decision.kind when the task asks its seat to choose
    kind: ClassVar[str] = ""
    prompt: ClassVar[str] = ""
    #: what a legal answer is, for the IllegalMove message
    rule: ClassVar[str] = ""

    def hash_form(self) -> tuple:
        fields: tuple[str, ...] = self.__slots__
        return (self.tag, *(getattr(self, name) for name in fields))

    def settle(self, state: State) -> bool:
        """Resolve without a choice if there is none to make: take the task off the queue's front,
        apply it and return True; else return False and the task becomes the decision."""
        return False

    def legal_moves(self, state: State) -> list:
        raise AssertionError(f"{type(self).__name__} never asks for a choice")

    def decision(self, state: State) -> Decision:
        return Decision(self.seat, self.kind, self.legal_moves(state), self.prompt)

    def play(self, state: State, move: Any) -> list[Event]:
        """Apply the chosen ``move`` (one of ``legal_moves``); the task is already off the queue."""
        raise AssertionError(f"{type(self).__name__} never asks for a choice")


def push_tasks(state: State, *tasks: Task) -> None:
    """Queue tasks ahead of everything pending (they resolve first, in the given order)."""
    state.queue[0:0] = tasks
