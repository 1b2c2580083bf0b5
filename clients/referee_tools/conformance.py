"""``referee-bot conformance``: put any bot command through a checklist against a local referee.

    referee-bot conformance --game batavia -- node clients/typescript/dist/bot.js

For each game, the kit starts ``referee serve`` (127.0.0.1, a fresh data directory), creates a
match whose every seat is played by a copy of the bot, and runs the bots through an observing
proxy: a small gRPC server in this process that forwards each ``Play`` stream to the referee
and sees every Join, Decision, Submit, MoveResult and GameOver. The command gets
``--address A --match M`` appended (or fills the ``{address}``, ``{match}``, ``{seat}``,
``{seed}`` placeholders if it has any) and $REFEREE_ADDRESS, $REFEREE_MATCH and its seat token
$REFEREE_TOKEN in its environment (never on the command line, which any process can read;
``{token}`` still fills in for an old bot that needs it, at that risk). The rows:

join            every copy opened Play with its seat token and got a Welcome.
legal moves     the match was played to the end, and the referee refused none of the bot's moves.
rejected move   once, the proxy swaps the move a bot submits for a move that is not legal now
                (a legal move of an earlier decision, or an empty Move if none differs), so the
                referee itself refuses it (ILLEGAL_MOVE / MALFORMED). The bot must carry on and
                answer that same decision again with a move the referee accepts.
restart         mid-match the referee is killed (SIGKILL, like a crash) and started again on the
                same data directory and port; every bot must join again with its token and
                finish the match.
deadline        the match has a per-move time limit; the record must show no move made by the
                time policy for the bot.
exit            every copy exits with status 0 within a few seconds of its GameOver.

Prints a pass/fail table; exit status 0 when every row passes, 1 otherwise, 2 on bad usage.
"""
from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from referee_client.connection import DEFAULT_OPTIONS, bearer
from referee_tournament.procs import LocalReferee, RefereeStartError
from referee_tournament.sandbox import bot_env

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

PLAY = "/referee.v1.Referee/Play"
REFUSED_AS_ILLEGAL = frozenset({pb.ILLEGAL_MOVE, pb.MALFORMED, pb.WRONG_GAME})
CHECKS = ("join", "legal moves", "rejected move", "restart", "deadline", "exit")


# ---------------------------------------------------------------------------- observation
@dataclass
class SeatLog:
    """What the proxy saw of one seat."""

    welcomes: list[float] = field(default_factory=list)  # monotonic times of each Welcome
    pending: pb.Decision | None = None  # the last decision pushed to the seat
    accepted: int = 0
    refused: list[str] = field(default_factory=list)  # reasons of refusals we did not cause
    game_over_at: float | None = None


@dataclass
class Injection:
    seat: int
    version: int
    reason: str = ""  # the referee's reason for refusing the swapped move ("" = no answer yet)
    recovered: bool = False  # the bot then had a move accepted for the same decision


