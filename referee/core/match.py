"""A match: one game state plus everything needed to replay it. Pure (no I/O, no clock): the
caller passes elapsed times in; the server persists what ``submit`` returns before replying."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format

from .components import ComponentSheet
from .contract import Decision, Event, Game, IllegalMove, MalformedMove, Result
from .rng import Chance, Rng, SingleStream, Streams

#: The record format this referee writes: ``/2`` draws each chance event from its own keyed
#: stream (``Streams``; docs/ARCHITECTURE.md, "Fair chance"). ``/1`` records, whose games drew
#: every event from one running stream, still replay (``LEGACY_RECORD_FORMAT``).
RECORD_FORMAT = "referee-record/2"
LEGACY_RECORD_FORMAT = "referee-record/1"
RECORD_FORMATS = (RECORD_FORMAT, LEGACY_RECORD_FORMAT)

#: Salt for the RNG stream the time policy draws RANDOM_LEGAL moves from in ``/1`` records; kept
#: apart from the game's own RNG so a timeout does not change later chance in the game. (``/2``:
#: the keyed streams of domain "timeout", one per seat and timeout of that seat.)
TIMEOUT_STREAM_SALT = 0x7173

#: How deep a start may nest: a record that starts from a record that starts from one ...
MAX_START_DEPTH = 8
#: The record fields a start keeps of its source (what replaying it to the start needs).
_START_KEEPS = ("format", "game", "options", "seats", "seed", "components", "initial_state_hash",
                "match_id", "start")
_MOVE_KEEPS = ("n", "seat", "version_before", "move", "state_hash")


def match_chance(seed: int, record_format: str = RECORD_FORMAT) -> Chance:
    """The chance source a new game state of this record format keeps."""
    if record_format == LEGACY_RECORD_FORMAT:
        return SingleStream(seed)
    if record_format != RECORD_FORMAT:
        raise ValueError(f"unknown record format {record_format!r}")
    return Streams(seed)


_MOVE_JSON: dict[tuple[str, Any], dict[str, Any]] = {}


def move_json(game: Game, move: Any) -> dict[str, Any]:
    """The proto3 JSON of an engine move, cached (moves are immutable values). Callers must not
    mutate the returned dict."""
    key = (game.spec.name, move)
    out = _MOVE_JSON.get(key)
    if out is None:
        out = json_format.MessageToDict(game.move_to_proto(move))
        if len(_MOVE_JSON) < 100_000:
            _MOVE_JSON[key] = out
    return out


@dataclass(slots=True)
class MoveEntry:
    n: int  # 1-based move number
    seat: int
    version_before: int
    move: dict[str, Any]  # the game's Move protobuf as JSON (proto3 JSON mapping)
    state_hash: str  # hash of the state after the move
    elapsed_ms: int = 0
    timeout: bool = False
    policy: str | None = None  # "DEFAULT_MOVE" | "RANDOM_LEGAL" when the time policy moved
    note: str = ""  # the bot's note on its move (Submit.note); in the record only when set

    def to_json(self) -> dict[str, Any]:
        out = {
            "n": self.n,
            "seat": self.seat,
            "version_before": self.version_before,
            "move": self.move,
            "state_hash": self.state_hash,
            "elapsed_ms": self.elapsed_ms,
        }
        if self.timeout:
            out["timeout"] = True
            out["policy"] = self.policy
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Match:
    game: Game
    options: dict[str, Any]
    seat_count: int
    seed: int
    components: ComponentSheet
    state: Any = None
    version: int = 0
    moves: list[MoveEntry] = field(default_factory=list)
    initial_hash: str = ""
    forfeited: int | None = None
    record_format: str = RECORD_FORMAT
    timeout_rng: Rng | None = None  # /1: the one RANDOM_LEGAL stream, advanced per timeout
    timeout_streams: Streams | None = None  # /2: keyed by (seat, that seat's timeout number)
    start: dict[str, Any] | None = None  # where it started, when not at set-up (``start_doc``)
    # the decision of the current version, asked of the game once: (version, decision). The
    # state changes only by a move or a forfeit, and each moves the version on.
    _decided: tuple[int, Decision | None] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def create(
        cls,
        game: Game,
        options: Mapping[str, Any] | None,
        seat_count: int,
        seed: int,
        components: ComponentSheet | None = None,
        record_format: str = RECORD_FORMAT,
        start: Mapping[str, Any] | None = None,
    ) -> Match:
        """A new match at the game's set-up, or, with ``start`` (a ``start_doc``), where a
        recorded match stood (``start_state``; ReplayError if that record cannot get there or
        is not for this game, options, seat count and sheet)."""
        spec = game.spec
        if not spec.min_seats <= seat_count <= spec.max_seats:
            raise ValueError(
                f"{spec.name} is for {spec.min_seats} to {spec.max_seats} seats, not {seat_count}"
            )
        parsed = spec.parse_options(options)
        sheet = components or game.default_components(parsed)
        if start is None:
            state = game.setup(parsed, seat_count, match_chance(seed, record_format), sheet)
        else:
            start = start_doc(start.get("record"), start.get("move"),  # type: ignore[arg-type]
                              bool(start.get("redraw_hidden")))
            state, _history = start_state(game, start, sheet, redraw_rng(seed),
                                          parsed, seat_count)
        m = cls(game, parsed, seat_count, seed, sheet, state, record_format=record_format,
                start=start)
        m.initial_hash = game.hash_state(state)
        if record_format == LEGACY_RECORD_FORMAT:
            m.timeout_rng = Rng(seed).fork(TIMEOUT_STREAM_SALT)
        else:
            m.timeout_streams = Streams(seed, "timeout")
        return m

    # ------------------------------------------------------------------ queries
    def decision(self) -> Decision | None:
        """The pending decision, asked of the game once per state version: the Decision a seat
        is sent, the check of its Submit and the spectators' update all use the same one."""
        if self.forfeited is not None:
            return None
        decided = self._decided
        if decided is not None and decided[0] == self.version:
            return decided[1]
        d = self.game.decision(self.state)
        self._decided = (self.version, d)
        return d

    def result(self) -> Result | None:
        if self.forfeited is not None:
            return self.game.forfeit(self.state, self.forfeited)
        return self.game.result(self.state)

    @property
    def over(self) -> bool:
        return self.decision() is None

    # ------------------------------------------------------------------ moves
    def check(self, seat: int, move: Any, expected_version: int | None) -> Decision:
        """Raise IllegalMove unless ``seat`` may play ``move`` now; returns the decision."""
        decision = self.decision()
        if decision is None:
            raise IllegalMove("MATCH_OVER", "the match is over")
        if seat != decision.seat:
            raise IllegalMove(
                "NOT_YOUR_TURN", f"seat {decision.seat} is to act ({decision.kind}), not {seat}"
            )
        if expected_version is not None and expected_version != self.version:
            raise IllegalMove(
                "STALE_STATE",
                f"the move was made for state version {expected_version}; it is now {self.version}",
            )
        return decision

    def submit(
        self,
        seat: int,
        move: Any,
        expected_version: int | None = None,
        *,
        elapsed_ms: int = 0,
        timeout: bool = False,
        policy: str | None = None,
        note: str = "",
    ) -> tuple[MoveEntry, list[Event]]:
        """Validate and apply. On IllegalMove nothing has changed. ``note`` (the bot's own
        words on the move, checked by the caller) is kept with the move."""
        self.check(seat, move, expected_version)
        events = self.game.apply(self.state, seat, move)  # raises IllegalMove, state unchanged
        self.version += 1
        entry = MoveEntry(
            n=len(self.moves) + 1,
            seat=seat,
            version_before=self.version - 1,
            move=move_json(self.game, move),
            state_hash=self.game.hash_state(self.state),
            elapsed_ms=elapsed_ms,
            timeout=timeout,
            policy=policy,
            note=note,
        )
        self.moves.append(entry)
        return entry, events

    def timeout_move(self, policy: str) -> Any:
        """The move the time policy plays for the seat to act ("DEFAULT_MOVE"/"RANDOM_LEGAL")."""
        decision = self.decision()
        assert decision is not None
        if policy == "DEFAULT_MOVE":
            return self.game.default_move(self.state, decision)
        if self.timeout_streams is not None:  # the seat's k-th RANDOM_LEGAL timeout
            k = sum(1 for e in self.moves
                    if e.seat == decision.seat and e.timeout and e.policy == "RANDOM_LEGAL")
            rng = self.timeout_streams.stream("RANDOM_LEGAL", decision.seat, k)
        else:
            assert self.timeout_rng is not None
            rng = self.timeout_rng
        return decision.moves[rng.below(len(decision.moves))]

    def forfeit(self, seat: int) -> None:
        self.forfeited = seat
        self.version += 1

    # ------------------------------------------------------------------ records
    def record(self, **extra: Any) -> dict[str, Any]:
        result = self.result()
        rec: dict[str, Any] = {
            "format": self.record_format,
            "game": self.game.spec.name,
            "options": self.options,
            "seats": self.seat_count,
            "seed": str(self.seed),
            "components": {"sheet": self.components.name, "sha256": self.components.sha256},
            "initial_state_hash": self.initial_hash,
            "moves": [m.to_json() for m in self.moves],
            "forfeited": self.forfeited,
            "result": result_json(result) if result else None,
        }
        if self.start is not None:
            rec["start"] = self.start
        rec.update(extra)
        return rec


