"""Every web response carries a Content-Security-Policy (scripts, styles and connections from
the viewer's own origin only; no inline script; no framing), X-Content-Type-Options: nosniff
and X-Frame-Options: DENY: error pages, JSON, the record, static files and the event stream
alike."""
from __future__ import annotations

import httpx


def _directives(csp: str) -> dict[str, str]:
    return {d.split()[0]: d.partition(" ")[2] for d in (p.strip() for p in csp.split(";")) if d}


def test_every_route_sends_the_security_headers(web):
    mid, tokens = web.call(web.create(seats=3, seed=31))
    web.call(web.play(mid, tokens), timeout=120)
    paths = ["/", "/api/matches", f"/matches/{mid}", f"/matches/{mid}?v=2", f"/api/matches/{mid}",
             f"/api/matches/{mid}/views/1", f"/matches/{mid}/record.json",
             f"/api/matches/{mid}/live", "/static/viewer.js", "/static/viewer.css",
             "/matches/0123456789abcdef", "/api/matches/nope", f"/matches/{mid}?v=x",
             "/static/../app.py", "/no/such/page"]
    for path in paths:
        r = httpx.get(web.base + path, timeout=10)
        assert r.headers.get("x-content-type-options") == "nosniff", path
        assert r.headers.get("x-frame-options") == "DENY", path
        csp = _directives(r.headers.get("content-security-policy", ""))
        assert csp.get("default-src") == "'none'", path
        assert csp.get("script-src") == "'self'", path
        assert csp.get("frame-ancestors") == "'none'", path
        assert "unsafe" not in r.headers["content-security-policy"], path


def test_pages_name_an_icon_that_exists(web):
    """Browsers ask every page for an icon: no 404 in their console."""
    page = httpx.get(web.base + "/").text
    assert 'rel="icon" href="/static/favicon.svg"' in page
    for path in ("/static/favicon.svg", "/favicon.ico"):
        r = httpx.get(web.base + path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg")
