"""Any request gives a 4xx at worst, never a 500 (issue 31, item 5): every route of the web app,
with fuzzed path parameters, query parameters, JSON bodies and credentials, against the real
app over a real referee service (a league with bots, versions, finished matches and standings,
as the league page tests build it). Each 4xx under /api/ is the documented JSON error,
``{"error": "...", "status": N}`` (league routes add ``"reason"``; docs/organizer/league-web.md,
*JSON API*).

The routes are read from the app itself, so a route added later is fuzzed too. The search is
derandomized (the same examples every run, nothing kept between runs) and modest in size: it
runs in ``make test`` on a loaded machine. The ``@example`` cases are the ones found from
outside on the code before this change: Unicode digits (``limit=²``: ``str.isdigit`` says yes,
``int`` says no), a lone surrogate in a registration's strings (valid JSON, not encodable as
UTF-8), ``{"uses": true}`` (a bool is an int to Python), a JSON body nested past Python's
recursion limit.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.routing import Route

from referee.web.app import create_app
from tests.server.conftest import ADMIN

from .conftest import WebHandle
from .league_fixture import build_sync

#: (path template, its parameters, its methods) of every route, read from the app (the service
#: is only used by the handlers, so None builds the same table)
ROUTES = sorted((r.path, tuple(sorted(r.param_convertors)), tuple(sorted(r.methods or {"GET"})))
                for r in create_app(None).routes if isinstance(r, Route))
PATHS = [p for p, _, _ in ROUTES]

#: stand-ins the test replaces with the fixture's values (a finished match's id, a token)
FINISHED, ADMIN_AUTH, BOT_AUTH = "<finished>", "admin", "bot"

#: strings that once gave, or might give, a parser trouble
TRICKY = ["²", "١٢", "٣", "0", "1", "2", "-1", "+1", " 1", "1 ", "1e3", "1.5", "0x1", "9" * 30,
          "reveal", "nan", "\x00", "%", "..", "é", "\u202e", "a" * 300, "1-" + "f" * 16,
          "w1-0a", "99999999999999999", "1795572060461-5f1ec9c2105a8684"]
#: the values the routes know (a league, its bots, the members of the bodies' enums)
KNOWN = ["spring", "alpha", "beta", "gamma", "nope", FINISHED, "remote", "hosted", "active",
         "disabled", "removed", "pending", "running", "paused", "stopped", "batavia"]
QUERY_KEYS = ["limit", "cursor", "before", "game", "league", "bot", "v", "seat", "since", "x"]
BODY_KEYS = ["name", "owner", "kind", "description", "invite_code", "status", "message", "state",
             "reason", "uses", "valid_s", "extra"]

plain_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
segment = st.one_of(st.sampled_from(KNOWN + TRICKY), plain_text.filter(bool))
query_value = st.one_of(st.sampled_from(KNOWN + TRICKY), plain_text)
#: JSON scalars, lone surrogates and huge numbers included
scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                   st.text(max_size=12), st.sampled_from(KNOWN + TRICKY + ["\ud800", "a\udfff"]))
json_value = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
json_body = st.one_of(
    st.dictionaries(st.sampled_from(BODY_KEYS), json_value, max_size=5),
    json_value).map(lambda doc: json.dumps(doc).encode())
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
def calls(draw) -> Call:
    path, names, methods = draw(st.sampled_from(ROUTES))
    method = draw(st.sampled_from(methods))
    params = {n: draw(segment) for n in names}
    query = draw(st.dictionaries(st.sampled_from(QUERY_KEYS), query_value, max_size=3))
    body = draw(json_body | raw_body) if method == "POST" else None
    auth = draw(st.sampled_from([None, ADMIN_AUTH, BOT_AUTH, "Bearer x", "Basic x", "Bearer"]))
    return Call(method, path, params, query, body, auth)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    h = WebHandle(tmp_path_factory.mktemp("fuzz") / "data", http_port=0)
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
    for name, value in call.params.items():
        value = lg.finished[0] if value == FINISHED else value
        path = path.replace("{" + name + "}", quote(value, safe=""))
    return path + ("?" + urlencode(call.query) if call.query else "")


def _headers(site, call: Call) -> dict[str, str]:
    _, lg, _ = site
    auth = {ADMIN_AUTH: f"Bearer {ADMIN}", BOT_AUTH: f"Bearer {lg.tokens['alpha']}"}.get(
        call.auth or "", call.auth)
    headers = {"content-type": "application/json"}
    if auth is not None:
        headers["authorization"] = auth
    return headers


def check(site, call: Call) -> None:
    h, _, client = site
    url = _url(site, call)
    resp: httpx.Response = h.call(client.request(call.method, url, content=call.body,
                                                 headers=_headers(site, call)), timeout=60)
    assert resp.status_code < 500, (call, resp.status_code, resp.text[:300])
    served = resp.request.url.path  # as httpx sent it ("/api/bots/.." is "/api/")
    if served.startswith("/api/") and 400 <= resp.status_code < 500 and call.method != "HEAD":
        doc: Any = resp.json()
        assert isinstance(doc, dict) and isinstance(doc.get("error"), str) \
            and doc.get("status") == resp.status_code, (call, doc)
        assert isinstance(doc.get("reason", ""), str), (call, doc)
        assert set(doc) <= {"error", "status", "reason"}, (call, doc)


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(call=calls())
@example(call=Call("GET", "/api/matches", query={"limit": "²"}))
@example(call=Call("GET", "/", query={"limit": "٣"}))
@example(call=Call("GET", "/matches/{match_id}", {"match_id": FINISHED}, {"v": "²"}))
@example(call=Call("GET", "/api/matches/{match_id}", {"match_id": FINISHED}, {"seat": "²"}))
@example(call=Call("GET", "/api/matches/{match_id}/views/{version}",
                   {"match_id": FINISHED, "version": "²"}))
@example(call=Call("GET", "/api/matches", query={"cursor": "²-" + "a" * 16}))
@example(call=Call("POST", "/api/leagues/{name}/register", {"name": "spring"},
                   body=json.dumps({"name": "\ud800", "invite_code": "x"}).encode()))
@example(call=Call("POST", "/api/leagues/{name}/register", {"name": "spring"},
                   body=json.dumps({"name": "delta", "owner": "\udfff"}).encode()))
@example(call=Call("POST", "/api/leagues/{name}/register", {"name": "spring"},
                   body=json.dumps({"name": "delta", "invite_code": "\ud800"}).encode()))
@example(call=Call("POST", "/api/leagues/{name}/admin/invites", {"name": "spring"},
                   body=b'{"uses": true}', auth=ADMIN_AUTH))
@example(call=Call("POST", "/api/leagues/{name}/admin/state", {"name": "spring"},
                   body=b"[" * 5000, auth=ADMIN_AUTH))
def test_no_input_gives_a_server_error(site, call):
    """Issue 31 item 5: status < 500 for any path, query, body and credentials, and the
    documented JSON error for a 4xx under /api/."""
    check(site, call)


def test_every_route_is_fuzzed():
    """The fuzz reads its routes from the app: the league, match and page routes are all there
    (a route table the fuzz could not read would make it test nothing)."""
    assert {"/api/matches", "/api/leagues/{name}/register", "/api/bots/{name}/upload",
            "/api/leagues/{name}/admin/invites", "/matches/{match_id}", "/"} <= set(PATHS)