class MatchObserver:
    """Everything the proxy saw of one match, and the one move it swaps."""

    def __init__(self, match_id: str, seats: int, inject_after: int = 3,
                 restart_after: int | None = None):
        self.match_id = match_id
        self.seats = [SeatLog() for _ in range(seats)]
        self.inject_after = inject_after
        self.injection: Injection | None = None
        self.seen_moves: deque[bytes] = deque(maxlen=256)  # legal moves of earlier decisions
        # the restart check (``restart_after`` accepted moves and the refused one): once it is
        # due the proxy holds the seats' moves until the referee was restarted
        # (``restarted``), so a fast bot cannot finish the match first on a loaded machine
        self.restart_after = restart_after
        self.restarted = asyncio.Event()

    def restart_due(self) -> bool:
        inj = self.injection
        return (self.restart_after is not None and not self.restarted.is_set()
                and inj is not None and bool(inj.reason) and self.accepted >= self.restart_after)

    @property
    def accepted(self) -> int:
        return sum(s.accepted for s in self.seats)

    def on_server(self, seat: int, msg: pb.ServerMessage, sent: deque) -> None:
        which = msg.WhichOneof("msg")
        log = self.seats[seat]
        if which == "welcome":
            log.welcomes.append(time.monotonic())
        elif which == "decision":
            log.pending = msg.decision
            if len(self.seen_moves) < (self.seen_moves.maxlen or 0):
                self.seen_moves.extend(m.SerializeToString() for m in msg.decision.legal_moves[:8])
        elif which == "move_result":
            res = msg.move_result
            version, injected = sent.popleft() if sent else (None, False)
            inj = self.injection
            if injected and inj is not None:
                if res.accepted:
                    log.accepted += 1
                    self.injection = None  # the swapped move happened to be legal: try again
                else:
                    inj.reason = pb.Reason.Name(res.reason)
                return
            if res.accepted:
                log.accepted += 1
                if inj is not None and inj.seat == seat and inj.version == version:
                    inj.recovered = True
            elif res.reason in REFUSED_AS_ILLEGAL:
                log.refused.append(f"{pb.Reason.Name(res.reason)}: {res.message}")
        elif which == "game_over":
            log.game_over_at = time.monotonic()

    def on_submit(self, seat: int, sub: pb.Submit) -> bool:
        """Swap the move for one that is not legal now, once; True if swapped."""
        pending = self.seats[seat].pending
        if (
            self.injection is not None
            or self.accepted < self.inject_after
            or pending is None
            or pending.state_version != sub.state_version
        ):
            return False
        legal = {m.SerializeToString() for m in pending.legal_moves}
        bad = next((m for m in self.seen_moves if m not in legal), None)
        sub.move.Clear()
        if bad is not None:
            sub.move.MergeFromString(bad)
        self.injection = Injection(seat, sub.state_version)
        return True


