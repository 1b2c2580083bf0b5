"""The lobby's pages and JSON calls (issue 33, item 6): the browser's face of the lobby
(``referee.server.play.lobby``), driven as the lobby's gRPC calls drive it.

  /lobby                           open seeks with join buttons, a form to open a seek or
                                   challenge a bot, the bots that accept challenges
  /lobby/join#invite=<secret>      a friend's invitation (the secret stays in the fragment: the
                                   page reads it and posts it, so it reaches no request line)
  POST /api/lobby/enter            {"name"}: a person's lobby token (answered once)
  GET  /api/lobby                  the open public seeks, the bots, the games and presets
  POST /api/lobby/seeks            open a seek          } the lobby token as
  POST /api/lobby/challenge        challenge a bot      } Authorization: Bearer;
  POST /api/lobby/join             take a seat          } refusals as the documented
  POST /api/lobby/seeks/<id>/cancel                     } JSON error with its reason
  GET  /api/lobby/seeks/<id>[?wait_ms=N]  a seek; with the token, the caller's seat tokens

Seat tokens come back only in the JSON body of these calls (no-store); the page then opens
``/play/<match>#token=<token>``, the token again in the fragment. Every input goes through
``params``; refusals are ``leagues.refusal``'s JSON.
"""
from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.core import registry
from referee.server.base import errors
from referee.server.base.errors import RefereeError
from referee.server.play.lobby import MAX_NAME, MAX_WAIT_MS, PRESETS, Identity, Lobby
from referee.v1 import referee_pb2 as pb

from . import params, state
from .leagues import NO_STORE, refusal
from .render import templates

SEEK_MEMBERS = ("game", "seats", "preset", "rated", "private", "bots_may_join", "name",
                "take_seats")
CHALLENGE_MEMBERS = ("bot", "game", "seats", "preset", "rated", "bots_may_join", "name")
JOIN_MEMBERS = ("seek_id", "invitation", "name")
MAX_ID = 64
MAX_SECRET = 128
PRESET_NAMES = (*PRESETS, "bot")


def _lobby(request: Request) -> Lobby:
    return state.of(request).service.lobby


def _who(request: Request) -> Identity:
    """The caller of a lobby call, rate-limited like a gRPC call of the same client."""
    service = state.of(request).service
    address = params.client(request)
    if not service.limiter.allow(address):
        raise errors.exhausted("rate limit exceeded; slow down")
    return service.lobby.identity(params.bearer(request), address)


def _flag(body: params.Body, key: str) -> bool:
    value = body.doc.get(key, False)
    if not isinstance(value, bool):
        raise errors.malformed(f"{key} is true or false")
    return value


def _reply(reply: pb.SeekReply) -> JSONResponse:
    doc = json_format.MessageToDict(reply, preserving_proto_field_name=True)
    return JSONResponse(doc, headers=NO_STORE)


def games_json() -> list[dict[str, Any]]:
    return [{"name": n, "title": g.spec.title, "min_seats": g.spec.min_seats,
             "max_seats": g.spec.max_seats} for n, g in sorted(registry.games().items())]


# ------------------------------------------------------------------ pages
async def lobby_page(request: Request) -> Response:
    """The lobby (HTML): open seeks with a join button, a form to open a seek or challenge a bot (game, seats, clock preset), and the bots that accept challenges, the referee's house bots first."""
    listing = _lobby(request).listing()
    return templates.TemplateResponse(request, "lobby.html", {
        "games": games_json(), "presets": PRESET_NAMES,
        "bots": sorted(listing.bots, key=lambda b: (not b.house, b.name)),
        "seeks": listing.seeks})


async def join_page(request: Request) -> Response:
    """A friend's invitation (HTML): the secret is in the address's fragment (`#invite=`), which the page posts to `/api/lobby/join`; it opens the play page once the match starts."""
    return templates.TemplateResponse(request, "lobby_join.html", {})


# ------------------------------------------------------------------ JSON
async def api_enter(request: Request) -> Response:
    """POST JSON `{"name"}` (no token): a person's anonymous lobby identity, `{"lobby_token", "name", "expires_unix_ms"}`, answered once; the browser keeps the token and sends it as `Authorization: Bearer`."""
    try:
        service = state.of(request).service
        address = params.client(request)
        if not service.limiter.allow(address):
            raise errors.exhausted("rate limit exceeded; slow down")
        body = await params.json_object(request, ("name",))
        got = service.lobby.enter(body.text("name", max_len=MAX_NAME), address)
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse({"lobby_token": got.lobby_token, "name": got.name,
                         "expires_unix_ms": got.expires_unix_ms}, headers=NO_STORE)


