"""Fixed-size encodings of a game's moves and of a seat's view, for learners
(docs/research/environments.md).

Both are generic: nothing here names a game. They read the game's move table
(``game.move_codec``, referee/core/codec.py) and its View message's descriptor, plus one
generated file, ``layout.json`` (``python -m referee_research.envs.layout`` writes it), which
holds what a descriptor and a move table cannot say: how many entries each repeated field of a
view carries at most, the values each string field takes, and the values the wide fields of
moves reach.

**Actions** (:class:`ActionEncoding`). Each move kind is enumerated over its wire fields: all
the values the codec accepts when they make at most ``ENUMERATE_LIMIT`` moves (enums, bools,
the integers the codec bounds tightly: a column, a cell, a die face), else the values random
games reach (``layout.json``; the codec's bounds on a card id, a bid or a payment are sanity
bounds, far above what the rules reach). Each enumerated move has its own index, the same in
every state (the *stable* block). A legal move outside that enumeration (a kind too big even as
random games reach it, or a value they never reached) takes the next of ``overflow`` indices in
the order the decision lists it (the *overflow* block): there index ``k`` means "the k-th such
legal move now", whose meaning changes from state to state, and a move past the cap cannot be
chosen.

**Observations** (:class:`ObservationEncoding`). The seat's View message (what the referee sends
that seat, nothing else) flattened into a float32 vector, field by field in descriptor order:
a number as itself, a bool as 0/1, an enum and a string one-hot (strings over the values
``layout.json`` lists, plus "other"), a message field with a presence flag, a repeated field as
``cap`` slots (each with a presence flag) and its length. Each field of the View is one
*plane*, a fixed slice of the vector (:attr:`ObservationEncoding.planes`). The environments
encode the view's bytes (``Game.view_bytes``) with each part's writes memoised
(:class:`_Node`): the same vector, several times faster than the walk
(``encode(view, memo=False)``, the environments' ``observations="reflective"``).
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from referee.core import registry
from referee.core.codec import Range
from referee.core.contract import Game, MalformedMove

LAYOUT = Path(__file__).with_name("layout.json")
#: A kind is enumerated when its wire fields span at most this many combinations (as the codec
#: bounds them, else as random games reach them).
ENUMERATE_LIMIT = 4096
#: Overflow slots (legal moves outside the enumeration), per game.
OVERFLOW = 64
#: Nested messages deeper than this are left out of an observation (no view nests so deep).
MAX_DEPTH = 6
#: a mask with at most this many legal actions is written item by item, more by one numpy
#: fancy-index write (measured: the two cost alike near 64)
_FEW = 64

_FD = FieldDescriptor


# ---------------------------------------------------------------------------- actions
def _bool_paths(message: Descriptor, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    for f in message.fields:
        if f.type == _FD.TYPE_BOOL:
            paths.append((*prefix, f.name))
        elif f.type == _FD.TYPE_MESSAGE and f.message_type is not None:
            paths.extend(_bool_paths(f.message_type, (*prefix, f.name)))
    return paths


def _set_path(message: Any, path: tuple[str, ...], value: Any) -> None:
    for name in path[:-1]:
        message = getattr(message, name)
        message.SetInParent()
    setattr(message, path[-1], value)


@dataclass(frozen=True)
class KindSpan:
    """One move kind's place in the action space."""

    kind: str
    stable: bool
    start: int  # first index of its stable moves (stable kinds)
    count: int  # how many stable moves it has (0: overflow)


def _span(r: Range) -> int:
    return r.hi - r.lo + 1 + (1 if r.zero_ok and r.lo > 0 else 0)


def wide_kinds(game: Game, limit: int = ENUMERATE_LIMIT) -> dict[type, str]:
    """Engine move class -> kind, for the kinds with more than ``limit`` moves as the codec
    bounds their fields (``layout.json`` holds the values random games reach for those)."""
    codec = game.move_codec  # type: ignore[attr-defined]  # every SheetGame has one
    out = {}
    for k in codec.kinds:
        sub = codec.message.DESCRIPTOR.fields_by_name[k.field].message_type
        size = 2 ** len(_bool_paths(sub))
        for r in codec.ranges[k.field]:
            size *= _span(r)
        if size > limit:
            out[k.cls] = k.field
    return out


