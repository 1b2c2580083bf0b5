"""The results folder: results.json, matches.csv, leaderboard.txt, index.html, plots/*.png.

Layout of ``<output>/``::

    tournament.sqlite     the schedule and every outcome (resume state)
    tournament.json       the tournament file as parsed
    results.json          leaderboard, ratings history, incidents, every match
    matches.csv           one row per scheduled match (status, seating, scores, ranks, record)
    leaderboard.txt       the printed leaderboard
    index.html            leaderboard, plots, every match with links to its replay and record
    replays/<idx>-<match_id>.html   a replay page per finished match (works from the file alone)
    records/<idx>-<match_id>.json   game records fetched with GetRecord
    bots/<idx>-seat<k>-<entrant>.log   each bot's stdout+stderr
    plots/ratings.png     mu - 3 sigma after every match
    plots/scores.png      score distribution per entrant
    runner.log            structured (JSON lines) log of the runner
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import time
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import structlog
from rich import box
from rich.console import Console
from rich.table import Table

from .ratings import MatchResult, leaderboard
from .store import Row


def match_results(rows: list[Row]) -> list[MatchResult]:
    return [
        MatchResult(r.idx, r.group, r.seating, list(r.scores or []), list(r.ranks),
                    r.outcome or {})
        for r in rows if r.status == "done" and r.ranks
    ]


#: How results.json and the leaderboard mark an entrant that never really played.
CRASHED_EVERYWHERE = "crashed in every match"


def did_not_play(seat: dict[str, Any]) -> bool:
    """A seat whose bot did not play its match: it crashed (exited non-zero, or could not
    start), the referee gave up on it (its process exited before the end, or it never joined
    within the join timeout), or it made no move of its own (every decision of the seat was
    played by the time policy, or it forfeited before its first move)."""
    own = seat.get("moves", 0) - seat.get("timeouts", 0)
    return bool(seat.get("crashed") or seat.get("abandoned")
                or (own <= 0 and (seat.get("timeouts") or seat.get("forfeited"))))


@dataclass(frozen=True)
class IncidentKind:
    """One kind of incident a seat's outcome can show: the outcome field that holds it, the
    per-entrant count it adds to, whether that count adds the field's value (a number of
    timeouts) or one per seat, and how the incident list words it."""

    field: str
    count: str
    label: str
    counted: bool = False  # label gets "=<value>" and the count adds the value


#: Every incident kind, in the order the incident list shows them. A new kind of incident
#: (an outcome field the runner sets on a seat) is one more entry here and, to show its count
#: in the leaderboard, one more column in templates/report.html.
INCIDENT_KINDS: tuple[IncidentKind, ...] = (
    IncidentKind("timeouts", "timeouts", "timeouts", counted=True),
    IncidentKind("crashed", "crashes", "crash"),
    IncidentKind("hung", "hangs", "hung (killed)"),
    IncidentKind("rejected", "rejected", "rejected", counted=True),
    IncidentKind("forfeited", "forfeits", "forfeit"),
)


def incidents(rows: list[Row], names: list[str]) -> tuple[dict[str, dict[str, int]], list[dict]]:
    """Per-entrant counts of every :data:`INCIDENT_KINDS` (timeouts, crashes, hangs, rejected
    moves, forfeits), and a list of every incident (match, seat, kind, exit code, stderr tail).
    ``seats`` and ``no_play`` count the entrant's seats in finished matches and those where it
    did not play (:func:`did_not_play`)."""
    zero = {**{k.count: 0 for k in INCIDENT_KINDS}, "failed_matches": 0, "seats": 0,
            "no_play": 0}
    counts = {n: dict(zero) for n in names}
    events: list[dict] = []
    for r in rows:
        if r.status not in ("done", "failed"):
            continue
        for s in (r.outcome or {}).get("seats", []):
            n = s["entrant"]
            c = counts.setdefault(n, dict(zero))
            kinds = []
            c["seats"] += 1
            if did_not_play(s):
                c["no_play"] += 1
            if s.get("abandoned") == "never joined":
                kinds.append("never joined")
            for k in INCIDENT_KINDS:
                value = s.get(k.field)
                if not value:
                    continue
                c[k.count] += int(value) if k.counted else 1
                kinds.append(f"{k.label}={value}" if k.counted else k.label)
                if k.field == "rejected" and s.get("refusal"):
                    kinds.append(s["refusal"])  # the first, with the referee's reason and message
            if r.status == "failed":
                c["failed_matches"] += 1
            if kinds:
                events.append({
                    "match": r.idx, "match_id": r.match_id, "seat": s["seat"], "entrant": n,
                    "what": kinds, "exit_code": s.get("exit_code"),
                    "start_error": s.get("start_error"), "log": s.get("log"),
                    "error": s.get("error", ""),
                    "stderr_tail": s.get("stderr_tail", "")[-800:],
                })
        if r.status == "failed":
            events.append({"match": r.idx, "match_id": r.match_id, "seat": None,
                           "entrant": None, "what": ["match failed"], "error": r.error})
    return counts, events


def head_to_head(results: list[MatchResult], names: list[str]) -> list[dict[str, Any]]:
    """Every pair of entrants that met, from the first's side: each time a seat of ``a`` and a
    seat of ``b`` sat at the same finished match, a win for ``a`` if it ranked better, a draw
    on equal ranks, a loss otherwise; ``mean_rank_diff`` is the mean of b's rank minus a's
    (positive: ``a`` finished ahead on average). An entrant in several seats of one match
    meets each of the other's seats once per seat."""
    tally: dict[tuple[str, str], list[int]] = {}
    for m in results:
        for i, j in combinations(range(len(m.seating)), 2):
            a, b = m.seating[i], m.seating[j]
            if a == b:
                continue
            ra, rb = m.ranks[i], m.ranks[j]
            if names.index(a) > names.index(b):
                a, b, ra, rb = b, a, rb, ra
            t = tally.setdefault((a, b), [0, 0, 0, 0])  # wins, draws, losses, sum(rb - ra)
            t[0 if ra < rb else 1 if ra == rb else 2] += 1
            t[3] += rb - ra
    out = []
    for (a, b), (w, d, lo, diff) in sorted(
            tally.items(), key=lambda kv: (names.index(kv[0][0]), names.index(kv[0][1]))):
        n = w + d + lo
        out.append({"a": a, "b": b, "meetings": n, "wins": w, "draws": d, "losses": lo,
                    "mean_rank_diff": round(diff / n, 3)})
    return out


