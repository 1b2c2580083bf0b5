"""The game contract (docs/ARCHITECTURE.md, "The game contract").

A game is a stateless object implementing :class:`Game`; all match state lives in the plain-data
``State`` it creates. ``apply`` is the only operation that changes that state: it mutates it in
place and is deterministic (the same seed and the same moves always give the same state). Every
other method, ``decision`` above all, is a pure query: it leaves ``hash_state`` unchanged (a game
may memoise an answer in a field the hash leaves out). Chance comes only from the
:class:`~referee.core.rng.Chance` stored in the state, each chance event drawing from the stream
of its own key (docs/ARCHITECTURE.md, "Fair chance").

Moves inside the engine are small immutable Python values (the game's own move classes); the game
maps them one-to-one to its protobuf ``Move`` at the boundary (``move_to_proto`` /
``move_from_proto``). Keeping protobuf out of the hot loop is what lets an engine list every legal
move at tens of thousands of decisions per second; the lists a seat receives are still complete
and concrete, converted move by move.

Every game folder has the same shape, one module per job (``docs/games/index.md``, *Adding a
game*, has the table of which module holds which hook): ``game.py`` the adapter and its
``GameSpec``, ``rules.py`` the engine's face (``setup``, ``decision``, ``apply``,
``default_move``), ``state.py`` the state and ``state_digest``, ``catalog.py`` the sheet compiled
into ``Rules``, ``sheet.py`` the sheet's schema and checks, ``moves.py``, ``view.py`` (``view``,
``view_bytes``), ``scoring.py``, ``sim.py`` (``clone``, ``sample_state``). A new game copies
``referee/games/batavia/``, the smallest.
"""
from __future__ import annotations

import abc
import copy
import enum
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from google.protobuf.message import Message

from .components import ComponentSheet
from .planes import ObservationPlanes
from .rng import Chance, Rng
from .texttable import TextTable

if TYPE_CHECKING:
    from _typeshed import SupportsDunderLT

S = TypeVar("S")  # the game's state type
M = TypeVar("M", bound=Hashable)  # the game's move type
K = TypeVar("K")  # a heuristic's knobs (``read_knobs``)


class IllegalMove(Exception):
    """A move that is well-formed but not legal now. ``code`` is a machine-readable reason
    (``ILLEGAL_MOVE``, ``NOT_YOUR_TURN``, ...); ``message`` names the rule."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class MalformedMove(Exception):
    """A move that cannot be a move of this game at all (wrong game, missing fields, values out
    of their enum). Maps to INVALID_ARGUMENT."""


class BadOptions(ValueError):
    """Options that do not fit the game's option schema."""


@dataclass(frozen=True, slots=True)
class OptionSpec:
    name: str
    kind: str  # "bool" | "int" | "enum"
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None

    def parse(self, raw: Any) -> Any:
        """Parse a value given as a string (wire form) or native Python value."""
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise BadOptions(f"option {self.name!r} takes true or false, not {raw!r}")
        if self.kind == "int":
            try:
                value = int(str(raw).strip()) if not isinstance(raw, int) else raw
            except ValueError:
                raise BadOptions(f"option {self.name!r} takes an integer, not {raw!r}") from None
            if (self.min is not None and value < self.min) or (
                self.max is not None and value > self.max
            ):
                raise BadOptions(
                    f"option {self.name!r} must be within [{self.min}, {self.max}], not {value}"
                )
            return value
        if self.kind == "enum":
            text = str(raw).strip()
            if text not in self.choices:
                raise BadOptions(
                    f"option {self.name!r} takes one of {', '.join(self.choices)}, not {raw!r}"
                )
            return text
        raise BadOptions(f"option {self.name!r} has unknown kind {self.kind!r}")


class Information(enum.StrEnum):
    """What the seats see, in OpenSpiel's terms (``pyspiel.GameType.Information``)."""

    PERFECT = "perfect"  # every seat sees the whole state
    IMPERFECT = "imperfect"  # some part is hidden from some seat (a hand, a deck's order)


