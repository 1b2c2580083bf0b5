"""Public views as JSON, and replays built by re-simulating a record.

Everything here reads a game only through the Game contract's *spectator* view
(``game.view(state, None)``, what ``Watch`` sends) and its public events: a page built from
these values shows nothing a spectator may not see. The one exception is a public record (a
match over and not embargoed, which the caller checks): its replay may follow any seat's view
(``seat_view``), end on every seat's final view (``Replayer.reveal``) and carry the bots'
notes (``Replayer.add_notes``). A replay is a list of frames, one per state
version; consecutive views are stored as small patches (``diff``/``patch``) so that a static
replay page of a long match stays small. ``web/static/viewer.js`` applies the same patches."""
from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from referee.core.components import ComponentSheet
from referee.core.contract import Event, Game, IllegalMove
from referee.core.match import RECORD_FORMAT, RECORD_FORMATS, Match, ReplayError

BUNDLE_FORMAT = "referee-replay/1"


def view_json(message: Message) -> dict[str, Any]:
    """A view message as JSON with every field present (renderers need no defaults): the same
    value as ``json_format.MessageToDict(message, preserving_proto_field_name=True,
    always_print_fields_with_no_presence=True)`` (tests/web checks it), several times faster.
    Sub-messages met before (same type, same bytes) reuse their converted value: consecutive
    views of a match differ in few places. Returned values are shared: never mutate them."""
    return _message(message)


_CACHE: dict[tuple[str, bytes], Any] = {}
_CACHE_LIMIT = 50_000
_INT64 = {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64,
          FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64}


def _cached(msg: Message) -> Any:
    key = (msg.DESCRIPTOR.full_name, msg.SerializeToString(deterministic=True))
    out = _CACHE.get(key)
    if out is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        out = _CACHE[key] = _message(msg)
    return out


#: Descriptors are typed Any here: protobuf's stubs give the pure-Python and the upb (C)
#: descriptor classes apart, and no longer declare ``label``, which older releases need.
_PLANS: dict[str, list[tuple[str, str, Any]]] = {}


def _plan(desc: Any) -> list[tuple[str, str, Any]]:
    """How to convert each field of a message type: (name, kind, field descriptor)."""
    plan = _PLANS.get(desc.full_name)
    if plan is None:
        plan = []
        for f in desc.fields:
            repeated = (f.is_repeated if hasattr(f, "is_repeated")
                        else f.label == FieldDescriptor.LABEL_REPEATED)
            if f.message_type is not None and f.message_type.GetOptions().map_entry:
                kind = "map"
            elif repeated:
                kind = "list_msg" if f.message_type is not None else "list"
            elif f.has_presence:
                kind = "optional"
            else:
                kind = "msg" if f.message_type is not None else "scalar"
            plan.append((f.name, kind, f))
        _PLANS[desc.full_name] = plan
    return plan


