"""A ladder: bots are matched continuously, rating-aware, and their ratings persist.

``referee-tournament ladder FILE`` (or ``run FILE`` with ``[format] type = "ladder"``) keeps
``[run] concurrency`` matches going among the file's entrants (persistent session bots or
per-match commands, as in any tournament) until ``--max-matches`` or ``--duration`` or Ctrl-C:

* **Pairing**: the entrant with the fewest matches (finished and in progress; ties by a seeded
  draw) anchors the next table; the other seats go to the entrants closest to it in OpenSkill
  ``mu``, drawn from the ``seats`` nearest so equal tables do not repeat forever (with fewer
  entrants than seats, entrants fill several seats). Seats are shuffled.
* **Ratings**: OpenSkill Plackett-Luce, updated after every match in finishing order (an
  entrant in several seats gets every seat's update, as in tournaments); kept in the results
  folder's ``tournament.sqlite`` (table ``ladder_ratings``) with every match
  (``ladder_matches``), committed together, so a restarted ladder goes on from where it was.
* **Leaderboard**: ``leaderboard.txt`` and ``ladder.json`` (μ−3σ, μ, σ, matches, wins) are
  rewritten atomically after every match; records go to ``records/``, bot logs to ``bots/``.
* **Report**: when the ladder stops, and on ``referee-tournament report DIR``, the same files
  as a tournament's (``index.html``, ``results.json``, ``matches.csv``, plots, replays;
  :func:`write_report`), from the stored matches and each seat's outcome, with the ladder's own
  ratings. The folder keeps the tournament file (table ``meta``, as a tournament's), so
  ``report DIR`` needs nothing else.

Matches in flight when the ladder stops are marked ``abandoned`` (never rated); the ladder
resumes with fresh matches. An entrant that did not play any of its seats in this run (it crashed,
never joined or never moved: :func:`.report.did_not_play`) is listed under
``crashed_in_every_match`` with its first error, and the command exits 1.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import report
from .config import TournamentConfig
from .formats import MatchSpec
from .report import did_not_play
from .runner import RunError, Runner, report_meta
from .store import Row, add_columns, private_db

SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_ratings (
  name TEXT PRIMARY KEY,
  mu REAL NOT NULL,
  sigma REAL NOT NULL,
  matches INTEGER NOT NULL DEFAULT 0,
  wins REAL NOT NULL DEFAULT 0,
  updated REAL
);
CREATE TABLE IF NOT EXISTS ladder_matches (
  idx INTEGER PRIMARY KEY,
  seating TEXT NOT NULL,            -- JSON list of entrant names, by seat
  seed TEXT NOT NULL,
  status TEXT NOT NULL,             -- running | done | failed | abandoned
  match_id TEXT,
  started REAL,
  finished REAL,
  scores TEXT,
  ranks TEXT,
  record_path TEXT,
  error TEXT,
  outcome TEXT                      -- JSON: each seat's incidents, as a tournament's
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass
class Rating:
    name: str
    mu: float
    sigma: float
    matches: int = 0
    wins: float = 0.0

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


class LadderStore:
    def __init__(self, path: Path):
        self.db = sqlite3.connect(private_db(path), isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)
        # a ladder folder from before the report kept outcomes
        add_columns(self.db, "ladder_matches", {"outcome": "TEXT"})

    def keep_config(self, cfg: TournamentConfig) -> None:
        """The tournament file in the folder, as a tournament's store keeps it, so that
        ``referee-tournament report DIR`` can rebuild the report from the folder alone."""
        meta = {"base_dir": cfg.base_dir, "config": json.dumps(cfg.to_json()),
                "format": "ladder"}
        if cfg.source:
            meta["toml"] = cfg.source
        elif cfg.raw_json:
            meta["input_json"] = cfg.raw_json
        self.db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                            list(meta.items()))

    def rows(self) -> list[Row]:
        """Every ladder match as a tournament's store row (round 0, its own group), in the
        order they finished (the order their ratings were updated)."""
        out = []
        for (idx, seating, seed, status, match_id, started, finished, scores, ranks, path,
             error, outcome) in self.db.execute(
                "SELECT idx, seating, seed, status, match_id, started, finished, scores,"
                " ranks, record_path, error, outcome FROM ladder_matches"
                " ORDER BY finished IS NULL, finished, idx"):
            names = tuple(json.loads(seating))
            out.append(Row(
                idx=idx, round=0, group=f"l{idx}", table=tuple(sorted(names)), seating=names,
                seed=int(seed), status=status, attempts=1, match_id=match_id, referee=None,
                seconds=round(finished - started, 3) if finished and started else None,
                scores=json.loads(scores) if scores else None,
                ranks=json.loads(ranks) if ranks else None,
                outcome=json.loads(outcome) if outcome else None, record_path=path,
                error=error, finished=finished))
        return out

    def close(self) -> None:
        self.db.close()

    def ratings(self, names: list[str], model) -> dict[str, Rating]:
        rows = {r[0]: r for r in self.db.execute(
            "SELECT name, mu, sigma, matches, wins FROM ladder_ratings")}
        out = {}
        for n in names:
            if n in rows:
                _, mu, sigma, matches, wins = rows[n]
                out[n] = Rating(n, mu, sigma, matches, wins)
            else:
                r = model.rating(name=n)
                out[n] = Rating(n, r.mu, r.sigma)
        return out

    def abandon_running(self) -> int:
        return self.db.execute(
            "UPDATE ladder_matches SET status='abandoned' WHERE status='running'").rowcount

    def next_index(self) -> int:
        return (self.db.execute("SELECT MAX(idx) FROM ladder_matches").fetchone()[0] or 0) + 1

    def start(self, idx: int, seating: list[str], seed: int) -> None:
        self.db.execute("INSERT INTO ladder_matches (idx, seating, seed, status, started)"
                        " VALUES (?,?,?,'running',?)",
                        (idx, json.dumps(seating), str(seed), time.time()))

    def finish(self, idx: int, result: dict[str, Any], changed: list[Rating]) -> None:
        """The match's outcome and the ratings it changed, in one transaction."""
        status = "done" if result.get("ranks") else "failed"
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "UPDATE ladder_matches SET status=?, match_id=?, finished=?, scores=?, ranks=?,"
                " record_path=?, error=?, outcome=? WHERE idx=?",
                (status, result.get("match_id"), time.time(),
                 json.dumps(result.get("scores")), json.dumps(result.get("ranks")),
                 result.get("record_path"), result.get("error"),
                 json.dumps(result.get("outcome")) if result.get("outcome") else None, idx))
            self.db.executemany(
                "INSERT INTO ladder_ratings (name, mu, sigma, matches, wins, updated)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET mu=excluded.mu,"
                " sigma=excluded.sigma, matches=excluded.matches, wins=excluded.wins,"
                " updated=excluded.updated",
                [(r.name, r.mu, r.sigma, r.matches, r.wins, time.time()) for r in changed])

    def abandon(self, idx: int) -> None:
        self.db.execute("UPDATE ladder_matches SET status='abandoned' WHERE idx=?", (idx,))

    def counts(self) -> dict[str, int]:
        return dict(self.db.execute(
            "SELECT status, COUNT(*) FROM ladder_matches GROUP BY status"))


