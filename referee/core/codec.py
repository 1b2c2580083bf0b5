"""The one codec between a game's engine moves and its protobuf ``Move`` (docs/ARCHITECTURE.md,
"The game contract" and "Games").

A game does not write its protobuf mapping as code: it declares it as a table, one entry per
field of its ``Move`` oneof, and :class:`MoveCodec` reads that table to implement
``move_to_proto`` and ``move_from_proto`` for every game the same way::

    MOVES: MoveCodec[moves.Move] = MoveCodec(pb.Move, (
        constant("pass_bid", moves.PASS_BID),
        kind("play_card", moves.PlayCard, moves.PLAY_CARD.__getitem__,
             company=EnumInt(offset=1)),
        ...
    ))

* :func:`constant` maps a oneof field whose message is empty to the one engine move (a singleton).
* :func:`kind` maps a oneof field to an engine move class: ``make`` builds (interns) the engine
  move from its field values, given positionally in the class's field order; each keyword names
  an engine field, in that same order (checked when the table is built), with its conversion.

Conversions say everything the wire does differently from the engine, so nothing is hidden in
code: :class:`Int` (an integer field; wire value = engine value + ``offset``, refused outside
``[lo, hi]`` on the wire), :class:`EnumInt` (an enum field, its range read from the proto enum),
:class:`Bool`, :class:`Cell` (an engine cell index as a (row, col) pair, flat or in a nested
message) and :class:`Counts` (an engine tuple of counts as named fields of a nested message).

Input a client made up is refused with :class:`~referee.core.contract.MalformedMove` naming the
field (``"progress.column must be within [1, 5], not 0"``); a move that is well-formed is built
through the game's interning constructors, and whether it is legal now is ``apply``'s question.
The table is checked against the message descriptors and the engine classes when it is built, so
a typo fails at import, not at the first move that uses it.
"""
from __future__ import annotations

import abc
import dataclasses
import operator
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from .contract import MalformedMove

M = TypeVar("M")
M_co = TypeVar("M_co", covariant=True)

_FD = FieldDescriptor
#: The values each integer wire type can carry; an :class:`Int` without bounds takes them all.
_INT_LIMITS = {
    _FD.TYPE_UINT32: (0, 2**32 - 1), _FD.TYPE_FIXED32: (0, 2**32 - 1),
    _FD.TYPE_UINT64: (0, 2**64 - 1), _FD.TYPE_FIXED64: (0, 2**64 - 1),
    _FD.TYPE_INT32: (-(2**31), 2**31 - 1), _FD.TYPE_SINT32: (-(2**31), 2**31 - 1),
    _FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    _FD.TYPE_INT64: (-(2**63), 2**63 - 1), _FD.TYPE_SINT64: (-(2**63), 2**63 - 1),
    _FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
}


@dataclass(frozen=True, slots=True)
class Range:
    """One integer the codec checks on the wire: its field's path from the kind's message
    (``("cell", "row")``), its bounds, whether 0 (unset) is also accepted (an optional enum), and
    the name MalformedMove gives it (``"place_flag.cell.row"``, with any note)."""

    path: tuple[str, ...]
    lo: int
    hi: int
    what: str
    zero_ok: bool = False


class Bound(abc.ABC):
    """One engine field of one kind, bound to its protobuf field(s): ``fields`` are the fields
    of the kind's message it uses, ``ranges`` the integers it checks."""

    __slots__ = ()
    fields: tuple[str, ...]

    @abc.abstractmethod
    def write(self, sub: Any, move: Any) -> None:
        """Set the field(s) of the kind's message ``sub`` from the engine ``move``."""

    @abc.abstractmethod
    def read(self, sub: Any) -> Any:
        """The engine field's value from the kind's message; MalformedMove if out of range."""

    def ranges(self) -> tuple[Range, ...]:
        return ()


