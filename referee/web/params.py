"""Strict parsing of what a web request carries: numbers in the address, JSON bodies, the
strings and numbers in them, and who the client is (issue 31, items 3 and 5).

Every route reads its input through here, so one rule holds everywhere and a bad value is a
400 with the documented JSON error (reason MALFORMED), never a 500 from deeper down:

* a number in a path or query is ASCII digits only (``str.isdigit`` accepts ``²``, which
  ``int`` refuses, and ``int`` accepts ``١٢``, which no client means), within its bounds;
* a body is a JSON object of at most ``MAX_JSON_BODY`` bytes of UTF-8 with only the members
  the route documents; standard JSON only (no ``NaN``, no nesting deep enough to exhaust
  Python's recursion);
* a string member is a string (not a number, a list or null) of at most its length, that
  UTF-8 can encode (JSON's ``"\\ud800"`` escape makes a lone surrogate, which protobuf and
  the hashes refuse) and holds no control character (a newline and a tab only where a text
  may have lines);
* a number member is a JSON integer (``true`` is not one, though Python's bool is an int)
  within its bounds;
* a path parameter (the app's routes pass through :func:`checked_paths`) is a text of at most
  ``MAX_SEGMENT`` characters without control characters: PostgreSQL refuses a NUL in a
  query's text, which a name looked up in the store would otherwise carry there.

The errors are ``RefereeError`` (``errors.malformed``): the league routes answer them with
their ``refusal``, and the app's handler does the same for every other route.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, NoReturn, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from referee.server.base import errors
from referee.server.base.auth import client_key
from referee.server.base.wire import check_text

MAX_JSON_BODY = 16 * 1024
MAX_SEGMENT = 256  # characters of a path parameter (a match id, a league's or a bot's name)
_DIGITS = re.compile(r"[0-9]+")
T = TypeVar("T")


def _shown(value: object) -> str:
    """A short quotation of a refused value (never more than 40 characters of it)."""
    return repr(value[:40] if isinstance(value, str) else value)[:60]


def is_digits(text: str) -> bool:
    """Whether ``text`` is ASCII digits (and not empty): what ``int`` may read as a count."""
    return _DIGITS.fullmatch(text) is not None


def whole(text: str | None, what: str, *, lo: int = 0, hi: int = 10**9 - 1,
          default: int | None = None) -> int | None:
    """A whole number from an address (a path segment or a query parameter): ASCII digits,
    ``lo`` to ``hi``; ``default`` when absent or empty."""
    if text is None or text == "":
        return default
    if len(text) > len(str(hi)) or not is_digits(text) or not lo <= int(text) <= hi:
        raise errors.malformed(f"malformed {what} {_shown(text)}: expected a whole number "
                               f"from {lo} to {hi}")
    return int(text)


class Body:
    """A request's JSON object, read member by member with the type each must have."""

    __slots__ = ("doc",)

    def __init__(self, doc: dict[str, Any]):
        self.doc = doc

    def text(self, key: str, *, max_len: int, default: str = "", lines: bool = False) -> str:
        value = self.doc.get(key, default)
        if not isinstance(value, str):
            raise errors.malformed(f"{key} is a string, not {_shown(value)}")
        return check_text(value, key, max_len=max_len, lines=lines)

    def whole(self, key: str, *, lo: int = 0, hi: int = (1 << 31) - 1, default: int = 0) -> int:
        value = self.doc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise errors.malformed(f"{key} is a whole number from {lo} to {hi}, "
                                   f"not {_shown(value)}")
        return value

    def choice(self, key: str, choices: Mapping[str, T], default: str | None = None) -> T:
        """The value ``choices`` maps the member's string to (it must be one of its keys)."""
        value = self.doc.get(key, default)
        if not isinstance(value, str) or value not in choices:
            raise errors.malformed(f"{key} is one of {', '.join(choices)}, not {_shown(value)}")
        return choices[value]


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


async def json_object(request: Request, members: Iterable[str]) -> Body:
    """The request's body as a JSON object with only ``members`` (an unknown member is refused:
    a misspelt one would otherwise be silently ignored)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_JSON_BODY:
            raise errors.malformed(f"a request body is at most {MAX_JSON_BODY} bytes")
    try:
        doc = json.loads(bytes(body).decode("utf-8") or "{}", parse_constant=_no_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise errors.malformed("the body is not JSON (UTF-8, standard numbers only, not "
                               "nested too deep)") from None
    if not isinstance(doc, dict):
        raise errors.malformed("the body is a JSON object")
    known = set(members)
    unknown = sorted(k for k in doc if k not in known)
    if unknown:
        raise errors.malformed(f"unknown member {_shown(unknown[0])}; the body has "
                               f"{', '.join(sorted(known))}")
    return Body(doc)


def checked_paths(routes: Iterable[BaseRoute]) -> list[BaseRoute]:
    """``routes`` with each Route's path parameters checked (``check_text``) before its
    endpoint runs (the endpoint's docstring, which the API reference is written from, kept);
    a Mount (the static files) as it is."""

    def wrap(endpoint: Callable[[Request], Awaitable[Response]]
             ) -> Callable[[Request], Awaitable[Response]]:
        @functools.wraps(endpoint)
        async def checked(request: Request) -> Response:
            for name, value in request.path_params.items():
                check_text(value, name, max_len=MAX_SEGMENT)
            return await endpoint(request)
        return checked

    return [Route(r.path, wrap(r.endpoint), methods=sorted(r.methods or ()) or None, name=r.name)
            if isinstance(r, Route) else r for r in routes]


def client(request: Request) -> str:
    """Who a request comes from, as the rate limits key it (``auth.client_key``: the same key
    as a gRPC call from that address). The connection's address, or, when the connection comes
    from one of the ``--trusted-proxy`` addresses, the client that proxy names in
    ``X-Forwarded-For`` (the app's ``ProxyHeadersMiddleware`` has put it in ``request.client``
    then; a header from any other peer is ignored, since a client could forge it)."""
    return client_key(request.client.host) if request.client else "?"


def bearer(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer`` header (at most 256 characters), or None."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and 0 < len(token) <= 256 else None