def wire_values(game: Game, move: Any, kind: str) -> dict[str, int]:
    """``"kind.path"`` -> the wire value of each integer the codec checks, for one move."""
    codec = game.move_codec  # type: ignore[attr-defined]
    message = getattr(game.move_to_proto(move), kind)
    out = {}
    for r in codec.ranges[kind]:
        value: Any = message
        for name in r.path:
            value = getattr(value, name)
        out[".".join((kind, *r.path))] = int(value)
    return out


class ActionEncoding:
    """A game's moves <-> indices of one ``Discrete(size)`` space (see the module docstring).

    ``reach``: for the kinds with a wide field, the largest wire value of each field that
    random games reach (``layout.json``, ``"moves"``); such a kind is enumerated up to those
    values when that makes at most ``limit`` moves, and a move beyond them (never seen in
    random play) takes an overflow slot."""

    def __init__(self, game: Game, overflow: int = OVERFLOW, limit: int = ENUMERATE_LIMIT,
                 reach: Mapping[str, int] | None = None):
        codec = game.move_codec  # type: ignore[attr-defined]  # every SheetGame has one
        if reach is None:
            reach = load_layout().get(game.spec.name, {}).get("moves", {})
        self.game = game
        self.moves: list[Any] = []  # index -> engine move (stable block)
        self.index: dict[Any, int] = {}
        self.kinds: list[KindSpan] = []
        wrapper = codec.message
        wide_fields = set(wide_kinds(game, limit).values())
        for k in codec.kinds:
            ranges = codec.ranges[k.field]
            wide = k.field in wide_fields
            sub = wrapper.DESCRIPTOR.fields_by_name[k.field].message_type
            bools = _bool_paths(sub)
            domains: list[Sequence[Any]] = []
            for r in ranges:
                hi = r.hi
                if wide:
                    seen = reach.get(".".join((k.field, *r.path)))
                    hi = r.lo - 1 if seen is None else min(r.hi, max(r.lo, seen))
                lo_values = [0] if r.zero_ok and r.lo > 0 else []
                domains.append(lo_values + list(range(r.lo, hi + 1)) if hi - r.lo < limit
                               else [])
            domains += [(False, True)] * len(bools)
            size = 1
            for d in domains:
                size *= len(d) or limit + 1
            if size > limit:
                self.kinds.append(KindSpan(k.field, False, 0, 0))
                continue
            start = len(self.moves)
            paths = [r.path for r in ranges] + bools
            for values in itertools.product(*domains):
                message = wrapper()
                getattr(message, k.field).SetInParent()
                for path, value in zip(paths, values):
                    _set_path(getattr(message, k.field), path, value)
                try:
                    move = game.move_from_proto(message)
                except MalformedMove:
                    continue
                if move not in self.index:
                    self.index[move] = len(self.moves)
                    self.moves.append(move)
            self.kinds.append(KindSpan(k.field, True, start, len(self.moves) - start))
        self.stable = len(self.moves)
        self.overflow = overflow
        self.size = self.stable + overflow
        #: the stable moves by identity: the engines intern their moves, so a decision's moves
        #: are mostly these very objects, found without hashing a dataclass (``self.moves``
        #: keeps them alive, so an id here is always theirs); an equal move built anew falls
        #: back to :attr:`index`
        self.by_id = {id(move): i for i, move in enumerate(self.moves)}

    def legal(self, moves: Sequence[Any]) -> dict[int, Any]:
        """Index -> engine move for a decision's legal moves (moves past the overflow cap are
        left out; at least the first overflow move always has an index)."""
        out: dict[int, Any] = {}
        k = self.stable
        end = self.size
        index = self.index
        by_id = self.by_id
        for move in moves:
            i = by_id.get(id(move))
            if i is None:
                i = index.get(move)
            if i is not None:
                out[i] = move
            elif k < end:
                out[k] = move
                k += 1
        return out

    def mask(self, legal: Collection[int]) -> np.ndarray:
        """The int8 mask with a 1 at each of ``legal``'s indices (a few item writes through
        a memoryview cost less than numpy's fancy indexing; many go through it)."""
        m = np.zeros(self.size, dtype=np.int8)
        if len(legal) <= _FEW:
            view = memoryview(m)  # type: ignore[arg-type]  # an ndarray is a buffer
            for i in legal:
                view[i] = 1
        else:
            m[np.fromiter(legal, dtype=np.intp, count=len(legal))] = 1
        return m

    def describe(self, i: int) -> str:
        """What index ``i`` means, for humans."""
        if i >= self.stable:
            return f"overflow slot {i - self.stable}"
        return repr(self.moves[i])


