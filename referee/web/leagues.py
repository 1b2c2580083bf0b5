"""The league pages and their JSON API (issue 19, item 3), read from the referee's league data
(``referee.server.leagues.league``): public pages carry no token, no invite code and no hash of one,
and show matches only as links (their pages say what may be seen of them).

  /leagues                              every league (HTML)
  /leagues/<name>                       standings, state, games, recent matches; polls its JSON
  /leagues/<name>/register              an entrant registers a bot (the token is shown once)
  /leagues/<name>/admin                 the organizer page (admin token typed in, kept in the
                                        tab's sessionStorage, sent as a Bearer header)
  /leagues/<name>/events/<event>        an event inside the league: its rounds or bracket
                                        filling in live, standings with tie-breaks, matches
  /bots/<name>                          a bot: versions, rating history, matches, incidents,
                                        head-to-head; a hosted bot's upload form
  /api/leagues, /api/leagues/<name>, /api/leagues/<name>/standings, /api/bots/<name>,
  /api/leagues/<name>/events, /api/leagues/<name>/events/<event>
  POST /api/leagues/<name>/register     RegisterBot for the web form (no token; rate-limited)
  POST /api/bots/<name>/upload          UploadBot for the web form (the bot's token as Bearer)
  GET|POST /api/leagues/<name>/admin/…  the organizer page's calls (admin token as Bearer)

Module-level handlers reading the referee from the app's state (``state.of(request)``) and one
``routes`` list, which referee.web.app adds to its own.
"""
from __future__ import annotations

import math
from html import escape
from typing import Any

import grpc
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.server.base import errors
from referee.server.base.auth import same_hash, token_hash
from referee.server.base.errors import RefereeError
from referee.server.leagues.league import (
    MAX_BOT_DESCRIPTION,
    MAX_OWNER,
    MAX_REASON,
    Leagues,
)
from referee.v1 import referee_pb2 as pb

from . import params, state
from .render import templates

#: gRPC status -> HTTP status for the league calls' refusals
HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409, grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,  # STORE_UNAVAILABLE, DRAINING...: retry (Retry-After)
}
NO_STORE = {"Cache-Control": "no-store"}
RECENT = 10


#: seconds a client waits before calling again after a 503 (the header Retry-After): a
#: draining referee (DRAINING) is back, or its successor up, within seconds; so is a store
RETRY_AFTER_S = 2


def refusal(exc: RefereeError) -> JSONResponse:
    """A refusal as the documented JSON error with its reason; a 503 (UNAVAILABLE: DRAINING,
    STORE_UNAVAILABLE, NOT_OWNER...) changed nothing and says when to call again."""
    status = HTTP_STATUS.get(exc.code, 500)
    headers = {**NO_STORE, "Retry-After": str(RETRY_AFTER_S)} if status == 503 else NO_STORE
    return JSONResponse({"error": exc.message, "status": status, "reason": exc.reason},
                        status_code=status, headers=headers)


def _http(exc: RefereeError) -> HTTPException:
    return HTTPException(HTTP_STATUS.get(exc.code, 500), exc.message)


#: the members of the bodies the POST routes take (params.json_object refuses any other)
REGISTER_MEMBERS = ("name", "owner", "kind", "description", "invite_code")
KINDS = {"remote": pb.BOT_KIND_REMOTE, "hosted": pb.BOT_KIND_HOSTED}
BOT_STATUSES = {"active": pb.BOT_ACTIVE, "disabled": pb.BOT_DISABLED, "removed": pb.BOT_REMOVED,
                "pending": pb.BOT_PENDING}
LEAGUE_STATES = {"running": pb.LEAGUE_RUNNING, "paused": pb.LEAGUE_PAUSED,
                 "stopped": pb.LEAGUE_STOPPED}
MAX_MESSAGE = 500  # a bot status's message, as SetBotStatus keeps it


def history_svg(history: list[dict[str, Any]], width: int = 640, height: int = 180) -> str:
    """A rating history as an inline SVG line chart (no script, no external library)."""
    pts = [(h["t"], h["rating"]) for h in history
           if isinstance(h.get("t"), int) and isinstance(h.get("rating"), int | float)
           and math.isfinite(h["rating"])]
    if not pts:
        return '<p class="muted">No rated match yet.</p>'
    left, right, top, bottom = 48, 8, 10, 22
    t0, t1 = min(p[0] for p in pts), max(p[0] for p in pts)
    r0, r1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if r1 - r0 < 1e-9:
        r0, r1 = r0 - 1, r1 + 1

    def x(t: int) -> float:
        return left + (width - left - right) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.5)

    def y(r: float) -> float:
        return top + (height - top - bottom) * (1 - (r - r0) / (r1 - r0))

    line = " ".join(f"{x(t):.1f},{y(r):.1f}" for t, r in pts)
    dots = "".join(
        f'<circle cx="{x(t):.1f}" cy="{y(r):.1f}" r="2.5"><title>{escape(_fmt(r))} after '
        f'{escape(str(h.get("match", "")))}</title></circle>'
        for (t, r), h in zip(pts, history, strict=False))
    ticks = "".join(
        f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{escape(_fmt(v))}</text>'
        f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
        'class="grid"/>' for v in (r0, (r0 + r1) / 2, r1))
    return (
        f'<svg class="history" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="rating history">{ticks}'
        f'<polyline points="{line}" class="line"/>{dots}'
        f'<text x="{left}" y="{height - 6}" class="axis">{len(pts)} rated matches</text>'
        '</svg>')


