"""Templates and the standalone replay page (used by tournament reports: it works from the file
alone, with its frames, script and style inlined)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.templating import Jinja2Templates

from . import frames as F

HERE = Path(__file__).parent
STATIC = HERE / "static"

#: Each game's board renderer (static/<file>); a game without one is shown as its JSON view.
RENDERERS = {
    "batavia": "batavia.js",
    "goa": "goa.js",
    "santa_maria": "santa_maria.js",
}

templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.filters["json"] = F.dumps


def _asset(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def static_replay_html(meta: dict[str, Any], frames: list[dict[str, Any]],
                       back_href: str | None = None) -> str:
    """One self-contained HTML page replaying a match (no server, no network)."""
    renderer = RENDERERS.get(meta["game"])
    return templates.env.get_template("match.html").render(
        meta=meta, version=None, static=True, renderer=renderer, back_href=back_href,
        bundle_json=F.dumps(F.bundle(meta, frames)),
        inline_css=_asset("viewer.css"),
        inline_js=[_asset("svg.js"), _asset("viewer.js")] + ([_asset(renderer)] if renderer
                                                            else []),
    )
