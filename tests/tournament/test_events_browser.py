"""The HTML report of the events in Chromium (issue 35): a knockout's bracket and a Swiss's
rounds and standings, from results made up with the events' own logic (no referee needed)."""
from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

from referee_tournament import report, staged
from referee_tournament.config import parse
from referee_tournament.sensitivity import compare
from referee_tournament.store import Row

from ..web.browser import browser, page  # noqa: F401 - fixtures


def _rows(cfg, seed: int) -> list[Row]:
    """Play the event out on paper: every match derived gets random ranks."""
    rng = random.Random(seed)
    rows: dict[int, Row] = {}
    seeds = staged.seed_order(cfg) if cfg.format.type == "knockout" else None
    for _ in range(50):
        specs, state = staged.event_schedule(cfg, list(rows.values()), seeds)
        if state.complete:
            return list(rows.values())
        for s in specs:
            if s.index in rows:
                continue
            k = len(s.seating)
            ranks = rng.sample(range(1, k + 1), k)
            rows[s.index] = Row(
                idx=s.index, round=s.round, group=s.group, table=s.table, seating=s.seating,
                seed=s.seed, status="done", attempts=1, match_id=f"m{s.index}", referee=None,
                seconds=1.0, scores=[10 * (k - r) for r in ranks], ranks=ranks,
                outcome={}, record_path=None, error=None, finished=float(s.index))
    raise AssertionError("the event never ended")


def _report(tmp_path: Path, fmt: dict, n: int, seats: int,
            sensitivity: bool = False) -> tuple[Path, dict]:
    cfg = parse({"name": f"{fmt['type']}-report", "game": {"name": "goa", "seats": seats},
                 "entrants": [{"name": f"bot-{i + 1}", "command": "b {address} {match}"}
                              for i in range(n)], "format": fmt})
    rows = _rows(cfg, 5)
    seeds = staged.seed_order(cfg) if fmt["type"] == "knockout" else None
    meta = {"name": cfg.name, "game": cfg.game, "format": cfg.to_json()["format"],
            "event": staged.summary(cfg, rows, seeds)}
    out = tmp_path / fmt["type"]
    (out / "plots").mkdir(parents=True)
    data = report.compute(rows, cfg.names, meta)
    if sensitivity:  # as `report --sensitivity 3` leaves it: the first two places swap once
        base = [x["name"] for x in meta["event"]["standings"]]
        swapped = [base[1], base[0], *base[2:]]
        found = compare(base, [base, swapped, base])
        found["control"] = {"sheet": None, **compare(base, [base])}
        (out / "sensitivity.json").write_text(json.dumps(
            {"game": "goa", "count": 3, "seed": 1, "baseline": base, **found}))
    report.write(out, data)
    return out / "index.html", data


def _shot(page, tmp_path: Path, name: str) -> None:  # noqa: F811 - a page, not the fixture
    page.screenshot(path=str(tmp_path / name), full_page=True)
    shots = os.environ.get("REFEREE_WEB_SCREENSHOTS")
    if shots:
        shutil.copy(tmp_path / name, Path(shots) / name)


def test_the_knockout_bracket_shows_every_round_and_who_went_on(tmp_path, page):  # noqa: F811
    html, data = _report(tmp_path, {"type": "knockout", "best_of": 2}, 11, 3)
    page.goto(html.as_uri())
    bracket = page.locator("#bracket")
    bracket.wait_for()
    rounds = data["event"]["bracket"]
    assert bracket.locator(".round").count() == len(rounds)
    assert page.locator(".ko-table").count() == sum(len(r["tables"]) for r in rounds)
    # who went on is marked, table by table; the final's winner too
    advanced = sum(len(t["advanced"]) for r in rounds for t in r["tables"]) + 1
    assert bracket.locator("td.adv").count() == advanced
    assert bracket.locator(".round").last.locator("h3").inner_text() == "Final"
    champion = data["event"]["standings"][0]["name"]
    assert bracket.locator(".round").last.locator("td.adv").inner_text() == champion
    byes = [b for r in rounds for b in r["byes"]]
    assert byes and all(bracket.get_by_text(b).count() for b in byes)
    rows = page.locator("#event-standings tbody tr")
    assert rows.count() == 11 and champion in rows.first.inner_text()
    assert page.errors == []
    _shot(page, tmp_path, "knockout-report.png")


def test_the_swiss_report_shows_its_rounds_byes_and_tie_breaks(tmp_path, page):  # noqa: F811
    html, data = _report(tmp_path, {"type": "swiss", "rounds": 3}, 7, 3, sensitivity=True)
    page.goto(html.as_uri())
    page.locator("#rounds").wait_for()
    rounds = data["event"]["rounds"]
    tables = sum(len(r["tables"]) for r in rounds)
    assert page.locator("#rounds tbody tr").count() == tables + sum(bool(r["byes"])
                                                                     for r in rounds)
    assert page.locator("#rounds").get_by_text("bye", exact=True).count() == 3
    head = page.locator("#event-standings thead").inner_text()
    for col in ("points", "Buchholz", "direct", "seed"):
        assert col in head
    first = data["event"]["standings"][0]
    assert first["name"] in page.locator("#event-standings tbody tr").first.inner_text()
    # the sensitivity report's findings: places 1 and 2 changed in 1 of 3, not in the control
    rows = page.locator("#sensitivity-places tbody tr")
    assert rows.count() == 7
    assert "1 of 3" in rows.nth(0).inner_text() and "same" in rows.nth(0).inner_text()
    assert "0 of 3" in rows.nth(2).inner_text()
    assert page.errors == []
    _shot(page, tmp_path, "swiss-report.png")