async def api_lobby(request: Request) -> Response:
    """JSON: the open public seeks (`seeks`), the bots that accept challenges now (`bots`), the games with their seat ranges and the clock presets; nothing secret."""
    try:
        service = state.of(request).service
        if not service.limiter.allow(params.client(request)):
            raise errors.exhausted("rate limit exceeded; slow down")
        listing = service.lobby.listing()
    except RefereeError as exc:
        return refusal(exc)
    doc = json_format.MessageToDict(listing, preserving_proto_field_name=True)
    doc.setdefault("seeks", [])
    doc.setdefault("bots", [])
    doc["games"] = games_json()
    doc["presets"] = list(PRESET_NAMES)
    return JSONResponse(doc, headers={"Cache-Control": "no-cache"})


async def api_open(request: Request) -> Response:
    """POST JSON `{"game", "seats", "preset", "rated", "private", "bots_may_join", "name", "take_seats"}` (lobby or bot token): opens a seek, as OpenSeek; answers the seek, the caller's seat tokens once it filled and, once, its invitation secret."""
    try:
        who = _who(request)
        body = await params.json_object(request, SEEK_MEMBERS)
        req = pb.OpenSeekRequest(
            game=body.text("game", max_len=64), seats=body.whole("seats", hi=64),
            preset=body.text("preset", max_len=16, default="blitz"),
            rated=_flag(body, "rated"), private=_flag(body, "private"),
            bots_may_join=_flag(body, "bots_may_join"),
            name=body.text("name", max_len=MAX_NAME), take_seats=body.whole("take_seats", hi=64))
        reply = await _lobby(request).open_seek(who, req)
    except RefereeError as exc:
        return refusal(exc)
    return _reply(reply)


async def api_challenge(request: Request) -> Response:
    """POST JSON `{"bot", "game", "seats", "preset", "rated", "bots_may_join", "name"}` (lobby or bot token): challenges a bot, as Challenge; 404 for an unknown bot, 409 (NOT_CHALLENGEABLE) for one that takes no challenge now, 429 (BOT_BUSY) for one at its limit."""
    try:
        who = _who(request)
        body = await params.json_object(request, CHALLENGE_MEMBERS)
        req = pb.ChallengeRequest(
            bot=body.text("bot", max_len=64), game=body.text("game", max_len=64),
            seats=body.whole("seats", hi=64),
            preset=body.text("preset", max_len=16, default="blitz"),
            rated=_flag(body, "rated"), bots_may_join=_flag(body, "bots_may_join"),
            name=body.text("name", max_len=MAX_NAME))
        reply = await _lobby(request).challenge(who, req)
    except RefereeError as exc:
        return refusal(exc)
    return _reply(reply)


async def api_join(request: Request) -> Response:
    """POST JSON `{"seek_id"}` or `{"invitation"}`, with `"name"` (lobby or bot token): takes a seat, as JoinSeek; a used invitation is 403 (BAD_INVITATION)."""
    try:
        who = _who(request)
        body = await params.json_object(request, JOIN_MEMBERS)
        req = pb.JoinSeekRequest(seek_id=body.text("seek_id", max_len=MAX_ID),
                                 invitation=body.text("invitation", max_len=MAX_SECRET),
                                 name=body.text("name", max_len=MAX_NAME))
        reply = await _lobby(request).join(who, req)
    except RefereeError as exc:
        return refusal(exc)
    return _reply(reply)


async def api_cancel(request: Request) -> Response:
    """POST (the opener's token): withdraws an open seek, as CancelSeek."""
    try:
        who = _who(request)
        seek = await _lobby(request).cancel(
            who, pb.CancelSeekRequest(seek_id=request.path_params["seek_id"]))
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse(json_format.MessageToDict(seek, preserving_proto_field_name=True),
                        headers=NO_STORE)


async def api_seek(request: Request) -> Response:
    """GET a seek, waiting up to `wait_ms` (at most 30000) for a change; with a seated caller's token (Authorization: Bearer) its seat tokens once the match exists."""
    try:
        wait = params.whole(request.query_params.get("wait_ms"), "wait_ms", hi=MAX_WAIT_MS,
                            default=0) or 0
        who = _who(request) if params.bearer(request) else None
        if who is None and not state.of(request).service.limiter.allow(params.client(request)):
            raise errors.exhausted("rate limit exceeded; slow down")
        reply = await _lobby(request).get(who, pb.GetSeekRequest(
            seek_id=request.path_params["seek_id"], wait_ms=wait))
    except RefereeError as exc:
        return refusal(exc)
    return _reply(reply)


#: The lobby's pages and calls (referee.web.app adds them to its own routes)
routes = [
    Route("/lobby", lobby_page),
    Route("/lobby/join", join_page),
    Route("/api/lobby", api_lobby),
    Route("/api/lobby/enter", api_enter, methods=["POST"]),
    Route("/api/lobby/seeks", api_open, methods=["POST"]),
    Route("/api/lobby/challenge", api_challenge, methods=["POST"]),
    Route("/api/lobby/join", api_join, methods=["POST"]),
    Route("/api/lobby/seeks/{seek_id}", api_seek),
    Route("/api/lobby/seeks/{seek_id}/cancel", api_cancel, methods=["POST"]),
]