def result_json(result: Result) -> dict[str, Any]:
    return {
        "scores": result.scores,
        "ranks": result.ranks,
        "winners": result.winners,
        "details": result.details,
        "summary": result.summary,
    }


class ReplayError(Exception):
    pass


def replay(
    game: Game, record: Mapping[str, Any], components: ComponentSheet | None = None,
    *, history: list[Event] | None = None,
) -> Match:
    """Re-simulate a record move by move, checking every state hash and the result (a record
    that starts at a position of another, ``start``, replays that one first). Raises
    ReplayError at the first disagreement. ``history``, when given, collects every move's
    public events."""
    record_format = record.get("format")
    if record_format not in RECORD_FORMATS:
        raise ReplayError(f"not a {' or '.join(RECORD_FORMATS)} record")
    if record.get("game") != game.spec.name:
        raise ReplayError(f"record is for {record.get('game')!r}, not {game.spec.name!r}")
    options = record.get("options") or {}
    sheet = components or game.default_components(game.spec.parse_options(options))
    want_sheet = (record.get("components") or {}).get("sha256")
    if want_sheet and want_sheet != sheet.sha256:
        raise ReplayError(
            f"record was played with component sheet {want_sheet[:12]}…, "
            f"not {sheet.sha256[:12]}… (pass the organizer's sheet with --components)"
        )
    start = record.get("start")
    if start is not None and not isinstance(start, Mapping):
        raise ReplayError("the record's start is not an object")
    try:
        m = Match.create(game, options, int(record["seats"]), int(record["seed"]), sheet,
                         record_format=str(record_format), start=start)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"the record's header is not valid: {exc}") from None
    if record.get("initial_state_hash") and m.initial_hash != record["initial_state_hash"]:
        raise ReplayError("initial state hash differs: setup is not the one recorded")
    for entry in record.get("moves", []):
        msg = game.move_message()
        try:
            json_format.ParseDict(entry["move"], msg)
            move = game.move_from_proto(msg)
        except (json_format.ParseError, MalformedMove, KeyError, TypeError, ValueError) as exc:
            raise ReplayError(f"move {str(entry.get('n'))[:12]}: not a move of "
                              f"{game.spec.name}: {str(exc)[:120]}") from None
        try:
            _entry, events = m.submit(int(entry["seat"]), move, int(entry["version_before"]),
                                      note=str(entry.get("note") or ""))
        except IllegalMove as exc:
            raise ReplayError(f"move {entry['n']}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise ReplayError(f"move {str(entry.get('n'))[:12]}: not a valid entry: "
                              f"{str(exc)[:120]}") from None
        if history is not None:
            history.extend(events)
        if m.moves[-1].state_hash != entry.get("state_hash"):
            raise ReplayError(f"move {entry['n']}: state hash differs from the record")
    if record.get("forfeited") is not None:
        m.forfeit(int(record["forfeited"]))
    want = record.get("result")
    got = m.result()
    if want is not None and (got is None or result_json(got) != want):
        raise ReplayError("the final result differs from the record")
    return m