# ---------------------------------------------------------------------------- observations
@cache
def load_layout() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(LAYOUT.read_text(encoding="utf-8"))
    return data


Writer = Callable[[Any, np.ndarray, int], None]


def _scalar(field: FieldDescriptor, path: str, layout: dict[str, Any]
            ) -> tuple[int, Callable[[Any, np.ndarray, int], None]]:
    """(width, write(value, out, offset)) for one scalar value of ``field``."""
    if field.type == _FD.TYPE_ENUM:
        assert field.enum_type is not None
        numbers = {v.number: i for i, v in enumerate(field.enum_type.values)}

        def write_enum(value: Any, out: np.ndarray, at: int) -> None:
            i = numbers.get(value)
            if i is not None:
                out[at + i] = 1.0
        return len(numbers), write_enum
    if field.type == _FD.TYPE_STRING:
        vocab = {text: i for i, text in enumerate(layout.get("strings", {}).get(path, []))}

        def write_string(value: Any, out: np.ndarray, at: int) -> None:
            out[at + vocab.get(value, len(vocab))] = 1.0
        return len(vocab) + 1, write_string
    if field.type == _FD.TYPE_BYTES:
        return 0, lambda value, out, at: None

    def write_number(value: Any, out: np.ndarray, at: int) -> None:
        out[at] = value
    return 1, write_number


def _message(desc: Descriptor, prefix: str, layout: dict[str, Any], depth: int,
             names: list[str], fields: list[Plane] | None = None
             ) -> tuple[int, Callable[[Any, np.ndarray, int], None]]:
    """(width, write(message, out, offset)) for a whole message; ``names`` gets one name per
    slot of the vector, ``fields`` (if given) one :class:`Plane` per field of the message."""
    parts: list[tuple[int, Callable[[Any, np.ndarray, int], None]]] = []
    width = 0
    for field in desc.fields:
        path = f"{prefix}{field.name}"
        is_message = field.type == _FD.TYPE_MESSAGE
        if is_message and depth >= MAX_DEPTH:
            continue
        start = width
        children: list[Plane] | None = None
        cap = 0
        if field.is_repeated:
            cap = int(layout.get("caps", {}).get(path, 0))
            if is_message:
                assert field.message_type is not None
                one_names: list[str] = []
                children = []
                each, write_one = _message(field.message_type, path + ".", layout, depth + 1,
                                           one_names, children)
            else:
                each, write_one = _scalar(field, path, layout)
                one_names = [path] * each
            slot = each + 1  # presence flag, then the entry
            names.append(f"{path}#len")
            for n in range(cap):
                names.append(f"{path}[{n}]#present")
                names.extend(name.replace(path, f"{path}[{n}]", 1) for name in one_names)

            def write_repeated(msg: Any, out: np.ndarray, at: int, name: str = field.name,
                               cap: int = cap, slot: int = slot,
                               write_one: Writer = write_one) -> None:
                values = getattr(msg, name)
                out[at] = len(values)
                for n, value in enumerate(values):
                    if n == cap:
                        break
                    base = at + 1 + n * slot
                    out[base] = 1.0
                    write_one(value, out, base + 1)
            parts.append((width, write_repeated))
            width += 1 + cap * slot
        elif is_message:
            assert field.message_type is not None
            sub_names: list[str] = []
            children = []
            each, write_sub = _message(field.message_type, path + ".", layout, depth + 1,
                                       sub_names, children)
            names.append(f"{path}#present")
            names.extend(sub_names)

            def write_field(msg: Any, out: np.ndarray, at: int, name: str = field.name,
                            write_sub: Writer = write_sub) -> None:
                if msg.HasField(name):
                    out[at] = 1.0
                    write_sub(getattr(msg, name), out, at + 1)
            parts.append((width, write_field))
            width += 1 + each
        else:
            each, write_value = _scalar(field, path, layout)
            names.extend([path] * each if each != 1 else [path])

            def write_scalar(msg: Any, out: np.ndarray, at: int, name: str = field.name,
                             write_value: Writer = write_value) -> None:
                write_value(getattr(msg, name), out, at)
            parts.append((width, write_scalar))
            width += each
        if fields is not None:
            fields.append(Plane(field, start, width - start, parts[-1][1], children, cap,
                                each, write_one if field.is_repeated else (
                                    write_sub if is_message else None)))

    def write(msg: Any, out: np.ndarray, at: int) -> None:
        for offset, part in parts:
            part(msg, out, at + offset)
    return width, write