def pair(ratings: dict[str, Rating], busy: dict[str, int], seats: int,
         rng: random.Random) -> list[str]:
    """The seating of the next match: the least-played entrant (in-progress matches count)
    and its nearest neighbours in mu, drawn from the ``seats`` nearest; seats shuffled."""
    names = sorted(ratings)

    def load(n: str) -> tuple[int, float]:
        return (ratings[n].matches + busy.get(n, 0), rng.random())

    anchor = min(names, key=load)
    others = sorted((n for n in names if n != anchor),
                    key=lambda n: (abs(ratings[n].mu - ratings[anchor].mu), rng.random()))
    table = [anchor, *rng.sample(others[:seats], min(seats - 1, len(others[:seats])))]
    while len(table) < seats:  # fewer entrants than seats: some fill several seats
        table.append(rng.choice(table))
    rng.shuffle(table)
    return table


def rate(model, ratings: dict[str, Rating], seating: list[str], ranks: list[int]) -> list[Rating]:
    """Apply one match to ``ratings`` (in place); returns the entrants it changed."""
    teams = [[model.rating(mu=ratings[n].mu, sigma=ratings[n].sigma, name=n)] for n in seating]
    rated = model.rate(teams, ranks=list(ranks))
    delta: dict[str, float] = {}
    factor: dict[str, float] = {}
    best = min(ranks)
    firsts = sum(1 for r in ranks if r == best)
    for n, team, rank in zip(seating, rated, ranks, strict=True):
        delta[n] = delta.get(n, 0.0) + team[0].mu - ratings[n].mu
        factor[n] = factor.get(n, 1.0) * team[0].sigma / ratings[n].sigma
        if rank == best:
            ratings[n].wins += 1.0 / firsts
    for n, dmu in delta.items():
        r = ratings[n]
        r.mu += dmu
        r.sigma *= factor[n]
        r.matches += 1
    return [ratings[n] for n in delta]