class Conversion(abc.ABC):
    """How one engine field maps to the protobuf field(s) of its kind's message."""

    @abc.abstractmethod
    def bind(self, attr: str, message: Descriptor, where: str) -> Bound:
        """Bound to engine field ``attr`` of the kind whose message is ``message``; ``where`` is
        the path of ``message`` (the kind's oneof field name), the start of every field name in
        error messages."""


def _field(message: Descriptor, name: str, where: str, types: Container[int]) -> FieldDescriptor:
    field = message.fields_by_name.get(name)
    if field is None:
        raise ValueError(f"{where}: {message.full_name} has no field {name!r}")
    if field.type not in types or field.is_repeated:
        raise ValueError(f"{where}.{name}: {message.full_name} has it of another type")
    return field


def _message_of(field: FieldDescriptor) -> Descriptor:
    """The message type of a message field (``_field`` has checked it is one)."""
    assert field.message_type is not None
    return field.message_type


def _named(what: str, note: str) -> str:
    return f"{what} ({note})" if note else what


class _IntField(Bound):
    __slots__ = ("attr", "fields", "hi", "lo", "name", "offset", "what", "zero_ok")

    def __init__(self, attr: str, name: str, lo: int, hi: int, offset: int, what: str,
                 zero_ok: bool = False):
        self.attr, self.name, self.fields = attr, name, (name,)
        self.lo, self.hi, self.offset, self.what, self.zero_ok = lo, hi, offset, what, zero_ok

    def write(self, sub: Any, move: Any) -> None:
        setattr(sub, self.name, getattr(move, self.attr) + self.offset)

    def read(self, sub: Any) -> int:
        value: int = getattr(sub, self.name)
        if not self.lo <= value <= self.hi and not (self.zero_ok and value == 0):
            raise MalformedMove(f"{self.what} must be within [{self.lo}, {self.hi}], not {value}")
        return value - self.offset

    def ranges(self) -> tuple[Range, ...]:
        return (Range((self.name,), self.lo, self.hi, self.what, self.zero_ok),)


@dataclass(frozen=True, slots=True)
class Int(Conversion):
    """An integer field named like the engine field: wire value = engine value + ``offset``;
    a wire value outside ``[lo, hi]`` is refused (bounds default to what the field's type
    carries). ``note`` follows the field's name in error messages."""

    lo: int | None = None
    hi: int | None = None
    offset: int = 0
    note: str = ""

    def bind(self, attr: str, message: Descriptor, where: str, name: str = "") -> _IntField:
        """``name``: the protobuf field, when it is not named like the engine field."""
        field = _field(message, name or attr, where, _INT_LIMITS)
        lo, hi = _INT_LIMITS[field.type]
        return _IntField(attr, field.name, lo if self.lo is None else self.lo,
                         hi if self.hi is None else self.hi, self.offset,
                         _named(f"{where}.{field.name}", self.note))


@dataclass(frozen=True, slots=True)
class EnumInt(Conversion):
    """An enum field named like the engine field, whose engine value is an int: wire value =
    engine value + ``offset``. Accepted: the enum's values but its zero (``*_UNSPECIFIED``), or,
    with ``optional``, the zero too, meaning "none" (engine value ``-offset``)."""

    offset: int = 0
    note: str = ""
    optional: bool = False

    def bind(self, attr: str, message: Descriptor, where: str) -> Bound:
        field = _field(message, attr, where, (_FD.TYPE_ENUM,))
        enum = field.enum_type
        assert enum is not None  # an enum field always has its enum type
        numbers = sorted(v.number for v in enum.values if v.number)
        if not numbers or numbers != list(range(numbers[0], numbers[-1] + 1)):
            raise ValueError(f"{where}.{attr}: {enum.full_name} is not a range")
        return _IntField(attr, field.name, numbers[0], numbers[-1], self.offset,
                         _named(f"{where}.{attr}", self.note), self.optional)