@dataclass(frozen=True)
class Plane:
    """One field of the View: its slice ``[start, start + width)`` of the observation (the
    field's slots are named in :attr:`ObservationEncoding.names`)."""

    field: FieldDescriptor
    start: int
    width: int
    #: write(message, out, at): the field of ``message`` written at ``out[at:]``
    write: Callable[[Any, np.ndarray, int], None]
    #: a message field's own planes (None: a scalar field)
    children: list[Plane] | None = None
    #: a repeated field's slots (each: a presence flag, then ``each`` values)
    cap: int = 0
    #: the width of one value of the field (a repeated field's entry, a message's fields)
    each: int = 0
    #: write(value, out, at): one value of the field (an entry, the message) at ``out[at:]``
    write_each: Callable[[Any, np.ndarray, int], None] | None = None

    @property
    def name(self) -> str:
        return self.field.name


#: Entries kept per memo (a message type's, a field's) before it starts afresh: 1024 hit as
#: often as 4096 in random play and keep a process's memos under about 40 MB per game (Santa
#: Maria, 20,000 steps: +41 MB resident; 4096: +77 MB).
MEMO_LIMIT = 1024
#: Messages at most this wide are walked whole on a memo miss (:class:`_Node`).
WALK_WIDTH = 512
#: The reflective walk of every field at every call (the encoding before issue 36; the same
#: vectors, up to three times slower): ``ObservationEncoding.encode(view, memo=False)``.
REFLECTIVE = "reflective"
#: The View encoding, each field's writes memoised by its encoded value (the same vectors as
#: the walk): the default of a game that declares no planes.
MEMOISED = "memoised"
#: The game's own feature planes (``Game.observation_planes``, referee/core/planes.py): the
#: default where the game declares them.
PLANES = "planes"
MODES = (PLANES, MEMOISED, REFLECTIVE)

Writes = tuple[np.ndarray, np.ndarray]
_NO_WRITES: Writes = (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32))


def _join(parts: list[Writes]) -> Writes:
    if not parts:
        return _NO_WRITES
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _shift(writes: Writes, by: int, flag: float | None = None) -> Writes:
    """``writes`` moved ``by`` slots on, after a slot of value ``flag`` (if given) at ``by``."""
    at, values = writes
    if flag is None:
        return at + by, values
    return (np.concatenate((np.array([by], dtype=np.intp), at + (by + 1))),
            np.concatenate((np.array([flag], dtype=np.float32), values)))


