"""``referee-tournament check FILE``: fail fast, before a long run, and say why.

1. The file is parsed and its schedule shown (no referee needed for that).
2. The game, its seats and every option are checked against the games the referee hosts
   (``ListGames``: a private referee started as a run starts one, or ``--address``).
3. Every entrant is smoke-started the way a run starts it (per-match, persistent or sandboxed:
   the runner's own code paths) on a throwaway match of the file's game and options, for seat 0;
   the other seats are given up on at once (the time policy plays them). It passes when its bot
   makes a move of its own, or has joined and is still running after ``--join-timeout``; it
   fails when its process exits first or it never joins (the bot's real error line is shown).

Exit status: 0 all good, 1 an entrant failed (or the referee could not be used), 2 a bad file,
game, seat count or option.
"""
from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import grpc
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from .config import Entrant, TournamentConfig, with_overrides
from .formats import MatchSpec
from .persistent import PersistentError, PersistentPool
from .play import (
    CHANNEL_OPTIONS,
    _Bot,
    _end_bots,
    _tail,
    error_line,
    match_request,
    start_seat_bot,
)
from .registry import game_problems, list_games, sheet_warnings
from .runner import RefereeEndpoint, RunError, Runner

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
SMOKE_AT_ONCE = 4  # entrants smoke-started at the same time
POLL_S = 0.2


class BadFile(Exception):
    """The referee refused the file's game or options (exit status 2)."""


@dataclass
class Smoke:
    entrant: str
    how: str  # "per match", "persistent", "persistent, sandboxed", "sandboxed"
    ok: bool
    detail: str


def _how(e: Entrant) -> str:
    parts = (["persistent" + (f" ×{e.copies}" if e.copies > 1 else "")] if e.persistent
             else ["per match"])
    if e.sandbox:
        parts.append("sandboxed")
    return ", ".join(parts)