def _fmt(v: float) -> str:
    return f"{v:.2f}"


def _leagues(request: Request) -> Leagues:
    return state.of(request).service.leagues


def _league_or_404(request: Request, name: str) -> dict[str, Any]:
    try:
        return _leagues(request).league_json(name)
    except RefereeError as exc:
        raise _http(exc) from None


async def _recent(request: Request, league: str = "", bot: str = "") -> list[dict[str, Any]]:
    page = await state.of(request).source.page(limit=RECENT, league=league, bot=bot)
    return list(page["matches"])


# ------------------------------------------------------------------ pages
async def leagues_page(request: Request) -> Response:
    """Every league on this referee (HTML): title, state, games, bots."""
    lg = _leagues(request)
    items = [lg.league_json(n) for n in sorted(lg.leagues)]
    return templates.TemplateResponse(request, "leagues.html", {"leagues": items})


async def league_page(request: Request) -> Response:
    """A league (HTML): state, games, the standings table (rank, bot, version, rating, interval, matches, win %, incidents; refreshed from its JSON), recent matches."""
    name = request.path_params["name"]
    league = _league_or_404(request, name)
    return templates.TemplateResponse(request, "league.html", {
        "league": league, "standings": _leagues(request).standings_json(name),
        "matches": await _recent(request, league=name)})


def _events(request: Request, name: str) -> list[dict[str, Any]]:
    """The league's events as its runner last published them (standings/2), [] before."""
    doc = _leagues(request).standings_json(name) or {}
    return list(doc.get("events") or [])


def _event(request: Request, name: str, event: str) -> dict[str, Any]:
    for e in _events(request, name):
        if e["name"] == event:
            return e
    raise errors.not_found(f"no event {event[:64]!r} in league {name}")


async def event_page(request: Request) -> Response:
    """An event inside a league (HTML): its format, state and entrants, the Swiss or round robin rounds or the knockout bracket filling in as matches end (it refreshes by itself), the standings with their tie-breaks, a link to every match."""
    name, event = request.path_params["name"], request.path_params["event"]
    league = _league_or_404(request, name)
    try:
        ev = _event(request, name, event)
    except RefereeError as exc:
        raise _http(exc) from None
    return templates.TemplateResponse(request, "league_event.html", {
        "league": league, "event": ev, "summary": ev.get("summary") or {},
        "match_ids": {m["idx"]: m["match_id"] for m in ev.get("matches", [])}})


async def bot_page(request: Request) -> Response:
    """A league bot (HTML): kind, owner, versions (a failed one with its error line), rating history plot, recent matches with replay links, incidents, head-to-head; a hosted bot's upload form."""
    name = request.path_params["name"]
    try:
        bot = _leagues(request).bot_json(name)
    except RefereeError as exc:
        raise _http(exc) from None
    standing = bot["standing"] or {}
    return templates.TemplateResponse(request, "bot.html", {
        "bot": bot, "league": _league_or_404(request, bot["league"]), "standing": standing,
        "plot": history_svg(standing.get("history") or []),
        "matches": await _recent(request, bot=name)})


async def register_page(request: Request) -> Response:
    """An entrant registers a bot in the league (HTML form; the bot token is shown once)."""
    league = _league_or_404(request, request.path_params["name"])
    return templates.TemplateResponse(request, "register.html", {"league": league})


async def admin_page(request: Request) -> Response:
    """The organizer page (HTML): the admin token is typed in and kept in the tab only; approve, disable, enable or remove bots, pause, resume or stop the league, create invites, health."""
    league = _league_or_404(request, request.path_params["name"])
    return templates.TemplateResponse(request, "league_admin.html", {"league": league})


# ------------------------------------------------------------------ public JSON
async def api_leagues(request: Request) -> Response:
    """JSON `{"leagues": [...]}`: every league's public description and state."""
    lg = _leagues(request)
    return JSONResponse({"leagues": [lg.league_json(n) for n in sorted(lg.leagues)]})


