"""Verifying a component sheet against the printed components (docs/organizers.md, "Verify a
component sheet"): which values still need the box (provisional ones, and on request inferred or
single-source ones), where each is printed, and the sheet rewritten with the values an organizer
read off the components, each marked ``verified``. The prompts are the CLI's
(``referee sheet verify``); this module holds what does not depend on them.

The sheet written is an ordinary sheet (same game, format and keys): ``referee serve
--components GAME=FILE`` loads it. It is named ``<sheet>-verified`` and carries a
``verification`` summary (the sheet it started from, when, how many values are verified and how
many are still provisional). Values not yet verified keep their provenance, so the file is also
where a walk stopped and where the next one resumes."""
from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .components import PROVENANCES, ComponentSheet, sheet_hash

#: The provenance of a value read off the printed components by the organizer.
VERIFIED = "verified"
#: The key in a sheet's ``sources`` that verified values cite.
SOURCE_KEY = "VERIFIED"
#: Provenances that may be asked for, besides provisional (``--include``).
OPTIONAL = ("inferred", "single-source", "corroborated")
#: Where a game keeps, beside its sheets, where each value is printed (by key prefix).
PRINTED_FILE = "printed.json"

assert VERIFIED in PROVENANCES


def to_verify(document: Mapping[str, Any], include: Iterable[str] = ()) -> list[str]:
    """The keys still to check, in the sheet's order: every provisional value, and every value
    of a provenance in ``include``."""
    wanted = {"provisional", *include}
    return [k for k, e in document["values"].items() if e.get("provenance") in wanted]


def printed_table(sheet_dir: Path) -> dict[str, str]:
    """A game's table of where its values are printed (key prefix -> description), empty if
    it has none."""
    path = Path(sheet_dir) / PRINTED_FILE
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8")).get("where", {}))


def where_printed(table: Mapping[str, str], key: str) -> str:
    """The description of the longest prefix of ``key`` in ``table`` ("" if none)."""
    best = max((p for p in table if key.startswith(p)), key=len, default=None)
    return table[best] if best is not None else ""


def describe(document: Mapping[str, Any], key: str, table: Mapping[str, str]) -> dict[str, str]:
    """What the organizer is shown for ``key``: which component, where it is printed, the
    sheet's own note and source for it, and the current value (JSON)."""
    entry = document["values"][key]
    sources = document.get("sources") or {}
    cited = str(entry.get("source") or "")
    label = cited.split(":")[0].split(",")[0].strip()
    return {
        "key": key,
        "provenance": str(entry.get("provenance")),
        "where": where_printed(table, key),
        "note": str(entry.get("note") or ""),
        "source": cited + (f" ({sources[label]})" if label in sources else ""),
        "value": json.dumps(entry["value"], ensure_ascii=False),
    }


def parse_answer(text: str) -> Any:
    """A typed value: JSON (``3``, ``[1, 2]``, ``{"wood": 1}``, ``"EN"``), else the text as a
    string; ``@FILE`` reads the JSON value from a file (for a whole colony board)."""
    text = text.strip()
    if text.startswith("@"):
        return json.loads(Path(text[1:]).expanduser().read_text(encoding="utf-8"))
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def verified_copy(document: Mapping[str, Any], start: Mapping[str, Any], when: str) -> dict:
    """A copy of ``document`` named and marked as a verified sheet (idempotent): its name gets
    ``-verified``, its sources the organizer's reading, its ``verification`` the sheet it
    started from (``start``) and the date."""
    doc = copy.deepcopy(dict(document))
    name = str(doc["sheet"])
    if not name.endswith("-verified"):
        doc["sheet"] = f"{name}-verified"
    doc["sources"] = {**(doc.get("sources") or {}), SOURCE_KEY: (
        "the printed components, read by the organizer with `referee sheet verify`")}
    info = dict(doc.get("verification") or {})
    info.setdefault("from_sheet", str(start["sheet"]))
    info.setdefault("from_sha256", sheet_hash(start))
    info["updated"] = when
    doc["verification"] = info
    return doc


def set_verified(document: dict, key: str, value: Any, when: str) -> None:
    """Record ``value`` for ``key`` as read off the printed component (in place)."""
    entry = document["values"][key]
    before = entry["value"]
    note = f"read off the printed component on {when}"
    if value != before:
        note += (f"; the sheet had {json.dumps(before, ensure_ascii=False)[:120]} "
                 f"({entry.get('provenance')})")
    document["values"][key] = {"value": value, "provenance": VERIFIED, "source": SOURCE_KEY,
                               "note": note}


def summarise(document: dict) -> dict[str, int]:
    """Count the verified and provisional values into the document's ``verification``."""
    counts = dict.fromkeys(PROVENANCES, 0)
    for e in document["values"].values():
        counts[e.get("provenance")] = counts.get(e.get("provenance"), 0) + 1
    info = document.setdefault("verification", {})
    info["verified"] = counts[VERIFIED]
    info["provisional"] = counts["provisional"]
    info["values"] = len(document["values"])
    return counts


def provisional_share(sheet: ComponentSheet) -> tuple[int, int]:
    """(provisional values, all values) of a loaded sheet."""
    return sheet.provenance_counts.get("provisional", 0), len(sheet.values)
