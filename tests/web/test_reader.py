"""The web viewer reads the referee through ``ServerView`` (referee/web/reader.py) and nothing
else (issue 32, item 1): mypy checks the servicer's shape against it where the process hands
the servicer to ``WebServer``; here a real servicer is checked for every member, and the web's
sources for reads of the servicer the view does not declare, or members it declares that the
web no longer reads (the view says exactly what the web reads)."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request

import referee.web
from referee.web import state
from referee.web.reader import ServerView

WEB = Path(referee.web.__file__).parent
#: what the view declares (its properties and methods)
MEMBERS = {name for name in vars(ServerView) if not name.startswith("_")}


def _is_service(node: ast.expr) -> bool:
    """``service``, ``self.service``, ``web.service``, ``state.of(request).service``."""
    return (isinstance(node, ast.Name) and node.id == "service") or (
        isinstance(node, ast.Attribute) and node.attr == "service")


def _reads() -> Iterator[tuple[str, int, str]]:
    """(file, line, member) of every member of the servicer the web's modules read; a
    ``getattr`` on it as the member "getattr" (a string name mypy cannot check)."""
    for path in sorted(WEB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and _is_service(node.value):
                yield path.name, node.lineno, node.attr
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "hasattr") and node.args
                  and _is_service(node.args[0])):
                yield path.name, node.lineno, node.func.id


def test_the_servicer_has_every_member_the_web_reads(web) -> None:
    service = web.server.service
    assert isinstance(service, ServerView), sorted(
        m for m in MEMBERS if not hasattr(service, m))
    assert web.server.web.app.state.web.service is service


def test_the_web_reads_the_servicer_only_through_the_view() -> None:
    reads = list(_reads())
    assert {m for _, _, m in reads} >= {"matches", "store", "leagues"}  # the scan finds reads
    unknown = [f"{f}:{line} service.{m}" for f, line, m in reads if m not in MEMBERS]
    assert not unknown, "the web reads what ServerView does not declare: " + ", ".join(unknown)
    stale = MEMBERS - {m for _, _, m in reads}
    assert not stale, f"ServerView declares what the web no longer reads: {sorted(stale)}"


def test_a_handler_refuses_an_app_it_was_not_built_into() -> None:
    app = Starlette()
    app.state.web = object()  # not create_app's WebState
    request = Request({"type": "http", "app": app, "method": "GET", "path": "/",
                       "headers": [], "query_string": b""})
    with pytest.raises(TypeError, match="WebState"):
        state.of(request)