class _BoolField(Bound):
    __slots__ = ("attr", "fields")

    def __init__(self, attr: str):
        self.attr, self.fields = attr, (attr,)

    def write(self, sub: Any, move: Any) -> None:
        setattr(sub, self.attr, getattr(move, self.attr))

    def read(self, sub: Any) -> bool:
        value: bool = getattr(sub, self.attr)
        return value


@dataclass(frozen=True, slots=True)
class Bool(Conversion):
    """A bool field named like the engine field."""

    def bind(self, attr: str, message: Descriptor, where: str) -> Bound:
        _field(message, attr, where, (_FD.TYPE_BOOL,))
        return _BoolField(attr)


class _CellFields(Bound):
    __slots__ = ("attr", "col", "fields", "get", "hi", "lo", "nested", "row", "width")

    def __init__(self, attr: str, nested: bool, row: _IntField, col: _IntField, lo: int,
                 hi: int):
        self.attr, self.nested, self.row, self.col = attr, nested, row, col
        self.lo, self.hi, self.width = lo, hi, hi - lo + 1
        self.get = operator.attrgetter(row.name, col.name)
        self.fields = (attr,) if nested else (row.name, col.name)

    def write(self, sub: Any, move: Any) -> None:
        cell: int = getattr(move, self.attr)
        if self.nested:
            sub = getattr(sub, self.attr)
            sub.SetInParent()
        setattr(sub, self.row.name, cell // self.width + self.lo)
        setattr(sub, self.col.name, cell % self.width + self.lo)

    def read(self, sub: Any) -> int:
        if self.nested:
            sub = getattr(sub, self.attr)
        row, col = self.get(sub)
        lo, hi = self.lo, self.hi
        if not (lo <= row <= hi and lo <= col <= hi):
            self.row.read(sub)  # MalformedMove naming the field out of range
            self.col.read(sub)
        return (row - lo) * self.width + col - lo

    def ranges(self) -> tuple[Range, ...]:
        prefix = (self.attr,) if self.nested else ()
        return tuple(dataclasses.replace(r, path=prefix + r.path)
                     for r in (*self.row.ranges(), *self.col.ranges()))


@dataclass(frozen=True, slots=True)
class Cell(Conversion):
    """An engine cell index ``(row - lo) * width + (col - lo)``, ``width = hi - lo + 1``, as two
    integer fields ``row`` and ``col``, each within ``[lo, hi]``: fields of the kind's message,
    or, with ``nested``, of a message field named like the engine field."""

    lo: int
    hi: int
    row: str = "row"
    col: str = "col"
    nested: bool = False

    def bind(self, attr: str, message: Descriptor, where: str) -> Bound:
        if self.nested:
            message = _message_of(_field(message, attr, where, (_FD.TYPE_MESSAGE,)))
            where = f"{where}.{attr}"
        side = Int(self.lo, self.hi)
        return _CellFields(attr, self.nested, side.bind(attr, message, where, self.row),
                           side.bind(attr, message, where, self.col), self.lo, self.hi)


class _CountFields(Bound):
    __slots__ = ("attr", "fields", "get", "hi", "lo", "offset", "others", "parts", "refusal")

    def __init__(self, attr: str, each: _IntField, parts: tuple[_IntField, ...],
                 others: tuple[str, ...], refusal: str):
        self.attr, self.fields, self.parts = attr, (attr,), parts
        self.lo, self.hi, self.offset = each.lo, each.hi, each.offset
        self.get = operator.attrgetter(*(part.name for part in parts))
        self.others, self.refusal = others, refusal

    def write(self, sub: Any, move: Any) -> None:
        counts = getattr(sub, self.attr)
        counts.SetInParent()
        for part, value in zip(self.parts, getattr(move, self.attr), strict=True):
            setattr(counts, part.name, value + part.offset)

    def read(self, sub: Any) -> tuple[int, ...]:
        counts = getattr(sub, self.attr)
        for other in self.others:
            if getattr(counts, other):
                raise MalformedMove(self.refusal)
        values: tuple[int, ...] = self.get(counts)
        if not (self.lo <= min(values) and max(values) <= self.hi):
            for part in self.parts:
                part.read(counts)  # MalformedMove naming the first count out of range
        offset = self.offset
        return tuple([value - offset for value in values]) if offset else values

    def ranges(self) -> tuple[Range, ...]:
        return tuple(dataclasses.replace(r, path=(self.attr, *r.path))
                     for part in self.parts for r in part.ranges())


@dataclass(frozen=True, slots=True)
class Counts(Conversion):
    """An engine tuple of counts as the integer fields ``parts`` (in tuple order) of a message
    field named like the engine field, each converted by ``each``; that message's other fields
    must be unset (``"<field> holds <what> only (no <others>)"``). The message is always present
    on the wire, even when every count is 0."""

    parts: tuple[str, ...]
    each: Int
    what: str

    def bind(self, attr: str, message: Descriptor, where: str) -> Bound:
        holder = _message_of(_field(message, attr, where, (_FD.TYPE_MESSAGE,)))
        where = f"{where}.{attr}"
        parts = tuple(self.each.bind(name, holder, where) for name in self.parts)
        if len({(part.lo, part.hi) for part in parts}) != 1:
            raise ValueError(f"{where}: the counts' fields carry different ranges")
        others = tuple(f.name for f in holder.fields if f.name not in self.parts)
        return _CountFields(attr, parts[0], parts, others,
                            f"{where} holds {self.what} only (no {' or '.join(others)})")


@dataclass(frozen=True, slots=True)
class MoveKind(Generic[M_co]):
    """One entry of a game's table: the oneof field ``field`` of its ``Move`` carries the engine
    class ``cls``; ``make`` builds the engine move from its field values (positionally), each
    field converted as ``conversions`` say. Built with :func:`kind` or :func:`constant`."""

    field: str
    cls: type
    make: Callable[..., M_co]
    conversions: tuple[tuple[str, Conversion], ...]


def kind(field: str, cls: type[M], make: Callable[..., M], /,
         **conversions: Conversion) -> MoveKind[M]:
    """The oneof field ``field`` carries the engine class ``cls``: each keyword is one of its
    fields, in the class's order, with its conversion; ``make`` builds (interns) the move from
    the field values, given positionally in that order."""
    return MoveKind(field, cls, make, tuple(conversions.items()))


@dataclass(frozen=True, slots=True)
class _Constant(Generic[M_co]):
    """The ``make`` of a :func:`constant` kind: returns its one value. A class, not a lambda, so
    a table (and a codec) pickles; it is called once, when the codec is built."""

    value: M_co

    def __call__(self) -> M_co:
        return self.value


def constant(field: str, value: M) -> MoveKind[M]:
    """The oneof field ``field``, an empty message, is the one engine move ``value``."""
    return MoveKind(field, type(value), _Constant(value), ())


class MoveCodec(Generic[M]):
    """A game's engine moves <-> its protobuf ``Move`` (one oneof; every field of it, and every
    field of each kind's message, covered by the table). ``to_proto`` and ``from_proto`` are the
    game's ``move_to_proto`` and ``move_from_proto``; ``ranges`` lists, per oneof field, every
    integer checked on the wire."""

    def __init__(self, message: type[Message], kinds: Iterable[MoveKind[M]]):
        desc: Descriptor = message.DESCRIPTOR  # type: ignore[assignment]  # upb's is the same type
        if len(desc.oneofs) != 1:
            raise ValueError(f"{desc.full_name} must have exactly one oneof")
        self.message = message
        self.name: str = desc.file.package.rsplit(".", 1)[-1]
        self.kinds: tuple[MoveKind[M], ...] = tuple(kinds)
        self.ranges: dict[str, tuple[Range, ...]] = {}
        self._oneof: str = desc.oneofs[0].name
        self._encoders: dict[type, tuple[str, tuple[Callable[[Any, Any], None], ...]]] = {}
        self._decoders: dict[str, Callable[[Any], M]] = {}
        for k in self.kinds:
            bound = self._bind(desc, k)
            self._encoders[k.cls] = (k.field, tuple(b.write for b in bound))
            self._decoders[k.field] = _decoder(k.field, k.make, bound)
            self.ranges[k.field] = tuple(r for b in bound for r in b.ranges())
        missing = [f.name for f in desc.oneofs[0].fields if f.name not in self._decoders]
        if missing:
            raise ValueError(f"{desc.full_name}: no table entry for {', '.join(missing)}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its table: the encoders and decoders are closures built from it (the
        research environments pickle states, forward models and whole environments)."""
        return (MoveCodec, (self.message, self.kinds))

    def _bind(self, desc: Descriptor, k: MoveKind[M]) -> list[Bound]:
        field = desc.fields_by_name.get(k.field)
        if field is None or field.containing_oneof is None or field.message_type is None:
            raise ValueError(f"{desc.full_name} has no message {k.field!r} in its oneof")
        if k.field in self._decoders or k.cls in self._encoders:
            raise ValueError(f"{k.field}: {k.field} or {k.cls.__name__} is in the table twice")
        names = [f.name for f in dataclasses.fields(k.cls)]
        if names != [attr for attr, _ in k.conversions]:
            raise ValueError(f"{k.field}: the table has fields {[a for a, _ in k.conversions]}, "
                             f"{k.cls.__name__} has {names}")
        message = field.message_type
        bound = [conv.bind(attr, message, k.field) for attr, conv in k.conversions]
        used = [name for b in bound for name in b.fields]
        if sorted(used) != sorted(f.name for f in message.fields):
            raise ValueError(f"{k.field}: the table uses fields {used} of {message.full_name}, "
                             f"which has {[f.name for f in message.fields]}")
        return bound

    def to_proto(self, move: M) -> Message:
        """The game's Move message for an engine move."""
        try:
            field, writers = self._encoders[type(move)]
        except KeyError:
            raise TypeError(f"not a {self.name} move: {move!r}") from None
        message = self.message()
        sub = getattr(message, field)
        sub.SetInParent()
        for write in writers:
            write(sub, move)
        return message

    def from_proto(self, message: Message) -> M:
        """The engine move for a Move message; MalformedMove naming the field if it cannot be one
        (whether it is legal now is for ``apply`` to say)."""
        if not isinstance(message, self.message):
            raise MalformedMove(f"not a {self.name}.Move")
        field = message.WhichOneof(self._oneof)
        if field is None:
            raise MalformedMove(f"empty {self.name}.Move: set exactly one kind")
        return self._decoders[field](message)


def _decoder(field: str, make: Callable[..., M], bound: list[Bound]) -> Callable[[Any], M]:
    """The Move message -> engine move function of one kind (its oneof ``field`` is the one set),
    written out for the common numbers of fields, since every submitted move goes through one."""
    readers = tuple(b.read for b in bound)
    if not readers:
        value = make()
        return lambda message: value
    if len(readers) == 1:
        (read,) = readers
        return lambda message: make(read(getattr(message, field)))
    if len(readers) == 2:
        read_0, read_1 = readers

        def decode_2(message: Any) -> M:
            sub = getattr(message, field)
            return make(read_0(sub), read_1(sub))

        return decode_2
    if all(type(b) is _IntField for b in bound):
        # several integers (Santa Maria's UseDie): one loop instead of a call per field
        plan = [(b.name, b.lo, b.hi, b.offset, b.read) for b in bound if isinstance(b, _IntField)]

        def decode_ints(message: Any) -> M:
            sub = getattr(message, field)
            values = []
            for name, lo, hi, offset, read in plan:
                value = getattr(sub, name)
                values.append(value - offset if lo <= value <= hi else read(sub))
            return make(*values)

        return decode_ints

    def decode(message: Any) -> M:
        sub = getattr(message, field)
        return make(*[read(sub) for read in readers])

    return decode
