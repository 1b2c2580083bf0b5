"""Text views: a seat's view, its decision and the public events, as compact plain text.

One rendering serves every reader that wants words instead of messages: a language model at the
table (the MCP server and the chat-model bot read it through the protocol), a person's list of
legal moves in the browser, a developer's debugger and a failing test's message. It works on
the wire messages (``referee.v1`` View, Move, MatchEvent, or a game's own View and Move inside
them), so what it renders is exactly what the reader was sent: a text of a seat's view is a
function of that view alone and says nothing the view does not (the leak tests hold it to that).

How a game gets its text (issue 34): it declares a :class:`TextTable` (its ``text.py``, set as
``Game.text_table``): per message and field a label, a way to say the value or a whole-message
phrase; per Move kind a one-line template and the rulebook passage that allows it. This module
walks the message with those declarations. Whatever a game does not declare is still rendered,
generically (the field's name, its value), so a new game has a complete text at once and
``tests/contract/test_text_views.py`` lists the fields each game left undeclared.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from .texttable import Field, Kind, Show, TextTable, words

if TYPE_CHECKING:
    from .contract import Game

__all__ = [
    "DecisionText",
    "Field",
    "Kind",
    "MoveText",
    "Show",
    "TextTable",
    "describe_decision",
    "describe_events",
    "describe_move",
    "describe_result",
    "describe_state",
    "describe_view",
    "move_id",
    "undeclared",
    "words",
]

#: Length of a move id in characters (base-32 of a SHA-256 of the move's canonical bytes).
MOVE_ID_LENGTH = 6
#: Length of the ids of moves whose short ids collide within one decision (20 characters of
#: base 32: 100 bits of the hash; two different moves never share them in practice).
LONG_MOVE_ID_LENGTH = 20
_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no l, o, 0, 1: easy to read and type


# ---------------------------------------------------------------------------- move ids

def _inner(message: Message) -> Message:
    """The game's own message inside a wire Move or View (its ``game`` oneof), or the message
    itself when it is a game's own already."""
    if "game" not in message.DESCRIPTOR.oneofs_by_name:
        return message
    which = message.WhichOneof("game")
    inner: Message = getattr(message, which) if which else message
    return inner


def move_id(move: Message, length: int | None = None) -> str:
    """A short id of one move, stable across decisions and processes: the same move has the
    same id wherever it is legal (deterministic serialisation of the game's own Move, keyed by
    its message name, hashed), so a reader can name a move by id, and a wire Move and the game's
    Move inside it have the same id. Two different legal moves of one decision never share an
    id: where their short ids collide (about once in 10^5 decisions of 60 moves), the decision
    gives those moves ``LONG_MOVE_ID_LENGTH`` characters, which begin with the short id
    (:func:`_decision_text`)."""
    inner = _inner(move)
    digest = hashlib.sha256(inner.DESCRIPTOR.full_name.encode() + b"\0"
                            + inner.SerializeToString(deterministic=True)).digest()
    n = int.from_bytes(digest[:16], "big")
    out = []
    for _ in range(length or MOVE_ID_LENGTH):
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
    move: Message  # the Move as given (a wire referee.v1.Move, or the game's own Move)


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


# ---------------------------------------------------------------------------- finding a table

@lru_cache(maxsize=64)
def _game_of(full_name: str) -> Game | None:
    """The registered game whose View or Move is the message named ``full_name``."""
    from . import registry

    for game in registry.games().values():
        if full_name in (game.view_message.DESCRIPTOR.full_name,
                         game.move_message.DESCRIPTOR.full_name):
            return game
    return None


_EMPTY = TextTable()


def _table(message: Message, game: Game | None) -> TextTable:
    if game is None:
        game = _game_of(message.DESCRIPTOR.full_name)
    table = getattr(game, "text_table", None)
    return table if isinstance(table, TextTable) else _EMPTY


# ---------------------------------------------------------------------------- the walker

