"""The move codec (referee/core/codec.py) on a small protobuf of its own, so that every conversion
is pinned without any game: the exact wire form of each, the MalformedMove naming the field, and
the checks that refuse a wrong table when it is built."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    json_format,
    message_factory,
    text_format,
)

from referee.core.codec import Bool, Cell, Counts, EnumInt, Int, MoveCodec, Range, constant, kind
from referee.core.contract import MalformedMove

PROTO = """
name: "codec_test.proto" package: "test.codec" syntax: "proto3"
enum_type { name: "Colour"
  value { name: "COLOUR_UNSPECIFIED" number: 0 } value { name: "RED" number: 1 }
  value { name: "GREEN" number: 2 } value { name: "BLUE" number: 3 } }
message_type { name: "Spot"
  field { name: "row" number: 1 type: TYPE_SINT32 }
  field { name: "col" number: 2 type: TYPE_SINT32 } }
message_type { name: "Purse"
  field { name: "red" number: 1 type: TYPE_UINT32 }
  field { name: "green" number: 2 type: TYPE_UINT32 }
  field { name: "coins" number: 3 type: TYPE_UINT32 } }
message_type { name: "Stop" }
message_type { name: "Paint"
  field { name: "colour" number: 1 type: TYPE_ENUM type_name: ".test.codec.Colour" }
  field { name: "card" number: 2 type: TYPE_UINT32 }
  field { name: "twice" number: 3 type: TYPE_BOOL } }
message_type { name: "Go"
  field { name: "from_row" number: 1 type: TYPE_UINT32 }
  field { name: "from_col" number: 2 type: TYPE_UINT32 }
  field { name: "to" number: 3 type: TYPE_MESSAGE type_name: ".test.codec.Spot" } }
message_type { name: "Pay"
  field { name: "purse" number: 1 type: TYPE_MESSAGE type_name: ".test.codec.Purse" }
  field { name: "tip" number: 2 type: TYPE_ENUM type_name: ".test.codec.Colour" }
  field { name: "amount" number: 3 type: TYPE_UINT32 } }
message_type { name: "Move" oneof_decl { name: "kind" }
  field { name: "stop" number: 1 type: TYPE_MESSAGE type_name: ".test.codec.Stop" oneof_index: 0 }
  field { name: "paint" number: 2 type: TYPE_MESSAGE type_name: ".test.codec.Paint" oneof_index: 0 }
  field { name: "go" number: 3 type: TYPE_MESSAGE type_name: ".test.codec.Go" oneof_index: 0 }
  field { name: "pay" number: 4 type: TYPE_MESSAGE type_name: ".test.codec.Pay" oneof_index: 0 } }
"""
_pool = descriptor_pool.DescriptorPool()
_pool.Add(text_format.Parse(PROTO, descriptor_pb2.FileDescriptorProto()))


def _message(name: str):
    return message_factory.GetMessageClass(_pool.FindMessageTypeByName(f"test.codec.{name}"))


Move, Paint, Go, Spot, Pay, Purse, Stop = (
    _message(n) for n in ("Move", "Paint", "Go", "Spot", "Pay", "Purse", "Stop"))


# ---- the engine side: small immutable values, as a game's moves.py has them
@dataclass(frozen=True, slots=True)
class EStop:
    pass


@dataclass(frozen=True, slots=True)
class EPaint:
    colour: int  # 0..2 (the wire's RED = 1 ...)
    card: int  # -1 = none (the wire's 0), else a card id (the wire's id + 1)
    twice: bool


@dataclass(frozen=True, slots=True)
class EGo:
    src: int  # a cell of a 4 x 4 grid, (row - 1) * 4 + (col - 1), row and col 1..4
    to: int  # a cell of a 3 x 3 grid with edge spaces: (row + 1) * 3 + (col + 1), -1..1


@dataclass(frozen=True, slots=True)
class EPay:
    purse: tuple[int, int]
    tip: int  # -1 = none
    amount: int


STOP = EStop()
BUILT: list[tuple] = []


def paint(*args):
    BUILT.append(args)
    return EPaint(*args)


def table(**changes):
    """The test's move table, with entries replaced or removed (None) by oneof field."""
    entries = {
        "stop": constant("stop", STOP),
        "paint": kind("paint", EPaint, paint, colour=EnumInt(offset=1),
                      card=Int(0, 9, offset=1), twice=Bool()),
        "go": kind("go", EGo, EGo, src=Cell(1, 4, row="from_row", col="from_col"),
                   to=Cell(-1, 1, nested=True)),
        "pay": kind("pay", EPay, EPay, purse=Counts(("red", "green"), Int(0, 5), "colours"),
                    tip=EnumInt(offset=1, optional=True, note="a colour"), amount=Int()),
    }
    entries.update(changes)
    return MoveCodec(Move, [e for e in entries.values() if e is not None])


CODEC = table()


