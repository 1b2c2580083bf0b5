"""Golden records replayed: every recorded move is legal again and every per-move state hash and
the result match. A failure means the rules (or the setup) changed behaviour: if that is meant,
regenerate with `python -m tests.golden.make_golden` and say why in the commit."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.core.match import ReplayError, replay
from referee.core.registry import get

RECORDS = sorted(Path(__file__).parent.glob("*.json"))


@pytest.mark.parametrize("path", RECORDS, ids=[p.name for p in RECORDS])
def test_golden_record_replays(path):
    record = json.loads(path.read_text())
    m = replay(get(record["game"]), record)
    assert m.over and len(m.moves) == len(record["moves"]) > 50


def test_tampered_record_is_caught():
    record = json.loads(RECORDS[0].read_text())
    record["moves"][10]["state_hash"] = "0" * 64
    with pytest.raises(ReplayError, match="move 11: state hash differs"):
        replay(get(record["game"]), record)
    record = json.loads(RECORDS[0].read_text())
    record["result"]["scores"][0] += 1
    with pytest.raises(ReplayError, match="result differs"):
        replay(get(record["game"]), record)


def test_there_are_golden_records():
    assert len(RECORDS) >= 3