async def api_league(request: Request) -> Response:
    """JSON: one league's public description, state (and its reason), games, settings, bots."""
    try:
        return JSONResponse(_leagues(request).league_json(request.path_params["name"]))
    except RefereeError as exc:
        return refusal(exc)


async def api_standings(request: Request) -> Response:
    """JSON: the league's latest standings as its runner published them (the standings schema; bots removed since left out), with `published_unix_ms`, `state` and `reason`; `{"standings": null}` before the first."""
    name = request.path_params["name"]
    try:
        lg = _leagues(request)
        league, doc = lg.league_json(name), lg.standings_json(name)
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse({"standings": doc, "published_unix_ms": league["standings_unix_ms"],
                         "state": league["state"], "reason": league["reason"]},
                        headers={"Cache-Control": "no-cache"})


async def api_events(request: Request) -> Response:
    """JSON `{"events": [...]}`: the league's events (name, format, game, status, start and, once drawn, entrants) without their rounds; `[]` before the runner publishes any."""
    name = request.path_params["name"]
    try:
        _leagues(request).league(name)
        evs = _events(request, name)
    except RefereeError as exc:
        return refusal(exc)
    keep = ("name", "format", "game", "status", "start_unix_ms", "started_unix_ms",
            "finished_unix_ms", "rated", "rule", "top", "entrants", "error")
    return JSONResponse({"events": [{k: e[k] for k in keep if k in e} for e in evs]},
                        headers={"Cache-Control": "no-cache"})


async def api_event(request: Request) -> Response:
    """JSON: one event of the league as its runner published it (standings schema, `events` item): status, entrants, `matches` (index in the event, match id, status, seating, ranks) and `summary` (standings with tie-breaks; `rounds` or `bracket`); 404 with reason NOT_FOUND for an unknown event."""
    name, event = request.path_params["name"], request.path_params["event"]
    try:
        _leagues(request).league(name)
        ev = _event(request, name, event)
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse(ev, headers={"Cache-Control": "no-cache"})


async def api_bot(request: Request) -> Response:
    """JSON: one league bot: kind, status, owner, description, versions, its standings entry (rating, history, incidents) and head-to-head rows; 404 for a removed bot."""
    try:
        return JSONResponse(_leagues(request).bot_json(request.path_params["name"]))
    except RefereeError as exc:
        return refusal(exc)


# ------------------------------------------------------------------ entrants' calls
async def api_register(request: Request) -> Response:
    """POST JSON `{"name", "owner", "kind": "remote"|"hosted", "description", "invite_code"}`: registers a bot as RegisterBot does without the admin token; answers `{"name", "bot_token"}` once (never stored, never shown again)."""
    name = request.path_params["name"]
    try:
        body = await params.json_object(request, REGISTER_MEMBERS)
        req = pb.RegisterBotRequest(
            league=name, kind=body.choice("kind", KINDS, "remote"),
            name=body.text("name", max_len=64), owner=body.text("owner", max_len=MAX_OWNER),
            description=body.text("description", max_len=MAX_BOT_DESCRIPTION, lines=True),
            invite_code=body.text("invite_code", max_len=256))
        resp = await _leagues(request).register(req, admin=False, peer=params.client(request))
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse({"name": resp.name, "bot_token": resp.bot_token}, headers=NO_STORE)


async def api_upload(request: Request) -> Response:
    """POST the archive as the body (its file name in `X-Filename`) with the bot's own token as `Authorization: Bearer`: a new version, as UploadBot; refusals name the first problem (reason BAD_ARCHIVE) or the quota reached (429, reason UPLOAD_QUOTA)."""
    name = request.path_params["name"]
    try:
        service = state.of(request).service
        lg = service.leagues
        token = params.bearer(request)
        h = token_hash(token) if token else None
        if not service.limiter.allow(h if h is not None and h in service.sessions.bots
                                     else params.client(request)):
            raise errors.exhausted("rate limit exceeded; slow down")
        owner = service.sessions.bots.get(h) if h else None
        if owner is None or owner in service.sessions.blocked:
            raise errors.unauthenticated("an upload needs the bot's token (Authorization: Bearer)")
        if owner != name:
            raise errors.permission_denied("this token belongs to another bot")
        uploader = lg.uploader(name)
        filename = request.headers.get("x-filename", "")[:255]
        cap = lg.limits.max_received
        declared = request.headers.get("content-length", "")
        if params.is_digits(declared) and int(declared) > cap:
            raise errors.bad_archive(f"the archive is larger than {cap} bytes")
        # spooled as it arrives, as UploadBot's chunks are (issue 31, item 4)
        version = await lg.receive(uploader, filename, request.stream())
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse({"version": version.version, "sha256": version.sha256,
                         "size": version.size, "files": version.files,
                         "runtime": version.runtime, "status": "pending"}, headers=NO_STORE)