def _message(msg: Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind, f in _plan(msg.DESCRIPTOR):
        if kind == "scalar":
            out[name] = _scalar(f, getattr(msg, name))
        elif kind == "list_msg":
            out[name] = [_cached(v) for v in getattr(msg, name)]
        elif kind == "list":
            out[name] = [_scalar(f, v) for v in getattr(msg, name)]
        elif kind == "msg":
            out[name] = _cached(getattr(msg, name))
        elif kind == "optional":
            if msg.HasField(name):
                out[name] = _scalar(f, getattr(msg, name))
        else:  # map
            vf = f.message_type.fields_by_name["value"]
            out[name] = {str(k): _scalar(vf, v) for k, v in getattr(msg, name).items()}
    return out


def _scalar(f: Any, v: Any) -> Any:
    if f.message_type is not None:
        return _cached(v)
    if f.enum_type is not None:
        ev = f.enum_type.values_by_number.get(v)
        return ev.name if ev is not None else v
    if f.type in _INT64:
        return str(v)
    if f.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(v).decode("ascii")
    return v


def public_view(game: Game, state: Any) -> dict[str, Any]:
    """The spectator's view of ``state`` (seat None: public information only)."""
    return seat_view(game, state, None)


def seat_view(game: Game, state: Any, seat: int | None) -> dict[str, Any]:
    """What ``seat`` saw of ``state`` (its Decision's view; None: the spectator's). Only for a
    match whose record is public (over and not embargoed): see source.MatchSource.frames."""
    return view_json(game.view(state, seat))


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
    obj = dict(a)
    for k in p.get("x", ()):
        obj.pop(k, None)
    for k, sub in p.get("o", {}).items():
        obj[k] = patch(obj.get(k), sub)
    return obj


# ---------------------------------------------------------------- replays

def _event_json(e: Event) -> dict[str, Any]:
    """A public event as frames carry it (``data``, its public details, only when it has
    some)."""
    out = {"seat": e.seat, "kind": e.kind, "text": e.text}
    if e.data:
        out["data"] = e.data
    return out


class Replayer:
    """Re-simulates a match move by move and keeps one frame per state version:
    ``{"v": version, "seat": mover or -1, "events": [...], "d": patch to the view}`` (the
    first frame's patch is the whole initial view; ``"note"``, the mover's note, only in a
    public record's replay). ``extend`` carries on from where it
    stopped, so a live match's replay costs only its new moves."""

    def __init__(self, game: Game, options: Mapping[str, Any], seats: int, seed: int,
                 sheet: ComponentSheet, record_format: str = RECORD_FORMAT,
                 viewer: int | None = None, start: Mapping[str, Any] | None = None):
        self.game = game
        self.viewer = viewer  # whose view the frames show: None, the spectator's
        self.match = Match.create(game, options, seats, seed, sheet, record_format, start)
        self.prev = seat_view(game, self.match.state, viewer)
        # Each frame is kept as its JSON text: a held replay is a few strings, not a tree of
        # dicts for the cyclic garbage collector to walk while the referee plays moves.
        self.encoded: list[str] = [dumps({"v": 0, "seat": -1, "events": [],
                                          "d": {"=": self.prev}})]
        self.moves_done = 0
        self._hash = self.match.initial_hash  # the hash claimed after the last move applied

    def last_hash(self) -> str:
        return self._hash

    def extend(self, moves: list[Mapping[str, Any]], verify: bool = True) -> None:
        """Apply ``moves[self.moves_done:]`` (``moves`` is the whole move list so far). Moves
        go straight to ``game.apply`` (which refuses an illegal one), without listing the legal
        moves. ``verify`` checks each move's state hash (a record from a file); without it
        (the referee's own move log of a live match) only the last one is checked."""
        game, m = self.game, self.match
        for entry in moves[self.moves_done:]:
            msg = game.move_message()
            json_format.ParseDict(entry["move"], msg)
            try:
                events = game.apply(m.state, int(entry["seat"]), game.move_from_proto(msg))
            except IllegalMove as exc:
                raise ReplayError(f"move {entry.get('n')}: {exc}") from None
            m.version += 1
            self.moves_done += 1
            self._hash = entry.get("state_hash") or ""
            if verify and self._hash and game.hash_state(m.state) != self._hash:
                raise ReplayError(f"move {self.moves_done}: state hash differs from the record")
            cur = seat_view(game, m.state, self.viewer)
            self.encoded.append(dumps({"v": m.version, "seat": int(entry["seat"]),
                                       "events": [_event_json(e) for e in events],
                                       "d": diff(self.prev, cur)}))
            self.prev = cur
        _CACHE.clear()  # its entries served this run of consecutive views
        if not verify and self._hash and game.hash_state(m.state) != self._hash:
            raise ReplayError(f"move {self.moves_done}: state hash differs from the record")

    def add_notes(self, moves: list[Mapping[str, Any]]) -> None:
        """Put each bot's note (a public record's ``note``) in the frame its move made, as
        ``"note"``. Frames replayed while the match was live have none: notes never leave the
        server then (a running match's log is read without them)."""
        for entry in moves[: self.moves_done]:
            note = entry.get("note")
            if not note:
                continue
            k = int(entry["n"])  # frame k is the state after move k
            f = json.loads(self.encoded[k])
            if f.get("note") != note:
                f["note"] = str(note)
                self.encoded[k] = dumps(f)

    def reveal(self) -> list[dict[str, Any]]:
        """Every seat's view of the current (final) state, for the end of a public replay."""
        m = self.match
        return [{"seat": s, "view": seat_view(self.game, m.state, s)}
                for s in range(m.seat_count)]

    def final_encoded(self, forfeited: int | None) -> list[str]:
        """The frames' JSON, plus the forfeit's own version if a seat forfeited."""
        if forfeited is None:
            return list(self.encoded)
        seat = int(forfeited)
        return [*self.encoded, dumps({"v": self.match.version + 1, "seat": seat, "d": None,
                                      "events": [{"seat": seat, "kind": "referee.forfeit",
                                                  "text": f"seat {seat} forfeits"}]})]

    def final_frames(self, forfeited: int | None) -> list[dict[str, Any]]:
        return [json.loads(f) for f in self.final_encoded(forfeited)]


def record_replayer(game: Game, record: Mapping[str, Any],
                    sheet: ComponentSheet | None = None, viewer: int | None = None) -> Replayer:
    """A Replayer at the start of ``record`` (checks the component sheet and initial hash),
    showing ``viewer``'s view (None: the spectator's)."""
    options = game.spec.parse_options(record.get("options") or {})
    sheet = sheet or game.default_components(options)
    want = (record.get("components") or {}).get("sha256")
    if want and want != sheet.sha256:
        raise ReplayError("the record was played with another component sheet")
    record_format = str(record.get("format") or RECORD_FORMAT)
    if record_format not in RECORD_FORMATS:
        raise ReplayError(f"not a {' or '.join(RECORD_FORMATS)} record")
    start = record.get("start")
    r = Replayer(game, options, int(record["seats"]), int(record["seed"]), sheet, record_format,
                 viewer, start if isinstance(start, Mapping) else None)
    if record.get("initial_state_hash") and r.match.initial_hash != record["initial_state_hash"]:
        raise ReplayError("initial state hash differs: setup is not the one recorded")
    return r


def frames_from_record(game: Game, record: Mapping[str, Any],
                       sheet: ComponentSheet | None = None) -> list[dict[str, Any]]:
    r = record_replayer(game, record, sheet)
    moves = list(record.get("moves") or [])
    r.extend(moves)
    r.add_notes(moves)
    return r.final_frames(record.get("forfeited"))


def view_at(frames: list[Any], index: int) -> dict[str, Any]:
    """The full public view of frame ``index`` (frames as dicts or as their JSON text)."""
    view: Any = None
    for f in frames[: index + 1]:
        view = patch(view, (json.loads(f) if isinstance(f, str) else f)["d"])
    return view


def frame(frames: list[Any], index: int) -> dict[str, Any]:
    f = frames[index]
    return json.loads(f) if isinstance(f, str) else f


def result_summary(result: Mapping[str, Any] | None, names: list[str]) -> dict[str, Any] | None:
    """The public result of a finished match, for pages (scores, ranks, winners, summary, and
    each seat's score breakdown as the game's ``result`` gives it: ``details``)."""
    if not result:
        return None
    return {
        "details": list(result.get("details") or []),
        "scores": list(result.get("scores") or []),
        "ranks": list(result.get("ranks") or []),
        "winners": list(result.get("winners") or []),
        "winner_names": [names[w] for w in result.get("winners") or [] if w < len(names)],
        "summary": result.get("summary") or "",
    }


def bundle_json(meta: dict[str, Any], frames: list[Any],
                reveal: list[dict[str, Any]] | None = None) -> str:
    """What a match page needs, as JSON safe inside HTML: ``{"format", "match": public match
    facts, "frames": [...]}``, and ``"reveal"`` (every seat's final view) when given; frames
    as dicts or as their JSON text (from ``dumps``)."""
    parts = (f if isinstance(f, str) else dumps(f) for f in frames)
    tail = f',"reveal":{dumps(reveal)}' if reveal is not None else ""
    return (f'{{"format":{dumps(BUNDLE_FORMAT)},"match":{dumps(meta)},'
            f'"frames":[{",".join(parts)}]{tail}}}')


def dumps(obj: Any) -> str:
    """Compact JSON, safe inside an HTML <script> element."""
    return (json.dumps(obj, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
