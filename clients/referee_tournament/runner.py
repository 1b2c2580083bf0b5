"""The tournament runner: schedule → matches in parallel → SQLite → reports.

``run_tournament(cfg)`` plays every pending match of the schedule, ``concurrency`` at a time,
spread round-robin over ``referees`` local referee processes (or over the running referee at
``address``), with a live progress bar. State lives in ``<output>/tournament.sqlite``: run it
again after an interruption and it resumes - finished matches are kept, matches that were in
flight are played again from the start (as new referee matches on the same seed and seating).
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NoReturn

import grpc
import structlog
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from . import report, staged
from .config import TournamentConfig
from .events import STAGED, table_seed
from .formats import MatchSpec, bot_seed, schedule
from .persistent import PersistentError, PersistentPool
from .play import MatchJob, play_match
from .procs import LocalReferee
from .registry import game_problems, list_games, sheet_warnings
from .sandbox import unavailable_reason
from .sequential import Decision, Sprt, head_to_head
from .store import ScheduleMismatch, Store

METHODS = {
    "rating": "OpenSkill Plackett-Luce (openskill package), one team per seat ranked by the "
              "referee's ranks, matches in schedule order; ordinal = mu - 3 sigma; an entrant in "
              "several seats of a match gets every seat's update (sum of mu deltas, product of "
              "sigma factors)",
    "wins": "matches won (a seat of the entrant ranked 1; a k-way tie for first counts 1/k per "
            "tied seat, at most 1 a match); win_rate = wins / matches, win_rate_ci95 is "
            "Wilson's interval over matches",
    "avg_score_ci95/avg_rank_ci95": "normal approximation, mean +- 1.96 s/sqrt(n) over "
                                    "seat-games",
    "place_ci95": "bootstrap over duplicate-seed groups (500 resamples, seed 12345), places by "
                  "average rank (ties by rating), 2.5%-97.5% range",
    "early_stop": "Wald SPRT per pair of entrants alone at a table, H0 p=1/2 vs H1 p=1/2+delta "
                  "each way, on whole duplicate-seed groups; stops only when one side is better",
}


class RunError(RuntimeError):
    """The tournament cannot run (unknown game, unreachable referee, changed schedule...)."""


class BadTournament(RunError):
    """The file does not fit the referee's games (game name, seats, an option)."""


# ---------------------------------------------------------------------- early stopping

class EarlyStopper:
    """Applies the SPRT (see :mod:`.sequential`) to every pair of entrants that meet alone at
    a table (the two of them filling all the seats: AB, or AAB and ABB), pooling the tables of
    the pair, on whole duplicate-seed groups only."""

    def __init__(self, cfg: TournamentConfig, specs: list[MatchSpec]):
        es = cfg.format.early_stop
        self.sprt = Sprt(es) if es else None
        self.specs = {s.index: s for s in specs}
        self.group_members: dict[str, set[int]] = defaultdict(set)
        self.pair_groups: dict[str, list[str]] = defaultdict(list)
        for s in specs:
            self.group_members[s.group].add(s.index)
            key = self.pair_key(s)
            if key and s.group not in self.pair_groups[key]:
                self.pair_groups[key].append(s.group)
        self.resolved: dict[int, list[int] | None] = {}
        self.stopped: dict[str, dict[str, Any]] = {}

    @staticmethod
    def pair_key(spec: MatchSpec) -> str | None:
        d = spec.distinct
        return "|".join(d) if len(d) == 2 else None

    def is_stopped(self, spec: MatchSpec) -> bool:
        key = self.pair_key(spec)
        return key is not None and key in self.stopped

    def unresolved(self, key: str) -> list[int]:
        return [i for g in self.pair_groups[key] for i in sorted(self.group_members[g])
                if i not in self.resolved]

    def add(self, idx: int, ranks: list[int] | None) -> list[int]:
        """Note a finished match; returns the indices to skip if its pair just stopped."""
        self.resolved[idx] = ranks
        if self.sprt is None:
            return []
        key = self.pair_key(self.specs[idx])
        if key is None or key in self.stopped:
            return []
        decision = self.evaluate(key)
        if decision is None or not decision.stop:
            return []
        a, b = key.split("|")
        self.stopped[key] = {
            "pair": [a, b], "better": a if decision.verdict == "a" else b,
            "wins": decision.wins, "losses": decision.losses, "draws": decision.draws,
            "llr": round(max(decision.llr_a, decision.llr_b), 4),
            "threshold": round(decision.upper, 4),
        }
        return self.unresolved(key)

    def evaluate(self, key: str) -> Decision | None:
        assert self.sprt is not None
        a, b = key.split("|")
        outcomes = []
        for g in self.pair_groups[key]:
            members = sorted(self.group_members[g])
            if any(i not in self.resolved for i in members):
                continue  # only whole groups count
            for i in members:
                ranks = self.resolved[i]
                if ranks:
                    o = head_to_head(self.specs[i].seating, ranks, a, b)
                    if o is not None:
                        outcomes.append(o)
        return self.sprt.decide(outcomes)


