"""Any request gives a 4xx at worst, never a 500 (issue 31, item 5): every route of the web app,
with fuzzed path parameters, query parameters, JSON bodies and credentials, against the real
app over a real referee service (a league with bots, versions, finished matches and standings,
as the league page tests build it), on each store (PostgreSQL refuses a NUL that SQLite
takes). Each 4xx under /api/ is the documented JSON error,
``{"error": "...", "status": N}`` (league routes add ``"reason"``; docs/organizer/league-web.md,
*JSON API*).

The routes are read from the app itself, so a route added later is fuzzed too, each route
(and method) on its own, half the time with the values it knows (a league, a finished match, a
valid invite code, the admin's or a hosted bot's token) so that the fuzz gets past the first
check. The search is derandomized (the same examples every run, nothing kept between runs)
and modest in size: it runs in ``make test`` on a loaded machine. ``FOUND`` are the inputs
found from outside on the code before this change: Unicode digits (``limit=²``:
``str.isdigit`` says yes, ``int`` says no), a lone surrogate in a registration's strings (valid
JSON, not encodable as UTF-8), ``{"uses": true}`` (a bool is an int to Python), a JSON body
nested past Python's recursion limit.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Route

from referee.web.app import routes as web_routes
from tests.server.conftest import ADMIN, pg_server  # noqa: F401 - the PostgreSQL fixture

from .conftest import WebHandle
from .league_fixture import build_sync

#: (path template, its parameters, its methods) of every route, read from the app's route list
ROUTES = sorted([(r.path, tuple(sorted(r.param_convertors)), method)
                 for r in web_routes if isinstance(r, Route)
                 for method in sorted(r.methods or {"GET"})]
                + [("/static/{path}", ("path",), "GET")])  # the Mount of the static files
PATHS = {p for p, _, _ in ROUTES}

#: stand-ins the test replaces with the fixture's values (a finished match's id, a valid
#: invite code, the admin's and a hosted bot's token)
FINISHED, INVITE, ADMIN_AUTH, BOT_AUTH = "<finished>", "<invite>", "admin", "bot"

#: strings that once gave, or might give, a parser trouble
TRICKY = ["²", "١٢", "٣", "0", "1", "2", "-1", "+1", " 1", "1 ", "1e3", "1.5", "0x1", "9" * 30,
          "reveal", "nan", "\x00", "%", "..", "é", "\u202e", "a" * 300, "1-" + "f" * 16,
          "w1-0a", "99999999999999999", "1795572060461-5f1ec9c2105a8684"]
#: the values each path or query parameter or body member takes when it is right, so that the
#: fuzz gets past the first check as often as it fails it
KNOWN: dict[str, list[Any]] = {
    "match_id": [FINISHED], "version": ["0", "1", "7"], "league_name": ["spring"],
    "bot_name": ["alpha", "gamma"], "bot": ["alpha", "beta", "gamma"],
    "limit": ["1", "200"], "cursor": ["1-" + "f" * 16], "before": ["9" * 15 + "-ab"],
    "game": ["batavia"], "league": ["spring"], "v": ["0", "3"], "seat": ["0", "2", "reveal"],
    "since": ["0", "1"],
    "name": ["delta", "alpha", "e.2"], "kind": ["remote", "hosted"], "owner": ["Dee", "Dé"],
    "description": ["a\nb\tc"],
    "invite_code": [INVITE, "wrong"], "status": ["active", "disabled", "pending", "removed"],
    "message": ["why"], "state": ["running", "paused", "stopped"], "reason": ["maintenance"],
    "uses": [1, 2, 0], "valid_s": [0, 60],
    # the lobby's (referee/web/lobby.py)
    "seats": [0, 2, 3], "preset": ["blitz", "5+3", "bot"], "rated": [True, False],
    "private": [True, False], "bots_may_join": [True, False], "take_seats": [0, 1, 2],
    "seek_id": ["s0"], "invitation": ["x" * 48], "wait_ms": ["0", "10"],
}
QUERY_KEYS = ["limit", "cursor", "before", "game", "league", "bot", "v", "seat", "since", "wait_ms",
              "x"]
#: the members of each POST route's body (the route's own, mostly, and now and then another)
MEMBERS = {"/register": ["name", "owner", "kind", "description", "invite_code"],
           "/admin/bots/{bot}": ["status", "message"], "/admin/state": ["state", "reason"],
           "/admin/invites": ["uses", "valid_s"],
           "/lobby/seeks": ["game", "seats", "preset", "rated", "private", "bots_may_join",
                            "name", "take_seats"],
           "/lobby/challenge": ["bot", "game", "seats", "preset", "rated", "bots_may_join",
                                "name"],
           "/lobby/join": ["seek_id", "invitation", "name"], "/lobby/enter": ["name"]}
OTHER = ["extra", "name", "status", "uses"]

plain_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
#: JSON scalars, lone surrogates and huge numbers included
scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                   st.text(max_size=12), st.sampled_from(TRICKY + ["\ud800", "a\udfff"]))
json_value = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def value(key: str, anything: st.SearchStrategy) -> st.SearchStrategy:
    """Half the time a value ``key`` takes when right, else a tricky string or ``anything``."""
    known = st.sampled_from(KNOWN.get(key) or TRICKY)
    return st.one_of(known, known, st.sampled_from(TRICKY), anything)


@st.composite
def json_body(draw, path: str) -> bytes:
    """A JSON object of the route's members, each one most often right (so that a body with
    one wrong member is common), else dropped or anything; now and then another member, or no
    object at all."""
    members = next((m for end, m in MEMBERS.items() if path.endswith(end)), OTHER)
    doc = {}
    for key in members:
        fate = draw(st.sampled_from(["right", "right", "right", "drop", "other"]))
        if fate == "right":
            doc[key] = draw(st.sampled_from(KNOWN.get(key) or TRICKY))
        elif fate == "other":
            doc[key] = draw(value(key, json_value))
    if not draw(st.integers(0, 7)):
        doc[draw(st.sampled_from(OTHER))] = draw(json_value)
    return json.dumps(doc if draw(st.integers(0, 9)) else draw(json_value)).encode()


raw_body = st.one_of(st.binary(max_size=40), st.sampled_from(
    [b"", b"{", b"[" * 5000, b'{"a":' * 3000, b"\xff\xfe{}", b'{"name": "\xed\xa0\x80"}',
     b"NaN", b'{"uses": Infinity}', b'{"uses": 1' + b"0" * 5000 + b"}", b"null"]))


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    auth: str | None = None


@st.composite
def calls(draw, path: str, names: tuple[str, ...], method: str) -> Call:
    # {name} is a league's under /leagues/, a bot's under /bots/
    params = {n: draw(value("league_name" if n == "name" and "/leagues/" in path else
                            "bot_name" if n == "name" else n, plain_text.filter(bool)))
              for n in names}
    keys = draw(st.lists(st.sampled_from(QUERY_KEYS), unique=True, max_size=3))
    query = {k: draw(value(k, plain_text)) for k in keys}
    body = draw(st.one_of(json_body(path), json_body(path), raw_body)) \
        if method == "POST" else None
    auth = draw(st.sampled_from([ADMIN_AUTH, BOT_AUTH, ADMIN_AUTH, BOT_AUTH, None, "Bearer x",
                                 "Basic x"]))
    return Call(method, path, params, query, body, auth)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request, tmp_path_factory):
    """The referee on each store: PostgreSQL refuses what SQLite takes (a NUL in a string)."""
    url = request.getfixturevalue("pg_server").new_database() \
        if request.param == "postgresql" else ""
    h = WebHandle(tmp_path_factory.mktemp("fuzz") / "data", http_port=0, store_url=url)
    h.start()
    try:
        lg = build_sync(h)
        # the fuzz must reach the checks behind the rate limits (its own budget would be used
        # up after a few dozen calls): the limits have tests of their own
        h.service.limiter.rate = 0
        h.service.leagues.register_limiter.rate = 0
        # in process, on the server's own loop (the app reads the live service there)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(
            app=h.server.web.app, raise_app_exceptions=False), base_url="http://referee")
        yield h, lg, client
        h.call(client.aclose())
    finally:
        h.close()


def _url(site, call: Call) -> str:
    _, lg, _ = site
    path = call.path
    for name, text in call.params.items():
        text = lg.finished[0] if text == FINISHED else text
        path = path.replace("{" + name + "}", quote(text, safe=""))
    return path + ("?" + urlencode(call.query) if call.query else "")


def _headers(site, call: Call) -> dict[str, str]:
    _, lg, _ = site
    bot = lg.tokens.get(call.params.get("name", ""), lg.tokens["alpha"])  # the path's bot's
    auth = {ADMIN_AUTH: f"Bearer {ADMIN}", BOT_AUTH: f"Bearer {bot}"}.get(
        call.auth or "", call.auth)
    headers = {"content-type": "application/json"}
    if auth is not None:
        headers["authorization"] = auth
    return headers


def check(site, call: Call) -> httpx.Response:
    """Send ``call``; fail on a 5xx, or a 4xx under /api/ that is not the documented error."""
    h, lg, client = site
    url = _url(site, call)
    body = call.body.replace(f'"{INVITE}"'.encode(), f'"{lg.invite}"'.encode()) \
        if call.body is not None else None
    resp: httpx.Response = h.call(client.request(call.method, url, content=body,
                                                 headers=_headers(site, call)), timeout=60)
    assert resp.status_code < 500, (call, resp.status_code, resp.text[:300])
    served = resp.request.url.path  # as httpx sent it ("/api/bots/.." is "/api/")
    if served.startswith("/api/") and 400 <= resp.status_code < 500 and call.method != "HEAD":
        doc: Any = resp.json()
        assert isinstance(doc, dict) and isinstance(doc.get("error"), str) \
            and doc.get("status") == resp.status_code, (call, doc)
        assert isinstance(doc.get("reason", ""), str), (call, doc)
        assert set(doc) <= {"error", "status", "reason"}, (call, doc)
    return resp


#: found from outside on the code before this change (each a 500 there), then by this fuzz
FOUND = [
    Call("GET", "/api/matches", query={"limit": "²"}),
    Call("GET", "/", query={"limit": "²"}),
    Call("GET", "/matches/{match_id}", {"match_id": FINISHED}, {"v": "²"}),
    Call("GET", "/api/matches/{match_id}", {"match_id": FINISHED}, {"seat": "²"}),
    Call("GET", "/api/matches/{match_id}/views/{version}", {"match_id": FINISHED, "version": "²"}),
    Call("GET", "/api/matches", query={"cursor": "²-" + "a" * 16}),
    Call("POST", "/api/leagues/{name}/register", {"name": "spring"},
         body=json.dumps({"name": "\ud800", "invite_code": "x"}).encode()),
    Call("POST", "/api/leagues/{name}/register", {"name": "spring"},
         body=json.dumps({"name": "delta", "owner": "\udfff"}).encode()),
    Call("POST", "/api/leagues/{name}/register", {"name": "spring"},
         body=json.dumps({"name": "delta", "invite_code": "\ud800"}).encode()),
    Call("POST", "/api/leagues/{name}/admin/invites", {"name": "spring"},
         body=b'{"uses": true}', auth=ADMIN_AUTH),
    Call("POST", "/api/leagues/{name}/admin/state", {"name": "spring"},
         body=b"[" * 5000, auth=ADMIN_AUTH),
    # a refusal quoting a lone surrogate must still encode as UTF-8
    Call("POST", "/api/leagues/{name}/register", {"name": "spring"}, body=b'{"\\ud800": 1}'),
    # a NUL in a name looked up in the store: PostgreSQL refuses the query
    Call("GET", "/api/leagues/{name}/standings", {"name": "\x00"}),
    Call("GET", "/leagues/{name}", {"name": "\x00"}),
]


@pytest.mark.parametrize("call", FOUND, ids=lambda c: f"{c.method} {c.path}")
def test_the_inputs_found_from_outside_are_refused_with_a_4xx(site, call):
    """Issue 31 item 5: Unicode digits in a number, a lone surrogate in a registration, a bool
    for a count, JSON nested past the recursion limit and a NUL in a path are 400s with the
    documented error, on either store."""
    resp = check(site, call)
    assert resp.status_code == 400, (call, resp.text[:200])


@pytest.mark.parametrize(("path", "names", "method"), ROUTES,
                         ids=[f"{m} {p}" for p, _, m in ROUTES])
@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_input_gives_a_server_error(site, path, names, method, data):
    """Issue 31 item 5: for each route, status < 500 for any path parameters, query, body and
    credentials, and the documented JSON error for a 4xx under /api/ (a POST route, with a
    body too, is given three times the examples)."""
    for _ in range(3 if method == "POST" else 1):
        check(site, data.draw(calls(path, names, method)))


def test_every_route_is_fuzzed():
    """The fuzz reads its routes from the app: the league, match and page routes are all there
    (a route table the fuzz could not read would make it test nothing)."""
    assert {"/api/matches", "/api/leagues/{name}/register", "/api/bots/{name}/upload",
            "/api/leagues/{name}/admin/invites", "/matches/{match_id}", "/",
            "/api/lobby/seeks", "/lobby"} <= PATHS