def match_seed(tournament_seed: int, idx: int) -> int:
    digest = hashlib.sha256(f"referee-ladder:{tournament_seed}:{idx}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def write_leaderboard(out: Path, cfg: TournamentConfig, ratings: dict[str, Rating],
                      counts: dict[str, int]) -> None:
    board = sorted(ratings.values(), key=lambda r: (-r.ordinal, r.name))
    data: dict[str, Any] = {"name": cfg.name, "game": cfg.game, "seats": cfg.seats,
                            "format": "ladder",
            "generated_unix": round(time.time(), 3), "matches": counts,
            "rating": "OpenSkill Plackett-Luce; ordinal = mu - 3 sigma",
            "leaderboard": [{"place": i + 1, "name": r.name, "ordinal": round(r.ordinal, 4),
                             "mu": round(r.mu, 4), "sigma": round(r.sigma, 4),
                             "matches": r.matches, "wins": round(r.wins, 3),
                             "win_rate": round(r.wins / r.matches, 4) if r.matches else None}
                            for i, r in enumerate(board)]}
    lines = [(f"{cfg.name} ({cfg.game}, {cfg.seats} seats) ladder: "
             f"{counts.get('done', 0)} matches rated"),
             (f"{'#':>3}  {'entrant':<24} {'mu-3s':>8} {'mu':>8} {'sigma':>7} {'matches':>8} "
             f"{'wins':>7}")]
    for e in data["leaderboard"]:
        lines.append(f"{e['place']:>3}  {e['name']:<24} {e['ordinal']:>8.2f} {e['mu']:>8.2f} "
                     f"{e['sigma']:>7.2f} {e['matches']:>8} {e['wins']:>7.2f}")
    _atomic(out / "ladder.json", json.dumps(data, indent=2) + "\n")
    _atomic(out / "leaderboard.txt", "\n".join(lines) + "\n")


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


