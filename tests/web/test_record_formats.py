"""The viewer replays records of both formats: /2 (keyed chance) and /1 (older referees, one
running stream), each with the chance it was played with; an unknown format is refused."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.core import registry
from referee.core.match import ReplayError
from referee.web import frames as F

V1 = Path(__file__).parents[1] / "contract" / "records_v1" / "santa_maria-2p-standard-22.json"


def test_a_format_1_record_replays_in_the_viewer():
    record = json.loads(V1.read_text())
    game = registry.get(record["game"])
    frames = F.frames_from_record(game, record)  # every state hash checked on the way
    assert len(frames) == len(record["moves"]) + 1
    with pytest.raises(ReplayError):
        F.frames_from_record(game, {**record, "format": "referee-record/2"})
    with pytest.raises(ReplayError, match="not a referee-record/2 or referee-record/1 record"):
        F.frames_from_record(game, {**record, "format": "referee-record/3"})
