"""Writes ``layout.json``: for each game, the most entries each repeated field of its View carried
and the values each string field took, over random games at every seat count and option choice
and the largest wire value each field of a wide move kind takes in the legal lists
(``python -m referee_research.envs.layout [--games N]``). The encodings read it: a repeated
field gets that many slots (plus a margin), a string field one slot per value seen, a wide move
kind is enumerated up to the values seen (plus a margin) when that makes few enough moves.

It reads views only (what seats are sent), so the file says nothing a seat could not see.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import random
from collections import defaultdict
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from referee.core import registry
from referee.core.contract import BadOptions
from referee.sim.model import Simulation

from .encoding import LAYOUT, wide_kinds, wire_values

#: Slots kept above the most entries seen, so a rare longer list still fits.
MARGIN = 1.25


def _walk(message: Message, prefix: str, caps: dict[str, int],
          strings: dict[str, set[str]]) -> None:
    for field, value in message.ListFields():
        path = f"{prefix}{field.name}"
        values = value if field.is_repeated else [value]
        if field.is_repeated:
            caps[path] = max(caps[path], len(values))
        for v in values:
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                _walk(v, path + ".", caps, strings)
            elif field.type == FieldDescriptor.TYPE_STRING:
                strings[path].add(v)


def option_sets(name: str) -> list[dict[str, Any]]:
    """Every combination of the game's enum and bool options (the others at their default)."""
    spec = registry.get(name).spec
    axes = [[(o.name, c) for c in o.choices] if o.kind == "enum"
            else [(o.name, False), (o.name, True)] if o.kind == "bool" else [(o.name, o.default)]
            for o in spec.options]
    valid = []
    for combo in itertools.product(*axes):
        try:  # some combinations are refused (an edition's variant with the other edition)
            Simulation.new(name, spec.max_seats, 0, dict(combo))
        except BadOptions:
            continue
        valid.append(dict(combo))
    return valid


def measure(name: str, games: int, seed: int = 0) -> dict[str, Any]:
    spec = registry.get(name).spec
    caps: dict[str, int] = defaultdict(int)
    strings: dict[str, set[str]] = defaultdict(set)
    reach: dict[str, int] = defaultdict(int)
    game = registry.get(name)
    wide = wide_kinds(game)
    rnd = random.Random(seed)
    sets = option_sets(name)
    for n, (seats, options) in enumerate(itertools.islice(itertools.cycle(
            itertools.product(range(spec.min_seats, spec.max_seats + 1), sets)),
            games * (spec.max_seats - spec.min_seats + 1))):
        sim = Simulation.new(name, seats, seed + n, options)
        while (d := sim.decision()) is not None:
            _walk(sim.view(d.seat), "", caps, strings)
            for move in d.moves:
                kind = wide.get(type(move))
                if kind is not None:
                    for path, value in wire_values(game, move, kind).items():
                        reach[path] = max(reach[path], value)
            sim.apply(d.moves[rnd.randrange(len(d.moves))])
        for seat in range(seats):
            _walk(sim.view(seat), "", caps, strings)
    return {"caps": {p: math.ceil(c * MARGIN) for p, c in sorted(caps.items())},
            "moves": {p: math.ceil(v * MARGIN) for p, v in sorted(reach.items())},
            "strings": {p: sorted(v) for p, v in sorted(strings.items())}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="random games per seat count")
    args = parser.parse_args(argv)
    layout = {name: measure(name, args.games) for name in sorted(registry.games())}
    LAYOUT.write_text(json.dumps(layout, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {LAYOUT}")


if __name__ == "__main__":
    main()