def _admin(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def smoke_start(runner: Runner, endpoint: RefereeEndpoint, e: Entrant, index: int,
                      join_timeout: float, log_dir: Path) -> Smoke:
    """Start ``e`` for seat 0 of a throwaway match as a run would, and see whether it joins."""
    cfg = runner.cfg
    how = _how(e)
    spec = MatchSpec(index=index, round=0, table=(e.name,) * cfg.seats, group="check",
                     seating=(e.name,) * cfg.seats, seed=cfg.seed)
    pool: PersistentPool | None = None
    bots: list[_Bot] = []
    admin = _admin(endpoint.admin_token)
    if e.persistent:  # its processes first, registered and started as the runner does
        pool = PersistentPool(replace(cfg, entrants=(e,)), log_dir)
        try:
            await pool.start([endpoint], supervise=False)
        except PersistentError as exc:
            await pool.stop()
            return Smoke(e.name, how, False, str(exc))
        bots = [p.bot for p in pool.procs if p.bot is not None]
        runner.pool = pool
    try:
        job = runner.job_for(spec, endpoint)
    finally:
        runner.pool = None
    # only seat 0 is the entrant's; the others are given up on and played by the policy at once
    # (on a clock long enough that seat 0's first decision never runs out while we wait)
    job = replace(job, log_dir=str(log_dir),
                  seat_bots=[e.name] + [""] * (cfg.seats - 1) if e.persistent else [],
                  time_policy={"move_ms": int((join_timeout + 30) * 1000), "bank_ms": 0,
                               "grace_ms": 0, "strikes": 0, "on_expiry": "random_legal"})
    channel = grpc.aio.insecure_channel(endpoint.address, options=CHANNEL_OPTIONS)
    match_id = None
    try:
        stub = pb_grpc.RefereeStub(channel)
        try:
            created = await stub.CreateMatch(match_request(job), metadata=admin, timeout=30)
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise BadFile(f"the referee refused the match: {err.details()}") from None
            raise RunError(f"CreateMatch failed: {err.code().name}: {err.details()}") from None
        match_id = created.match_id
        tokens = {s.seat: s.token for s in created.seats}
        for seat in range(1, cfg.seats):
            await stub.AbandonSeat(pb.AbandonSeatRequest(
                match_id=match_id, seat=seat, reason="check: played by the time policy"),
                metadata=admin, timeout=30)
        if not e.persistent:
            bot = _Bot(0, e.name, log_dir / f"check-{index:03d}-{e.name}.log")
            bots = [bot]
            await start_seat_bot(job, bot, match_id, tokens[0])
            if bot.start_error:
                return Smoke(e.name, how, False, bot.start_error)
        return await _watch(stub, admin, match_id, bots, e.name, how, join_timeout)
    finally:
        await _end_bots(bots, 0.0)
        if pool is not None:
            await pool.stop()
        if match_id is not None:  # let the throwaway match finish by the policy
            try:
                await stub.AbandonSeat(pb.AbandonSeatRequest(
                    match_id=match_id, seat=0, reason="check done"), metadata=admin, timeout=10)
            except grpc.aio.AioRpcError:
                pass
        await channel.close(grace=None)


def _moved(record: dict) -> bool:
    return any(int(m.get("seat", -1)) == 0 and not m.get("timeout")
               for m in record.get("moves", ()))


def _exit_detail(b: _Bot) -> str:
    tail = _tail(b.log_path)[0]
    line = error_line(tail)
    what = f"exited (code {b.exit_code}) before its first move"
    return f"{what}: {line}" if line else f"{what}, printing nothing"


async def _watch(stub, admin, match_id: str, bots: list[_Bot], name: str, how: str,
                 join_timeout: float) -> Smoke:
    """Whether seat 0 of ``match_id`` (its bot's process among ``bots``, if any) joins and
    makes a move of its own within ``join_timeout`` (the others are played by the policy)."""
    import json

    deadline = time.monotonic() + join_timeout
    while True:
        gone = [b for b in bots if b.exit_code is not None]
        resp = await stub.GetRecord(pb.GetRecordRequest(match_id=match_id), metadata=admin,
                                    timeout=30)
        record = json.loads(resp.record_json) if resp.record_json else {}
        if _moved(record):
            return Smoke(name, how, True, "joined and moved")
        if resp.complete:
            return Smoke(name, how, False, "the match ended before its first move")
        if gone:
            return Smoke(name, how, False, _exit_detail(gone[0]))
        if time.monotonic() > deadline:
            break
        waiters = [b.waiter for b in bots if b.alive and b.waiter]
        if waiters:
            await asyncio.wait(waiters, timeout=POLL_S, return_when=asyncio.FIRST_COMPLETED)
        else:
            await asyncio.sleep(POLL_S)
    # time is up: has the seat joined (the referee keeps it; giving up "unless joined" asks)?
    probe = await stub.AbandonSeat(pb.AbandonSeatRequest(
        match_id=match_id, seat=0, reason=f"check: no join within {join_timeout:g}s",
        unless_joined=True), metadata=admin, timeout=30)
    if not probe.abandoned:
        return Smoke(name, how, True, f"joined (no move within {join_timeout:g}s)")
    said = ""
    for b in bots:
        said = error_line(_tail(b.log_path)[0])
        if said:
            break
    return Smoke(name, how, False, f"did not join within {join_timeout:g}s"
                 + (f"; its last words: {said}" if said else ""))


def print_schedule(cfg: TournamentConfig, console: Console) -> None:
    from collections import Counter

    from .formats import schedule, seat_counts, tables_for

    if cfg.format.type == "ladder":
        console.print(f"[bold]{cfg.name}[/]: {cfg.game}, {cfg.seats} seats, "
                      f"{len(cfg.entrants)} entrants, ladder (continuous, rating-aware pairing; "
                      f"{cfg.run.concurrency} matches at once)")
        console.print(f"  results: {cfg.output_dir()}")
        return
    if cfg.format.type in ("swiss", "knockout", "arena"):
        print_event(cfg, console)
        return
    specs = schedule(cfg)
    tables = tables_for(cfg.format, cfg.names, cfg.seats)
    console.print(f"[bold]{cfg.name}[/]: {cfg.game}, {cfg.seats} seats, "
                  f"{len(cfg.entrants)} entrants, format {cfg.format.type} "
                  f"(seating {cfg.format.seating})")
    console.print(f"  {len(tables)} table(s), {len(specs)} match(es), "
                  f"{len({s.group for s in specs})} duplicate-seed group(s), "
                  f"{len({s.round for s in specs})} round(s)")
    for n, c in seat_counts(specs, cfg.names).items():
        console.print(f"  {n}: seats {c}")
    per_table = Counter(s.table_key for s in specs)
    for t, count in per_table.items():
        console.print(f"  table {t}: {count} matches")
    console.print(f"  results: {cfg.output_dir()}")


def print_event(cfg: TournamentConfig, console: Console) -> None:
    """What an event will play, as far as it is known before any result: a Swiss's rounds and
    byes and its first round's tables, a knockout's bracket shape, an arena's clock."""
    from .events import Knockout, default_points
    from .staged import event_schedule, seed_order

    fmt = cfg.format
    n, k = len(cfg.entrants), cfg.seats
    points = "–".join(f"{p:g}" for p in (fmt.points or default_points(k)))
    console.print(f"[bold]{cfg.name}[/]: {cfg.game}, {k} seats, {n} entrants, "
                  f"{fmt.type}, points by place {points}")
    if fmt.type == "swiss":
        specs, _ = event_schedule(cfg, [])
        console.print(f"  {fmt.rounds} round(s) of {n // k} table(s) and {n % k} bye(s); "
                      f"withdraw after {fmt.withdraw_after} unplayed match(es)")
        for s in specs:
            console.print(f"  round 1, table {int(s.group.split(':t')[1]) + 1}: "
                          f"{', '.join(s.seating)}")
    elif fmt.type == "knockout":
        seeds = seed_order(cfg)
        ko = Knockout(seeds, k, fmt.advance, fmt.best_of or k, cfg.seed)
        m, r = n, 1
        while True:
            byes, adv = ko.shape(m)
            final = adv == [0]
            console.print(f"  {'final' if final else f'round {r}'}: {m} entrant(s), "
                          f"{len(adv)} table(s) of best of {ko.best_of}"
                          + ("" if final else f", {byes} bye(s), {sum(adv)} go on"))
            if final:
                break
            m, r = byes + sum(adv), r + 1
        console.print(f"  seeds: {', '.join(seeds)}")
    else:
        console.print(f"  {fmt.duration_s:g} s; up to {min(cfg.run.concurrency, n // k)} "
                      f"table(s) at once")
    console.print(f"  results: {cfg.output_dir()}")


def smoke_table(results: list[Smoke]) -> Table:
    t = Table(title="Smoke start (one seat of a throwaway match each)", title_justify="left")
    # at 80 columns (tests/test_tables_80.py) the name folds rather than cutting the others
    t.add_column("entrant", overflow="fold", min_width=10)
    t.add_column("started", overflow="fold", max_width=14)
    t.add_column("result", no_wrap=True)
    t.add_column("detail", overflow="fold", ratio=1)
    for r in results:
        t.add_row(r.entrant, r.how, "[green]OK[/]" if r.ok else "[red]FAIL[/]", escape(r.detail))
    return t


async def run_check(cfg: TournamentConfig, *, address: str | None, admin_token: str | None,
                    smoke: bool, join_timeout: float, console: Console,
                    out: Console, progress: bool = True) -> int:
    """Validate ``cfg`` against the referee and smoke-start its entrants; the exit status."""
    cfg = with_overrides(cfg, referees=1, backend="local")
    with tempfile.TemporaryDirectory(prefix="referee-check-") as tmp:
        runner = Runner(cfg, out=Path(tmp), address=address, admin_token=admin_token,
                        console=console, progress=False)
        if runner.address:
            first = runner.address.split(",")[0].strip()
            endpoint = RefereeEndpoint(first, runner.admin_token or "", cfg.run.unix_socket)
        else:
            console.print("[cyan]check[/]: starting a private referee …")
            try:
                await runner._start_referees(0)
            except RunError as exc:
                console.print(f"[red]error[/]: {exc}")
                return EXIT_FAILED
            endpoint = runner.endpoints[0]
        try:
            try:
                games = await list_games(endpoint.address)
            except grpc.aio.AioRpcError as err:
                console.print(f"[red]error[/]: cannot reach the referee at {endpoint.address}: "
                              f"{err.code().name}: {err.details()}")
                return EXIT_FAILED
            problems = game_problems(cfg, games)
            for p in problems:
                console.print(f"[red]bad tournament file[/]: {escape(p)}")
            if problems:
                return EXIT_USAGE
            opts = ", ".join(f"{k} = {v}" for k, v in cfg.options) or "defaults"
            console.print(f"[green]game[/]: {cfg.game} with {cfg.seats} seats ({opts}) is "
                          f"hosted by the referee at {endpoint.address}")
            for warning in sheet_warnings(cfg, games):
                console.print(f"[yellow]warning[/]: {escape(warning)}")
            if not smoke:
                return EXIT_OK
            if not endpoint.admin_token:
                console.print("[red]error[/]: smoke-starting entrants on a running referee "
                              "needs its admin token: pass --admin-token-file or set "
                              "REFEREE_ADMIN_TOKEN (or --no-smoke)")
                return EXIT_USAGE
            try:
                results = await _smoke_all(runner, endpoint, join_timeout, Path(tmp) / "bots",
                                           console, progress)
            except BadFile as exc:
                console.print(f"[red]bad tournament file[/]: {escape(str(exc))}")
                return EXIT_USAGE
            except (RunError, grpc.aio.AioRpcError) as exc:
                detail = (f"{exc.code().name}: {exc.details()}"
                          if isinstance(exc, grpc.aio.AioRpcError) else str(exc))
                console.print(f"[red]error[/]: the smoke start could not go on: {escape(detail)}")
                return EXIT_FAILED
            out.print(smoke_table(results))
            failed = [r.entrant for r in results if not r.ok]
            if failed:
                console.print(f"[red]{len(failed)} entrant(s) failed to start[/]: "
                              f"{', '.join(failed)}")
                return EXIT_FAILED
            console.print(f"[green]all {len(results)} entrant(s) joined[/]")
            return EXIT_OK
        finally:
            runner._stop_referees()


async def _smoke_all(runner: Runner, endpoint: RefereeEndpoint, join_timeout: float,
                     log_dir: Path, console: Console, show: bool) -> list[Smoke]:
    log_dir.mkdir(parents=True, exist_ok=True)
    entrants = list(runner.cfg.entrants)
    results: list[Smoke | None] = [None] * len(entrants)
    gate = asyncio.Semaphore(SMOKE_AT_ONCE)
    progress = Progress(SpinnerColumn(), TextColumn("[bold]smoke-starting entrants"),
                        BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                        console=console, disable=not show, transient=True)

    async def one(i: int, e: Entrant) -> None:
        async with gate:
            r = await smoke_start(runner, endpoint, e, i, join_timeout, log_dir)
        results[i] = r
        progress.console.print(f"  {'[green]OK[/]  ' if r.ok else '[red]FAIL[/]'} "
                               f"{e.name}: {escape(r.detail)}", soft_wrap=True,
                               highlight=False)
        progress.update(task, advance=1, info=e.name)

    with progress:
        task = progress.add_task("smoke", total=len(entrants), info="")
        console.print(f"[cyan]check[/]: smoke-starting {len(entrants)} entrant(s) "
                      f"(join timeout {join_timeout:g}s) …")
        tasks = [asyncio.create_task(one(i, e)) for i, e in enumerate(entrants)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    return [r for r in results if r is not None]
