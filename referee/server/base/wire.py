"""The referee.v1 wire encoding the server needs beyond the generated classes: a game's messages
wrapped in (and unwrapped from) the envelopes by the wire convention (the game's field in
referee.v1.Move / View is named ``spec.name``), a Decision assembled from cached encodings, and
the few messages more than one handler builds (a refusal, an event, an option value)."""
from __future__ import annotations

import json
import unicodedata
from typing import Any

import structlog

from referee.core.contract import Event, Game, MalformedMove
from referee.server.base import errors, metrics
from referee.v1 import referee_pb2 as pb

_log = structlog.get_logger("referee.wire")

_BYTES = [bytes((i,)) for i in range(0x80)]


def _varint(n: int) -> bytes:
    if n < 0x80:  # a tag, and most lengths: one byte
        return _BYTES[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field: tag, length, bytes. Appending it to an encoded
    message is the same as setting (or, for a repeated field, adding) that field."""
    return _varint((number << 3) | 2) + _varint(len(payload)) + payload


_DECISION_VIEW = pb.Decision.DESCRIPTOR.fields_by_name["view"].number
_DECISION_MOVES = pb.Decision.DESCRIPTOR.fields_by_name["legal_moves"].number
_SERVER_DECISION = pb.ServerMessage.DESCRIPTOR.fields_by_name["decision"].number
_SERVER_MOVE_RESULT = pb.ServerMessage.DESCRIPTOR.fields_by_name["move_result"].number
_RESULT_NEXT = pb.MoveResult.DESCRIPTOR.fields_by_name["next"].number
_UPDATE_VIEW = pb.SpectatorUpdate.DESCRIPTOR.fields_by_name["view"].number
_WATCH_UPDATE = pb.WatchMessage.DESCRIPTOR.fields_by_name["update"].number


def server_decision(body: bytes) -> bytes:
    """The ServerMessage carrying the encoded Decision ``body``."""
    return _field(_SERVER_DECISION, body)


def server_move_result(result: pb.MoveResult, next_body: bytes) -> bytes:
    """The ServerMessage carrying ``result`` with the encoded Decision ``next_body`` as its
    ``next`` (Join.combine_decision), appended to the result's encoding: a parser takes fields
    in any order (``state_hash``, field 7, then comes before ``next``, field 6)."""
    return _field(_SERVER_MOVE_RESULT,
                  result.SerializeToString() + _field(_RESULT_NEXT, next_body))


class GameWire:
    """Wraps and unwraps a game's messages in the referee.v1 envelopes (no game named here)."""

    __slots__ = ("_move_fields", "_view_field", "field", "game")

    def __init__(self, game: Game):
        self.game = game
        self.field = game.spec.name
        self._move_fields: dict[Any, bytes] = {}
        self._view_field = pb.View.DESCRIPTOR.fields_by_name[self.field].number

    def decision_body(self, head: pb.Decision, state: Any, seat: int, moves: Any,
                      view: bytes | None = None) -> bytes:
        """The encoded Decision: ``head`` (its scalar fields) + the seat's view (``view``, the
        game's encoded View when the caller has it, else built here) + every legal move,
        assembled from encodings (each move's is cached) instead of building and copying
        messages. Parses to the message built field by field (tests/server/test_wire.py)."""
        cache = self._move_fields
        if view is None:
            view = self.game.view_bytes(state, seat)
        parts = [head.SerializeToString(), _field(_DECISION_VIEW, _field(self._view_field, view))]
        for m in moves:
            enc = cache.get(m)
            if enc is None:
                enc = _field(_DECISION_MOVES, self.move(m).SerializeToString())
                if len(cache) < 65536:
                    cache[m] = enc
            parts.append(enc)
        return b"".join(parts)

    def move(self, native: Any) -> pb.Move:
        wrapped = pb.Move()
        getattr(wrapped, self.field).CopyFrom(self.game.move_to_proto(native))
        return wrapped

    def view(self, state: Any, seat: int | None) -> pb.View:
        wrapped = pb.View()
        getattr(wrapped, self.field).CopyFrom(self.game.view(state, seat))
        return wrapped

    def view_message(self, view: bytes) -> pb.View:
        """The envelope View holding the game's encoded View ``view``."""
        return pb.View.FromString(_field(self._view_field, view))

    def spectator_update(self, version: int, view: bytes, seat: int, kind: str) -> bytes:
        """The encoded WatchMessage carrying a SpectatorUpdate (``view``: the game's encoded
        public View), in field order, so a spectator stream's bytes are built once per state
        version and queued to every watcher."""
        body = b"".join((
            pb.SpectatorUpdate(state_version=version).SerializeToString(),
            _field(_UPDATE_VIEW, _field(self._view_field, view)),
            pb.SpectatorUpdate(current_seat=seat, decision_kind=kind).SerializeToString(),
        ))
        return _field(_WATCH_UPDATE, body)

    def unwrap(self, move: pb.Move) -> Any:
        which = move.WhichOneof("game")
        if which is None:
            raise errors.malformed("empty move: set the field of the match's game")
        if which != self.field:
            raise errors.wrong_game(f"this match plays {self.field}, not {which}")
        try:
            return self.game.move_from_proto(getattr(move, which))
        except MalformedMove as exc:
            raise errors.malformed(f"malformed {self.field} move: {exc}") from None


#: Submit.note's bounds (referee.proto): bytes of UTF-8, and the only control characters allowed
NOTE_MAX_BYTES = 512
NOTE_CONTROLS_ALLOWED = frozenset("\n\t")


def check_note(note: str) -> str:
    """``note`` (Submit.note / SubmitMoveRequest.note) if it is one, else RefereeError MALFORMED
    saying why. (Bytes that are not UTF-8 never get here: the request does not parse.)"""
    if not note:
        return ""
    size = len(note.encode("utf-8", "surrogatepass"))
    if size > NOTE_MAX_BYTES:
        raise errors.malformed(f"note is {size} bytes of UTF-8; at most {NOTE_MAX_BYTES}")
    for i, c in enumerate(note):
        if (c < " " or "\x7f" <= c <= "\x9f") and c not in NOTE_CONTROLS_ALLOWED:
            raise errors.malformed(f"note holds control character U+{ord(c):04X} at {i}; "
                                   "only newline and tab are allowed")
        if "\ud800" <= c <= "\udfff":
            raise errors.malformed(f"note holds a lone surrogate at {i}: not UTF-8")
    return note


def check_text(value: str, what: str, *, max_len: int, lines: bool = False) -> str:
    """``value`` if it is a text a page may show and protobuf and the store may take: at most
    ``max_len`` characters, encodable as UTF-8, no control character (but a newline or a tab
    when ``lines``); else RefereeError MALFORMED saying why. The one check of every text a
    client sends that is stored or shown (the web's and gRPC's alike): PostgreSQL cannot store
    a NUL in text, and a control character in a name misleads a page or a log."""
    if len(value) > max_len:
        raise errors.malformed(f"{what} is at most {max_len} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.malformed(f"{what} is not valid Unicode (a lone surrogate)") from None
    allowed = "\n\t" if lines else ""
    if not value.isprintable() and any(
            unicodedata.category(ch) == "Cc" and ch not in allowed for ch in value):
        raise errors.malformed(f"{what} holds a control character")
    return value


def refusal(reason: str, message: str, version: int, request_id: str = "",
            unknown: pb.Reason = pb.INTERNAL) -> pb.MoveResult:
    """The MoveResult of a refused move: ``reason`` by name, at the match's ``version``.

    A refusal always carries a machine-readable reason (issue 31 item 3): a name outside the
    Reason enum is a referee bug (a RefereeError whose reason is not a move's refusal reason
    reached a move's path), logged here as ``refusal_reason_unknown`` and sent as ``unknown``
    (INTERNAL: the move was not played, the bot may send it again), never REASON_UNSPECIFIED.
    """
    value = errors.REASON_VALUES.get(reason)
    if value is None or value == pb.REASON_UNSPECIFIED:
        _log.error("refusal_reason_unknown", reason=reason, message=message[:200])
        value = unknown
    metrics.REFUSALS.labels(pb.Reason.Name(value)).inc()
    return pb.MoveResult(
        accepted=False, reason=value, message=message,
        state_version=version, request_id=request_id,
    )


def match_event(e: Event, version: int, timeout: bool) -> pb.MatchEvent:
    return pb.MatchEvent(
        state_version=version,
        seat=e.seat,
        kind=e.kind,
        text=e.text,
        data_json=json.dumps(e.data, separators=(",", ":")) if e.data else "{}",
        timeout=timeout,
    )


def opt_str(value: Any) -> str:
    """An option value as the protocol's strings carry it (Welcome, ListGames, Assignment)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