def head_to_head_grid(pairs: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """The pairs as one row per entrant and one cell per opponent (None where they never
    met), each cell from the row's side."""
    cell: dict[tuple[str, str], dict[str, Any]] = {}
    for p in pairs:
        cell[(p["a"], p["b"])] = p
        cell[(p["b"], p["a"])] = {**p, "a": p["b"], "b": p["a"], "wins": p["losses"],
                                  "losses": p["wins"],
                                  "mean_rank_diff": -p["mean_rank_diff"] or 0.0}  # not -0.0
    return [{"name": a, "cells": [None if a == b else cell.get((a, b)) for b in names]}
            for a in names]


def compute(rows: list[Row], names: list[str], meta: dict[str, Any] | None = None) -> dict:
    results = match_results(rows)
    board = leaderboard(names, results)
    counts, events = incidents(rows, names)
    sandboxed = set((meta or {}).get("sandboxed") or ())
    dead = []
    for e in board["entrants"]:
        e.update(counts.get(e["name"], {}))
        e["sandboxed"] = e["name"] in sandboxed
        # every seat it held in a finished match, it did not play: not a rating but a broken bot
        e["crashed_in_every_match"] = bool(e.get("seats")) and e["no_play"] == e["seats"]
        if e["crashed_in_every_match"]:
            e["note"] = CRASHED_EVERYWHERE
            dead.append({"entrant": e["name"], "seats": e["seats"],
                         "error": next((i.get("error") for i in events
                                        if i.get("entrant") == e["name"] and i.get("error")),
                                       "")})
    for e in board["entrants"]:
        e.update(llm_costs(rows).get(e["name"], {}))
    status: dict[str, int] = {}
    for r in rows:
        status[r.status] = status.get(r.status, 0) + 1
    secs = [r.seconds for r in rows if r.status == "done" and r.seconds]
    return {
        **(meta or {}),
        "status": status,
        "matches_total": len(rows),
        "mean_match_seconds": round(sum(secs) / len(secs), 3) if secs else None,
        "leaderboard": board["entrants"],
        "rating_history": [{"match": i, "ordinal": {k: round(v, 3) for k, v in h.items()}}
                           for i, h in board["history"]],
        "incidents": events,
        "head_to_head": head_to_head(results, names),
        # entrants that crashed or never joined (or never moved) in every match they played
        "crashed_in_every_match": dead,
        "matches": [_match_json(r) for r in rows],
    }


def llm_costs(rows: list[Row]) -> dict[str, dict[str, Any]]:
    """Per chat-model entrant (a seat whose moves carry the cost line of referee_client.llm):
    tokens per move, answers that named no legal move per 100 moves, and re-asks, summed over
    its seats in finished matches. Moves are the ones it played itself (with a cost line); the
    decisions it left to the time policy are its timeouts."""
    sums: dict[str, dict[str, int]] = {}
    for r in rows:
        if r.status not in ("done", "failed"):
            continue
        for seat in (r.outcome or {}).get("seats", []):
            counts = seat.get("llm")
            if not counts:
                continue
            total = sums.setdefault(seat["entrant"], {})
            for k, v in counts.items():
                total[k] = total.get(k, 0) + int(v)
    out = {}
    for name, t in sums.items():
        moves = t.get("moves", 0)
        out[name] = {
            "llm_tokens": t.get("tokens", 0), "llm_asks": t.get("asks", 0),
            "llm_reasks": t.get("reasks", 0), "llm_illegal": t.get("illegal", 0),
            "llm_tokens_per_move": round(t.get("tokens", 0) / moves, 1) if moves else None,
            "llm_illegal_per_100": round(100 * t.get("illegal", 0) / moves, 2) if moves else None,
        }
    return out


def _match_json(r: Row) -> dict[str, Any]:
    return {
        "index": r.idx, "round": r.round, "group": r.group, "seating": list(r.seating),
        "seed": str(r.seed), "status": r.status, "attempts": r.attempts, "match_id": r.match_id,
        "referee": r.referee, "seconds": r.seconds, "scores": r.scores, "ranks": r.ranks,
        "record": r.record_path, "error": r.error,
    }


#: what the compact leaderboard's short headers stand for (the second with chat-model entrants)
COMPACT_CAPTION = ("t·c·h·r: time-outs, crashes, hangs, rejected moves",
                   "tok·ill·re: tokens per move, illegal answers per 100 moves, re-asks")


def leaderboard_table(data: dict, title: str = "Leaderboard", compact: bool = False) -> Table:
    """The leaderboard; ``compact`` drops the intervals and μ ± σ (for narrow terminals)."""
    # compact: what an 80-column terminal holds (tests/test_tables_80.py): no side borders,
    # one space between columns, shorter headers, the caption saying what they stand for;
    # the entrant's name folds over lines rather than pushing a figure out
    models = any("llm_tokens" in e for e in data["leaderboard"])
    t = Table(title=title, title_justify="left", caption_justify="left",
              caption=("; ".join(COMPACT_CAPTION[:2 if models else 1]) if compact else
                       "wins: matches with a first place (a shared one included); place [95%]: "
                       "bootstrap of this table's order (μ−3σ), each resample rated again"),
              box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD, show_edge=not compact,
              padding=(0, 0) if compact else (0, 1), pad_edge=not compact)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("entrant", overflow="fold", min_width=10, ratio=1 if compact else None,
                 no_wrap=not compact)
    t.add_column("μ−3σ", justify="right", no_wrap=True)
    if not compact:
        t.add_column("μ ± σ", justify="right", no_wrap=True)
    t.add_column("matches", justify="right", no_wrap=True)
    t.add_column("wins", justify="right", no_wrap=True)
    t.add_column("win %" if compact else "win % [95%]", justify="right", no_wrap=True)
    t.add_column("score" if compact else "avg score [95%]", justify="right", no_wrap=True)
    t.add_column("rank" if compact else "avg rank [95%]", justify="right", no_wrap=True)
    if not compact:
        t.add_column("place [95%]", justify="right", no_wrap=True)
    t.add_column("t·c·h·r" if compact else "t/o·crash·hang·rej", justify="right", no_wrap=True)
    if models:  # chat-model entrants: tokens per move, illegal answers per 100 moves, re-asks
        t.add_column("tok·ill·re" if compact else "tok/move·ill/100·reask", justify="right",
                     no_wrap=True)
    for e in data["leaderboard"]:
        name = e["name"] + (f" ({e['note']})" if e.get("note") else "")
        wr = e["win_rate"]
        lo, hi = e["win_rate_ci95"]
        issues = (f"{e.get('timeouts', 0)}·{e.get('crashes', 0)}·{e.get('hangs', 0)}·"
                  f"{e.get('rejected', 0)}")
        cost = ([f"{_num(e.get('llm_tokens_per_move'), 0)}·{_num(e.get('llm_illegal_per_100'), 1)}"
                 f"·{e['llm_reasks']}" if "llm_tokens" in e else "-"] if models else [])
        if compact:
            t.add_row(str(e["place"]), name, f"{e['ordinal']:.2f}", str(e["matches"]),
                      str(e["wins"]), _pct(wr) or "-",
                      "-" if e["avg_score"] is None else f"{e['avg_score']:.1f}",
                      "-" if e["avg_rank"] is None else f"{e['avg_rank']:.2f}", issues, *cost)
            continue
        t.add_row(
            str(e["place"]), name, f"{e['ordinal']:.2f}",
            f"{e['mu']:.1f} ± {e['sigma']:.1f}", str(e["matches"]), str(e["wins"]),
            "-" if wr is None else f"{100 * wr:.0f}% [{100 * lo:.0f}–{100 * hi:.0f}]",
            _ci(e["avg_score"], e["avg_score_ci95"], 1),
            _ci(e["avg_rank"], e["avg_rank_ci95"], 2),
            f"{e['place_ci95'][0]}–{e['place_ci95'][1]}", issues, *cost,
        )
    return t


#: One line per event format under its standings (the rules in full: docs/organizer/tournaments.md)
EVENT_RULES = {
    "swiss": "Points per table rank ({points}); a bye scores {bye:g}. Ties: Buchholz (the sum "
             "of every table-mate's points), then direct results among the tied, then seed. A "
             "seat whose bot did not play ranks last at its table.",
    "knockout": "Each table plays best of {best_of} on one seed, seats rotated; its entrants "
                "rank by points per rank ({points}), then game score, then seed. The top seeds "
                "get the byes.",
    "arena": "Points per finished match by rank ({points}), doubled after two wins in a row "
             "until a match not won. Matches under way when the time was up finished and "
             "count.",
}


def event_rules(event: dict[str, Any]) -> str:
    return EVENT_RULES[event["type"]].format(
        points="–".join(f"{p:g}" for p in event["points"]), bye=event.get("bye_points") or 0,
        best_of=event.get("best_of"))


def event_table(data: dict) -> Table | None:
    """The event's standings (Swiss, knockout, arena) with their tie-break values."""
    event = data.get("event")
    if not event or not event.get("standings"):
        return None
    kind = event["type"]
    t = Table(title=f"{kind.capitalize()} standings" + ("" if event["complete"]
                                                        else " (under way)"),
              title_justify="left")
    cols = {"swiss": ("points", "buchholz", "direct", "seed", "tables", "byes"),
            "knockout": ("out_in_round", "points_at_last_table", "seed"),
            "arena": ("score", "matches", "wins", "seed")}[kind]
    # the figures whole on one line; the name folds (tests/test_tables_80.py)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("entrant", overflow="fold", min_width=10, ratio=1)
    for c in cols:
        t.add_column(c.replace("_", " "), justify="right", no_wrap=True)
    for s in event["standings"]:
        name = s["name"] + (" (withdrawn)" if s.get("withdrawn") else "") + (
            " (on fire)" if s.get("on_fire") else "")
        vals = [s[c] + 1 if c == "out_in_round" else s[c] for c in cols]
        t.add_row(str(s["place"]), name, *(f"{v:g}" if isinstance(v, float) else str(v)
                                           for v in vals))
    return t


def _pct(x) -> str:
    return "" if x is None else f"{100 * x:.0f}%"


def _ci(m, ci, digits: int) -> str:
    if m is None:
        return "-"
    lo, hi = ci
    return f"{m:.{digits}f} [{lo:.{digits}f}–{hi:.{digits}f}]"


def write(out: Path, data: dict, console: Console | None = None, replays: bool = True,
          ) -> dict[str, Path]:
    """Write every report file into ``out``; print the leaderboard to ``console``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "results": out / "results.json", "csv": out / "matches.csv",
        "leaderboard": out / "leaderboard.txt", "html": out / "index.html",
        "ratings_png": out / "plots" / "ratings.png", "scores_png": out / "plots" / "scores.png",
    }
    _atomic_write(paths["results"], json.dumps(data, indent=2))
    _write_csv(paths["csv"], data)
    title = f"{data.get('name', 'tournament')} — {data.get('game', '')} leaderboard"
    table = leaderboard_table(data, title)
    text_console = Console(record=True, width=160, file=open(os.devnull, "w"))  # noqa: SIM115
    ev_table = event_table(data)
    if ev_table is not None:
        text_console.print(ev_table)
    text_console.print(table)
    _atomic_write(paths["leaderboard"], text_console.export_text())
    _plots(paths["ratings_png"], paths["scores_png"], data)
    _write_html(paths["html"], data, out, replays)
    if console is not None:
        if ev_table is not None:
            console.print(ev_table)
        console.print(table if console.width >= 140 else
                      leaderboard_table(data, title, compact=True))
        st = data["status"]
        console.print(
            f"matches: {st.get('done', 0)} done, {st.get('failed', 0)} failed, "
            f"{st.get('skipped', 0)} skipped (early stop), {st.get('pending', 0)} pending "
            f"of {data['matches_total']}  ·  results in {out}"
        )
    return paths


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_csv(path: Path, data: dict) -> None:
    seats = max((len(m["seating"]) for m in data["matches"]), default=0)
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["index", "round", "group", "status", "match_id", "seed", "seconds",
                    *[f"seat{i}" for i in range(seats)], *[f"score{i}" for i in range(seats)],
                    *[f"rank{i}" for i in range(seats)], "record", "error"])
        for m in data["matches"]:
            sc = m["scores"] or [""] * seats
            rk = m["ranks"] or [""] * seats
            w.writerow([m["index"], m["round"], m["group"], m["status"], m["match_id"] or "",
                        m["seed"], m["seconds"] if m["seconds"] is not None else "",
                        *m["seating"], *sc, *rk, m["record"] or "", m["error"] or ""])
    os.replace(tmp, path)


def _plots(ratings_png: Path, scores_png: Path, data: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratings_png.parent.mkdir(parents=True, exist_ok=True)
    names = [e["name"] for e in data["leaderboard"]]
    hist = data["rating_history"]
    if not hist:  # nothing rated yet: no empty plot (and none left from an earlier run)
        for png in (ratings_png, scores_png):
            png.unlink(missing_ok=True)
        return
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for n in names:
        ax.plot(range(1, len(hist) + 1), [h["ordinal"][n] for h in hist], label=n)
    ax.set_xlabel("matches rated")
    ax.set_ylabel("OpenSkill μ − 3σ")
    ax.set_title(f"{data.get('name', '')}: rating over matches")
    if names:
        ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(ratings_png)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    series = [e["scores"] or [0] for e in data["leaderboard"]]
    if names:
        ax.boxplot(series, showmeans=True)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=20)
        for i, s in enumerate(series, 1):
            ax.scatter([i + (j % 7 - 3) * 0.02 for j in range(len(s))], s, s=6, alpha=0.4)
    ax.set_ylabel("score")
    ax.set_title(f"{data.get('name', '')}: score distribution per entrant")
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(scores_png)
    plt.close(fig)


STATUS_ORDER = ("done", "failed", "skipped", "running", "pending")
STATUS_WORDS = {"done": "done", "failed": "failed", "skipped": "skipped (early stop)",
                "running": "running", "pending": "pending"}


def status_words(status: dict[str, int]) -> str:
    """{"done": 12, "failed": 1} -> "12 done, 1 failed"."""
    keys = [k for k in STATUS_ORDER if status.get(k)] + sorted(
        k for k in status if k not in STATUS_ORDER and status[k])
    return ", ".join(f"{status[k]} {STATUS_WORDS.get(k, k)}" for k in keys) or "no match played"


def _env():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        autoescape=True, trim_blocks=False,
    )
    env.globals.update(pct=_pct, num=_num, ci=_ci_only,
                       pct_ci=lambda x, c: "" if x is None else f"[{100 * c[0]:.0f}–{100 * c[1]:.0f}%]")
    return env


def _num(x, digits: int) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _ci_only(m, ci, digits: int) -> str:
    if m is None:
        return ""
    return f"[{ci[0]:.{digits}f}–{ci[1]:.{digits}f}]"


def _rel(path: str, out: Path) -> str:
    return os.path.relpath(path, out) if os.path.isabs(path) else path


def write_replays(data: dict, out: Path) -> dict[int, str]:
    """A static replay page per finished match (``replays/<record name>.html``, written by
    ``referee replay html``: re-simulated from the record, working from the file alone), kept
    while its record is unchanged. Returns the page of each match index, relative to ``out``."""
    from .procs import referee_command

    pages: dict[int, str] = {}
    todo: list[str] = []
    for m in data["matches"]:
        rec = m.get("record")
        if m["status"] != "done" or not rec:
            continue
        src = out / _rel(rec, out)
        dst = out / "replays" / (src.stem + ".html")
        pages[m["index"]] = f"replays/{dst.name}"
        if src.is_file() and (not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime):
            todo.append(str(src))
    for i in range(0, len(todo), 200):
        try:
            proc = subprocess.run(
                [*referee_command(), "replay", "html", "--out-dir", str(out / "replays"),
                 "--back-href", "../index.html", *todo[i:i + 200]],
                capture_output=True, text=True, timeout=600, check=False)
            for line in proc.stdout.splitlines():
                if line.startswith("FAIL"):
                    structlog.get_logger("referee_tournament").warning(
                        "replay_page_failed", detail=line[5:])
        except (OSError, subprocess.SubprocessError) as exc:
            structlog.get_logger("referee_tournament").warning(
                "replay_pages_failed", error=repr(exc))
    return {i: p for i, p in pages.items() if (out / p).exists()}


def _sensitivity(out: Path) -> dict[str, Any] | None:
    """``report --sensitivity``'s findings, when the folder has them (``sensitivity.json``)."""
    try:
        data = json.loads((out / "sensitivity.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("places") else None


def _write_html(path: Path, data: dict, out: Path, with_replays: bool = True) -> None:
    # (a sensitivity run's records were played under a varied sheet: no replay page for them)
    replays = write_replays(data, out) if with_replays else {}
    matches = []
    for m in data["matches"]:
        ranks = m["ranks"] or []
        winners = [s for s, r in zip(m["seating"], ranks) if r == 1]
        matches.append({**m, "winners": winners, "replay": replays.get(m["index"]),
                        "record_href": _rel(m["record"], out) if m["record"] else None})
    plots = [{"src": f"plots/{n}.png", "alt": alt} for n, alt in
             (("ratings", "rating over matches"), ("scores", "score distribution"))
             if (out / "plots" / f"{n}.png").exists()]
    game = str(data.get("game", ""))
    title = game.replace("_", " ").title()
    names = [e["name"] for e in data["leaderboard"]]
    fmt = data.get("format")
    fmt_type = fmt.get("type") if isinstance(fmt, dict) else fmt
    page = _env().get_template("report.html").render(
        name=data.get("name", "tournament"), game=game, title=title,
        status_words=status_words(data["status"]), matches_total=data["matches_total"],
        mean_match_seconds=data.get("mean_match_seconds"),
        early_stop=[str(x) for x in data.get("early_stop") or []],
        leaderboard=data["leaderboard"], incidents=data["incidents"], matches=matches,
        plots=plots, format=fmt_type or "round_robin", event=data.get("event"),
        sensitivity=_sensitivity(out),
        event_rules=event_rules(data["event"]) if data.get("event") else "",
        sandboxed=[e["name"] for e in data["leaderboard"] if e.get("sandboxed")],
        h2h_names=names, h2h=head_to_head_grid(data.get("head_to_head") or [], names),
        generated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(
            data.get("generated_unix") or time.time())),
    )
    _atomic_write(path, page)