# ---------------------------------------------------------------------------- proxy
class ObservingProxy:
    """A gRPC server that forwards Play streams to the referee, watching each message. Other
    methods are forwarded unchanged, as bytes."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.matches: dict[str, MatchObserver] = {}
        self.port = 0

    async def start(self) -> None:
        self.server = grpc.aio.server(options=DEFAULT_OPTIONS)
        self.server.add_generic_rpc_handlers((_Handlers(self),))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()

    async def stop(self) -> None:
        await self.server.stop(0.5)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def channel(self) -> grpc.aio.Channel:
        # A channel per call with its own connection: after a referee restart it connects anew
        # instead of waiting out a shared connection's reconnect backoff.
        return grpc.aio.insecure_channel(
            self.upstream, options=[*DEFAULT_OPTIONS, ("grpc.use_local_subchannel_pool", 1)]
        )

    async def play(self, requests, context):
        md = [(k, v) for k, v in context.invocation_metadata() if k == "authorization"]
        try:
            first = await requests.__anext__()
        except StopAsyncIteration:
            return
        obs = self.matches.get(first.join.match_id) if first.WhichOneof("msg") == "join" else None
        async with self.channel() as channel:
            call = referee_pb2_grpc.RefereeStub(channel).Play(metadata=md)
            sent: deque = deque()  # (state_version, swapped) per Submit, answered in order
            seat: list[int] = []

            async def forward_requests() -> None:
                await call.write(first)
                async for msg in requests:
                    swapped = False
                    if msg.WhichOneof("msg") == "submit" and obs is not None and obs.restart_due():
                        await obs.restarted.wait()  # this referee is about to be killed
                        if call.done():
                            return  # it was: the bot joins again and is asked again
                    if msg.WhichOneof("msg") == "submit" and obs is not None and seat:
                        swapped = obs.on_submit(seat[0], msg.submit)
                        sent.append((msg.submit.state_version, swapped))
                    await call.write(msg)
                await call.done_writing()

            pump = asyncio.ensure_future(forward_requests())
            try:
                async for msg in call:
                    if msg.WhichOneof("msg") == "welcome":
                        seat[:] = [msg.welcome.seat]
                    if obs is not None and seat:
                        obs.on_server(seat[0], msg, sent)
                    yield msg
            except grpc.aio.AioRpcError as err:
                # the referee went away or refused: the bot sees the same status
                await context.abort(err.code(), err.details() or "",
                                    tuple(err.trailing_metadata() or ()))
            finally:
                pump.cancel()
                call.cancel()

    def passthrough_unary(self, method: str):
        async def handler(request: bytes, context) -> bytes | None:
            async with self.channel() as channel:
                rpc: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(method)
                try:
                    return await rpc(request, metadata=_auth(context))
                except grpc.aio.AioRpcError as err:
                    await context.abort(err.code(), err.details() or "",
                                        tuple(err.trailing_metadata() or ()))
                    raise  # not reached: abort raises

        return grpc.unary_unary_rpc_method_handler(handler)

    def passthrough_stream(self, method: str):
        async def handler(request: bytes, context):
            async with self.channel() as channel:
                try:
                    call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = \
                        channel.unary_stream(method)
                    async for item in call(request, metadata=_auth(context)):
                        yield item
                except grpc.aio.AioRpcError as err:
                    await context.abort(err.code(), err.details() or "",
                                        tuple(err.trailing_metadata() or ()))

        return grpc.unary_stream_rpc_method_handler(handler)


def _auth(context) -> list[tuple[str, str]]:
    return [(k, v) for k, v in context.invocation_metadata() if k == "authorization"]


class _Handlers(grpc.GenericRpcHandler):
    def __init__(self, proxy: ObservingProxy):
        self.proxy = proxy

    def service(self, details):
        method = details.method
        if method == PLAY:
            return grpc.stream_stream_rpc_method_handler(
                self.proxy.play,
                request_deserializer=pb.ClientMessage.FromString,
                response_serializer=pb.ServerMessage.SerializeToString,
            )
        if method in ("/referee.v1.Referee/Watch",):
            return self.proxy.passthrough_stream(method)
        if method.startswith("/referee.v1.Referee/") and method != "/referee.v1.Referee/Echo":
            return self.proxy.passthrough_unary(method)
        return None


# ---------------------------------------------------------------------------- the run
@dataclass
class Row:
    game: str
    check: str
    ok: bool
    detail: str


@dataclass
class Options:
    command: list[str]
    games: list[str]
    seats: int = 0  # 0: the game's minimum
    move_ms: int = 5000
    seed: int = 1
    exit_grace_s: float = 10.0
    match_timeout_s: float = 300.0
    restart_after: int = 8  # accepted moves before the referee is killed
    workdir: Path | None = None
    cwd: str | None = None


def bot_argv(command: list[str], address: str, match: str, token: str, seat: int,
             seed: int) -> list[str]:
    """The command with placeholders filled, or with the connection flags appended."""
    values = {"address": address, "match": match, "token": token, "seat": seat, "seed": seed}
    if any("{" in part for part in command):
        return [part.format(**values) for part in command]
    return [*command, "--address", address, "--match", match]


async def _check_game(game: str, spec: pb.GameSpec, referee: LocalReferee,
                      proxy: ObservingProxy, opts: Options, workdir: Path) -> list[Row]:
    seats = opts.seats or max(2, spec.min_seats)
    async with grpc.aio.insecure_channel(referee.address, options=DEFAULT_OPTIONS) as ch:
        created = await referee_pb2_grpc.RefereeStub(ch).CreateMatch(
            pb.CreateMatchRequest(
                game=game, seats=seats, seed=opts.seed,
                time_policy=pb.TimePolicy(move_ms=opts.move_ms, grace_ms=500,
                                          on_expiry=pb.RANDOM_LEGAL),
                seat_names=[f"bot-{s}" for s in range(seats)],
                reveal_policy=pb.REVEAL_POLICY_SAFE,
            ),
            metadata=bearer(referee.admin_token),
        )
    obs = MatchObserver(created.match_id, seats, restart_after=opts.restart_after)
    proxy.matches[created.match_id] = obs
    procs: list[tuple[subprocess.Popen, Path]] = []
    for st in created.seats:
        argv = bot_argv(opts.command, proxy.address, created.match_id, st.token, st.seat,
                        opts.seed + st.seat)
        env = bot_env({"REFEREE_ADDRESS": proxy.address, "REFEREE_MATCH": created.match_id,
                       "REFEREE_TOKEN": st.token}, sandboxed=False)
        log_path = workdir / f"{game}-seat{st.seat}.log"
        procs.append((_spawn(argv, env, log_path, opts.cwd), log_path))
    exited_at: dict[int, float] = {}
    restarted_at: float | None = None
    restart_error = ""
    start = time.monotonic()
    late: set[int] = set()
    while len(exited_at) < len(procs):
        now = time.monotonic()
        for seat, (proc, _) in enumerate(procs):
            if seat in exited_at:
                continue
            if proc.poll() is not None:
                exited_at[seat] = now
                continue
            over = obs.seats[seat].game_over_at
            if (over is not None and now - over > opts.exit_grace_s) or (
                now - start > opts.match_timeout_s
            ):
                late.add(seat)
                _kill(proc)
        injected = obs.injection is not None and obs.injection.reason
        if (
            restarted_at is None and injected and obs.accepted >= opts.restart_after
            and not any(s.game_over_at for s in obs.seats)
        ):
            restarted_at = time.monotonic()  # a Welcome after this is a rejoin
            try:
                await _restart(referee)
            except RefereeStartError as exc:
                restart_error = str(exc)
            finally:
                obs.restarted.set()  # the moves held meanwhile go on (to a referee gone)
        await asyncio.sleep(0.05)
    obs.restarted.set()

    record = await _record(referee, created.match_id)
    return _rows(game, obs, procs, exited_at, late, restarted_at, restart_error, record, opts)


async def _restart(referee: LocalReferee) -> None:
    """Kill the referee like a crash and start it again on the same data directory and port,
    the proxy (on this event loop) serving on meanwhile."""
    referee.kill()
    await asyncio.sleep(0.3)  # the bots see a dead referee for a moment
    referee.launch(referee.port)  # from the event loop's thread: the parent-death signal
    await asyncio.to_thread(referee.wait_ready)


def _spawn(argv: list[str], env: dict[str, str], log_path: Path, cwd: str | None):
    with open(log_path, "wb") as log:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.wait(10)


async def _record(referee: LocalReferee, match_id: str) -> dict | None:
    try:
        async with grpc.aio.insecure_channel(referee.address, options=DEFAULT_OPTIONS) as ch:
            resp = await referee_pb2_grpc.RefereeStub(ch).GetRecord(
                pb.GetRecordRequest(match_id=match_id), metadata=bearer(referee.admin_token),
                timeout=30,
            )
        return json.loads(resp.record_json)
    except (grpc.aio.AioRpcError, ValueError):
        return None


def _tail(path: Path, lines: int = 3) -> str:
    """The first line of the log that reads like an error, else its last lines."""
    text = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in text if "error" in ln.lower() or "exception" in ln.lower()]
    return (errors[0] if errors else " | ".join(text[-lines:]))[-300:] or "(empty log)"


def _rows(game, obs: MatchObserver, procs, exited_at, late, restarted_at, restart_error,
          record, opts: Options) -> list[Row]:
    rows: list[Row] = []
    seats = obs.seats
    n = len(seats)
    over = all(s.game_over_at is not None for s in seats)
    hint = "" if over else f" (seat 0 log: {_tail(procs[0][1])})"

    joined = [i for i, s in enumerate(seats) if s.welcomes]
    rows.append(Row(game, "join", len(joined) == n, f"{len(joined)}/{n} seats got a Welcome"
                    + ("" if len(joined) == n else hint)))

    refused = [(i, r) for i, s in enumerate(seats) for r in s.refused]
    moves = sum(s.accepted for s in seats)
    ok = over and not refused and all(s.accepted for s in seats)
    detail = f"{moves} moves accepted, match {'finished' if over else 'not finished'}"
    if refused:
        detail += f"; refused: seat {refused[0][0]} {refused[0][1]}" + (
            f" (+{len(refused) - 1} more)" if len(refused) > 1 else "")
    rows.append(Row(game, "legal moves", ok, detail + ("" if over else hint)))

    inj = obs.injection
    if inj is None or not inj.reason:
        rows.append(Row(game, "rejected move", False, "no move was swapped (match too short?)"))
    else:
        rows.append(Row(game, "rejected move", inj.recovered,
                        f"seat {inj.seat} refused {inj.reason} at v{inj.version}, then "
                        + ("answered again and was accepted" if inj.recovered
                           else "did not answer that decision again")))

    if restarted_at is None or restart_error:
        rows.append(Row(game, "restart", False, restart_error or f"not restarted: the match ended or stalled before "
                        f"{opts.restart_after} moves and a refused move"))
    else:
        back = [i for i, s in enumerate(seats) if any(t > restarted_at for t in s.welcomes)]
        ok = len(back) == n and over
        rows.append(Row(game, "restart", ok, f"{len(back)}/{n} seats joined again after the "
                        f"restart; match {'finished' if over else 'not finished'}"))

    if record is None:
        rows.append(Row(game, "deadline", False, "no record from the referee"))
    else:
        timeouts = [m for m in record.get("moves", []) if m.get("timeout")]
        rows.append(Row(game, "deadline", over and not timeouts,
                        f"{len(timeouts)} of {len(record.get('moves', []))} moves made by the "
                        f"time policy (limit {opts.move_ms} ms a move)"))

    bad = []
    for seat, (proc, log_path) in enumerate(procs):
        got = seats[seat].game_over_at
        if seat in late:
            bad.append(f"seat {seat} still running {opts.exit_grace_s:.0f}s after GameOver"
                       if got else f"seat {seat} never got GameOver (killed)")
        elif proc.returncode != 0:
            bad.append(f"seat {seat} exited {proc.returncode}: {_tail(log_path, 2)}")
        elif got is None:
            bad.append(f"seat {seat} exited 0 without a GameOver")
    rows.append(Row(game, "exit", not bad, "; ".join(bad) or f"all {n} exited 0 after GameOver"))
    return rows


async def run_checks(opts: Options) -> list[Row]:
    workdir = opts.workdir or Path(tempfile.mkdtemp(prefix="referee-conformance-"))
    workdir.mkdir(parents=True, exist_ok=True)
    referee = LocalReferee(workdir / "referee")
    referee.launch()  # from the event loop's thread: the parent-death signal follows it
    await asyncio.to_thread(referee.wait_ready)
    proxy = ObservingProxy(referee.address)
    await proxy.start()
    try:
        async with grpc.aio.insecure_channel(referee.address) as ch:
            listed = await referee_pb2_grpc.RefereeStub(ch).ListGames(pb.ListGamesRequest())
        specs = {g.name: g for g in listed.games}
        games = opts.games or sorted(specs)
        rows: list[Row] = []
        for game in games:
            if game not in specs:
                rows.append(Row(game, "join", False, f"this referee has no game {game!r} "
                                f"(it has {', '.join(sorted(specs))})"))
                continue
            rows += await _check_game(game, specs[game], referee, proxy, opts, workdir)
        return rows
    finally:
        await proxy.stop()
        await asyncio.to_thread(referee.stop)


def print_table(rows: list[Row], command: list[str], file=None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"conformance: {shlex.join(command)}", title_justify="left")
    table.add_column("game", overflow="fold")
    table.add_column("check", overflow="fold", ratio=1)
    table.add_column("result", no_wrap=True)
    table.add_column("detail", overflow="fold", ratio=1)
    for r in rows:
        table.add_row(r.game, r.check, "[green]PASS[/]" if r.ok else "[red bold]FAIL[/]", r.detail)
    # the terminal's width (80 when it is not one, or $COLUMNS): a wider console than the
    # terminal would wrap every line of the table into fragments (tests/test_tables_80.py)
    console = Console(file=file or sys.stdout)
    console.print(table)
    failed = sum(not r.ok for r in rows)
    console.print(f"conformance: {len(rows) - failed} of {len(rows)} checks passed")


def main(opts: Options) -> int:
    if not opts.command:
        print("conformance: give the bot command after --", file=sys.stderr)
        return 2
    rows = asyncio.run(run_checks(opts))
    print_table(rows, opts.command)
    return 0 if rows and all(r.ok for r in rows) else 1