@pytest.mark.parametrize(("move", "wire"), [
    (STOP, Move(stop=Stop())),
    (EPaint(0, -1, False), Move(paint=Paint(colour=1))),  # RED, no card
    (EPaint(2, 7, True), Move(paint=Paint(colour=3, card=8, twice=True))),
    (EGo(0, 0), Move(go=Go(from_row=1, from_col=1, to=Spot(row=-1, col=-1)))),
    (EGo(15, 4), Move(go=Go(from_row=4, from_col=4, to=Spot()))),  # Spot present though (0, 0)
    (EGo(6, 8), Move(go=Go(from_row=2, from_col=3, to=Spot(row=1, col=1)))),
    (EPay((0, 0), -1, 0), Move(pay=Pay(purse=Purse()))),  # the purse is present even if empty
    (EPay((5, 2), 1, 2**32 - 1), Move(pay=Pay(purse=Purse(red=5, green=2), tip=2,
                                             amount=2**32 - 1))),
])
def test_each_conversion_has_its_exact_wire_form_and_comes_back(move, wire):
    message = CODEC.to_proto(move)
    assert message.SerializeToString() == wire.SerializeToString()
    assert json_format.MessageToDict(message) == json_format.MessageToDict(wire)
    assert message.HasField(message.WhichOneof("kind"))
    assert CODEC.from_proto(Move.FromString(wire.SerializeToString())) == move


def test_moves_are_built_by_the_tables_constructor_and_constants_are_the_one_value():
    BUILT.clear()
    assert CODEC.from_proto(Move(paint=Paint(colour=2, card=0))) == EPaint(1, -1, False)
    assert BUILT == [(1, -1, False)]
    assert CODEC.from_proto(Move(stop=Stop())) is STOP


@pytest.mark.parametrize(("wire", "reason"), [
    (Move(), "empty codec.Move: set exactly one kind"),
    (Purse(), "not a codec.Move"),
    (Move(paint=Paint(colour=0)), "paint.colour must be within [1, 3], not 0"),
    (Move(paint=Paint(colour=4)), "paint.colour must be within [1, 3], not 4"),
    (Move(paint=Paint(colour=1, card=10)), "paint.card must be within [0, 9], not 10"),
    (Move(go=Go(from_row=0, from_col=1)), "go.from_row must be within [1, 4], not 0"),
    (Move(go=Go(from_row=1, from_col=5)), "go.from_col must be within [1, 4], not 5"),
    (Move(go=Go(from_row=1, from_col=1, to=Spot(row=2))),
     "go.to.row must be within [-1, 1], not 2"),
    (Move(go=Go(from_row=1, from_col=1, to=Spot(col=-2))),
     "go.to.col must be within [-1, 1], not -2"),
    (Move(pay=Pay(purse=Purse(green=6))), "pay.purse.green must be within [0, 5], not 6"),
    (Move(pay=Pay(purse=Purse(coins=1))), "pay.purse holds colours only (no coins)"),
    (Move(pay=Pay(tip=4)), "pay.tip (a colour) must be within [1, 3], not 4"),
])
def test_malformed_input_is_refused_naming_the_field(wire, reason):
    with pytest.raises(MalformedMove) as exc:
        CODEC.from_proto(wire)
    assert str(exc.value) == reason


def test_ranges_list_every_checked_integer_by_its_path():
    assert CODEC.ranges["go"] == (
        Range(("from_row",), 1, 4, "go.from_row"), Range(("from_col",), 1, 4, "go.from_col"),
        Range(("to", "row"), -1, 1, "go.to.row"), Range(("to", "col"), -1, 1, "go.to.col"))
    assert CODEC.ranges["pay"] == (
        Range(("purse", "red"), 0, 5, "pay.purse.red"),
        Range(("purse", "green"), 0, 5, "pay.purse.green"),
        Range(("tip",), 1, 3, "pay.tip (a colour)", zero_ok=True),
        Range(("amount",), 0, 2**32 - 1, "pay.amount"))
    assert CODEC.ranges["stop"] == ()


def test_an_engine_value_that_is_no_move_of_the_table_is_a_type_error():
    with pytest.raises(TypeError):
        CODEC.to_proto(("not", "a", "move"))


@pytest.mark.parametrize(("changes", "complaint"), [
    ({"pay": None}, "no table entry for pay"),
    ({"again": constant("stop", STOP)}, "stop: stop or EStop is in the table twice"),
    ({"stop": constant("stopp", STOP)}, "no message 'stopp'"),
    ({"paint": kind("paint", EPaint, EPaint, card=Int(), colour=EnumInt(), twice=Bool())},
     "EPaint has ['colour', 'card', 'twice']"),
    ({"paint": kind("paint", EPaint, EPaint, colour=Int(), card=Int(), twice=Bool())},
     "paint.colour: test.codec.Paint has it of another type"),
    ({"go": kind("go", EGo, EGo, src=Cell(1, 4), to=Cell(-1, 1, nested=True))},
     "no field 'row'"),
    ({"pay": kind("pay", EPay, EPay, purse=Counts(("red", "green"), Int(0, 5), "colours"),
                  tip=EnumInt(), amount=Bool())}, "pay.amount: test.codec.Pay has it of another"),
])
def test_a_wrong_table_is_refused_when_it_is_built(changes, complaint):
    with pytest.raises(ValueError) as exc:
        table(**changes)
    assert complaint in str(exc.value)


def test_a_kind_field_the_table_leaves_out_is_refused():
    @dataclass(frozen=True, slots=True)
    class Short:
        colour: int

    with pytest.raises(ValueError, match="uses fields"):
        table(paint=kind("paint", Short, Short, colour=EnumInt()))
