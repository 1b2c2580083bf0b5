"""Santa Maria golden records replayed: every recorded move is legal again and every per-move
state hash and the result match. A failure means the rules, the setup or the default sheet
changed behaviour: if that is meant, regenerate with `python -m tests.santa_maria.make_golden`
and say why in the commit."""
import json
from pathlib import Path

import pytest

from referee.core.match import replay
from referee.core.registry import get

RECORDS = sorted((Path(__file__).parent / "golden").glob("*.json"))


def test_there_are_golden_records():
    assert len(RECORDS) == 4


@pytest.mark.parametrize("path", RECORDS, ids=[p.name for p in RECORDS])
def test_golden_record_replays(path):
    record = json.loads(path.read_text())
    m = replay(get("santa_maria"), record)
    assert m.over and len(m.moves) == len(record["moves"]) > 50