# ---------------------------------------------------------------------- backends

class LocalBackend:
    name = "local"

    async def play(self, job: MatchJob) -> dict[str, Any]:
        return await play_match(job)

    async def close(self) -> None:
        pass


class _Tee:
    """A structlog logger writing each line to the log file and, optionally, to stderr."""

    def __init__(self, file, echo: bool):
        self.file, self.echo = file, echo

    def msg(self, message: str) -> None:
        self.file.write(message + "\n")
        if self.echo:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def _open_log(path: Path, echo: bool = False):
    f = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - closed by the runner
    logger = structlog.wrap_logger(
        _Tee(f, echo),
        processors=[structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True),
                    structlog.processors.JSONRenderer(sort_keys=True)],
    )
    return f, logger


@dataclass
class RefereeEndpoint:
    address: str
    admin_token: str
    unix_socket: str | None = None


# ---------------------------------------------------------------------- the runner

class Runner:
    def __init__(
        self,
        cfg: TournamentConfig,
        *,
        out: Path | None = None,
        address: str | None = None,
        admin_token: str | None = None,
        backend: Any = None,
        console: Console | None = None,
        progress: bool = True,
        retry_failed: bool = False,
        max_matches: int | None = None,
        log_json: bool = False,
        referee_args: tuple[str, ...] = (),
    ):
        self.cfg = cfg
        self.referee_args = referee_args  # more `referee serve` flags (--components GAME=FILE)
        self.replay_pages = not referee_args  # replay pages know the default sheets only
        self.out = Path(out) if out else cfg.output_dir()
        self.address = address or cfg.run.address
        self.admin_token = admin_token or os.environ.get("REFEREE_ADMIN_TOKEN")
        self.backend = backend
        self.console = console or Console(stderr=True)
        self.show_progress = progress
        self.retry_failed = retry_failed
        self.max_matches = max_matches
        self.log_json = log_json  # echo the JSON log lines on stderr (no progress bar then)
        if log_json:
            self.show_progress = False
        self.referees: list[LocalReferee] = []
        self.endpoints: list[RefereeEndpoint] = []
        self.played = 0
        self.play_seconds = 0.0  # wall-clock of the match loop this session
        self.pool: PersistentPool | None = None  # persistent entrants' processes

    # ------------------------------------------------------------------ setup
    def _prepare(self, afresh: bool = True) -> tuple[Store, list[MatchSpec]]:
        """Open the results folder's store and its schedule. A folder holding a run of another
        schedule with no finished match is started afresh (``afresh``), else refused."""
        self.out.mkdir(parents=True, exist_ok=True)
        for sub in ("records", "bots", "plots"):
            (self.out / sub).mkdir(exist_ok=True)
        store = Store(self.out / "tournament.sqlite")
        fp = self.cfg.schedule_fingerprint()
        old = store.get_meta("fingerprint")
        if old and old != fp:
            store = self._afresh_or_refuse(store, "a different schedule (game, options, "
                                           "entrants, format or seed changed)", afresh)
        try:
            specs = self._schedule(store)
        except ValueError as exc:
            store.close()
            raise RunError(str(exc)) from None
        try:
            added = store.ensure_schedule(specs)
        except ScheduleMismatch:
            store = self._afresh_or_refuse(store, "a schedule this file does not extend (only "
                                           "raising rounds or matches_per_pairing extends a "
                                           "tournament)", afresh)
            added = store.ensure_schedule(specs)
        if added:
            self.console.print(f"[cyan]extending[/]: {added} more match(es) scheduled")
        store.set_meta("fingerprint", fp)
        store.set_meta("config", json.dumps(self.cfg.to_json()))
        if self.cfg.source:
            store.set_meta("toml", self.cfg.source)
        if self.cfg.raw_json:
            store.set_meta("input_json", self.cfg.raw_json)
        store.set_meta("base_dir", self.cfg.base_dir)
        (self.out / "tournament.json").write_text(json.dumps(self.cfg.to_json(), indent=2))
        return store, specs

    def _seeds(self, store: Store) -> list[str]:
        """A knockout's seed order, fixed in the store when the event starts (ratings read
        later may have changed: a resumed knockout keeps its bracket)."""
        seeds = staged.seed_order(self.cfg, store.get_meta("event_seeds"))
        store.set_meta("event_seeds", json.dumps(seeds))
        return seeds

    def _schedule(self, store: Store) -> list[MatchSpec]:
        """The matches known so far: the whole schedule of a fixed format; a Swiss's or
        knockout's rounds as far as the stored results decide them; an arena's tables formed
        so far (stored as they are formed)."""
        kind = self.cfg.format.type
        if kind in STAGED:
            seeds = self._seeds(store) if kind == "knockout" else None
            return staged.event_schedule(self.cfg, store.rows(), seeds)[0]
        if kind == "arena":
            return [MatchSpec(r.idx, r.round, r.table, r.group, r.seating, r.seed)
                    for r in store.rows()]
        return schedule(self.cfg)

    def _arena_left(self, store: Store) -> float:
        """Seconds of an arena's duration not yet used (0 for other formats)."""
        if self.cfg.format.type != "arena" or not self.cfg.format.duration_s:
            return 0.0
        return self.cfg.format.duration_s - float(store.get_meta("arena_elapsed_s") or 0.0)

    def _afresh_or_refuse(self, store: Store, why: str, afresh: bool) -> Store:
        """The folder holds a run of another schedule. Without a finished match (it failed at
        once, or every match failed) it is set aside and a new run starts here; a folder with
        finished matches is never overwritten."""
        done = store.counts().get("done", 0)
        db = store.path
        if not done and afresh:
            store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # all of it in the main file
        store.close()
        if not afresh:
            raise RunError(f"{self.out} holds a tournament with {why}")
        if done:
            raise RunError(
                f"{self.out} holds {done} finished match(es) of a tournament with {why}: pass "
                "--out DIR to run this file elsewhere, or delete the folder to start afresh")
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = db.with_name(f"{db.name}.{stamp}.bak")
        n = 1
        while aside.exists():
            n += 1
            aside = db.with_name(f"{db.name}.{stamp}-{n}.bak")
        os.replace(db, aside)
        for suffix in ("-wal", "-shm"):  # normally gone once the last connection closed
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        self.console.print(f"[yellow]starting afresh[/]: {self.out} held a run of another "
                           f"schedule with no finished match; its database is kept as {aside.name}")
        return Store(db)

    async def _start_referees(self, session: int) -> None:
        if self.address:
            if not self.admin_token:
                raise RunError("a running referee (--address) needs its admin token: pass "
                               "--admin-token-file or set REFEREE_ADMIN_TOKEN")
            self.endpoints = [RefereeEndpoint(a.strip(), self.admin_token,
                                              self.cfg.run.unix_socket)
                              for a in self.address.split(",") if a.strip()]
            return
        if self.cfg.run.backend == "ray" and self.cfg.run.task_referee:
            self.endpoints = []
            return
        if self.cfg.run.backend == "ray" and self.cfg.run.ray_address:
            self.console.print(
                "[yellow]note[/]: the referee started here listens on 127.0.0.1; Ray tasks on "
                "other nodes cannot reach it (pass --address of a referee they can reach, or "
                "set [run] task_referee = true)")
        n = self.cfg.run.referees
        self.referees = [LocalReferee(self.out / "referee" / f"session{session}-{i}",
                                      extra_args=self.referee_args)
                         for i in range(n)]
        try:
            for r in self.referees:
                r.launch()  # from the loop's thread: the parent-death signal follows it
            await asyncio.gather(*(asyncio.to_thread(r.wait_ready) for r in self.referees))
        except RuntimeError as exc:
            self._stop_referees()
            raise RunError(f"could not start a referee: {exc}") from None
        self.endpoints = [RefereeEndpoint(r.address, r.admin_token, r.unix_socket)
                          for r in self.referees]

    def _stop_referees(self) -> None:
        for r in self.referees:
            r.stop()
        self.referees = []

    async def _check_game(self) -> None:
        if not self.endpoints:
            return
        ep = self.endpoints[0]
        try:
            games = await list_games(ep.address)
        except grpc.aio.AioRpcError as err:
            raise RunError(f"cannot reach the referee at {ep.address}: "
                           f"{err.code().name}: {err.details()}") from None
        problems = game_problems(self.cfg, games)
        if problems:
            raise BadTournament("; ".join(problems))
        for warning in sheet_warnings(self.cfg, games):
            self.console.print(f"[yellow]warning[/]: {escape(warning)}")
            structlog.get_logger("referee_tournament").warning("provisional_sheet",
                                                               detail=warning)

    def job_for(self, spec: MatchSpec, endpoint: RefereeEndpoint | None) -> MatchJob:
        cfg = self.cfg
        entrants = [cfg.entrant(n) for n in spec.seating]

        def cwd(e) -> str:
            if e.cwd is None:
                return cfg.base_dir
            p = Path(e.cwd)
            return str(p if p.is_absolute() else Path(cfg.base_dir) / p)

        t = cfg.time
        remote_logs = cfg.run.backend == "ray" and bool(cfg.run.ray_address)
        return MatchJob(
            idx=spec.index, game=cfg.game, seats=cfg.seats, options=dict(cfg.options),
            seed=spec.seed, seating=list(spec.seating),
            commands=[list(e.command) for e in entrants], cwds=[cwd(e) for e in entrants],
            envs=[dict(e.env) for e in entrants],
            time_policy={"move_ms": t.move_ms, "bank_ms": t.bank_ms, "grace_ms": t.grace_ms,
                         "strikes": t.strikes, "on_expiry": t.on_expiry,
                         "join_ms": t.join_ms, "first_move_ms": t.first_move_ms,
                         "increment_ms": t.increment_ms},
            address=endpoint.address if endpoint else None,
            admin_token=endpoint.admin_token if endpoint else "",
            bot_seeds=[bot_seed(spec.seed, s) for s in range(cfg.seats)],
            match_wall_s=t.match_wall_s, bot_grace_s=t.bot_grace_s,
            join_timeout_s=t.join_timeout_s,
            log_dir=None if remote_logs else str(self.out / "bots"),
            sandboxes=[asdict(e.sandbox) if e.sandbox else None for e in entrants],
            unix_socket=endpoint.unix_socket if endpoint else None, event=cfg.name,
            **self._persistent_fields(entrants),
        )

    def _persistent_fields(self, entrants) -> dict[str, Any]:
        if self.pool is None:
            return {}
        return {"seat_bots": [e.name if e.persistent else "" for e in entrants],
                "persistent_logs": {e.name: self.pool.log_of(e.name) or ""
                                    for e in entrants if e.persistent},
                "poll_s": 0.1}

    def _backend(self):
        if self.backend is not None:
            return self.backend
        if self.cfg.run.backend == "ray":
            from .ray_backend import RayBackend, RayUnavailable

            try:
                return RayBackend(self.cfg.run.ray_address, self.cfg.run.concurrency)
            except RayUnavailable as exc:
                raise RunError(str(exc)) from None
        return LocalBackend()

    # ------------------------------------------------------------------ main loop
    async def run(self) -> dict[str, Any]:
        sandboxed = [e.name for e in self.cfg.entrants if e.sandbox]
        if sandboxed:
            reason = unavailable_reason()
            if reason:
                raise RunError(f"entrant(s) {', '.join(sandboxed)} must run sandboxed, and "
                               f"cannot here: {reason}")
        store, specs = self._prepare()
        logf, log = _open_log(self.out / "runner.log", echo=self.log_json)
        stopper = EarlyStopper(self.cfg, specs)
        backend = None
        try:
            requeued = store.requeue_running()
            retried = (store.retry_failed(self.cfg.format.type in STAGED)
                       if self.retry_failed else 0)
            session = store.bump_session()
            for r in store.rows():
                if r.status in ("done", "failed"):
                    stopper.add(r.idx, r.ranks)
            for key in list(stopper.stopped):
                store.skip(stopper.unresolved(key))
            pending = [specs[r.idx] for r in store.rows("pending")]
            if self.max_matches is not None:
                pending = pending[: self.max_matches]
            counts = store.counts()
            log.info("session_start", session=session, tournament=self.cfg.name,
                     game=self.cfg.game, scheduled=len(specs), pending=len(pending),
                     requeued=requeued, retried=retried, status=counts,
                     backend=self.cfg.run.backend, concurrency=self.cfg.run.concurrency)
            if requeued:
                self.console.print(f"[yellow]resuming[/]: {requeued} match(es) that were in "
                                   "flight will be replayed")
            if pending or self._arena_left(store) > 0:
                await self._start_referees(session)
                await self._check_game()
                backend = self._backend()
                if any(e.persistent for e in self.cfg.entrants):
                    self.pool = PersistentPool(self.cfg, self.out / "bots", log)
                    try:
                        await self.pool.start(self.endpoints)
                    except PersistentError as exc:
                        raise RunError(str(exc)) from None
                t0 = time.perf_counter()
                try:
                    await self._play_all(store, specs, pending, stopper, backend, log)
                finally:
                    self.play_seconds = time.perf_counter() - t0
            data = self._report(store, stopper)
            log.info("session_end", session=session, status=data["status"])
            return data
        except (asyncio.CancelledError, KeyboardInterrupt, RunError) as exc:
            n = store.requeue_running()
            log.warning("interrupted" if not isinstance(exc, RunError) else "stopped",
                        requeued=n, error=str(exc) if isinstance(exc, RunError) else None)
            try:
                self._report(store, stopper, quiet=True)
            except Exception as rexc:  # noqa: BLE001 - reports are best effort here
                log.warning("report_failed", error=repr(rexc))
            raise
        finally:
            if backend is not None:
                await backend.close()
            if self.pool is not None:
                await self.pool.stop()
            self._stop_referees()
            store.close()
            logf.close()

    def _report(self, store: Store, stopper: EarlyStopper, quiet: bool = False) -> dict:
        rows = store.rows()
        meta = {**report_meta(self.cfg), "early_stop": list(stopper.stopped.values())}
        if self.pool is not None:  # exits of persistent entrants' processes (restarted)
            meta["persistent_exits"] = self.pool.crashes()
        if self.cfg.format.type in (*STAGED, "arena"):
            seeds = (staged.seed_order(self.cfg, store.get_meta("event_seeds"))
                     if self.cfg.format.type == "knockout" else None)
            meta["event"] = staged.summary(self.cfg, rows, seeds)
        data = report.compute(rows, self.cfg.names, meta)
        report.write(self.out, data, None if quiet else self.console, self.replay_pages)
        return data

    async def _play_all(self, store, specs, pending, stopper, backend, log) -> None:
        if self.cfg.format.type == "arena":
            await _ArenaLoop(self, store, pending, stopper, backend, log).run()
            return
        await _MatchLoop(self, store, pending, stopper, backend, log).run()
        if self.cfg.format.type not in STAGED:
            return
        # a Swiss or knockout: the next round once this one is resolved, until the event ends
        while self.max_matches is None or self.played < self.max_matches:
            specs = self._schedule(store)
            if not store.ensure_schedule(specs):
                return
            pending = [specs[r.idx] for r in store.rows("pending")]
            if self.max_matches is not None:
                pending = pending[: self.max_matches - self.played]
            log.info("round_start", round=max(s.round for s in pending), matches=len(pending))
            await _MatchLoop(self, store, pending, stopper, backend, log).run()

    def _store_result(self, store: Store, spec: MatchSpec, result: dict[str, Any]) -> None:
        text = result.pop("record_json", None)
        if text and result.get("match_id"):
            rel = f"records/{spec.index:05d}-{result['match_id']}.json"
            path = self.out / rel
            tmp = path.with_suffix(".tmp")
            try:
                tmp.write_text(json.dumps(json.loads(text), indent=1), encoding="utf-8")
            except ValueError:
                tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
            result["record_path"] = rel
        store.finish(spec.index, result)


