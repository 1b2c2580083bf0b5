"""The web viewer: a Starlette app served by uvicorn on the referee's own event loop.

Routes (spectators need no token; pages show public views only; a finished match under
embargo, see referee.server.base.embargo, shows no replay and no record, and says why):
  /                              live and finished matches
  /matches/<id>[?v=N][&seat=S]   one match: live board, then a replay with a move scrubber
                                 (from seat S's view, or "reveal", once its record is public)
  /matches/<id>/record.json      the record of a finished match (what GetRecord returns)
  /api/matches                   the list as JSON
  /api/matches/<id>              the match and its frames (public view per state version;
                                 once its record is public, with the bots' notes)
  /api/matches/<id>?seat=N       once its record is public (over, not embargoed): the replay
                                 from seat N's view; ?seat=reveal: the spectator's, ending on
                                 every seat's final view ("reveal"). 403 before that.
  /api/matches/<id>/views/<N>    the public view at version N
  /api/matches/<id>/live         server-sent events: public updates as moves are played (and
                                 the public clocks)
  /api/matches/<id>/notes        one seat's own notes, live: for the holder of that seat's
                                 token, sent as "Authorization: Bearer <token>" (never in the
                                 address; the page takes it from a form or the #fragment)
  /play/<id>#token=<seat token>  a seat played in the browser (referee.web.play): the page,
  /api/play/<id>, .../move       the seat's state (GetView) and its moves (SubmitMove), with
                                 the token in "Authorization: Bearer" only

In Starlette's style: each route's handler is a module-level ``async def (request) ->
Response`` that reads the referee (``ServerView``, referee.web.reader), the match source and
the live feeds from the app's state (``state.of(request)``, typed); ``routes`` lists them with
the league pages' (referee.web.leagues.routes) and the lobby's (referee.web.lobby.routes), and
``create_app`` only assembles the app.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, Required, TypedDict

import structlog
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, ExceptionHandler, Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from referee.server.base import metrics
from referee.server.base.errors import RefereeError
from referee.server.store.sqlite import store_outage, unavailable

from . import frames as F
from . import params, state
from .leagues import HTTP_STATUS, RETRY_AFTER_S, admin_only, refusal
from .leagues import routes as league_routes
from .live import LiveHub
from .lobby import routes as lobby_routes
from .play import routes as play_routes
from .reader import ServerView
from .render import RENDERERS, templates
from .source import MatchSource, NotFound, parse_cursor, public_record

log = structlog.get_logger("referee.web")

HERE = Path(__file__).parent
HEARTBEAT_S = 15.0


#: Sent with every response. The pages load their scripts and styles from /static only (no
#: inline script or style attribute: a page's options travel as a JSON data block), fetch and
#: stream from this origin, draw SVG inline and may not be framed by another site.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy",
     (b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
      b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityHeaders:
    """Pure ASGI middleware (a streaming response, the live events, passes through unbuffered)
    adding SECURITY_HEADERS to every HTTP response, error pages included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *SECURITY_HEADERS]
                metrics.WEB_REQUESTS.labels(f"{message['status'] // 100}xx").inc()
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _version(text: str | None, what: str = "version") -> int | None:
    """A state version (or a move count) from the address: None when absent."""
    return params.whole(text, what)


async def _meta(request: Request) -> dict[str, Any]:
    """The public facts of the match in the address (404 when there is none)."""
    try:
        return await state.of(request).source.meta(request.path_params["match_id"])
    except NotFound:
        raise HTTPException(404, "no such match") from None


async def index(request: Request) -> Response:
    """The list of live and finished matches (HTML): game, seats, state, start, winners, league; filters by game, league and bot, 50 a page with next and previous pages (the same parameters as `/api/matches`)."""
    query = _list_query(request)
    page = await state.of(request).source.page(**query)
    return templates.TemplateResponse(request, "index.html", {
        "matches": page["matches"], "page": page,
        "filters": {"game": query["game"], "league": query["league"], "bot": query["bot"]},
        "games": sorted({m["game"] for m in page["matches"]} | ({query["game"]} - {""}))})


async def api_list(request: Request) -> Response:
    """JSON `{"matches": [...], "next": cursor|null, "previous": cursor|null}`: the listed matches (unlisted ones, smoke tests and conformance, never), newest first, each with its public summary (`id`, `game`, `title`, `seats`, `names`, `state`, `created_ms`, `finished_ms`, `result`, `league`, `event`, `bots`, `bot_versions`). Query: `game=`, `league=`, `bot=` (bound to a seat), `limit=` (default 50, at most 200), `cursor=` (the page after `next`), `before=` (the page before `previous`)."""
    return JSONResponse(await state.of(request).source.page(**_list_query(request)))