async def run_ladder(cfg: TournamentConfig, *, out: Path | None = None,
                     address: str | None = None, admin_token: str | None = None,
                     max_matches: int | None = None, duration_s: float | None = None,
                     console=None, log_json: bool = False) -> dict[str, Any]:
    """Run the ladder until ``max_matches`` more matches are over, ``duration_s`` has passed
    (matches in flight then finish), or it is cancelled. Returns the leaderboard data."""
    from openskill.models import PlackettLuce

    from .runner import _open_log

    runner = Runner(cfg, out=out, address=address, admin_token=admin_token, console=console,
                    progress=False, log_json=log_json)
    outdir = runner.out
    for sub in ("records", "bots"):
        (outdir / sub).mkdir(parents=True, exist_ok=True)
    store = LadderStore(outdir / "tournament.sqlite")
    store.keep_config(cfg)
    logf, log = _open_log(outdir / "runner.log", echo=log_json)
    model = PlackettLuce()
    ratings = store.ratings(cfg.names, model)
    abandoned = store.abandon_running()
    rng = random.Random(f"{cfg.seed}:{store.next_index()}")
    busy: dict[str, int] = {}
    # this run's seats per entrant, those it did not play, and its first error line
    seats_run: dict[str, int] = {}
    no_play: dict[str, int] = {}
    first_error: dict[str, str] = {}
    idx = store.next_index()
    started = played = 0
    deadline = time.monotonic() + duration_s if duration_s else None
    write_leaderboard(outdir, cfg, ratings, store.counts())
    log.info("ladder_start", name=cfg.name, entrants=cfg.names, abandoned=abandoned,
             next_index=idx)
    running: set[asyncio.Task] = set()
    from .play import play_match

    try:
        await runner._start_referees(store.next_index())
        await runner._check_game()
        if any(e.persistent for e in cfg.entrants):
            from .persistent import PersistentError, PersistentPool

            runner.pool = PersistentPool(cfg, outdir / "bots", log)
            try:
                await runner.pool.start(runner.endpoints)
            except PersistentError as exc:
                raise RunError(str(exc)) from None

        async def one(i: int, seating: list[str]) -> None:
            nonlocal played
            seed = match_seed(cfg.seed, i)
            spec = MatchSpec(index=i, round=0, table=tuple(sorted(seating)), group=f"l{i}",
                             seating=tuple(seating), seed=seed)
            endpoint = runner.endpoints[i % len(runner.endpoints)]
            store.start(i, seating, seed)
            log.info("match_start", idx=i, seating=seating, referee=endpoint.address)
            try:
                result = await play_match(runner.job_for(spec, endpoint))
            except asyncio.CancelledError:
                store.abandon(i)
                raise
            finally:
                for n in seating:
                    busy[n] -= 1
            _save_record(outdir, spec, result)
            changed = rate(model, ratings, seating, result["ranks"]) if result.get(
                "ranks") else []
            store.finish(i, result, changed)
            played += 1
            for seat in (result.get("outcome") or {}).get("seats", []):
                n = seat.get("entrant")
                seats_run[n] = seats_run.get(n, 0) + 1
                if did_not_play(seat):
                    no_play[n] = no_play.get(n, 0) + 1
                    if seat.get("error"):
                        first_error.setdefault(n, seat["error"])
            write_leaderboard(outdir, cfg, ratings, store.counts())
            log.info("match_end", idx=i, match_id=result.get("match_id"),
                     ranks=result.get("ranks"), error=result.get("error"),
                     ratings={r.name: round(r.ordinal, 3) for r in changed})
            if result.get("referee_down"):
                raise RunError(f"ladder match {i}: {result.get('error')}")

        while True:
            out_of_time = deadline is not None and time.monotonic() >= deadline
            enough = max_matches is not None and started >= max_matches
            while not (out_of_time or enough) and len(running) < cfg.run.concurrency:
                seating = pair(ratings, busy, cfg.seats, rng)
                for n in seating:
                    busy[n] = busy.get(n, 0) + 1
                running.add(asyncio.create_task(one(idx, seating)))
                idx += 1
                started += 1
                enough = max_matches is not None and started >= max_matches
            if not running:
                break
            timeout = None if deadline is None else max(0.05, deadline - time.monotonic())
            done, running_left = await asyncio.wait(running, timeout=timeout,
                                                    return_when=asyncio.FIRST_COMPLETED)
            running = set(running_left)
            for t in done:
                t.result()  # a RunError stops the ladder
        dead = [{"entrant": n, "seats": k, "error": first_error.get(n, "")}
                for n, k in sorted(seats_run.items()) if no_play.get(n, 0) == k]
        log.info("ladder_end", played=played, counts=store.counts(),
                 crashed_in_every_match=[d["entrant"] for d in dead])
        return {**json.loads((outdir / "ladder.json").read_text()),
                "crashed_in_every_match": dead}
    finally:
        for t in running:
            t.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        if runner.pool is not None:
            await runner.pool.stop()
        runner._stop_referees()
        write_leaderboard(outdir, cfg, ratings, store.counts())
        try:
            write_report(cfg, outdir, store, ratings)
        except Exception as exc:  # noqa: BLE001 - the ratings are kept; `report DIR` retries
            log.warning("report_failed", error=repr(exc))
        store.close()
        logf.close()