# ------------------------------------------------------------------ organizer's calls
def _admin_only(request: Request) -> None:
    service = state.of(request).service
    token = params.bearer(request)
    h = token_hash(token) if token else None
    if not service.limiter.allow(h if h == service.admin_hash else params.client(request)):
        raise errors.exhausted("rate limit exceeded; slow down")
    if h is None:
        raise errors.unauthenticated("the organizer's calls need the admin token "
                                     "(Authorization: Bearer)")
    if not same_hash(h, service.admin_hash):
        raise errors.permission_denied("this is not the admin token")


#: the same check for the app's /metrics (referee.web.app)
admin_only = _admin_only


async def api_admin(request: Request) -> Response:
    """GET (admin token): the league's health: its bots with status, sessions and versions, running matches, connected sessions, versions waiting for their check, last standings publish time."""
    name = request.path_params["name"]
    try:
        _admin_only(request)
        service = state.of(request).service
        running = sum(1 for rt in list(service.matches.values())
                      if rt.game_over is None and rt.league_fields.get("league") == name)
        doc = _leagues(request).health_json(name, running)
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse(doc, headers=NO_STORE)


async def api_admin_bot(request: Request) -> Response:
    """POST JSON `{"status": "active"|"disabled"|"removed", "message"}` (admin token): approve, disable, enable or remove a bot of the league, as SetBotStatus."""
    name, bot = request.path_params["name"], request.path_params["bot"]
    try:
        _admin_only(request)
        body = await params.json_object(request, ("status", "message"))
        status = body.choice("status", BOT_STATUSES)
        message = body.text("message", max_len=MAX_MESSAGE, lines=True)
        lg = _leagues(request)
        row = lg.bot(bot)
        if row.league != name:
            raise errors.not_found(f"no bot {bot[:64]} in league {name[:64]}")
        await lg.set_status(pb.SetBotStatusRequest(bot=bot, status=status, message=message))
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse(lg.bot_summary(lg.bot(bot)), headers=NO_STORE)


async def api_admin_state(request: Request) -> Response:
    """POST JSON `{"state": "running"|"paused"|"stopped", "reason"}` (admin token): resume, pause or stop the league, as SetLeagueState."""
    name = request.path_params["name"]
    try:
        _admin_only(request)
        body = await params.json_object(request, ("state", "reason"))
        new_state = body.choice("state", LEAGUE_STATES)
        reason = body.text("reason", max_len=MAX_REASON, lines=True)
        await _leagues(request).set_state(pb.SetLeagueStateRequest(
            name=name, state=new_state, reason=reason))
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse(_leagues(request).league_json(name), headers=NO_STORE)


async def api_admin_invite(request: Request) -> Response:
    """POST JSON `{"uses", "valid_s"}` (admin token): a new invite code, as CreateInvite, answered once (`{"code"}`) and never shown again."""
    name = request.path_params["name"]
    try:
        _admin_only(request)
        body = await params.json_object(request, ("uses", "valid_s"))
        uses, valid = body.whole("uses", default=1), body.whole("valid_s")
        resp = await _leagues(request).create_invite(pb.CreateInviteRequest(
            league=name, uses=uses, valid_s=valid))
    except RefereeError as exc:
        return refusal(exc)
    return JSONResponse({"code": resp.code}, headers=NO_STORE)

#: The league pages and calls (referee.web.app adds them to its own routes)
routes = [
    Route("/leagues", leagues_page),
    Route("/leagues/{name}", league_page),
    Route("/leagues/{name}/register", register_page),
    Route("/leagues/{name}/admin", admin_page),
    Route("/leagues/{name}/events/{event}", event_page),
    Route("/bots/{name}", bot_page),
    Route("/api/leagues", api_leagues),
    Route("/api/leagues/{name}", api_league),
    Route("/api/leagues/{name}/standings", api_standings),
    Route("/api/leagues/{name}/events", api_events),
    Route("/api/leagues/{name}/events/{event}", api_event),
    Route("/api/leagues/{name}/register", api_register, methods=["POST"]),
    Route("/api/leagues/{name}/admin", api_admin),
    Route("/api/leagues/{name}/admin/bots/{bot}", api_admin_bot, methods=["POST"]),
    Route("/api/leagues/{name}/admin/state", api_admin_state, methods=["POST"]),
    Route("/api/leagues/{name}/admin/invites", api_admin_invite, methods=["POST"]),
    Route("/api/bots/{name}", api_bot),
    Route("/api/bots/{name}/upload", api_upload, methods=["POST"]),
]