async def match_page(request: Request) -> Response:
    """One match drawn as its board (HTML), live while it runs, a replay once over; `?v=N` opens state version N."""
    version = _version(request.query_params.get("v"))
    meta = await _meta(request)
    seat = _viewer(request.query_params.get("seat"), meta["seats"])
    return templates.TemplateResponse(request, "match.html", {
        "meta": meta, "version": version, "seat": seat, "static": False,
        "renderer": RENDERERS.get(meta["game"]), "bundle_json": None,
    })


async def api_match(request: Request) -> Response:
    """JSON: one match's public summary and, unless embargoed, its replay frames (public views and events by state version)."""
    source = state.of(request).source
    meta = await _meta(request)
    viewer = _viewer(request.query_params.get("seat"), meta["seats"])
    if viewer is not None:
        _refuse_if_embargoed(meta)
        if not public_record(meta):
            raise HTTPException(403, "seat views and the reveal are public once the match "
                                     "is over (now: " + meta["state"] + ")")
        try:
            seat_frames, reveal = await source.seat_frames(meta, viewer)
        except NotFound:
            raise HTTPException(404, "this match has no replay") from None
        return Response(F.bundle_json({**meta, "viewer_seat": viewer}, seat_frames, reveal),
                        media_type="application/json")
    frames: list[str] = []
    if meta["state"] in ("running", "finished") and not meta["embargo"]:
        try:
            frames = await source.frames(meta)
        except NotFound:
            frames = []
    return Response(F.bundle_json(meta, frames), media_type="application/json")


async def api_view(request: Request) -> Response:
    """JSON `{"version", "view", "events"}`: the public view at one state version and the events that led to it; 403 while embargoed."""
    version = _version(request.path_params["version"])
    assert version is not None  # the route's {version} is never empty
    meta = await _meta(request)
    _refuse_if_embargoed(meta)
    try:
        frames = await state.of(request).source.frames(meta)
    except NotFound:
        raise HTTPException(404, "this match has no replay") from None
    if version >= len(frames):  # frame i is state version i
        raise HTTPException(404, f"no version {version} (0..{len(frames) - 1})")
    return JSONResponse({"version": version, "view": F.view_at(frames, version),
                         "events": F.frame(frames, version)["events"]})


async def record(request: Request) -> Response:
    """The finished match's record (JSON, the record schema); 404 while it runs, 403 while embargoed."""
    meta = await _meta(request)
    _refuse_if_embargoed(meta)
    path = state.of(request).source.record_path(meta)
    if path is None:
        raise HTTPException(404, "a record is published once the match is over")
    return FileResponse(path, media_type="application/json")


async def live(request: Request) -> Response:
    """Server-sent events: the public updates of a running match (the same as `Watch`), then `game_over`."""
    web = state.of(request)
    meta = await _meta(request)
    rt = web.source.runtime(meta["id"], meta["game"])
    if rt is None or meta["state"] != "running":
        async def over() -> AsyncIterator[str]:
            yield _sse({"type": "game_over", "summary": (meta.get("result") or {})
                        .get("summary", ""), "winners": []})
        return StreamingResponse(over(), media_type="text/event-stream")
    feed, viewer = web.hub.join(rt)

    async def stream() -> AsyncIterator[str]:
        try:
            yield ": connected\n\n"
            while True:
                try:
                    msg = await asyncio.wait_for(viewer.queue.get(), HEARTBEAT_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if msg is None:
                    break
                yield _sse(msg)
        finally:
            feed.remove(viewer)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache"})


async def notes(request: Request) -> Response:
    web = state.of(request)
    meta = await _meta(request)
    token = params.bearer(request)
    seat = await web.source.token_seat(meta["id"], token) if token else None
    if not web.service.limiter.allow(
            f"web-notes:{meta['id']}:{seat}" if seat is not None else params.client(request)):
        raise HTTPException(429, "rate limit exceeded; slow down")
    if token is None:
        raise HTTPException(401, "a seat's notes need its token "
                                 "(Authorization: Bearer <seat token>)")
    if seat is None:
        raise HTTPException(403, "this is not a seat token of this match")
    since = _version(request.query_params.get("since"), "since") or 0
    return JSONResponse({"seat": seat, "notes": web.source.seat_notes(meta["id"], seat, since)},
                        headers={"Cache-Control": "no-store"})


async def signing_key(request: Request) -> Response:
    """The public key finished records are signed with (as GetSigningKey answers): who
    checks a record needs it (``referee replay verify --public-key``;
    docs/organizer/records.md)."""
    signer = state.of(request).service.signer
    if signer is None:
        raise HTTPException(404, "this referee signs no records")
    return JSONResponse(signer.public_json())


async def favicon(request: Request) -> Response:
    return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml")


async def error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, RefereeError):  # a refusal from params or the service
        if request.url.path.startswith("/api/"):
            return refusal(exc)  # the league routes' form: with its reason
        exc = HTTPException(HTTP_STATUS.get(exc.code, 500), exc.message)
    assert isinstance(exc, HTTPException)  # the other class it is registered for
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": exc.detail, "status": exc.status_code},
                            status_code=exc.status_code)
    return templates.TemplateResponse(
        request, "error.html", {"status": exc.status_code, "detail": exc.detail},
        status_code=exc.status_code)


