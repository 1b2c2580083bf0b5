"""CreateMatch's request, checked: every value a client sent is validated here, before anything
is created or stored, and a refusal is INVALID_ARGUMENT/MALFORMED naming the faulty value (only
a prefix of a client's names and values is quoted)."""
from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from referee.core import registry
from referee.core.components import ComponentSheet
from referee.core.contract import BadOptions, Game
from referee.core.match import Match, ReplayError, start_doc
from referee.server.base import errors
from referee.server.base.errors import clip
from referee.server.base.wire import check_text
from referee.v1 import referee_pb2 as pb

#: Longest option value and seat name accepted.
MAX_OPTION_CHARS = 64
MAX_NAME_CHARS = 200
#: CreateMatchRequest.event: an organizer's name for a tournament or an event of a league
MAX_EVENT_CHARS = 120
#: Longest CreateMatchRequest.request_id (printable ASCII)
MAX_REQUEST_ID_CHARS = 128


def request_id(request: pb.CreateMatchRequest) -> str:
    """``request.request_id`` checked: "" (none) or 1-128 printable ASCII characters."""
    rid = request.request_id
    if len(rid) > MAX_REQUEST_ID_CHARS:
        raise errors.malformed(f"request_id is at most {MAX_REQUEST_ID_CHARS} characters, "
                               f"not {len(rid)}")
    if rid and not (rid.isascii() and rid.isprintable()):
        raise errors.malformed(f"request_id must be printable ASCII, not {clip(rid)}")
    return rid


def fingerprint(request: pb.CreateMatchRequest) -> str:
    """What makes two CreateMatch requests "the same request": the SHA-256 of the request
    without its request_id, serialized deterministically (so map order does not count). An
    explicit REVEAL_POLICY_SAFE counts as the unset field it means: a retry sent by a newer
    client (which says SAFE) of a request an older one made (which left it out, SAFE being 0
    then) is the same request, and the fingerprints stored before keep matching."""
    bare = pb.CreateMatchRequest()
    bare.CopyFrom(request)
    bare.ClearField("request_id")
    if bare.reveal_policy == pb.REVEAL_POLICY_SAFE:
        bare.ClearField("reveal_policy")
    return hashlib.sha256(bare.SerializeToString(deterministic=True)).hexdigest()


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """A CreateMatch request once every value in it is known good."""

    game: Game
    options: dict[str, Any]
    seats: int
    names: list[str]
    bots: list[str]  # the registered bot bound to each seat, "" for none
    policy: pb.TimePolicy
    sheet: ComponentSheet
    seed: int
    reveal_policy: str  # "safe" | "none" (see embargo.py)
    start: dict[str, Any] | None = None  # CreateMatchRequest.start as a record keeps it
    event: str = ""  # CreateMatchRequest.event, checked


def plan_match(
    request: pb.CreateMatchRequest,
    sheet_for: Callable[[Game, dict[str, Any]], ComponentSheet],
    check_seat_bots: Callable[[Iterable[str], int], list[str]],
    join_ms_default: int = 0,
) -> MatchPlan:
    """The checked plan of ``request``; raises RefereeError(MALFORMED) at the first faulty
    value. ``sheet_for`` gives the component sheet this referee uses for a game's options,
    ``check_seat_bots`` checks the seats bound to registered bots, ``join_ms_default`` is the
    join time of a time policy that leaves ``join_ms`` at 0."""
    game = _game(request.game)
    options = _options(game, request.options)
    seats = _seats(game, request.seats)
    names = _names(request.seat_names, seats)
    bots = check_seat_bots(request.seat_bots, seats)
    policy = _policy(request.time_policy, join_ms_default)
    sheet = sheet_for(game, options)
    if request.components_sha256 and request.components_sha256 != sheet.sha256:
        raise errors.malformed(
            f"component sheet {request.components_sha256[:12]}… is not loaded; this "
            f"referee uses {sheet.name} ({sheet.sha256[:12]}…) for {game.spec.name}"
        )
    event = check_text(request.event, "event", max_len=MAX_EVENT_CHARS).strip()
    seed = request.seed if request.HasField("seed") else secrets.randbits(63)
    return MatchPlan(game=game, options=options, seats=seats, names=names, bots=bots,
                     policy=policy, sheet=sheet, seed=seed,
                     reveal_policy=_reveal_policy(request.reveal_policy),
                     start=_start(request) if request.HasField("start") else None,
                     event=event)


