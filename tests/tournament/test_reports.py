"""Reports for every format (issue 19, item 5): a round robin's and a ladder's folder get the
same HTML report (Jinja2), `referee-tournament report DIR` works on either (on a ladder folder
it ended in `sqlite3.OperationalError: no such table: meta`), and the report says which
entrants ran sandboxed and shows a head-to-head table. Built from stored results, so no match
is played here."""
from __future__ import annotations

import json
import sqlite3
import time
import tomllib
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from referee_tournament.config import parse
from referee_tournament.ladder import LadderStore
from referee_tournament.report import compute, head_to_head, match_results, write
from referee_tournament.runner import Runner
from referee_tournament.store import Row

from .conftest import run_cli, write_toml

NAMES = ["ann", "bob", "cy"]
# (seating, ranks): ann beats bob twice, bob and cy draw once, cy beats ann once
MATCHES = [
    (("ann", "bob", "cy"), [1, 2, 3]),
    (("bob", "ann", "cy"), [2, 1, 1]),
    (("cy", "bob", "ann"), [1, 1, 3]),
]


def _outcome(seating, crashed=()):
    return {"seats": [{"seat": s, "entrant": n, "moves": 10, "timeouts": 2 if n in crashed else 0,
                       "crashed": n in crashed, "exit_code": 1 if n in crashed else 0,
                       "error": "error: weights.bin not found" if n in crashed else ""}
                      for s, n in enumerate(seating)]}


def _rows():
    return [Row(idx=i, round=1, group=f"g{i}", table=tuple(sorted(st)), seating=st, seed=i,
                status="done", attempts=1, match_id=f"m{i}", referee=None, seconds=1.5,
                scores=[10 - r for r in rk], ranks=rk,
                outcome=_outcome(st, crashed=("cy",) if i == 0 else ()), record_path=None,
                error=None, finished=time.time() + i)
            for i, (st, rk) in enumerate(MATCHES)]


def test_head_to_head_counts_every_meeting_from_both_sides():
    pairs = {(p["a"], p["b"]): p for p in head_to_head(match_results(_rows()), NAMES)}
    ab = pairs[("ann", "bob")]
    assert (ab["meetings"], ab["wins"], ab["draws"], ab["losses"]) == (3, 2, 0, 1)
    assert ab["mean_rank_diff"] == round((1 + 1 - 2) / 3, 3)
    bc = pairs[("bob", "cy")]
    assert (bc["wins"], bc["draws"], bc["losses"]) == (1, 1, 1)
    ac = pairs[("ann", "cy")]
    assert (ac["wins"], ac["draws"], ac["losses"]) == (1, 1, 1)


class _Tables(HTMLParser):
    """The text of every cell of the table with the given id, row by row."""

    def __init__(self, table_id):
        super().__init__()
        self.id, self.inside, self.rows, self.cell = table_id, False, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and dict(attrs).get("id") == self.id:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def _table(html, table_id):
    p = _Tables(table_id)
    p.feed(html)
    return p.rows


def _check_report(out, sandboxed):
    html = (out / "index.html").read_text()
    grid = _table(html, "h2h")
    assert grid[0] == ["entrant", *NAMES]
    ann = next(r for r in grid if r[0] == "ann")
    assert ann[1] == "" and ann[2].startswith("2–0–1")  # ann against bob, from ann's side
    bob = next(r for r in grid if r[0] == "bob")
    assert bob[1].startswith("1–0–2")
    said = "Sandboxed entrants (bubblewrap: no network, read-only system, resource limits): "
    assert f"{said}{', '.join(sandboxed)}." in html
    board = _table(html, "leaderboard")
    marked = {r[1].split()[0] for r in board[1:] if "sandboxed" in r[1]}
    assert marked == set(sandboxed)
    incidents = _table(html, "incidents")
    assert any("cy" in r and "crash" in r[3] for r in incidents[1:])
    data = json.loads((out / "results.json").read_text())
    assert {(p["a"], p["b"]) for p in data["head_to_head"]} == {
        ("ann", "bob"), ("ann", "cy"), ("bob", "cy")}
    assert sorted(e["name"] for e in data["leaderboard"] if e["sandboxed"]) == sorted(sandboxed)


TOML = """
    name = "reports"
    output = "{out}"
    [game]
    name = "batavia"
    seats = 3
    [[entrants]]
    name = "ann"
    command = "bot {{address}} {{match}}"
    sandbox = true
    [[entrants]]
    name = "bob"
    command = "bot {{address}} {{match}}"
    [[entrants]]
    name = "cy"
    command = "bot {{address}} {{match}}"
    [format]
    type = "{fmt}"
"""