def write_report(cfg: TournamentConfig, out: Path, store: LadderStore,
                 ratings: dict[str, Rating] | None = None, console=None) -> dict[str, Any]:
    """The tournament report of a ladder folder (index.html, results.json, matches.csv,
    plots, replays): every stored match and seat outcome through :func:`report.compute`, then
    the ladder's own ratings (the ones it paired by) in place of the recomputed ones."""
    from openskill.models import PlackettLuce

    ratings = ratings or store.ratings(cfg.names, PlackettLuce())
    data = write_rated_report(out, store.rows(), cfg.names, report_meta(cfg), ratings, console)
    # leaderboard.txt stays the ladder's (its "N matches rated" line, as after every match)
    write_leaderboard(out, cfg, ratings, store.counts())
    return data


def write_rated_report(out: Path, rows: list[Row], names: list[str], meta: dict[str, Any],
                       ratings: dict[str, Rating], console=None) -> dict[str, Any]:
    """The tournament report of continuously rated matches (a ladder's, a league's): every
    match and seat outcome through :func:`report.compute`, then the run's own ratings (the
    ones it paired by, updated in finishing order) in place of the recomputed ones."""
    data = report.compute(rows, names, meta)
    for e in data["leaderboard"]:
        r = ratings.get(e["name"])
        if r is not None:
            e.update(mu=round(r.mu, 4), sigma=round(r.sigma, 4), ordinal=round(r.ordinal, 4))
    data["leaderboard"].sort(key=lambda e: (-e["ordinal"], e["name"]))
    for place, e in enumerate(data["leaderboard"], 1):
        e["place"] = place
        # the interval was bootstrapped in the recomputed ratings' order; the run's own
        # ratings may order two close entrants the other way: it holds the place shown
        lo, hi = e["place_ci95"]
        e["place_ci95"] = [min(lo, place), max(hi, place)]
    report.write(out, data, console)
    return data


def is_ladder_folder(out: Path) -> bool:
    """Whether ``out``'s tournament.sqlite is a ladder's (it has ladder matches)."""
    if not (out / "tournament.sqlite").is_file():
        return False
    db = sqlite3.connect(f"file:{out / 'tournament.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT 1 FROM sqlite_master WHERE type='table'"
                          " AND name='ladder_matches'").fetchone() is not None
    except sqlite3.Error:
        return False
    finally:
        db.close()


def report_only(cfg: TournamentConfig, out: Path, console=None) -> dict[str, Any]:
    """``referee-tournament report`` on a ladder folder: rebuild its report without playing."""
    if not (out / "tournament.sqlite").exists():
        raise RunError(f"no results in {out} (run the ladder first)")
    store = LadderStore(out / "tournament.sqlite")
    try:
        return write_report(cfg, out, store, console=console)
    finally:
        store.close()


def _save_record(out: Path, spec: MatchSpec, result: dict[str, Any]) -> None:
    text = result.pop("record_json", None)
    if text and result.get("match_id"):
        rel = f"records/ladder-{spec.index:06d}-{result['match_id']}.json"
        _atomic(out / rel, text)
        result["record_path"] = rel