class _Walker:
    """Renders a game's messages with its table (one per call; holds only the table)."""

    def __init__(self, table: TextTable):
        self.table = table

    def decls(self, desc: Any) -> Mapping[str, Field]:
        return self.table.fields.get(desc.name, {})

    def ordered(self, message: Message) -> list[tuple[Any, Field]]:
        """The message's fields, declared ones first in the table's order, then the rest."""
        desc = message.DESCRIPTOR
        decls = self.decls(desc)
        by_name = desc.fields_by_name
        out = [(by_name[n], d) for n, d in decls.items() if n in by_name]
        out += [(f, Field()) for f in desc.fields if f.name not in decls]
        return out

    def enum(self, fd: Any, number: int) -> str:
        et = fd.enum_type
        value = et.values_by_number.get(number)
        if value is None:
            return str(number)
        return self.table.enums.get(et.name, {}).get(value.name, words(value.name))

    @staticmethod
    def _repeated(fd: Any) -> bool:
        return bool(fd.is_repeated)

    @staticmethod
    def present(message: Message, fd: Any) -> bool:
        """Whether a field says anything: unset messages, empty lists, false flags, unset enums
        and empty strings are silent; numbers speak even at 0 (a count of 0 is information)."""
        value = getattr(message, fd.name)
        if fd.is_repeated:
            return len(value) > 0
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            return bool(message.HasField(fd.name))
        if fd.type in (FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_STRING,
                       FieldDescriptor.TYPE_ENUM):
            return bool(value)
        return True

    def scalar(self, fd: Any, value: Any) -> str:
        if fd.type == FieldDescriptor.TYPE_ENUM:
            return self.enum(fd, value)
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            return self.phrase(value)
        if fd.type == FieldDescriptor.TYPE_BOOL:
            return "yes" if value else "no"
        return str(value)

    def value(self, message: Message, fd: Any, decl: Field) -> str:
        value = getattr(message, fd.name)
        if decl.show is not None:
            return decl.show(value, message)
        if self._repeated(fd):
            return ", ".join(self.scalar(fd, v) for v in value)
        return self.scalar(fd, value)

    def phrase(self, message: Message) -> str:
        """A message on one line: its declared phrase, else its fields as "label value" parts."""
        say = self.table.phrases.get(message.DESCRIPTOR.name)
        if say is not None:
            return say(message)
        out = ""
        for fd, decl in self.ordered(message):
            text = self.part(message, fd, decl)
            if text:
                out += (" " if out.endswith(":") else "; " if out else "") + text
        return out

    def label(self, fd: Any, decl: Field) -> str:
        return words(fd.name) if decl.label is None else decl.label

    def part(self, message: Message, fd: Any, decl: Field) -> str:
        if decl.skip or not self.present(message, fd):
            return ""
        value = getattr(message, fd.name)
        if decl.hide_zero and not self._repeated(fd) and value == 0:
            return ""
        text = self.value(message, fd, decl)
        if not text:
            return ""
        label = self.label(fd, decl)
        if fd.type == FieldDescriptor.TYPE_BOOL and not self._repeated(fd) and decl.show is None:
            return label  # a true flag reads as its name
        if fd.type == FieldDescriptor.TYPE_MESSAGE and decl.show is None and label:
            return f"{label} ({text})" if self._repeated(fd) or "," in text else f"{label} {text}"
        return f"{label} {text}" if label else text

    def lines(self, message: Message) -> list[str]:
        """A message as lines: one per field, repeated messages one line per element."""
        out: list[str] = []
        for fd, decl in self.ordered(message):
            if decl.skip or not self.present(message, fd):
                continue
            value = getattr(message, fd.name)
            if decl.hide_zero and not self._repeated(fd) and value == 0:
                continue
            label = self.label(fd, decl)
            block = decl.show is None and self._repeated(fd) and (
                fd.type == FieldDescriptor.TYPE_MESSAGE or decl.block)
            if block:
                out.append(f"{_cap(label) if label else ''}:")
                out.extend("  " + self.scalar(fd, v).replace("\n", "\n    ") for v in value)
                continue
            text = self.value(message, fd, decl)
            if not text:
                continue
            if fd.type == FieldDescriptor.TYPE_BOOL and decl.show is None:
                out.append(_cap(label) + ".")
            elif "\n" in text:
                out.append(f"{_cap(label)}:")
                out.extend(f"  {t}" for t in text.split("\n"))
            else:
                out.append(f"{_cap(label)}: {text}" if label else text)
        return out

    def move(self, inner: Message, view: Message | None) -> tuple[str, str, str]:
        """(kind, text, rule) of a game's own Move."""
        oneofs = inner.DESCRIPTOR.oneofs
        kind = inner.WhichOneof(oneofs[0].name) if oneofs else None
        if kind is None:
            return inner.DESCRIPTOR.name, _one_line(inner), ""
        body: Message = getattr(inner, kind)
        decl = self.table.moves.get(kind)
        if decl is None:
            detail = self.phrase(body)
            return kind, words(kind) + (f": {detail}" if detail else ""), ""
        if callable(decl.text):
            return kind, decl.text(body, view), decl.rule
        by_name = body.DESCRIPTOR.fields_by_name
        decls = self.decls(body.DESCRIPTOR)
        values = {name: self.value(body, fd, decls.get(name, Field()))
                  for name, fd in by_name.items()}
        return kind, decl.text.format_map(values), decl.rule


def _cap(label: str) -> str:
    return label[:1].upper() + label[1:]


def _one_line(message: Message) -> str:
    return text_format.MessageToString(message, as_one_line=True)


# ---------------------------------------------------------------------------- the interface

