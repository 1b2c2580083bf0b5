"""Varied component sheets (issue 35, item 6): the provisional values of a sheet drawn again
within what its notes document, so an organizer can replay an event under each and see whether
the unverified values can decide it (``referee sheet vary``; ``referee-tournament report
--sensitivity``).

Only values whose provenance is ``provisional`` change; every other value is a fact. Two
variations, both within the documented hypothesis of the value:

* **Families are shuffled.** Provisional values that share a note (one documented hypothesis,
  such as Goa's "the card-by-card table is unknown; 10 effects x 3, colonists 1-3, every symbol
  equally often" over its 30 cards) and a shape (the same JSON type) are dealt out again among
  their keys: what the hypothesis fixes (the multiset: how many of each, the totals) stays,
  what is unknown (which component carries which) changes.
  Values of one family swap only with values of the same shape (a list's length, an
  object's keys).
* **Documented ranges are drawn.** A provisional integer whose note gives a range ("R says 1 to
  3 points") is drawn uniformly in it. Numbers (and lists of numbers) without a documented
  range (Goa's development board, "chosen increasing and consistent with every known cell")
  keep their values: no range says how far they could be off.

Each family's draw is kept only if the game still accepts the sheet (``valid``: the game's own
loader, with every check of its schema, such as Goa's increasing development board); up to
``tries`` draws, else the family keeps its values. Pure and standard library only.
"""
from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

#: "1 to 3", "1-3", "1–3" in a provisional value's note: the documented range of an integer
RANGE_RE = re.compile(r"\b(\d+)\s*(?:to|-|–)\s*(\d+)\b")


def shape(value: Any) -> str:
    """What a shuffled value must share with the one it replaces: its JSON type, a list's
    length, an object's keys (Goa's step s costs s spices: lists of one length swap)."""
    if isinstance(value, list):
        return f"list{len(value)}"
    if isinstance(value, dict):
        return "dict:" + ",".join(sorted(value))
    return type(value).__name__


def families(document: Mapping[str, Any]) -> list[list[str]]:
    """The provisional keys grouped by (note, shape of the value), in sheet order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for key, entry in document["values"].items():
        if entry.get("provenance") != "provisional":
            continue
        groups.setdefault((str(entry.get("note", "")), shape(entry["value"])), []).append(key)
    return list(groups.values())


def _numeric(value: Any) -> bool:
    """A number, or a list of numbers (a cell of Goa's board: its yields)."""
    if isinstance(value, list):
        return all(_numeric(v) for v in value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _draw(doc: dict[str, Any], keys: list[str], rng: random.Random) -> None:
    values = doc["values"]
    if len(keys) == 1:
        entry = values[keys[0]]
        m = RANGE_RE.search(str(entry.get("note", "")))
        if m and isinstance(entry["value"], int) and not isinstance(entry["value"], bool):
            lo, hi = sorted((int(m.group(1)), int(m.group(2))))
            entry["value"] = rng.randint(lo, hi)
        return
    ints = all(isinstance(values[k]["value"], int) and not isinstance(values[k]["value"], bool)
               for k in keys)
    m = RANGE_RE.search(str(values[keys[0]].get("note", "")))
    if ints and m:
        lo, hi = sorted((int(m.group(1)), int(m.group(2))))
        for k in keys:
            values[k]["value"] = rng.randint(lo, hi)
        return
    if all(_numeric(values[k]["value"]) for k in keys):
        return  # numbers without a documented range (Goa's board: "chosen increasing") stay
    dealt = [copy.deepcopy(values[k]["value"]) for k in keys]
    rng.shuffle(dealt)
    for k, v in zip(keys, dealt, strict=True):
        values[k]["value"] = v


def vary(document: Mapping[str, Any], rng: random.Random,
         valid: Callable[[dict[str, Any]], bool], *, name: str, tries: int = 20,
         ) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``document`` with its provisional values drawn again (see the module
    docstring), named ``name``; and the keys whose value changed."""
    doc = copy.deepcopy(dict(document))
    doc["sheet"] = name
    doc["description"] = (f"{document.get('sheet')} with its provisional values varied "
                          f"(referee sheet vary). " + str(document.get("description", "")))
    for keys in families(doc):
        before = {k: copy.deepcopy(doc["values"][k]["value"]) for k in keys}
        for _ in range(tries):
            _draw(doc, keys, rng)
            if valid(doc):
                break
        else:
            for k, v in before.items():
                doc["values"][k]["value"] = v
    changed = [k for k in doc["values"]
               if json.dumps(doc["values"][k]["value"], sort_keys=True)
               != json.dumps(document["values"][k]["value"], sort_keys=True)]
    return doc, changed
