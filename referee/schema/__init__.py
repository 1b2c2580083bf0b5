"""Published JSON Schemas. ``record.schema.json`` describes a game record (referee-record/2, or /1 from older referees); ``standings.schema.json`` a league's published standings."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

RECORD_SCHEMA = Path(__file__).with_name("record.schema.json")


@cache
def record_schema() -> dict[str, Any]:
    return json.loads(RECORD_SCHEMA.read_text(encoding="utf-8"))


STANDINGS_SCHEMA = Path(__file__).with_name("standings.schema.json")


@cache
def standings_schema() -> dict[str, Any]:
    """The league standings document (PublishStandings, /api/leagues/<name>/standings)."""
    return json.loads(STANDINGS_SCHEMA.read_text(encoding="utf-8"))