async def store_away(request: Request, exc: Exception) -> Response:
    """A page or an API call that needs the store while it is away (issue 31 item 1): 503
    with the documented error and reason STORE_UNAVAILABLE, to retry; anything else that
    reaches here is a bug (500), but a refusal, answered as :func:`error` does."""
    if not store_outage(exc):
        if isinstance(exc, RefereeError):
            return await error(request, exc)
        raise exc
    away = unavailable(state.of(request).service.store.kind)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": away.message, "status": 503, "reason": away.reason},
                            status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
    return templates.TemplateResponse(
        request, "error.html", {"status": 503, "detail": away.message},
        status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})


#: Every page and call of the viewer (the league pages' from referee.web.leagues), each path
#: parameter checked before its handler runs (params.checked_paths). docs/gen/refdoc.py writes
#: the API reference from these paths and the handlers' docstrings.
async def metrics_page(request: Request) -> Response:
    """The referee's Prometheus metrics (text exposition), for the admin token only
    (`Authorization: Bearer <admin token>`): 401 without a token, 403 with another, each with the
    documented JSON error and its reason. A scrape job names the token with
    `authorization: {credentials_file: ...}` (docs/organizer/metrics.md)."""
    try:
        admin_only(request)
    except RefereeError as exc:
        return refusal(exc)
    body, content_type = metrics.exposition()
    return Response(body, headers={"Content-Type": content_type, "Cache-Control": "no-store"})


routes = params.checked_paths([
    Route("/", index),
    Route("/api/matches", api_list),
    Route("/api/matches/{match_id}", api_match),
    Route("/api/matches/{match_id}/views/{version}", api_view),
    Route("/api/matches/{match_id}/live", live),
    Route("/api/matches/{match_id}/notes", notes),
    Route("/favicon.ico", favicon),
    Route("/matches/{match_id}", match_page),
    Route("/matches/{match_id}/record.json", record),
    Route("/api/signing-key", signing_key),
    *play_routes,
    Route("/metrics", metrics_page),
    *league_routes,
    *lobby_routes,
    Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
])


def create_app(service: ServerView, hub: LiveHub | None = None,
               trusted_proxies: Sequence[str] = ()) -> Starlette:
    """The app over ``service`` (the handlers read it, its match source and the live feeds
    from the app's state: referee.web.state). ``trusted_proxies``: the addresses
    (``--trusted-proxy``) whose ``X-Forwarded-For`` names the client; from any other peer the
    header is ignored."""
    handlers: dict[type[Exception], ExceptionHandler] = {
        HTTPException: error, RefereeError: store_away, sqlite3.Error: store_away}
    if "psycopg" in sys.modules:  # a PostgreSQL store: its errors too
        handlers[sys.modules["psycopg"].Error] = store_away
    middleware = [Middleware(SecurityHeaders)]
    if trusted_proxies:
        # uvicorn's own, told exactly whom to trust (the server turns uvicorn's default off:
        # it trusts 127.0.0.1, so any local client could forge its address)
        middleware.insert(0, Middleware(ProxyHeadersMiddleware,
                                        trusted_hosts=list(trusted_proxies)))
    app = Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)
    app.state.web = state.WebState(service, MatchSource(service), hub or LiveHub())
    return app