def test_report_dir_on_a_ladder_folder_writes_the_tournament_report(tmp_path):
    out = tmp_path / "ladder"
    out.mkdir()
    path = write_toml(tmp_path / "l.toml", TOML.format(out=out, fmt="ladder"))
    cfg = replace(parse(tomllib.loads(path.read_text()), base_dir=tmp_path),
                  source=path.read_text())
    store = LadderStore(out / "tournament.sqlite")
    store.keep_config(cfg)
    for r in _rows():
        store.start(r.idx, list(r.seating), r.seed)
        store.finish(r.idx, {"match_id": r.match_id, "scores": r.scores, "ranks": r.ranks,
                             "outcome": r.outcome}, [])
    store.close()
    done = run_cli("report", str(out))
    assert done.returncode == 0, done.stderr + done.stdout
    _check_report(out, ["ann"])
    assert "ladder" in (out / "index.html").read_text().split("</h1>")[0]


def test_report_on_a_ladder_folder_from_before_reports_says_what_to_do(tmp_path):
    out = tmp_path / "old"
    out.mkdir()
    db = sqlite3.connect(out / "tournament.sqlite")
    db.executescript("CREATE TABLE ladder_matches (idx INTEGER PRIMARY KEY, seating TEXT NOT "
                     "NULL, seed TEXT NOT NULL, status TEXT NOT NULL, match_id TEXT, started "
                     "REAL, finished REAL, scores TEXT, ranks TEXT, record_path TEXT, error "
                     "TEXT);")
    db.execute("INSERT INTO ladder_matches VALUES (1, ?, '5', 'done', 'm1', 1.0, 2.0, ?, ?, "
               "NULL, NULL)", (json.dumps(["ann", "bob", "cy"]), "[9, 8, 7]", "[1, 2, 3]"))
    db.commit()
    db.close()
    done = run_cli("report", str(out))
    assert done.returncode != 0 and "no such table" not in done.stdout + done.stderr
    assert "pass FILE" in done.stdout + done.stderr
    # given its file, the old folder gets its report (the match without outcomes too)
    path = write_toml(tmp_path / "l.toml", TOML.format(out=out, fmt="round_robin"))
    done = run_cli("report", str(path), "--out", str(out))
    assert done.returncode == 0, done.stderr + done.stdout
    assert (out / "index.html").exists()
    board = json.loads((out / "results.json").read_text())["leaderboard"]
    assert {e["name"]: e["matches"] for e in board} == {"ann": 1, "bob": 1, "cy": 1}


@pytest.mark.parametrize("fmt, extra", [
    ("round_robin", ""), ("gauntlet", 'challenger = "ann"'), ("pairs", ""),
])
def test_report_dir_on_a_tournament_folder_of_each_format(tmp_path, fmt, extra):
    """A tournament folder of every scheduled format, its matches finished with made-up
    results (ann ahead of bob ahead of cy, whatever the seats), rebuilt with `report DIR`."""
    out = tmp_path / fmt
    text = TOML.format(out=out, fmt=fmt) + (f"    {extra}\n" if extra else "")
    path = write_toml(tmp_path / f"{fmt}.toml", text)
    cfg = replace(parse(tomllib.loads(path.read_text()), base_dir=tmp_path),
                  source=path.read_text())
    runner = Runner(cfg, progress=False)
    store, specs = runner._prepare()
    try:
        for spec in specs:
            ranks = [NAMES.index(n) + 1 for n in spec.seating]
            store.finish(spec.index, {"match_id": f"m{spec.index}", "ranks": ranks,
                                      "scores": [10 - r for r in ranks], "seconds": 1.0,
                                      "outcome": _outcome(spec.seating)})
    finally:
        store.close()
    done = run_cli("report", str(out))
    assert done.returncode == 0, done.stderr + done.stdout
    html = (out / "index.html").read_text()
    grid = {r[0]: r[1:] for r in _table(html, "h2h")[1:]}
    assert grid["ann"][1].split("–")[0] != "0"  # ann beat bob every time they met
    assert grid["ann"][1].split("–")[1:3] == ["0", "0 +1.00"]
    said = "Sandboxed entrants (bubblewrap: no network, read-only system, resource limits): "
    assert f"{said}ann." in " ".join(html.split())
    data = json.loads((out / "results.json").read_text())
    assert [e["name"] for e in data["leaderboard"] if e["sandboxed"]] == ["ann"]


def test_a_round_robin_report_shows_sandboxing_and_head_to_head(tmp_path):
    out = tmp_path / "rr"
    out.mkdir()
    path = write_toml(tmp_path / "rr.toml", TOML.format(out=out, fmt="round_robin"))
    cfg = parse(tomllib.loads(path.read_text()), base_dir=tmp_path)
    data = compute(_rows(), cfg.names, {"name": cfg.name, "game": cfg.game,
                                        "sandboxed": ["ann"], "format": {"type": "round_robin"}})
    write(out, data)
    _check_report(out, ["ann"])
