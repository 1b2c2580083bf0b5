"""Every registered game's move table (docs/ARCHITECTURE.md, Games, "The move table"), with no
game named: every legal move of many random positions goes to its protobuf Move and back (bytes
and proto3 JSON, as records store it); every message the table accepts comes back from the engine
move unchanged; and each integer the table checks, set out of its range, is refused with a
MalformedMove naming that field."""
from __future__ import annotations

import random

import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from referee.core import registry
from referee.core.codec import MoveCodec, Range
from referee.core.contract import MalformedMove
from referee.core.match import Match

from .hooks import for_game

GAMES = sorted(registry.games())


def _codec(name: str) -> MoveCodec:
    codec = getattr(registry.get(name), "move_codec", None)
    assert isinstance(codec, MoveCodec), f"{name} maps its moves without a move table"
    return codec


def _option_sets(name: str) -> list[dict]:
    hooks = for_game(name)
    return list(getattr(hooks, "OPTION_SETS", None) or [{}])


@pytest.mark.parametrize("name", GAMES)
def test_every_legal_move_of_random_games_goes_to_the_wire_and_back(name):
    game = registry.get(name)
    spec = game.spec
    option_sets = _option_sets(name)
    seen: set = set()
    kinds: set[str] = set()
    for seed in range(12):
        seats = spec.min_seats + seed % (spec.max_seats - spec.min_seats + 1)
        m = Match.create(game, option_sets[seed % len(option_sets)], seats, seed)
        rnd = random.Random(seed)
        while (d := m.decision()) is not None:
            for move in d.moves:
                if move in seen:
                    continue
                seen.add(move)
                message = game.move_to_proto(move)
                kinds.add(message.WhichOneof("kind"))
                parsed = game.move_message.FromString(message.SerializeToString())
                assert game.move_from_proto(parsed) == move
                from_json = json_format.ParseDict(json_format.MessageToDict(message),
                                                  game.move_message())
                assert game.move_from_proto(from_json) == move
            m.submit(d.seat, d.moves[rnd.randrange(len(d.moves))])
    assert len(kinds) > len(_codec(name).kinds) // 2, f"only {sorted(kinds)} were played"


def _valid(codec: MoveCodec, field: str, rnd: random.Random):
    """A message of kind ``field`` with every checked integer in range, bools at random."""
    message = codec.message()
    sub = getattr(message, field)
    sub.SetInParent()
    for r in codec.ranges[field]:
        hi = min(r.hi, r.lo + 20)
        _set(sub, r.path, 0 if r.zero_ok and rnd.random() < 0.3 else rnd.randint(r.lo, hi))
    for f in sub.DESCRIPTOR.fields:
        if f.type == FieldDescriptor.TYPE_BOOL:
            setattr(sub, f.name, rnd.random() < 0.5)
    return message, sub


def _set(sub, path: tuple[str, ...], value: int) -> None:
    for name in path[:-1]:
        sub = getattr(sub, name)
        sub.SetInParent()
    setattr(sub, path[-1], value)


@pytest.mark.parametrize("name", GAMES)
def test_every_message_the_table_accepts_comes_back_unchanged(name):
    game, codec = registry.get(name), _codec(name)
    rnd = random.Random(name)
    for k in codec.kinds:
        for _ in range(40):
            message, _ = _valid(codec, k.field, rnd)
            move = game.move_from_proto(message)
            assert isinstance(move, k.cls)
            assert game.move_to_proto(move) == message, (k.field, message, move)


def _out_of_range(sub, r: Range) -> list[int]:
    """Values just outside ``r`` that the field's type can carry."""
    holder = sub
    for name in r.path[:-1]:
        holder = getattr(holder, name)
    below = r.lo - (2 if r.zero_ok and r.lo == 1 else 1)
    out = []
    for value in (r.hi + 1, below, r.hi + 1000):
        try:
            setattr(holder, r.path[-1], value)
        except ValueError:
            continue
        out.append(value)
    return out


@pytest.mark.parametrize("name", GAMES)
def test_each_checked_integer_out_of_range_is_refused_naming_its_field(name):
    game, codec = registry.get(name), _codec(name)
    rnd = random.Random(name)
    checked = 0
    for k in codec.kinds:
        for r in codec.ranges[k.field]:
            _, probe = _valid(codec, k.field, rnd)
            for value in _out_of_range(probe, r):
                message, sub = _valid(codec, k.field, rnd)
                _set(sub, r.path, value)
                with pytest.raises(MalformedMove) as exc:
                    game.move_from_proto(message)
                assert str(exc.value) == f"{r.what} must be within [{r.lo}, {r.hi}], not {value}"
                checked += 1
    assert checked >= len(codec.kinds) // 2


@pytest.mark.parametrize("name", GAMES)
def test_an_empty_move_or_another_message_is_refused(name):
    game = registry.get(name)
    for message in (game.move_message(), game.view_message()):
        with pytest.raises(MalformedMove):
            game.move_from_proto(message)