class _Node:
    """The memoised encoding of one message type (its planes), driven by the message's bytes:
    its writes into the vector (slot indices relative to its first slot, and the values
    there) keyed by those bytes, and each field's writes keyed by the field's value (a
    message field's records). The bytes are parsed as the type's *shadow*
    (:func:`_shadow_class`), so every key, down to a sub-message's records, comes out of
    protobuf's C parser as it is, without a Python wrapper or a re-encoding per sub-message.
    A View repeats most of its parts from one decision to the next, so most lookups hit; a
    miss computes only the parts that changed. The writes are exactly those of the reflective
    walk (the planes' ``write``): ``tests/research/test_encoding.py``."""

    def __init__(self, planes: list[Plane], desc: Descriptor, width: int,
                 write: Callable[[Any, np.ndarray, int], None]):
        self.planes = planes
        self.width = width
        self.cls: type[Message] = message_factory.GetMessageClass(desc)
        self.shadow = _shadow_class(desc)
        #: a small message (or one with no shadow) is walked whole on a miss: one parse, one
        #: walk and one numpy call cost less than its fields' lookups and joins
        self.walk = write if width <= WALK_WIDTH or self.shadow is None else None
        self.memo: dict[bytes, Writes] = {}
        #: field number -> (plane, child node, its memo)
        self.fields: dict[int, tuple[Plane, _Node | None, dict[Any, Writes]]] = {}
        for p in planes:
            child = None
            if p.children is not None:
                assert p.field.message_type is not None and p.write_each is not None
                child = _Node(p.children, p.field.message_type, p.each, p.write_each)
            self.fields[p.field.number] = (p, child, {})
        #: the writes of the scalar fields a message leaves unset (an enum's first value, a
        #: string's slot for ""), by field number
        self.defaults: dict[int, Writes] = {}
        for p in planes:
            if p.children is None and not p.field.is_repeated:
                w = self._scalar(p, p.field.default_value)
                if len(w[0]):
                    self.defaults[p.field.number] = w

    @staticmethod
    def _scalar(plane: Plane, value: Any) -> Writes:
        """The writes of a scalar (or repeated scalar) field holding ``value``."""
        scratch = np.zeros(plane.width, dtype=np.float32)
        plane.write(_Holder(value), scratch, 0)
        at = np.flatnonzero(scratch)
        return (at + plane.start).astype(np.intp), scratch[at]

    def writes(self, data: bytes, memo: bool = True) -> Writes:
        """The writes of the message encoded as ``data``."""
        if memo:
            hit = self.memo.get(data)
            if hit is not None:
                return hit
        if self.walk is not None:
            scratch = np.zeros(self.width, dtype=np.float32)
            self.walk(self.cls.FromString(data), scratch, 0)
            at = np.flatnonzero(scratch)
            out: Writes = (at, scratch[at])
        else:
            assert self.shadow is not None
            at_parts: list[np.ndarray] = []
            value_parts: list[np.ndarray] = []
            unset = dict(self.defaults)
            fields = self.fields
            for field, value in self.shadow.FromString(data).ListFields():
                entry = fields.get(field.number)
                if entry is None:  # a field past MAX_DEPTH: not encoded
                    continue
                plane, child, cache = entry
                unset.pop(field.number, None)
                key = tuple(value) if field.is_repeated else value
                found = cache.get(key)
                if found is None:
                    found = self._field(plane, child, value)
                    if len(cache) >= MEMO_LIMIT:
                        cache.clear()
                    cache[key] = found
                at_parts.append(found[0])
                value_parts.append(found[1])
            for w in unset.values():
                at_parts.append(w[0])
                value_parts.append(w[1])
            out = ((np.concatenate(at_parts), np.concatenate(value_parts)) if at_parts
                   else _NO_WRITES)
        if memo:
            if len(self.memo) >= MEMO_LIMIT:
                self.memo.clear()
            self.memo[data] = out
        return out

    def _field(self, plane: Plane, child: _Node | None, value: Any) -> Writes:
        """The writes of one field of a shadow message holding ``value``."""
        if child is None:
            return self._scalar(plane, value)
        if not plane.field.is_repeated:  # its records merge, as the real field's do
            return _shift(child.writes(b"".join(value)), plane.start, 1.0)
        # the length, each entry's presence flag, each entry's writes moved to its slot: a few
        # numpy calls for the whole field, however many entries
        entries = [child.writes(record) for record in value[:plane.cap]]
        flags = plane.start + 1 + np.arange(len(entries), dtype=np.intp) * (plane.each + 1)
        head = np.concatenate((np.array([plane.start], dtype=np.intp), flags))
        head_values = np.ones(len(head), dtype=np.float32)
        head_values[0] = len(value)
        if not entries:
            return head, head_values
        at = np.concatenate([w[0] for w in entries])
        at += np.repeat(flags + 1, [len(w[0]) for w in entries])
        return (np.concatenate((head, at)),
                np.concatenate([head_values, *(w[1] for w in entries)]))


