"""The public event texts of a golden record's replay, by event kind (the wording tests of each
game read them)."""
from __future__ import annotations

import json
from pathlib import Path

from referee.core import registry
from referee.web import frames as F


def event_texts(record: Path) -> dict[str, list[str]]:
    """Every public event text of ``record``'s replay, grouped by kind, in order."""
    rec = json.loads(record.read_text())
    out: dict[str, list[str]] = {}
    for f in F.frames_from_record(registry.get(rec["game"]), rec):
        for e in f["events"]:
            out.setdefault(e["kind"], []).append(e["text"])
    return out
