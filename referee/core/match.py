"""A match: one game state plus everything needed to replay it. Pure (no I/O, no clock): the
caller passes elapsed times in; the server persists what ``submit`` returns before replying."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format

from .components import ComponentSheet
from .contract import Decision, Event, Game, IllegalMove, Result
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

    @classmethod
    def create(
        cls,
        game: Game,
        options: Mapping[str, Any] | None,
        seat_count: int,
        seed: int,
        components: ComponentSheet | None = None,
        record_format: str = RECORD_FORMAT,
    ) -> Match:
        spec = game.spec
        if not spec.min_seats <= seat_count <= spec.max_seats:
            raise ValueError(
                f"{spec.name} is for {spec.min_seats} to {spec.max_seats} seats, not {seat_count}"
            )
        parsed = spec.parse_options(options)
        sheet = components or game.default_components(parsed)
        state = game.setup(parsed, seat_count, match_chance(seed, record_format), sheet)
        m = cls(game, parsed, seat_count, seed, sheet, state, record_format=record_format)
        m.initial_hash = game.hash_state(state)
        if record_format == LEGACY_RECORD_FORMAT:
            m.timeout_rng = Rng(seed).fork(TIMEOUT_STREAM_SALT)
        else:
            m.timeout_streams = Streams(seed, "timeout")
        return m

    # ------------------------------------------------------------------ queries
    def decision(self) -> Decision | None:
        if self.forfeited is not None:
            return None
        return self.game.decision(self.state)

    def result(self) -> Result | None:
        if self.forfeited is not None:
            return self.game.forfeit(self.state, self.forfeited)
        return self.game.result(self.state)

    @property
    def over(self) -> bool:
        return self.forfeited is not None or self.game.decision(self.state) is None

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
    game: Game, record: Mapping[str, Any], components: ComponentSheet | None = None
) -> Match:
    """Re-simulate a record move by move, checking every state hash and the result.
    Raises ReplayError at the first disagreement."""
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
    m = Match.create(game, options, int(record["seats"]), int(record["seed"]), sheet,
                     record_format=str(record_format))
    if record.get("initial_state_hash") and m.initial_hash != record["initial_state_hash"]:
        raise ReplayError("initial state hash differs: setup is not the one recorded")
    for entry in record.get("moves", []):
        msg = game.move_message()
        json_format.ParseDict(entry["move"], msg)
        move = game.move_from_proto(msg)
        try:
            m.submit(int(entry["seat"]), move, int(entry["version_before"]),
                     note=str(entry.get("note") or ""))
        except IllegalMove as exc:
            raise ReplayError(f"move {entry['n']}: {exc}") from None
        if m.moves[-1].state_hash != entry["state_hash"]:
            raise ReplayError(f"move {entry['n']}: state hash differs from the record")
    if record.get("forfeited") is not None:
        m.forfeit(int(record["forfeited"]))
    want = record.get("result")
    got = m.result()
    if want is not None and (got is None or result_json(got) != want):
        raise ReplayError("the final result differs from the record")
    return m