def _start(request: pb.CreateMatchRequest) -> dict[str, Any]:
    """``request.start`` as the record keeps it (``referee.core.match.start_doc``): the given
    record must be a JSON object with at least ``move`` moves; that it replays, and is for the
    request's game, options, seat count and sheet, ``new_match`` checks."""
    start = request.start
    try:
        record = json.loads(start.record_json)
    except ValueError:
        raise errors.malformed("start.record_json is not JSON") from None
    try:
        return start_doc(record, start.move, start.redraw_hidden)
    except ReplayError as exc:
        raise errors.malformed(f"start: {exc}") from None


def new_match(plan: MatchPlan) -> Match:
    """The match ``plan`` describes: at the game's set-up, or where its start's record stood
    (replayed, every hash checked, hidden parts redrawn from the new seed if asked);
    INVALID_ARGUMENT/MALFORMED naming why a start cannot be used."""
    try:
        return Match.create(plan.game, plan.options, plan.seats, plan.seed, plan.sheet,
                            start=plan.start)
    except ReplayError as exc:
        raise errors.malformed(f"start: {exc}") from None
    except NotImplementedError:
        raise errors.malformed(f"start.redraw_hidden: {plan.game.spec.name} has no sampler "
                               "on this referee") from None


#: CreateMatchRequest.reveal_policy -> the store's word for it. UNSPECIFIED (unset) is SAFE,
#: the default: release 0.1.0 numbered SAFE 0, so an older client's request keeps its meaning.
REVEAL_POLICIES: dict[int, str] = {pb.REVEAL_POLICY_UNSPECIFIED: "safe",
                                   pb.REVEAL_POLICY_SAFE: "safe", pb.REVEAL_POLICY_NONE: "none"}


def _reveal_policy(value: int) -> str:
    if value not in REVEAL_POLICIES:  # proto3 enums are open: any number parses
        raise errors.malformed(f"unknown reveal_policy {value}; expected "
                               f"{', '.join(pb.RevealPolicy.keys())}")
    return REVEAL_POLICIES[value]


def _game(name: str) -> Game:
    try:
        return registry.get(name)
    except KeyError:
        raise errors.malformed(
            f"unknown game {clip(name)}; this referee hosts "
            f"{', '.join(sorted(registry.games()))}") from None


def _options(game: Game, raw: Any) -> dict[str, Any]:
    spec = game.spec
    # the option names and values are the client's: quote only a prefix of them
    known = sorted(o.name for o in spec.options)
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise errors.malformed(
            f"unknown option(s) {', '.join(clip(u) for u in unknown[:4])}; {spec.name} "
            f"has {', '.join(known) or 'no options'}")
    for name, value in raw.items():
        if len(value) > MAX_OPTION_CHARS:
            raise errors.malformed(f"option {name!r}: value of {len(value)} characters")
    try:
        return spec.parse_options(dict(raw))
    except BadOptions as exc:
        raise errors.malformed(str(exc)) from None


def _seats(game: Game, asked: int) -> int:
    spec = game.spec
    seats = asked or spec.min_seats
    if not spec.min_seats <= seats <= spec.max_seats:
        raise errors.malformed(
            f"{spec.name} is for {spec.min_seats} to {spec.max_seats} seats, not {seats}"
        )
    return seats


def _names(given: Iterable[str], seats: int) -> list[str]:
    """The seat names given, then ``seat N`` for the seats without one."""
    names = list(given)
    if len(names) > seats:
        raise errors.malformed(f"{len(names)} seat names for {seats} seats")
    names = [check_text(n, "a seat name", max_len=MAX_NAME_CHARS) for n in names]
    return names + [f"seat {s}" for s in range(len(names), seats)]


def _policy(tp: pb.TimePolicy, join_ms_default: int) -> pb.TimePolicy:
    """A copy of the request's time policy, whose on_expiry must be a known value, with the
    referee's join time filled in where it says 0: the match's record (and a resumed match)
    keeps the value that applied."""
    if tp.on_expiry not in pb.OnExpiry.values():
        raise errors.malformed(f"unknown on_expiry value {tp.on_expiry}")
    policy = pb.TimePolicy()
    policy.CopyFrom(tp)
    if not policy.join_ms:
        policy.join_ms = join_ms_default
    return policy
