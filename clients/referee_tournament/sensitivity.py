"""``referee-tournament report DIR --sensitivity N``: does the event's ranking hold when the
game's provisional component values (issue 35, item 6) are varied within what the sheets
document?

1. ``referee sheet vary GAME --count N`` writes N copies of the sheet the event played with,
   its provisional values drawn again (``referee.core.sheet_vary``: families of values shuffled
   among their components, documented ranges drawn, each copy accepted by the game), into
   ``DIR/sensitivity/sheets/``.
2. The event is played again under each copy (``DIR/sensitivity/v<i>/``, a results folder of its
   own on a local referee started with ``--components GAME=FILE``) with the same file: the same
   entrants, the same seeds, the same format (a Swiss or knockout pairs by the new results; an
   arena plays as many matches as the event did). A **control** run (``v0``) replays it under
   the unchanged sheet: what changes there is the bots' own chance, not the sheet's.
3. ``DIR/sensitivity.json`` and the terminal say, place by place, how often another entrant
   took it under the varied sheets (and under the control), and each entrant's range of places.

Every run is a results folder: an interrupted sensitivity report resumes where it stopped.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from .config import TournamentConfig
from .procs import referee_command
from .runner import Runner


class SensitivityError(RuntimeError):
    pass


def ranking(data: dict[str, Any]) -> list[str]:
    """The entrants best first: the event's standings, else the leaderboard."""
    event = data.get("event") or {}
    if event.get("standings"):
        return [s["name"] for s in event["standings"]]
    return [e["name"] for e in sorted(data["leaderboard"], key=lambda e: e["place"])]


def vary_sheets(cfg: TournamentConfig, folder: Path, count: int, seed: int) -> list[dict]:
    """The N varied sheets (written once; kept while count and seed are the same)."""
    sheets = folder / "sensitivity" / "sheets"
    index = sheets / "vary.json"
    if index.exists():
        data = json.loads(index.read_text())
        if data.get("seed") == seed and len(data.get("sheets", [])) == count:
            return list(data["sheets"])
    cmd = [*referee_command(), "sheet", "vary", cfg.game, "--count", str(count),
           "--seed", str(seed), "--out", str(sheets)]
    for key, value in cfg.options:
        cmd += ["--option", f"{key}={value}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SensitivityError(f"referee sheet vary failed: {proc.stderr.strip()[-800:]}")
    return list(json.loads(index.read_text())["sheets"])


def compare(baseline: list[str], runs: list[list[str]]) -> dict[str, Any]:
    """Place by place: how many runs put another entrant there (and whom); per entrant: the
    range of its places."""
    places = []
    for p, name in enumerate(baseline, start=1):
        others: dict[str, int] = {}
        for r in runs:
            if p <= len(r) and r[p - 1] != name:
                others[r[p - 1]] = others.get(r[p - 1], 0) + 1
        places.append({"place": p, "baseline": name, "changed": sum(others.values()),
                       "of": len(runs), "instead": others})
    entrants = []
    for name in baseline:
        seen = [r.index(name) + 1 for r in runs if name in r]
        entrants.append({"name": name, "baseline_place": baseline.index(name) + 1,
                         "best": min(seen, default=None), "worst": max(seen, default=None)})
    return {"places": places, "entrants": entrants,
            "runs_changing_ranking": sum(r != baseline for r in runs)}


async def run(cfg: TournamentConfig, folder: Path, count: int, seed: int,
              console: Console) -> dict[str, Any]:
    base_data = json.loads((folder / "results.json").read_text())
    baseline = ranking(base_data)
    done = base_data["status"].get("done", 0)
    sheets = vary_sheets(cfg, folder, count, seed)
    local = replace(cfg, run=replace(cfg.run, address=None, backend="local", unix_socket=None))
    sheet_dir = folder / "sensitivity" / "sheets"
    results: list[dict[str, Any]] = []
    for i, sheet in enumerate([None, *sheets]):
        label = "control (unchanged sheet)" if sheet is None else sheet["sheet"]
        console.print(f"[cyan]sensitivity[/]: run {i} of {count}: {label}")
        args = () if sheet is None else (
            "--components", f"{cfg.game}={(sheet_dir / sheet['file']).resolve()}")
        runner = Runner(local, out=folder / "sensitivity" / f"v{i}", console=Console(quiet=True),
                        progress=False, referee_args=args,
                        max_matches=done if cfg.format.type == "arena" else None)
        data = await runner.run()
        results.append({"run": f"v{i}", "sheet": None if sheet is None else sheet["sheet"],
                        "changed_values": [] if sheet is None else sheet["changed"],
                        "status": data["status"], "ranking": ranking(data)})
    varied = [r["ranking"] for r in results[1:]]
    out = {"game": cfg.game, "count": count, "seed": seed, "baseline": baseline,
           "control": {**results[0], **compare(baseline, [results[0]["ranking"]])},
           "runs": results[1:], **compare(baseline, varied)}
    (folder / "sensitivity.json").write_text(json.dumps(out, indent=1))
    return out


def table(data: dict[str, Any]) -> Table:
    t = Table(title=f"Sensitivity to the provisional components: {data['count']} varied "
                    f"sheet(s), {data['runs_changing_ranking']} changed the ranking",
              title_justify="left")
    # at 80 columns (tests/test_tables_80.py): the names fold, the rest stays whole
    t.add_column("place", justify="right", no_wrap=True)
    t.add_column("entrant", overflow="fold", ratio=1)
    t.add_column("another there", no_wrap=True)
    t.add_column("instead", overflow="fold", ratio=1)
    t.add_column("control", no_wrap=True)
    control = {p["place"]: p for p in data["control"]["places"]}
    for p in data["places"]:
        instead = ", ".join(f"{n} ×{c}" for n, c in sorted(p["instead"].items(),
                                                           key=lambda x: -x[1]))
        t.add_row(str(p["place"]), p["baseline"], f"{p['changed']} of {p['of']}",
                  instead or "-", "changed" if control[p["place"]]["changed"] else "same")
    return t