# ---------------------------------------------------------------------------- start positions
# A match (or a simulation) may start where a recorded match stood after N moves (issue 21,
# item 6; docs/research/forward-model.md, "Start from a position"). Its record keeps the start
# (the source record cut to those N moves, N, and whether the hidden parts were redrawn), so
# replaying it replays the source first and verifies the whole from scratch.


def start_doc(record: Mapping[str, Any], move: int, redraw_hidden: bool) -> dict[str, Any]:
    """What a record keeps of where its match started: the source record's header and its
    first ``move`` moves (no result, times or notes: what replaying to that point needs), the
    move number and whether hidden parts were redrawn. ReplayError if ``record`` has no such
    move or nests starts too deep; nothing is replayed yet (``start_state`` does)."""
    if not isinstance(record, Mapping):
        raise ReplayError("the start's record is not a JSON object")
    if isinstance(move, bool) or not isinstance(move, int) or move < 0:
        raise ReplayError(f"the start's move must be a count of moves (0 or more), not {move!r}")
    moves = record.get("moves") or []
    if not isinstance(moves, list) or not all(isinstance(e, Mapping) for e in moves):
        raise ReplayError("the start's record has no valid move list")
    if move > len(moves):
        raise ReplayError(f"the record has {len(moves)} moves; it cannot start after move "
                          f"{move}")
    depth, inner = 0, record.get("start")
    while isinstance(inner, Mapping):
        depth += 1
        if depth >= MAX_START_DEPTH:
            raise ReplayError(f"starts nest more than {MAX_START_DEPTH} deep")
        inner = (inner.get("record") or {}).get("start") \
            if isinstance(inner.get("record"), Mapping) else None
    src = {k: record[k] for k in _START_KEEPS if k in record}
    src["moves"] = [{k: e[k] for k in _MOVE_KEEPS if k in e} for e in moves[:move]]
    return {"record": src, "move": move, "redraw_hidden": bool(redraw_hidden)}