def _viewer(text: str | None, seats: int) -> int | str | None:
    """``?seat=``: None (the spectator's view), a seat number or "reveal"."""
    if text is None or text == "":
        return None
    if text == "reveal":
        return text
    seat = params.whole(text, "seat (a seat number or 'reveal')", hi=999)
    assert seat is not None  # text is not empty
    if seat >= seats:
        raise HTTPException(404, f"no seat {seat} in a {seats}-seat match")
    return seat


#: Match list paging: a page's default and largest size.
PAGE_SIZE, MAX_PAGE_SIZE = 50, 200


class ListQuery(TypedDict, total=False):
    """The keywords of ``MatchSource.page`` a list request asks for."""

    game: Required[str]
    league: Required[str]
    bot: Required[str]
    limit: Required[int]
    after: tuple[int, str]  # ?cursor=
    before: tuple[int, str]  # ?before=


def _list_query(request: Request) -> ListQuery:
    """The match list's filters and page from the query string (400 for a malformed one)."""
    q = request.query_params

    def text(key: str) -> str:
        return params.check_text(q.get(key, ""), key, max_len=64)

    def edge(key: str) -> tuple[int, str] | None:
        value = q.get(key)
        if not value:
            return None
        found = parse_cursor(value)
        if found is None:
            raise HTTPException(400, f"malformed {key} {value[:40]!r}")
        return found

    game, league, bot = text("game"), text("league"), text("bot")
    limit = params.whole(q.get("limit"), "limit", lo=1, hi=MAX_PAGE_SIZE, default=PAGE_SIZE)
    assert limit is not None  # it has a default
    out = ListQuery(game=game, league=league, bot=bot, limit=limit)
    after, before = edge("cursor"), edge("before")
    if after is not None:
        out["after"] = after
    if before is not None:
        out["before"] = before
    return out


def _refuse_if_embargoed(meta: dict[str, Any]) -> None:
    if meta["embargo"]:
        raise HTTPException(403, meta["embargo"]["message"])


def _sse(msg: dict[str, Any]) -> str:
    return f"data: {json.dumps(msg, separators=(',', ':'))}\n\n"


class _Server(uvicorn.Server):
    # The referee owns SIGINT/SIGTERM; uvicorn must not take them over.
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebServer:
    """uvicorn serving the web app as a task on the running event loop (the gRPC server's)."""

    def __init__(self, service: ServerView, host: str, port: int,
                 trusted_proxies: Sequence[str] = ()):
        self.hub = LiveHub()
        self.app = create_app(service, self.hub, trusted_proxies)
        config = uvicorn.Config(
            self.app, host=host, port=port, log_config=None, access_log=False,
            lifespan="off", timeout_graceful_shutdown=1, ws="none",
            # the app itself honours X-Forwarded-For, from --trusted-proxy addresses only;
            # uvicorn's own would believe any client on 127.0.0.1 (or $FORWARDED_ALLOW_IPS)
            proxy_headers=False,
        )
        self.server = _Server(config)
        self.task: asyncio.Task[None] | None = None
        self.port: int | None = None

    async def _serve(self) -> None:
        # uvicorn calls sys.exit() when it cannot bind. A SystemExit raised in a task escapes
        # the event loop itself (asyncio re-raises it) and would end the referee mid-start with
        # a traceback; here it becomes the OSError that caused it, for start() to report.
        try:
            await self.server.serve()
        except SystemExit as exc:
            cause = exc.__context__
            host, port = self.server.config.host, self.server.config.port
            if isinstance(cause, OSError):
                raise OSError(cause.errno, f"the web viewer cannot serve on {host}:{port}: "
                                           f"{cause.strerror or cause}") from None
            raise OSError(f"the web viewer cannot serve on {host}:{port}") from None

    async def start(self) -> int:
        """Serve; return the bound port, or raise OSError (errno set when known) if uvicorn
        stopped before it was serving."""
        self.task = asyncio.ensure_future(self._serve())
        while not self.server.started:
            if self.task.done():
                self.task.result()  # raises what stopped it
                raise OSError(f"the web server stopped before serving on "
                              f"{self.server.config.host}:{self.server.config.port}")
            await asyncio.sleep(0.01)
        sock = self.server.servers[0].sockets[0]
        self.port = sock.getsockname()[1]
        log.info("web_serving", host=self.server.config.host, port=self.port)
        return self.port

    async def stop(self) -> None:
        await self.hub.close()
        self.server.should_exit = True
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError, OSError):  # start() raised it
                await self.task