def describe_view(view: Message, game: Game | None = None) -> str:
    """A seat's (or a spectator's) View as text: everything it holds, nothing more. ``view``
    is a wire ``referee.v1.View`` or the game's own View; ``game`` is found from the message
    when not given (a game with no table gets the generic rendering)."""
    inner = _inner(view)
    table = _table(inner, game)
    walker = _Walker(table)
    lines = [table.heading(inner)] if table.heading is not None else []
    return "\n".join(lines + walker.lines(inner))


def describe_move(move: Message, game: Game | None = None,
                  view: Message | None = None) -> MoveText:
    """One Move (wire or the game's own) in words, with its id, kind and rule; ``view`` (the
    seat's View the move was offered with) lets the text name a card or tile by what it is."""
    inner = _inner(move)
    kind, text, rule = _Walker(_table(inner, game)).move(inner, None if view is None else _inner(view))
    return MoveText(id=move_id(move), kind=kind, text=text, rule=rule, move=move)


def _decision_text(seat: int, kind: str, prompt: str, moves: Sequence[Message],
                   game: Game | None, view: Message | None) -> DecisionText:
    described = tuple(describe_move(m, game, view) for m in moves)
    seen: dict[str, int] = {}
    for m in described:
        seen[m.id] = seen.get(m.id, 0) + 1
    if len(seen) != len(described):  # a short id shared: those moves get long ids
        described = tuple(
            dataclasses.replace(m, id=move_id(m.move, LONG_MOVE_ID_LENGTH)) if seen[m.id] > 1
            else m for m in described)
        if len({m.id for m in described}) != len(described):
            raise ValueError("two legal moves are the same move")
    return DecisionText(seat=seat, kind=kind, prompt=prompt, moves=described)


def describe_decision(decision: Message, game: Game | None = None) -> DecisionText:
    """A wire Decision (``referee.v1.Decision``) in words, its legal moves in the order sent."""
    d: Any = decision
    view = d.view if d.HasField("view") else None
    return _decision_text(d.seat, d.kind, d.prompt, list(d.legal_moves), game, view)


def describe_events(events: Sequence[Message]) -> str:
    """Public events (wire MatchEvents) as one line each: the version the event's move led to,
    who acted (the referee for chance and phase changes) and the game's own words."""
    def who(e: Any) -> str:
        return "referee" if e.seat < 0 else f"seat {e.seat}"
    listed: Sequence[Any] = events
    return "\n".join(f"v{e.state_version} {who(e)}{' (time policy)' if e.timeout else ''}: "
                     f"{e.text}" for e in listed)


def describe_result(game_over: Message) -> str:
    """A wire GameOver in words: the summary, then each seat's score and rank."""
    g: Any = game_over
    seats = "; ".join(f"seat {s.seat}{f' ({s.name})' if s.name else ''}: {s.score}, rank {s.rank}"
                      f"{' (forfeited)' if s.forfeited else ''}" for s in g.seats)
    winners = ", ".join(str(w) for w in g.winners) or "none"
    head = f"Over: {g.summary}. " if g.summary else "Over. "
    return f"{head}Winners: seat {winners}. Scores: {seats}."


def describe_state(game: Game, state: Any, seat: int | None) -> str:
    """What ``seat`` (None: a spectator) sees of ``state``, and its decision when it is to act,
    in words: the developer's ``describe`` (a debugger's watch, a failing test's message). It
    shows only that seat's view, so it is safe to print anywhere the seat's view could go."""
    view = game.view(state, seat)
    text = describe_view(view, game)
    d = game.decision(state)
    if d is not None and seat is not None and d.seat == seat:
        moves = [game.move_to_proto(m) for m in d.moves]
        text += "\n" + _decision_text(d.seat, d.kind, d.prompt, moves, game, view).render()
    return text


def undeclared(game: Game) -> list[str]:
    """Every field of the game's View and Move messages (and the messages they hold) that its
    table neither declares nor covers by a whole-message phrase or a Move kind's template:
    what a new game has still to declare (``Message.field``)."""
    table = _table(game.view_message(), game)
    seen: set[str] = set()
    out: list[str] = []

    def walk(desc: Any) -> None:
        if desc.full_name in seen:
            return
        seen.add(desc.full_name)
        if desc.name in table.phrases:
            return
        decls = table.fields.get(desc.name, {})
        for fd in desc.fields:
            if fd.name not in decls:
                out.append(f"{desc.name}.{fd.name}")
            if fd.message_type is not None:
                walk(fd.message_type)

    walk(game.view_message.DESCRIPTOR)
    move_desc = game.move_message.DESCRIPTOR
    for fd in move_desc.fields:
        decl = table.moves.get(fd.name)
        if decl is None:
            out.append(f"Move.{fd.name}")
        elif not callable(decl.text):
            body: Any = fd.message_type
            for sub in body.fields:
                if "{" + sub.name + "}" not in decl.text:
                    out.append(f"{body.name}.{sub.name}")
    return out
