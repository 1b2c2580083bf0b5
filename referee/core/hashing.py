"""Canonical hashing of plain-data states (dataclasses, lists, dicts, ints, strings, enums)."""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from typing import Any

from .rng import Rng


def canonical(obj: Any) -> Any:
    """A JSON-able canonical form. Dataclass fields marked ``metadata={"hash": False}`` are left
    out (e.g. a component sheet, which is hashed once into the record instead). An object with a
    ``hash_form()`` method hashes as what that returns (e.g. a typed sub-decision as the tuple
    ``(tag, field, ...)``, so a record's hashes do not depend on the class layout)."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    hash_form = getattr(obj, "hash_form", None)
    if hash_form is not None:
        return canonical(hash_form())
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Rng):
        return {"rng": obj.state}
    if dataclasses.is_dataclass(obj):
        return {
            f.name: canonical(getattr(obj, f.name))
            for f in dataclasses.fields(obj)
            if f.metadata.get("hash", True)
        }
    if isinstance(obj, (list, tuple)):
        return [canonical(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (set, frozenset)):
        return sorted(canonical(x) for x in obj)
    if isinstance(obj, float):
        raise TypeError("floats are not allowed in game state")
    raise TypeError(f"cannot hash {type(obj).__name__}")


def digest(obj: Any) -> str:
    data = json.dumps(canonical(obj), separators=(",", ":"), sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()