class _MatchLoop:
    """One session's matches: ``concurrency`` workers take the pending matches in turn, each on
    the next referee (round robin), play it on the backend, store its result, report its
    incidents and apply the early stop; a progress bar shows it all."""

    def __init__(self, runner: Runner, store: Store, pending: list[MatchSpec],
                 stopper: EarlyStopper, backend: Any, log: Any):
        self.runner = runner
        self.store = store
        self.stopper = stopper
        self.backend = backend
        self.log = log
        self.queue: asyncio.Queue[MatchSpec] = asyncio.Queue()
        for s in pending:
            self.queue.put_nowait(s)
        counts = store.counts()
        already = counts.get("done", 0) + counts.get("failed", 0)
        self.total = already + len(pending)
        self.dispatched = 0
        self.stats = {"running": 0, "failed": counts.get("failed", 0), "incidents": 0,
                      "skipped": 0}
        cfg = runner.cfg
        self.progress = Progress(
            SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
            MofNCompleteColumn(), TextColumn("{task.fields[info]}"), TimeElapsedColumn(),
            TimeRemainingColumn(), console=runner.console, disable=not runner.show_progress,
            transient=False,
        )
        self.task = self.progress.add_task(f"{cfg.name} ({cfg.game})", total=self.total,
                                           completed=already, info="")

    async def run(self) -> None:
        with self.progress:
            workers = [asyncio.create_task(self._worker())
                       for _ in range(self.runner.cfg.run.concurrency)]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise

    def _info(self) -> str:
        stats = self.stats
        return (f"running {stats['running']} · failed {stats['failed']} · incidents "
                f"{stats['incidents']}" + (f" · skipped {stats['skipped']}"
                                           if stats["skipped"] else ""))

    async def _worker(self) -> None:
        while True:
            try:
                spec = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if self.stopper.is_stopped(spec):
                continue
            result = await self._play(spec, self._next_endpoint())
            if result.get("referee_down"):
                self._referee_down(spec, result)
            self._finished(spec, result)

    def _next_endpoint(self) -> RefereeEndpoint | None:
        """The referees in turn (none: the backend plays on a referee of its own)."""
        endpoints = self.runner.endpoints
        endpoint = endpoints[self.dispatched % len(endpoints)] if endpoints else None
        self.dispatched += 1
        return endpoint

    async def _play(self, spec: MatchSpec, endpoint: RefereeEndpoint | None) -> dict[str, Any]:
        """Play one match; a backend's failure fails that match only."""
        referee = endpoint.address if endpoint else "task-local"
        request_id = self.store.mark_running(spec.index, referee)
        self.stats["running"] += 1
        self.progress.update(self.task, info=self._info())
        job = self.runner.job_for(spec, endpoint)
        job.request_id = request_id
        self.log.info("match_start", idx=spec.index, seating=list(spec.seating),
                      referee=referee, group=spec.group)
        try:
            return await self.backend.play(job)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a backend failure fails one match
            return {"idx": spec.index, "error": f"{type(exc).__name__}: {exc}", "ranks": None}
        finally:
            self.stats["running"] -= 1

    def _referee_down(self, spec: MatchSpec, result: dict[str, Any]) -> NoReturn:
        """The referee went away mid-match: the match goes back to pending and the run stops
        (finished matches are kept; running again resumes)."""
        self.store.requeue([spec.index])
        runner = self.runner
        dead = [f"{r.address} (exit {r.proc.returncode})" for r in runner.referees
                if r.proc is not None and r.proc.poll() is not None]
        self.log.error("referee_down", idx=spec.index, error=result.get("error"), dead=dead)
        raise RunError(
            f"match {spec.index}: {result.get('error')}"
            + (f"; referee process exited: {', '.join(dead)} (see its referee.log "
               f"under {runner.out / 'referee'})" if dead else "")
            + ". Finished matches are kept: run again to resume.")

    def _finished(self, spec: MatchSpec, result: dict[str, Any]) -> None:
        """Store a played match's result, log and show it, apply the early stop."""
        self.runner._store_result(self.store, spec, result)
        self.runner.played += 1
        status = "done" if result.get("ranks") else "failed"
        if status == "failed":
            self.stats["failed"] += 1
        seats = (result.get("outcome") or {}).get("seats", [])
        bad = [s for s in seats if s["crashed"] or s["hung"] or s["timeouts"] or s["rejected"]]
        self.stats["incidents"] += len(bad)
        self.log.info("match_end", idx=spec.index, match_id=result.get("match_id"),
                      status=status, seconds=result.get("seconds"),
                      scores=result.get("scores"), ranks=result.get("ranks"),
                      error=result.get("error"),
                      incidents=[{k: s[k] for k in ("seat", "entrant", "crashed", "hung",
                                                    "timeouts", "rejected", "exit_code")}
                                 for s in bad])
        for s in bad:
            self._show_incident(spec, s)
        if status == "failed":
            self.progress.console.print(f"[red]match {spec.index} failed[/]: "
                                        f"{result.get('error')}")
        self._early_stop(spec, result)
        self.progress.update(self.task, advance=1, total=self.total, info=self._info())

    def _show_incident(self, spec: MatchSpec, s: dict[str, Any]) -> None:
        what = ", ".join(k for k in ("crashed", "hung") if s[k])
        if s["timeouts"]:
            what += f"{', ' if what else ''}{s['timeouts']} timeout(s)"
        if s["rejected"]:
            what += f"{', ' if what else ''}{s['rejected']} rejected"
            if s.get("refusal"):
                what += f" ({s['refusal']})"
        self.progress.console.print(
            f"[yellow]match {spec.index}[/] seat {s['seat']} "
            f"[bold]{s['entrant']}[/]: {what}"
            + (f" (exit {s['exit_code']})" if s["exit_code"] not in (0, None) else "")
            + (f": {s['error']}" if s.get("error") else "")
        )

    def _early_stop(self, spec: MatchSpec, result: dict[str, Any]) -> None:
        """Feed the result to the SPRT early stop; a pairing it settles is skipped."""
        stopper = self.stopper
        skip = stopper.add(spec.index, result.get("ranks"))
        if not skip:
            return
        n_skipped = self.store.skip(skip)
        self.stats["skipped"] += n_skipped
        self.total -= n_skipped
        key = stopper.pair_key(spec)
        assert key is not None  # only a pairs match settles a pairing
        st = stopper.stopped[key]
        self.log.info("early_stop", **st)
        self.progress.console.print(
            f"[green]early stop[/]: {st['better']} is stronger in "
            f"{' vs '.join(st['pair'])} ({st['wins']}-{st['losses']}, "
            f"{st['draws']} draws); skipping the rest of that pairing")


