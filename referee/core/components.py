"""Component data sheets: every value a rulebook shows only in pictures, with its provenance.

A sheet is a JSON document::

    {"sheet": "batavia-queen-2008", "game": "batavia", "format": 1,
     "sources": {"S0": "the French rulebook", ...},
     "values": {"exchange_gold": {"value": {...}, "provenance": "rulebook",
                                  "source": "S0, 'Echanger des tuiles'", "note": "..."}, ...}}

Each entry of ``values`` is one fact. ``provenance`` is one of PROVENANCES. Games validate the
shape of their own values (``required`` and a checker) on top of this generic check.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: "verified": read off the printed components by an organizer (``referee sheet verify``).
PROVENANCES = ("rulebook", "corroborated", "single-source", "inferred", "provisional",
               "verified")


class SheetError(ValueError):
    """A component sheet that does not fit its schema."""


@dataclass(frozen=True)
class ComponentSheet:
    name: str
    game: str
    values: Mapping[str, Any]
    provenance: Mapping[str, str]
    sha256: str
    document: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def provenance_counts(self) -> dict[str, int]:
        counts = Counter(self.provenance.values())
        return {p: counts.get(p, 0) for p in PROVENANCES}


_DERIVED: dict[tuple[Any, str], Any] = {}


def derived(sheet: ComponentSheet, build: Callable[[ComponentSheet], Any]) -> Any:
    """``build(sheet)``, computed once per sheet content (by hash): games turn a sheet into the
    tables their rules use once, not at every match set-up."""
    key = (build, sheet.sha256)
    value = _DERIVED.get(key)
    if value is None:
        value = _DERIVED[key] = build(sheet)
        _ORIGIN[id(value)] = (build, sheet)
    return value


#: id of each value :func:`derived` built -> (build, sheet); those values live as long as
#: ``_DERIVED`` (the process), so their ids are never reused.
_ORIGIN: dict[int, tuple[Callable[[ComponentSheet], Any], ComponentSheet]] = {}


def reduce_derived(value: Any) -> tuple[Any, ...]:
    """``__reduce__`` for a value :func:`derived` builds (a game's compiled ``Rules``): it
    pickles as its sheet and builder and unpickles as ``derived(sheet, build)``, the one value of
    the unpickling process for that sheet, as a state set up there would hold it (the engines'
    caches key on it). A value built another way pickles field by field."""
    origin = _ORIGIN.get(id(value))
    if origin is not None and _DERIVED.get((origin[0], origin[1].sha256)) is value:
        build, sheet = origin
        return (derived, (sheet, build))
    return (_rebuild, (type(value), dict(vars(value))))


def _rebuild(cls: type, fields: dict[str, Any]) -> Any:
    """A value of ``cls`` with these attributes, as pickle builds a plain object (a frozen
    dataclass refuses ``setattr``)."""
    value: Any = object.__new__(cls)
    value.__dict__.update(fields)
    return value


# ---------------------------------------------------------------- checkers for games' schemas
# Each returns a function value -> error text or None, for the ``required`` map of parse_sheet.


def is_int(x: Any, lo: int = 0) -> bool:
    """A true integer (not a bool) of at least ``lo``."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= lo


def int_at_least(lo: int = 0) -> Callable[[Any], str | None]:
    return lambda v: None if is_int(v, lo) else f"expected an integer >= {lo}"


def int_list(length: int | None = None, lo: int = 0) -> Callable[[Any], str | None]:
    """A list of integers >= lo (of exactly ``length`` items if given)."""

    def check(v: Any) -> str | None:
        if not isinstance(v, list) or not all(is_int(x, lo) for x in v):
            return f"expected a list of integers >= {lo}"
        if length is not None and len(v) != length:
            return f"expected {length} integers"
        return None

    return check


def exactly(expected: Any) -> Callable[[Any], str | None]:
    return lambda v: None if v == expected else f"expected {expected!r}"


def int_map(keys: tuple[str, ...], lo: int = 0) -> Callable[[Any], str | None]:
    """An object with exactly these keys and integer values >= lo."""

    def check(v: Any) -> str | None:
        if not isinstance(v, dict) or set(v) != set(keys) or not all(
            is_int(x, lo) for x in v.values()
        ):
            return f"expected an object with keys {', '.join(keys)} and integer values >= {lo}"
        return None

    return check


def sheet_hash(document: Mapping[str, Any]) -> str:
    data = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def parse_sheet(
    document: Mapping[str, Any],
    *,
    game: str,
    required: Mapping[str, Callable[[Any], str | None]],
    origin: str = "<sheet>",
) -> ComponentSheet:
    """Check the generic shape, then each required value with its checker (which returns an
    error text or None). Unknown value keys are refused: a typo must not go unnoticed."""
    if not isinstance(document, Mapping):
        raise SheetError(f"{origin}: a sheet is a JSON object")
    if document.get("game") != game:
        raise SheetError(f"{origin}: sheet is for game {document.get('game')!r}, not {game!r}")
    if document.get("format") != 1:
        raise SheetError(f"{origin}: unsupported sheet format {document.get('format')!r}")
    name = document.get("sheet")
    if not isinstance(name, str) or not name:
        raise SheetError(f"{origin}: missing sheet name")
    entries = document.get("values")
    if not isinstance(entries, Mapping):
        raise SheetError(f"{origin}: missing 'values' object")
    missing = sorted(set(required) - set(entries))
    if missing:
        raise SheetError(f"{origin}: missing value(s): {', '.join(missing)}")
    unknown = sorted(set(entries) - set(required))
    if unknown:
        raise SheetError(f"{origin}: unknown value(s): {', '.join(unknown)}")
    values: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    for key, entry in entries.items():
        if not isinstance(entry, Mapping) or "value" not in entry:
            raise SheetError(f"{origin}: {key}: each value is an object with 'value'")
        prov = entry.get("provenance")
        if prov not in PROVENANCES:
            raise SheetError(
                f"{origin}: {key}: provenance must be one of {', '.join(PROVENANCES)}, "
                f"not {prov!r}"
            )
        if prov != "provisional" and not entry.get("source"):
            raise SheetError(f"{origin}: {key}: a {prov} value must name its source")
        problem = required[key](entry["value"])
        if problem:
            raise SheetError(f"{origin}: {key}: {problem}")
        values[key] = entry["value"]
        provenance[key] = prov
    return ComponentSheet(
        name=name,
        game=game,
        values=values,
        provenance=provenance,
        sha256=sheet_hash(document),
        document=document,
    )


def load_sheet_file(
    path: str | Path, *, game: str, required: Mapping[str, Callable[[Any], str | None]]
) -> ComponentSheet:
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SheetError(f"{path}: cannot read sheet: {exc}") from None
    return parse_sheet(document, game=game, required=required, origin=str(path))