def redraw_rng(seed: int) -> Rng:
    """The stream a match started at a position redraws hidden parts with: one keyed stream of
    the new match's seed (domain "start"), apart from its game's and time policy's chance."""
    return Streams(seed, "start").stream("redraw_hidden")


def start_state(game: Game, start: Mapping[str, Any], components: ComponentSheet, rng: Rng,
                options: Mapping[str, Any] | None = None,
                seat_count: int | None = None) -> tuple[Any, list[Event]]:
    """The state ``start`` (a ``start_doc``) describes, and the public events that led there:
    its record replayed (every hash checked) to its move, then, if ``redraw_hidden``, what no
    seat could see there drawn anew with ``rng`` by the game's sampler from every seat's view
    and those events (``Game.sample_state``). ReplayError if the record is not for this game,
    ``options`` (parsed) and ``seat_count`` when given, does not replay, or is over there;
    NotImplementedError if a redraw is asked of a game without a sampler."""
    doc = start_doc(start.get("record") or {}, start.get("move"),  # type: ignore[arg-type]
                    bool(start.get("redraw_hidden")))
    src = doc["record"]
    if src.get("game") != game.spec.name:
        raise ReplayError(f"the start's record is for {str(src.get('game'))[:24]!r}, not "
                          f"{game.spec.name!r}")
    try:
        src_options = game.spec.parse_options(src.get("options") or {})
        src_seats = int(src["seats"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"the start's record has no valid options or seat count: {exc}") \
            from None
    if options is not None and dict(options) != src_options:
        raise ReplayError("the start's record was played with other options")
    if seat_count is not None and seat_count != src_seats:
        raise ReplayError(f"the start's record is for {src_seats} seats, not {seat_count}")
    history: list[Event] = []
    m = replay(game, src, components, history=history)
    if game.decision(m.state) is None:
        raise ReplayError(f"the recorded match is over after move {doc['move']}")
    state = m.state
    if doc["redraw_hidden"]:
        views = {s: game.view(state, s) for s in range(m.seat_count)}
        state = game.sample_state(views, history, rng, m.options, m.seat_count, components)
    return state, history