def _shadow_class(desc: Descriptor) -> type[Message] | None:
    """A message type that parses ``desc``'s encoding with its message fields as repeated
    ``bytes`` (each record's payload: concatenated they merge as the real field does, and an
    empty but present message is one empty record) and its enum fields as ``int32`` (the same
    varints), in a pool of its own. None for a message with a oneof (kept whole there)."""
    if desc.oneofs:
        return None
    proto = descriptor_pb2.DescriptorProto()
    desc.CopyToProto(proto)
    proto.name = "Shadow"
    for name in ("nested_type", "enum_type", "extension", "options"):
        proto.ClearField(name)
    fp = descriptor_pb2.FieldDescriptorProto
    for f in proto.field:
        f.ClearField("options")
        if f.type == fp.TYPE_MESSAGE:
            f.type = fp.TYPE_BYTES
            f.label = fp.LABEL_REPEATED
            f.ClearField("type_name")
        elif f.type == fp.TYPE_ENUM:
            f.type = fp.TYPE_INT32
            f.ClearField("type_name")
    file = descriptor_pb2.FileDescriptorProto(
        name=f"referee_research/shadow/{desc.full_name}.proto",
        package="referee_research.shadow", syntax="proto3", message_type=[proto])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("referee_research.shadow.Shadow"))


class _Holder:
    """Stands for a message whose one field holds ``value`` (what a plane's ``write`` reads
    with ``getattr``)."""

    def __init__(self, value: Any):
        self._value = value

    def __getattr__(self, name: str) -> Any:
        return self._value


class ObservationEncoding:
    """A game's View message -> a float32 vector of fixed size (see the module docstring).

    The vector is a sequence of **planes**, one per field of the View (:attr:`planes`, in
    descriptor order; ``docs/research/environments.md`` lists them per game). Speed: a View
    repeats most of its parts from one decision to the next (the games build them from cached
    fragments), so the writes of each message and each field are memoised, keyed by their own
    encoded value (:class:`_Node`). That is exactly what the reflective walk writes
    (``encode(view, memo=False)``; ``tests/research/test_encoding.py`` checks the two agree on
    random positions), and it is still a function of the view alone."""

    def __init__(self, game: Game):
        layout = load_layout().get(game.spec.name, {})
        self.names: list[str] = []
        self.view_message: type[Message] = game.view_message
        desc: Descriptor = self.view_message.DESCRIPTOR  # type: ignore[assignment]
        self.planes: list[Plane] = []
        self.size, self._write = _message(desc, "", layout, 0, self.names, self.planes)
        assert len(self.names) == self.size, (len(self.names), self.size)
        self._root = _Node(self.planes, desc, self.size, self._write)
        self._root.walk = None  # the View is never small: memoise its parts

    def encode(self, view: Message, memo: bool = True) -> np.ndarray:
        """``view``'s vector; ``memo=False``: by the reflective walk of every field."""
        if memo:
            return self.encode_bytes(view.SerializeToString())
        out = np.zeros(self.size, dtype=np.float32)
        self._write(view, out, 0)
        return out

    def encode_bytes(self, data: bytes) -> np.ndarray:
        """The vector of a View given as the bytes the referee sends (``Game.view_bytes``),
        its parts' writes memoised (:class:`_Node`)."""
        out = np.zeros(self.size, dtype=np.float32)
        if self._root.shadow is None:
            self._write(self.view_message.FromString(data), out, 0)
            return out
        at, values = self._root.writes(data, memo=False)
        out[at] = values
        return out


@dataclass(frozen=True)
class Encodings:
    """A game's two encodings, built once per game."""

    game: Game
    actions: ActionEncoding
    observations: ObservationEncoding


@cache
def encodings(name: str) -> Encodings:
    game = registry.get(name)
    return Encodings(game, ActionEncoding(game), ObservationEncoding(game))
