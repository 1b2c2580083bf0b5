"""A seat played from the browser (issue 33, item 1): the play page and its two calls.

A person is one more kind of seat: the page plays through the same calls as a bot's unary
client (``GetView``, ``SubmitMove``: ``ServerView.seat_view`` and ``seat_move``, which the
servicer serves with the same checks and rate limits, and hands to the match's referee in a
cluster), so the rules, the clocks and the refusals are the ones every seat gets.

The seat token reaches the page in the address's fragment (``/play/<id>#token=<token>``),
which a browser never sends; the page moves it to ``sessionStorage`` and off the address bar,
and sends it only as ``Authorization: Bearer`` on these calls. So it appears in no request
line, no Referer (the pages send none anyway) and no log. What the calls answer is exactly
what GetView answers that seat: its own view, its own decision, the game over; the legal moves
come with their words from ``referee.core.text.describe_decision`` (ids, kinds, text, rule).
The page follows the match through the spectators' live feed (``/api/matches/<id>/live``,
public) and asks for its seat's state again after each update.
"""
from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.core import text
from referee.server.base import errors
from referee.server.base.clock import clock_json, now_ms
from referee.v1 import referee_pb2 as pb

from . import params, state
from .frames import view_json
from .render import RENDERERS, templates
from .source import NotFound

#: the members of a move's body (params.json_object refuses any other)
MOVE_MEMBERS = ("move", "version", "note", "request_id")
NO_STORE = {"Cache-Control": "no-store"}


async def play_page(request: Request) -> Response:
    """The play page of one seat (HTML): its view drawn as the board, the decision's prompt, the legal moves lit on the board and listed, every seat's clock. Open it as `/play/<id>#token=<seat token>` (`&watch=1`: read-only, the seat's view and its own notes while a program plays it); the token stays in the page (the fragment is never sent)."""
    meta = await _meta(request)
    return templates.TemplateResponse(request, "play.html", {
        "meta": meta, "renderer": RENDERERS.get(meta["game"]), "static": False})


async def api_seat(request: Request) -> Response:
    """JSON: what the seat of the `Authorization: Bearer <seat token>` sees now, as GetView answers it: `seat`, `version`, `view` (its own view), `decision` (when it is to act: `kind`, `prompt`, `deadline_ms`, `moves` with `id`, `kind`, `text`, `rule` and the `move` as protobuf JSON), `clock` (every seat's, public; absent for a match another referee of a cluster runs: the live feed carries it), `game_over`, `names`, `now_ms`. 401 without a token, 403 with another match's."""
    web = state.of(request)
    meta = await _meta(request)
    reply = await web.service.seat_view(meta["id"], _token(request), params.client(request))
    out = seat_json(meta, reply)
    # every seat's clock, public as a chess clock's faces (what Watch sends spectators), for a
    # match of this referee; another's comes to the page with the live feed's updates
    rt = web.service.matches.get(meta["id"])
    if rt is not None and rt.game_over is None:
        out["clock"] = clock_json(rt.clock.public_proto())
    return JSONResponse(out, headers=NO_STORE)


async def api_move(request: Request) -> Response:
    """POST a move for the seat of the `Authorization: Bearer <seat token>` (as SubmitMove): the body `{"move": <referee.v1.Move as protobuf JSON>, "version": <the decision's state version>, "note": "...", "request_id": "..."}`; answers the accepted MoveResult as JSON, or the refusal as the documented JSON error with its reason (`ILLEGAL_MOVE`, `STALE_STATE`, `NOT_YOUR_TURN`, `WRONG_GAME`, `MALFORMED`, ...) and the message naming the rule; 503 with `Retry-After` (`DRAINING`: the referee is stopping for a restart; `STORE_UNAVAILABLE`) to send it again later. A refused move changes nothing."""
    web = state.of(request)
    meta = await _meta(request)
    token = _token(request)
    body = await params.json_object(request, MOVE_MEMBERS)
    doc = body.doc.get("move")
    if not isinstance(doc, dict):
        raise errors.malformed("move is a JSON object: a referee.v1.Move as protobuf JSON")
    move = pb.Move()
    try:
        json_format.ParseDict(doc, move)
    except (json_format.ParseError, ValueError, RecursionError) as exc:
        raise errors.malformed(f"move is not a referee.v1.Move: {str(exc)[:200]}") from None
    req = pb.SubmitMoveRequest(
        match_id=meta["id"], move=move, state_version=body.whole("version", hi=(1 << 62)),
        note=body.text("note", max_len=4096, lines=True),
        request_id=body.text("request_id", max_len=64))
    result = await web.service.seat_move(req, token, params.client(request))
    return JSONResponse(json_format.MessageToDict(result, preserving_proto_field_name=True),
                        headers=NO_STORE)


def seat_json(meta: dict[str, Any], reply: pb.GetViewResponse) -> dict[str, Any]:
    """GetView's answer as the page reads it: the game's own view (its oneof field), the
    decision with its legal moves in words, the game over."""
    field = reply.view.WhichOneof("game")
    view = view_json(getattr(reply.view, field)) if field else {}
    out: dict[str, Any] = {
        "match_id": meta["id"], "game": meta["game"], "names": meta["names"],
        "state": "finished" if reply.HasField("game_over") else meta["state"],
        "seat": view.get("seat", -1), "version": reply.state_version, "view": view,
        "decision": None, "game_over": None, "clock": None, "now_ms": now_ms()}
    if reply.HasField("decision"):
        d = reply.decision
        described = text.describe_decision(d)
        out["decision"] = {
            "seat": d.seat, "version": d.state_version, "kind": d.kind, "prompt": d.prompt,
            "deadline_ms": d.deadline_unix_ms,
            "moves": [{"id": m.id, "kind": m.kind, "text": m.text, "rule": m.rule,
                       "move": _move_json(m.move)} for m in described.moves]}
    if reply.HasField("game_over"):
        out["game_over"] = json_format.MessageToDict(reply.game_over,
                                                     preserving_proto_field_name=True)
    return out


def _move_json(move: Any) -> dict[str, Any]:
    """A wire Move as protobuf JSON with every field present (the page's board code reads a
    field's 0 as it reads any other value); ``json_format.ParseDict`` reads it back."""
    out: dict[str, Any] = json_format.MessageToDict(
        move, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return out


def _token(request: Request) -> str:
    token = params.bearer(request)
    if token is None:
        raise errors.unauthenticated("the play page's calls need the seat's token "
                                     "(Authorization: Bearer <seat token>)")
    return token


async def _meta(request: Request) -> dict[str, Any]:
    try:
        return await state.of(request).source.meta(request.path_params["match_id"])
    except NotFound:
        raise HTTPException(404, "no such match") from None


routes = [
    Route("/play/{match_id}", play_page),
    Route("/api/play/{match_id}", api_seat),
    Route("/api/play/{match_id}/move", api_move, methods=["POST"]),
]