class ChanceMode(enum.StrEnum):
    """How chance enters, in OpenSpiel's terms (``pyspiel.GameType.ChanceMode``)."""

    DETERMINISTIC = "deterministic"  # no chance at all
    EXPLICIT_STOCHASTIC = "explicit_stochastic"  # chance nodes list their outcomes
    #: the engine draws its chance events itself, from the state's keyed streams, without
    #: listing outcomes and their probabilities (every game here)
    SAMPLED_STOCHASTIC = "sampled_stochastic"


#: A bound of a match (its length, its scores) given its options and seat count.
Bound = Callable[[Mapping[str, Any], int], int]


@dataclass(frozen=True, slots=True)
class GameSpec:
    """What a game is, for the server, the tools and the research adapters. Besides names, seats
    and options, it declares what OpenSpiel's game type and game info say of a game, each value
    derived from the rules and the default component sheet (the game's RULINGS.md writes the
    derivation): ``information``, ``chance``, ``max_decisions`` (no match with these options and
    seats asks more decisions of its seats) and ``min_score`` / ``max_score`` (every final score
    of such a match lies within them). ``tests/contract/test_game_type.py`` plays random matches
    of every game against the declared bounds."""

    name: str
    title: str
    min_seats: int
    max_seats: int
    options: tuple[OptionSpec, ...]
    information: Information
    chance: ChanceMode
    rulebook: str = ""
    #: None: not derived yet (the game's RULINGS.md says what is missing); users fall back to a
    #: bound of their own (the OpenSpiel adapter: ``envs.spiel.MAX_GAME_LENGTH``)
    max_decisions: Bound | None = None
    min_score: Bound | None = None
    max_score: Bound | None = None

    def parse_options(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        """Fill defaults and check every given option; unknown names are an error."""
        raw = dict(raw or {})
        known = {o.name: o for o in self.options}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise BadOptions(
                f"unknown option(s) {', '.join(unknown)}; {self.name} has "
                f"{', '.join(sorted(known)) or 'no options'}"
            )
        return {
            name: (spec.parse(raw[name]) if name in raw else spec.default)
            for name, spec in known.items()
        }


@dataclass(slots=True)
class Decision(Generic[M]):
    """The one seat to act now, what kind of choice it is, and ALL its legal moves."""

    seat: int
    kind: str
    moves: Sequence[M]
    prompt: str = ""


@dataclass(slots=True)
class Event:
    """Something that happened, in public terms only (no hidden card, no deck order)."""

    kind: str
    seat: int  # -1 = the game itself (chance, phase change)
    text: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Result:
    scores: list[int]
    ranks: list[int]  # 1 = best; equal scores share a rank
    winners: list[int]
    details: list[dict[str, Any]]
    summary: str = ""


def competition_ranks(scores: Sequence[SupportsDunderLT[Any]]) -> list[int]:
    """1224 ranking: equal scores share a rank, the next rank skips. A score may be a tuple
    (the score, then its tie-breaks)."""
    return [1 + sum(1 for other in scores if s < other) for s in scores]


def sample_fitting(draw: Callable[[], S], views: Mapping[int, Message],
                   view: Callable[[S, int], Message], title: str) -> S:
    """Run a game's sampler ``draw`` (``Game.sample_state``'s work) with the checks every sampler
    owes its caller: views that fit no position of the game (a key or index the sampler could not
    find while reading them) are a ValueError naming the game, and when several seats' views are
    given, the sample must show each seat its own (else they are of different positions)."""
    try:
        state = draw()
    except (KeyError, IndexError) as exc:
        raise ValueError(f"the views do not fit a {title} game ({exc!r})") from exc
    if len(views) > 1:
        for seat, seen in views.items():
            if view(state, seat) != seen:
                raise ValueError(f"seat {seat}'s view is not of the same position as the others")
    return state


class Game(abc.ABC, Generic[S, M]):
    """One game. Implementations are stateless; register one instance in the game's package as
    ``GAME``. Nothing here may do I/O, read a clock or use a global RNG.

    Wire convention: the game's field in the ``referee.v1.Move`` and ``referee.v1.View`` oneofs
    is named exactly ``spec.name``; that is how the server wraps and unwraps messages without
    knowing any game."""

    spec: GameSpec
    #: The game's Move protobuf class (the field of referee.v1.Move for this game).
    move_message: type[Message]
    #: The game's View protobuf class (the field of referee.v1.View for this game).
    view_message: type[Message]
    #: How the game's View and Move read as text (``referee.core.text``; the game's
    #: ``text.py``). None: the generic rendering of every field, complete but in the messages'
    #: own names.
    text_table: TextTable | None = None

    # ---- component data
    @abc.abstractmethod
    def default_components(self, options: Mapping[str, Any]) -> ComponentSheet:
        """The default component sheet for these options (e.g. the edition's sheet)."""

    @abc.abstractmethod
    def load_components(self, path: str) -> ComponentSheet:
        """Load and validate an organizer's sheet; raise ValueError naming what is wrong."""

    def sheet_variant(self, options: Mapping[str, Any]) -> str:
        """Which sheet these options play with, when a game has several (e.g. one per edition);
        "" for games with one sheet. An organizer's sheet replaces the default of its variant."""
        return ""

    def sheet_variant_of(self, sheet: ComponentSheet) -> str:
        """The variant a (possibly organizer-supplied) sheet is for."""
        return ""

    def component_sheets(self) -> dict[str, ComponentSheet]:
        """Every default sheet, by variant (ListGames reports each with its provenance)."""
        return {"": self.default_components(self.spec.parse_options({}))}

    # ---- the rules
    @abc.abstractmethod
    def setup(
        self, options: Mapping[str, Any], seat_count: int, rng: Chance,
        components: ComponentSheet,
    ) -> S:
        """A new state, ready for its first decision. ``rng`` is kept in the state; every chance
        event draws from ``rng.stream(*key)`` (or ``next_stream``), keyed by what it is."""

    @abc.abstractmethod
    def decision(self, state: S) -> Decision[M] | None:
        """The pending decision with every legal move, or None once the game is over. A pure
        query: it never changes the state (``tests/contract`` checks the state hash before and
        after); any resolution of forced steps belongs to ``apply`` and ``setup``."""

    @abc.abstractmethod
    def apply(self, state: S, seat: int, move: M) -> list[Event]:
        """Play ``move`` for ``seat``. Raises IllegalMove (state unchanged) if it is not legal."""

    @abc.abstractmethod
    def view(self, state: S, seat: int | None) -> Message:
        """What ``seat`` may see (None = a spectator: public information only), as the game's
        View protobuf. Written per game, never filtered from a full dump."""

    def view_bytes(self, state: S, seat: int | None) -> bytes:
        """``view(state, seat)`` serialised. The referee sends views as bytes; a game that can
        produce the encoding without building the message (e.g. from cached fragments)
        overrides this. Must parse to exactly ``view(state, seat)``."""
        return self.view(state, seat).SerializeToString()

    @abc.abstractmethod
    def result(self, state: S) -> Result | None:
        """Scores and ranks once the game is over, else None."""

    # ---- boundary
    @abc.abstractmethod
    def move_to_proto(self, move: M) -> Message:
        """The game's Move protobuf for an engine move."""

    @abc.abstractmethod
    def move_from_proto(self, message: Message) -> M:
        """The engine move for a protobuf Move; MalformedMove if it cannot be one."""

    @abc.abstractmethod
    def default_move(self, state: S, decision: Decision[M]) -> M:
        """The move the time policy DEFAULT_MOVE plays (e.g. pass, draw)."""

    @abc.abstractmethod
    def hash_state(self, state: S) -> str:
        """A hex digest of the complete state (including hidden parts and the RNG)."""

    def forfeit(self, state: S, seat: int) -> Result:
        """Result when ``seat`` forfeits: the others share the win at equal rank, the forfeiting
        seat ranks last. Games may override."""
        n = self.seat_count(state)
        scores = [0 if s == seat else 1 for s in range(n)]
        return Result(
            scores=scores,
            ranks=competition_ranks(scores),
            winners=[s for s in range(n) if s != seat],
            details=[{"forfeited": s == seat} for s in range(n)],
            summary=f"seat {seat} forfeited",
        )

    @abc.abstractmethod
    def seat_count(self, state: S) -> int: ...

    # ---- the forward model (referee.sim; docs/research/forward-model.md)
    def clone(self, state: S) -> S:
        """An independent copy of ``state``: applying moves to one never changes the other, and
        both hash alike. The default deep-copies; a game overrides it with a hand-written copy
        (the forward model's clone is a search bot's hot path)."""
        return copy.deepcopy(state)

    def observation_planes(self) -> ObservationPlanes | None:
        """The game's compact observation for learners (referee/core/planes.py): named feature
        planes written straight from the state, a function of the seat's view alone. None: the
        research environments encode the View message generically. Built once; cache it."""
        return None

    def provisional_scores(self, state: S) -> list[float] | None:
        """Each seat's final score if the game ended now: the game's own final scoring applied
        to a copy of ``state``, without its end-of-game condition (None: the game has none).
        A search bot's static evaluation where it cuts a rollout short; it reads the full state,
        so a bot calls it on its own determinization, never on the true state."""
        return None

    def heuristic_policy(
        self, params: Mapping[str, Any],
    ) -> Callable[[S, int, Sequence[M]], M | None] | None:
        """The game's greedy reference bot (the SDK's, ``referee_client.bots``) as a function of
        the state: ``choose(state, seat, moves)`` answers the move of ``moves`` (a decision's
        legal moves, in their order) that the bot with knobs ``params`` (its tuning weights)
        plays from what ``seat`` sees of ``state``, or None where the bot would pick at random.
        None: the game has none, and a caller hands the bot a Decision message instead. A
        search bot's rollout policy on its own determinizations, at the engine's speed instead
        of a message per move; a game that has one has a test that it answers exactly the SDK
        bot's move."""
        return None

    def sample_state(
        self, views: Mapping[int, Message], history: Sequence[Event], rng: Rng,
        options: Mapping[str, Any], seat_count: int, components: ComponentSheet,
    ) -> S:
        """A full state consistent with everything the seats in ``views`` saw: for each seat
        ``s`` in ``views``, ``view(state, s)`` equals ``views[s]`` (the game's View message that
        seat received), and what none of them could see (other hands and money where hidden,
        face-down tiles, deck orders, the future of chance) is drawn with ``rng``, uniformly
        over what is consistent unless the game's docs name a bias. ``history`` is the match's
        public events so far (what Join.events delivers), oldest first. Reads nothing else: a
        sampler cannot leak what it is never given. ``options`` are parsed options."""
        raise NotImplementedError(f"{self.spec.name} has no sampler")

    def sampler(
        self, views: Mapping[int, Message], history: Sequence[Event], options: Mapping[str, Any],
        seat_count: int, components: ComponentSheet,
    ) -> Callable[[Rng], S]:
        """``draw(rng)``: :meth:`sample_state` on these fixed views and history, for a search
        that draws many worlds from one decision's view. The same draws for the same ``rng``
        (same state, same later chance); a game may read the views' public part once here
        instead of at every draw. Views that fit no position may raise ValueError here or at
        the first draw."""
        return lambda rng: self.sample_state(views, history, rng, options, seat_count,
                                             components)


def read_knobs(knobs: type[K], params: Mapping[str, Any], game: str) -> K:
    """A game's ``heuristic_policy`` knobs: the dataclass ``knobs`` filled from ``params`` (the
    SDK bot's ``knobs()``), by its field names; a ValueError names what is missing."""
    names = [f.name for f in fields(knobs)]  # type: ignore[arg-type]
    missing = [k for k in names if k not in params]
    if missing:
        raise ValueError(f"the {game} heuristic needs {', '.join(missing)}")
    return knobs(**{k: params[k] for k in names})
