"""Text views: a seat's view, its decision and the public events, as compact plain text.

One rendering serves every reader that wants words instead of messages: a language model at the
table (the MCP server and the chat-model bot read it through the protocol), a person's list of
legal moves in the browser, a developer's debugger and a failing test's message. It works on
the wire messages (``referee.v1`` View, Move, MatchEvent), so what it renders is exactly what
the reader was sent: a text of a seat's view says nothing the view does not.

This module is the interface the rest of the project codes against (issue 34). The first
implementation is generic (protobuf's text format); the games replace it with their own
declared tables without changing these signatures.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf import text_format
from google.protobuf.message import Message

#: Length of a move id in characters (base-32 of a SHA-256 of the move's canonical bytes).
MOVE_ID_LENGTH = 6
_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no l, o, 0, 1: easy to read and type


def move_id(move: Message) -> str:
    """A short id of one move, stable across decisions and processes: the same move has the
    same id wherever it is legal (deterministic serialisation, hashed), so a reader can name a
    move by id. Two different legal moves of one decision never share an id
    (:func:`describe_decision` checks)."""
    digest = hashlib.sha256(move.SerializeToString(deterministic=True)).digest()
    n = int.from_bytes(digest[:8], "big")
    out = []
    for _ in range(MOVE_ID_LENGTH):
        n, r = divmod(n, len(_ALPHABET))
        out.append(_ALPHABET[r])
    return "".join(out)


@dataclass(frozen=True, slots=True)
class MoveText:
    """One legal move in words."""

    id: str  # move_id(move)
    kind: str  # the kind of move, for grouping (e.g. "bid", "place", "pass")
    text: str  # one line: what the move does
    rule: str  # the rulebook passage that allows it ("" where the game declares none)
    move: Message  # the wire Move (referee.v1.Move)


@dataclass(frozen=True, slots=True)
class DecisionText:
    """A decision in words: who decides, what, and every legal move."""

    seat: int
    kind: str
    prompt: str
    moves: tuple[MoveText, ...]

    def render(self) -> str:
        lines = [f"Seat {self.seat} to decide ({self.kind}): {self.prompt}"]
        for m in self.moves:
            rule = f"  [{m.rule}]" if m.rule else ""
            lines.append(f"  {m.id}  {m.kind}: {m.text}{rule}")
        return "\n".join(lines)

    def by_id(self, move_id: str) -> MoveText | None:
        return next((m for m in self.moves if m.id == move_id), None)


def _one_line(message: Message) -> str:
    return text_format.MessageToString(message, as_one_line=True)


def _inner(message: Message) -> Message:
    """The game's own message inside a wire Move or View (its ``game`` oneof)."""
    which = message.WhichOneof("game")
    inner: Message = getattr(message, which) if which else message
    return inner


def describe_view(view: Message) -> str:
    """A seat's (or a spectator's) wire View as text: everything it holds, nothing more."""
    return text_format.MessageToString(_inner(view))


def describe_move(move: Message) -> MoveText:
    inner = _inner(move)
    oneofs = inner.DESCRIPTOR.oneofs
    kind = inner.WhichOneof(oneofs[0].name) if oneofs else None
    return MoveText(id=move_id(move), kind=kind or inner.DESCRIPTOR.name,
                    text=_one_line(inner), rule="", move=move)


def describe_decision(decision: Message) -> DecisionText:
    """A wire Decision (``referee.v1.Decision``) in words, its legal moves in the order sent."""
    moves = tuple(describe_move(m) for m in decision.legal_moves)  # type: ignore[attr-defined]
    if len({m.id for m in moves}) != len(moves):
        raise ValueError("two legal moves share an id")
    return DecisionText(seat=decision.seat, kind=decision.kind,  # type: ignore[attr-defined]
                        prompt=decision.prompt, moves=moves)  # type: ignore[attr-defined]


def describe_events(events: Sequence[Message]) -> str:
    """Public events (wire MatchEvents) as one line each."""
    return "\n".join(f"v{e.state_version} seat {e.seat}: {e.text}"  # type: ignore[attr-defined]
                     for e in events)
