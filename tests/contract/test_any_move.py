"""Any move message, for every registered game, at reachable states: the referee's validation
is the game's own ``move_from_proto`` + ``apply``, so this pins, game by game and with no game
named here, the promise "bad input is refused with a reason and changes nothing; a crash on any
input is a bug" (docs/ARCHITECTURE.md, Server; issue 2: "anything not in the legal list is rejected").

Messages come from two sources: mutations of a legal move (one field changed to a neighbouring,
extreme or invalid value — the inputs most likely to slip past a check) and messages built from
the game's Move descriptor alone (random oneof branch, random scalars, repeated lengths).
A message is either refused (MalformedMove when it cannot be a move, IllegalMove when it is not
legal now, the state hash unchanged either way) or accepted — and then it is one of the legal
moves of the decision, so nothing outside the legal list is ever played.
"""
from __future__ import annotations

import random

import pytest
from google.protobuf.descriptor import FieldDescriptor as FD
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core import registry
from referee.core.contract import IllegalMove, MalformedMove
from referee.core.match import Match

GAMES = sorted(registry.games())
INTS = (0, 1, 2, -1, -2, 3, 5, 7, 9, 11, 15, 20, 99, 255, 2**31 - 1, -(2**31), 2**32 - 1)
INT_TYPES = {FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_SINT32, FD.TYPE_SINT64, FD.TYPE_SFIXED32,
             FD.TYPE_SFIXED64}
UINT_TYPES = {FD.TYPE_UINT32, FD.TYPE_UINT64, FD.TYPE_FIXED32, FD.TYPE_FIXED64}


def _fits(field, value: int) -> bool:
    t = field.type
    if t in UINT_TYPES:
        return 0 <= value < (2**32 if t in (FD.TYPE_UINT32, FD.TYPE_FIXED32) else 2**64)
    if t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32, FD.TYPE_ENUM):
        return -(2**31) <= value < 2**31
    return True


def _scalar(field, rnd: random.Random, near: int | None = None):
    t = field.type
    if t == FD.TYPE_BOOL:
        return rnd.random() < 0.5
    if t in (FD.TYPE_STRING,):
        return rnd.choice(["", "x", "\u00e9", "0", "-1", "a" * 300])
    if t == FD.TYPE_BYTES:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(8)))
    if t in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        return rnd.choice([0.0, -1.0, 0.5, 1e30, float("nan")])
    if t == FD.TYPE_ENUM:
        values = [v.number for v in field.enum_type.values]
        return rnd.choice(values + [max(values) + 1, 99, -1])
    for _ in range(20):
        v = (near + rnd.choice((-2, -1, 1, 2, 3))) if near is not None and rnd.random() < 0.6 \
            else rnd.choice(INTS)
        if _fits(field, v):
            return v
    return 0


def _random_message(msg, rnd: random.Random, depth: int = 0) -> None:
    """Fill ``msg`` from its descriptor alone: one branch of each oneof, some other fields."""
    desc = msg.DESCRIPTOR
    in_oneof = {f.name for o in desc.oneofs for f in o.fields}
    chosen = {rnd.choice(o.fields).name for o in desc.oneofs if o.fields}
    for f in desc.fields:
        if f.name in in_oneof and f.name not in chosen:
            continue
        if f.name not in in_oneof and rnd.random() < 0.3:
            continue
        repeated = f.is_repeated
        if f.type == FD.TYPE_MESSAGE:
            if depth > 4 or (repeated and f.message_type.GetOptions().map_entry):
                continue
            if repeated:
                for _ in range(rnd.randrange(4)):
                    _random_message(getattr(msg, f.name).add(), rnd, depth + 1)
            else:
                sub = getattr(msg, f.name)
                sub.SetInParent()
                _random_message(sub, rnd, depth + 1)
        elif repeated:
            getattr(msg, f.name).extend(_scalar(f, rnd) for _ in range(rnd.randrange(7)))
        else:
            setattr(msg, f.name, _scalar(f, rnd))


def _scalar_paths(msg, prefix=()):
    """(message, field) for every set scalar (or repeated scalar) field, recursively."""
    out = []
    for f, value in msg.ListFields():
        if f.type == FD.TYPE_MESSAGE:
            items = value if f.is_repeated else [value]
            for item in items:
                out.extend(_scalar_paths(item, (*prefix, f.name)))
        else:
            out.append((msg, f))
    return out


def _mutate(msg, rnd: random.Random) -> None:
    paths = _scalar_paths(msg)
    if not paths or rnd.random() < 0.1:
        # switch to another oneof branch / add an unrelated field
        _random_message(msg, rnd)
        return
    parent, f = rnd.choice(paths)
    if f.is_repeated:
        seq = getattr(parent, f.name)
        action = rnd.randrange(3)
        if action == 0 and len(seq):
            del seq[rnd.randrange(len(seq))]
        elif action == 1:
            seq.append(_scalar(f, rnd, seq[-1] if len(seq) and isinstance(seq[-1], int) else None))
        elif len(seq):
            i = rnd.randrange(len(seq))
            seq[i] = _scalar(f, rnd, seq[i] if isinstance(seq[i], int) else None)
    else:
        current = getattr(parent, f.name)
        near = current if isinstance(current, int) and not isinstance(current, bool) else None
        setattr(parent, f.name, _scalar(f, rnd, near))


def _state_at(game, seed: int, steps: int) -> Match:
    spec = game.spec
    seats = spec.min_seats + seed % (spec.max_seats - spec.min_seats + 1)
    m = Match.create(game, {}, seats, seed)
    rnd = random.Random(seed)
    for _ in range(steps):
        d = m.decision()
        if d is None:
            break
        m.submit(d.seat, d.moves[rnd.randrange(len(d.moves))])
    return m


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=st.integers(0, 400), salt=st.integers(0, 2**32))
def test_any_move_message_is_refused_cleanly_or_is_legal(name, seed, steps, salt):
    game = registry.get(name)
    m = _state_at(game, seed, steps)
    d = m.decision()
    if d is None:
        return
    rnd = random.Random(salt)
    before = game.hash_state(m.state)
    version = m.version
    for attempt in range(6):
        msg = game.move_message()
        if attempt % 3 != 2 and d.moves:
            msg.CopyFrom(game.move_to_proto(rnd.choice(d.moves)))
            for _ in range(1 + rnd.randrange(2)):
                _mutate(msg, rnd)
        else:
            _random_message(msg, rnd)
        try:
            native = game.move_from_proto(msg)
        except MalformedMove:
            assert game.hash_state(m.state) == before
            continue
        # the seat to act, and (half the time) another seat
        seat = d.seat if rnd.random() < 0.5 or m.seat_count == 1 else (
            (d.seat + 1 + rnd.randrange(m.seat_count - 1)) % m.seat_count)
        try:
            m.submit(seat, native, version)
        except IllegalMove as exc:
            assert exc.code in {"ILLEGAL_MOVE", "NOT_YOUR_TURN", "STALE_STATE", "MATCH_OVER",
                                "MALFORMED"}, exc.code
            assert exc.message
            assert game.hash_state(m.state) == before, f"a refused {msg} changed the state"
            continue
        # accepted: it must have been on the legal list of the seat to act
        assert seat == d.seat
        assert native in d.moves, f"{name} accepted {native!r}, not among the legal moves"
        return
