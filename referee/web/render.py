"""Templates and the standalone replay page (used by tournament reports: it works from the file
alone, with its frames, script and style inlined)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.templating import Jinja2Templates

from referee.core.components import ComponentSheet

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


def static_replay_html(meta: dict[str, Any], frames: list[Any],
                       back_href: str | None = None) -> str:
    """One self-contained HTML page replaying a match (no server, no network)."""
    renderer = RENDERERS.get(meta["game"])
    return templates.env.get_template("match.html").render(
        meta=meta, version=None, seat=None, static=True, renderer=renderer, back_href=back_href,
        bundle_json=F.bundle_json(meta, frames),
        inline_css=_asset("viewer.css"),
        inline_js=[_asset("svg.js"), _asset("viewer.js")] + ([_asset(renderer)] if renderer
                                                            else []),
        start_js=_asset("start.js"),
    )


def record_meta(record: dict[str, Any], title: str) -> dict[str, Any]:
    """The public facts of a finished match, from its record, as pages show them."""
    names = list(record.get("seat_names") or [f"seat {s}" for s in range(int(record["seats"]))])
    return {
        "id": str(record.get("match_id") or ""), "game": record["game"], "title": title,
        "seats": int(record["seats"]), "names": names, "state": "finished",
        "created_ms": record.get("created_unix_ms"), "finished_ms": record.get("finished_unix_ms"),
        "version": None, "current_seat": -1,
        "result": F.result_summary(record.get("result"), names),
    }


def static_replay_from_record(record: dict[str, Any], sheet: ComponentSheet | None = None,
                              back_href: str | None = None) -> str:
    """The static replay page of a finished match's record (re-simulated; raises ReplayError
    if the record does not replay)."""
    from referee.core import registry

    game = registry.get(str(record.get("game")))
    r = F.record_replayer(game, record, sheet)
    moves = list(record.get("moves") or [])
    r.extend(moves)
    r.add_notes(moves)
    frames = r.final_encoded(record.get("forfeited"))
    return static_replay_html(record_meta(record, game.spec.title), frames, back_href)
