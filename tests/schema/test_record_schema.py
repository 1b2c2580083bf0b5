"""The published record schema (referee/schema/record.schema.json) accepts the records every game
writes, and rejects records that break it."""
from __future__ import annotations

import copy
import random

import jsonschema
import pytest

from referee.core import registry
from referee.core.match import Match
from referee.schema import record_schema


def _record(game_name: str, seats: int, seed: int) -> dict:
    game = registry.get(game_name)
    m = Match.create(game, {}, seats, seed)
    rnd = random.Random(seed)
    while (d := m.decision()) is not None:
        m.submit(d.seat, rnd.choice(d.moves), elapsed_ms=rnd.randrange(5))
    return m.record(match_id="0123456789abcdef", seat_names=[f"s{i}" for i in range(seats)],
                    time_policy={"move_ms": 0, "bank_ms": 0, "grace_ms": 0, "strikes": 0,
                                 "on_expiry": "ON_EXPIRY_UNSPECIFIED"},
                    created_unix_ms=1, finished_unix_ms=2, rejected_moves=[0] * seats)


def test_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(record_schema())


@pytest.mark.parametrize(("game", "seats"), [("batavia", 3), ("goa", 2), ("santa_maria", 2)])
def test_every_game_writes_records_the_schema_accepts(game, seats):
    rec = _record(game, seats, 4)
    jsonschema.validate(rec, record_schema())
    # an unfinished match's record (GetRecord complete=false) too
    partial = {**rec, "moves": rec["moves"][:5], "result": None}
    jsonschema.validate(partial, record_schema())


@pytest.mark.parametrize("break_it", [
    lambda r: r.pop("moves"),
    lambda r: r.update(format="referee-record/3"),
    lambda r: r.update(seed=7),
    lambda r: r["moves"][0].update(state_hash="not a hash"),
    lambda r: r["moves"][0].update(move={}),
    lambda r: r["result"].pop("ranks"),
    lambda r: r["moves"][1].update(timeout=True, policy="SOMETHING"),
])
def test_broken_records_are_rejected(break_it):
    rec = copy.deepcopy(_record("batavia", 3, 5))
    break_it(rec)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(rec, record_schema())


def test_a_started_match_writes_records_the_schema_accepts():
    """A match started at move N of another record (CreateMatchRequest.start) keeps that start
    in its record; the schema describes it, nested starts included."""
    from referee.core.match import start_doc

    source = _record("batavia", 3, 9)
    game = registry.get("batavia")
    m = Match.create(game, {}, 3, 10, start=start_doc(source, 20, False))
    rnd = random.Random(1)
    while (d := m.decision()) is not None:
        m.submit(d.seat, rnd.choice(d.moves))
    rec = m.record()
    jsonschema.validate(rec, record_schema())
    nested = Match.create(game, {}, 3, 11, start=start_doc(rec, 5, False)).record()
    jsonschema.validate(nested, record_schema())
    broken = copy.deepcopy(rec)
    broken["start"].pop("move")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, record_schema())
