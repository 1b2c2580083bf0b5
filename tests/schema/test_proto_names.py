"""Every .proto compiles in every language as shipped: no field's name is one of the accessors
protoc's C++ generator makes for another field of the same message (goa.proto's View had a
`box_size` beside `repeated box`, whose C++ accessor is box_size(); it is `box_count` now). The
C++ kit's build (tests/kits) shows the same, but only where its toolchain can be installed."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from referee.v1 import batavia_pb2, goa_pb2, referee_pb2, santa_maria_pb2, sim_pb2

PROTO_DIR = Path(__file__).resolve().parents[2] / "proto" / "referee" / "v1"
MODULES = [batavia_pb2, goa_pb2, referee_pb2, santa_maria_pb2, sim_pb2]
#: the C++ accessor names of a field, besides the field's own name
PREFIXES = ("has_", "clear_", "set_", "mutable_", "release_", "set_allocated_",
            "unsafe_arena_release_", "unsafe_arena_set_allocated_", "add_")


def _messages(descriptors) -> Iterator[Descriptor]:
    for message in descriptors:
        yield message
        yield from _messages(message.nested_types)


def _accessors(field: FieldDescriptor) -> set[str]:
    names = {prefix + field.name for prefix in PREFIXES}
    if field.is_repeated:
        names.add(field.name + "_size")
    return names


def test_every_proto_file_is_checked():
    assert sorted(m.DESCRIPTOR.name.rsplit("/", 1)[-1] for m in MODULES) == sorted(
        p.name for p in PROTO_DIR.glob("*.proto"))


def test_no_field_is_named_like_a_cpp_accessor_of_another():
    clashes = []
    for module in MODULES:
        for message in _messages(module.DESCRIPTOR.message_types_by_name.values()):
            names = {f.name for f in message.fields}
            for field in message.fields:
                clashes += [f"{message.full_name}.{name} (an accessor of {field.name})"
                            for name in sorted(_accessors(field) & names)]
    assert not clashes, clashes
