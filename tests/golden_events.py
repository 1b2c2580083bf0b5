"""The public event texts of a golden record's replay, by event kind (the wording tests of each
game read them)."""
from __future__ import annotations

import json
import re
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


def game_event_texts(golden: Path) -> dict[str, list[str]]:
    """Every public event text of the replays of all golden records in ``golden``, by kind.
    The wording tests check the shape of every text of a kind rather than one sentence of one
    record: golden records are regenerated whenever chance or rules change, the wording is not."""
    out: dict[str, list[str]] = {}
    for record in sorted(golden.glob("*.json")):
        for kind, texts in event_texts(record).items():
            out.setdefault(kind, []).extend(texts)
    return out


def assert_all_match(texts: dict[str, list[str]], kind: str, pattern: str) -> None:
    """Every text of ``kind`` matches ``pattern`` in full, and there is at least one."""
    found = texts.get(kind, [])
    assert found, f"no {kind} event in the golden replays"
    bad = [t for t in found if not re.fullmatch(pattern, t)]
    assert not bad, f"{kind}: {bad[:3]}"