class _ArenaLoop(_MatchLoop):
    """An arena (see :mod:`.events`): while its time lasts, a table is formed whenever k
    entrants are free and a worker is; when the time is up no table is formed and the matches
    under way finish and count. Tables are stored as they are formed, so a killed runner
    replays the one in flight (as any runner does) and goes on with the time left as of its
    last finished match (``arena_elapsed_s`` in the store's meta)."""

    async def run(self) -> None:
        runner, store = self.runner, self.store
        cfg = runner.cfg
        arena = staged.arena(cfg)
        left0 = runner._arena_left(store)
        used0 = (cfg.format.duration_s or 0.0) - left0
        t0 = time.monotonic()
        queued = [self.queue.get_nowait() for _ in range(self.queue.qsize())]
        busy: set[str] = set()
        tasks: dict[asyncio.Task, MatchSpec] = {}

        def left() -> float:
            return left0 - (time.monotonic() - t0)

        async def one(spec: MatchSpec) -> None:
            result = await self._play(spec, self._next_endpoint())
            if result.get("referee_down"):
                self._referee_down(spec, result)
            self._finished(spec, result)
            store.set_meta("arena_elapsed_s", str(round(used0 + time.monotonic() - t0, 3)))

        def next_spec() -> MatchSpec | None:
            for spec in queued:  # in flight when the last runner stopped: under way, so played
                if not busy & set(spec.seating):
                    queued.remove(spec)
                    return spec
            if left() <= 0 or queued or (runner.max_matches is not None
                                          and runner.played + len(tasks) >= runner.max_matches):
                return None
            free = [n for n in cfg.names if n not in busy]
            seating = arena.form_table(free, staged.finished_order(store.rows()))
            if seating is None:
                return None
            idx = store.next_index()
            order = {n: i for i, n in enumerate(cfg.names)}
            spec = MatchSpec(idx, idx, tuple(sorted(seating, key=order.__getitem__)),
                             f"a{idx}", seating, table_seed(cfg.seed, idx, 0, False))
            store.add(spec)
            self.total += 1
            return spec

        with self.progress:
            try:
                while True:
                    while len(tasks) < cfg.run.concurrency:
                        spec = next_spec()
                        if spec is None:
                            break
                        busy.update(spec.seating)
                        tasks[asyncio.create_task(one(spec))] = spec
                    if not tasks:
                        break
                    timeout = left() if left() > 0 else None
                    done, _ = await asyncio.wait(tasks, timeout=timeout,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    for t in done:
                        busy.difference_update(tasks.pop(t).seating)
                        t.result()
                if runner.max_matches is None or runner.played < runner.max_matches:
                    # over: the time is up, or too few entrants are left to form a table
                    store.set_meta("arena_elapsed_s",
                                   str(max(cfg.format.duration_s or 0.0,
                                           used0 + time.monotonic() - t0)))
            except BaseException:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise


async def run_tournament(cfg: TournamentConfig, **kwargs) -> dict[str, Any]:
    """Run (or resume) a tournament; returns the report data (also written to the output)."""
    return await Runner(cfg, **kwargs).run()


def report_meta(cfg: TournamentConfig) -> dict[str, Any]:
    """What every report of ``cfg``'s runs says about the run itself (any format)."""
    as_json = cfg.to_json()
    return {"name": cfg.name, "game": cfg.game, "seats": cfg.seats,
            "options": dict(cfg.options), "format": as_json["format"],
            "time_policy": as_json["time"], "entrants": cfg.names,
            "sandboxed": [e.name for e in cfg.entrants if e.sandbox],
            "methods": METHODS, "generated_unix": round(time.time(), 3)}


def report_only(cfg: TournamentConfig, out: Path | None = None,
                console: Console | None = None) -> dict[str, Any]:
    """Rebuild every report file from ``tournament.sqlite`` without playing (a ladder's
    folder: :func:`.ladder.report_only`)."""
    r = Runner(cfg, out=out, console=console, progress=False)
    if not (r.out / "tournament.sqlite").exists():
        raise RunError(f"no results in {r.out} (run the tournament first)")
    store, specs = r._prepare(afresh=False)
    stopper = EarlyStopper(cfg, specs)
    try:
        for row in store.rows():
            if row.status in ("done", "failed"):
                stopper.add(row.idx, row.ranks)
        return r._report(store, stopper)
    finally:
        store.close()
