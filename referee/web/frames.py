"""Public views as JSON, and replays built by re-simulating a record.

Everything here reads a game only through the Game contract's *spectator* view
(``game.view(state, None)``, what ``Watch`` sends) and its public events: a page built from
these values shows nothing a spectator may not see. A replay is a list of frames, one per state
version; consecutive views are stored as small patches (``diff``/``patch``) so that a static
replay page of a long match stays small. ``web/static/viewer.js`` applies the same patches."""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format

from referee.core.components import ComponentSheet
from referee.core.contract import Game, IllegalMove
from referee.core.match import Match, ReplayError

BUNDLE_FORMAT = "referee-replay/1"


def view_json(message: Any) -> dict[str, Any]:
    """A view message as JSON with every field present (renderers need no defaults)."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def public_view(game: Game, state: Any) -> dict[str, Any]:
    """The spectator's view of ``state`` (seat None: public information only)."""
    return view_json(game.view(state, None))


# ---------------------------------------------------------------- patches
# A patch is {"=": value} (replace), {"o": {key: patch}, "x": [removed keys]} (object) or
# {"n": new length, "i": {index: patch}} (array). No patch (None) means unchanged.

def diff(a: Any, b: Any) -> dict[str, Any] | None:
    if a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        out: dict[str, Any] = {}
        changed = {k: p for k in b if (p := diff(a.get(k, _MISSING), b[k])) is not None}
        if changed:
            out["o"] = changed
        gone = [k for k in a if k not in b]
        if gone:
            out["x"] = gone
        return out
    if isinstance(a, list) and isinstance(b, list):
        items = {}
        for i, v in enumerate(b):
            p = diff(a[i], v) if i < len(a) else {"=": v}
            if p is not None:
                items[str(i)] = p
        return {"n": len(b), "i": items}
    return {"=": b}


class _Missing:
    def __eq__(self, other: object) -> bool:
        return other is self


_MISSING = _Missing()


def patch(a: Any, p: Mapping[str, Any] | None) -> Any:
    """Apply a patch from ``diff`` (returns a new value; ``a`` is not modified)."""
    if p is None:
        return a
    if "=" in p:
        return p["="]
    if "n" in p:
        out = list(a[: p["n"]])
        for k, sub in p["i"].items():
            i = int(k)
            if i < len(out):
                out[i] = patch(out[i], sub)
            else:
                out.append(patch(None, sub))
        return out
    out = dict(a)
    for k in p.get("x", ()):
        out.pop(k, None)
    for k, sub in p.get("o", {}).items():
        out[k] = patch(out.get(k), sub)
    return out


# ---------------------------------------------------------------- replays

def _event_json(e: Any) -> dict[str, Any]:
    return {"seat": e.seat, "kind": e.kind, "text": e.text}


def frames_from_moves(
    game: Game,
    options: Mapping[str, Any],
    seats: int,
    seed: int,
    moves: list[Mapping[str, Any]],
    sheet: ComponentSheet,
    forfeited: int | None = None,
) -> list[dict[str, Any]]:
    """Re-simulate a match and return one frame per state version:
    ``{"v": version, "seat": mover or -1, "events": [...], "d": patch to the public view}``.
    The first frame's patch is the whole initial view."""
    m = Match.create(game, options, seats, seed, sheet)
    prev = public_view(game, m.state)
    frames = [{"v": 0, "seat": -1, "events": [], "d": {"=": prev}}]
    for entry in moves:
        msg = game.move_message()
        json_format.ParseDict(entry["move"], msg)
        try:
            _, events = m.submit(int(entry["seat"]), game.move_from_proto(msg),
                                 int(entry["version_before"]))
        except IllegalMove as exc:
            raise ReplayError(f"move {entry.get('n')}: {exc}") from None
        if entry.get("state_hash") and m.moves[-1].state_hash != entry["state_hash"]:
            raise ReplayError(f"move {entry.get('n')}: state hash differs from the record")
        cur = public_view(game, m.state)
        frames.append({"v": m.version, "seat": int(entry["seat"]),
                       "events": [_event_json(e) for e in events], "d": diff(prev, cur)})
        prev = cur
    if forfeited is not None:
        m.forfeit(int(forfeited))
        frames.append({"v": m.version, "seat": int(forfeited), "events": [
            {"seat": int(forfeited), "kind": "referee.forfeit",
             "text": f"seat {forfeited} forfeits"}], "d": None})
    return frames


def frames_from_record(game: Game, record: Mapping[str, Any],
                       sheet: ComponentSheet | None = None) -> list[dict[str, Any]]:
    options = game.spec.parse_options(record.get("options") or {})
    sheet = sheet or game.default_components(options)
    want = (record.get("components") or {}).get("sha256")
    if want and want != sheet.sha256:
        raise ReplayError("the record was played with another component sheet")
    return frames_from_moves(game, options, int(record["seats"]), int(record["seed"]),
                             list(record.get("moves") or []), sheet, record.get("forfeited"))


def view_at(frames: list[dict[str, Any]], index: int) -> dict[str, Any]:
    """The full public view of frame ``index``."""
    view: Any = None
    for f in frames[: index + 1]:
        view = patch(view, f["d"])
    return view


def result_summary(result: Mapping[str, Any] | None, names: list[str]) -> dict[str, Any] | None:
    """The public result of a finished match, for pages (scores, ranks, winners, summary)."""
    if not result:
        return None
    return {
        "scores": list(result.get("scores") or []),
        "ranks": list(result.get("ranks") or []),
        "winners": list(result.get("winners") or []),
        "winner_names": [names[w] for w in result.get("winners") or [] if w < len(names)],
        "summary": result.get("summary") or "",
    }


def bundle(meta: dict[str, Any], frames: list[dict[str, Any]]) -> dict[str, Any]:
    """What a match page needs: public match facts and the frames."""
    return {"format": BUNDLE_FORMAT, "match": meta, "frames": frames}


def dumps(obj: Any) -> str:
    """Compact JSON, safe inside an HTML <script> element."""
    return (json.dumps(obj, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
