"""Play one match: create it on a referee, start one bot process per seat, wait for the result,
fetch the record, end every bot. Used by the local backend and, inside a Ray task, by the Ray
backend (a :class:`MatchJob` is plain data and a result is a plain dict).

A crashing bot (exits non-zero), a silent bot (never moves) and a hanging bot (never exits) do
not stall the match: the referee's time policy plays for a seat whose bot does not answer, and
the runner polls ``GetRecord`` until the record is complete. A bot still running
``bot_grace_s`` after the end is terminated (then killed) and recorded as hung. Past
``match_wall_s`` every bot is killed and the match is recorded as failed.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import grpc
from referee_client.llm import parse_usage_line
from referee_client.unary import time_policy_proto

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from .procs import LocalReferee, die_with_parent_prefix, resolve
from .sandbox import ADDRESS_IN_SANDBOX, SandboxSpec, bot_env, unavailable_reason, wrap

#: A bot reports a rejected move by printing a line matching this on stdout/stderr (the Python
#: SDK logs "move rejected"; the Node.js example bot does the same).
REJECTED_RE = re.compile(rb"move[ _-]rejected", re.IGNORECASE)
TAIL_BYTES = 2000
#: A referee unreachable this long during a match is taken for dead (the match is not failed:
#: the runner stops and the match is played again on resume).
REFEREE_DOWN_S = 15.0
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]


@dataclass
class MatchJob:
    idx: int
    game: str
    seats: int
    options: dict[str, str]
    seed: int
    seating: list[str]
    commands: list[list[str]]  # argv template per seat (placeholders not yet filled)
    cwds: list[str | None]
    envs: list[dict[str, str]]
    time_policy: dict[str, Any]
    address: str | None  # None: start a private referee for this match (Ray tasks)
    admin_token: str
    bot_seeds: list[int]
    match_wall_s: float = 600.0
    bot_grace_s: float = 3.0
    join_timeout_s: float = 30.0  # then seats that never joined are abandoned (0: never)
    poll_s: float = 0.5
    log_dir: str | None = None  # bot logs; None: a temporary folder (tails still returned)
    sandboxes: list[dict[str, Any] | None] = field(default_factory=list)  # per seat (SandboxSpec)
    unix_socket: str | None = None  # the referee's Unix socket (for sandboxed seats)
    extra: dict[str, Any] = field(default_factory=dict)
    # per seat: the persistent entrant bound to it ("" = start a process for the seat)
    seat_bots: list[str] = field(default_factory=list)
    persistent_logs: dict[str, str] = field(default_factory=dict)  # entrant -> its log
    request_id: str = ""  # CreateMatch's (the run's store keeps it: see store.mark_running)
    # seats a person plays from the web page (referee-bot play --me human): no process is
    # started for them and the referee is never told to give up on them
    people: list[int] = field(default_factory=list)
    # the address the bots are given, when not ``address`` (referee-bot play's delay proxy)
    bot_address: str | None = None
    # seats whose bot giving up on a refused decision ends the match at once (referee-bot
    # play without --keep-going): see :class:`GiveUpWatch`
    stop_on_give_up: list[int] = field(default_factory=list)
    # the event the match belongs to (CreateMatchRequest.event): the tournament's name, or a
    # league event's; the referee tells the seats in their Welcome and Assignment
    event: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fill(template: list[str], values: dict[str, str]) -> list[str]:
    """Substitute the placeholders. A value starting with '-' (seat tokens are URL-safe base64
    and may) given as its own argument after a long option (``--token {token}``) is joined to
    it (``--token=-x...``): option parsers would take it for an option."""
    out: list[str] = []
    for arg in template:
        whole = arg
        for k, v in values.items():
            arg = arg.replace("{" + k + "}", v)
        if (arg.startswith("-") and whole.startswith("{") and whole.endswith("}") and out
                and out[-1].startswith("--") and "=" not in out[-1]):
            out[-1] = f"{out[-1]}={arg}"
            continue
        out.append(arg)
    return out


class _Bot:
    def __init__(self, seat: int, name: str, log_path: Path):
        self.seat, self.name, self.log_path = seat, name, log_path
        self.proc: asyncio.subprocess.Process | None = None
        self.start_error: str | None = None
        self.killed = False
        self.exit_code: int | None = None
        self.exited_at: float | None = None
        self.waiter: asyncio.Task | None = None
        self.abandoned = False  # the referee was told to stop waiting for it
        #: why the referee gave up on it, when it did (not when the seat had joined after all,
        #: or the match was already over): "exited" or "never joined"
        self.given_up: str | None = None
        self.person = False  # a person plays the seat from the web page (no process)

    async def _wait(self) -> None:
        assert self.proc is not None
        self.exit_code = await self.proc.wait()
        self.exited_at = time.time()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.exit_code is None

    def signal(self, sig: int) -> None:
        if self.proc is None or self.exit_code is not None:
            return
        try:
            os.killpg(self.proc.pid, sig)  # the bot's own process group (start_new_session)
        except ProcessLookupError:
            pass
        except PermissionError:
            self.proc.send_signal(sig)


async def _spawn(bot: _Bot, argv: list[str], cwd: str | None, env: dict[str, str],
                 sandbox: SandboxSpec | None = None, unix_socket: str | None = None) -> None:
    try:
        exe = resolve(argv[0], cwd)
        if sandbox is not None:
            reason = unavailable_reason()
            if reason:
                raise ValueError(f"cannot sandbox it: {reason}")
            if not unix_socket:
                raise ValueError("a sandboxed bot needs the referee's Unix socket")
            argv = wrap([exe, *argv[1:]], cwd=cwd, socket_path=unix_socket, spec=sandbox)
            exe, cwd = resolve(argv[0]), None
        with open(bot.log_path, "wb") as log:  # noqa: ASYNC230 - opening is instant
            bot.proc = await asyncio.create_subprocess_exec(
                *die_with_parent_prefix(), exe, *argv[1:], stdin=asyncio.subprocess.DEVNULL,
                stdout=log, stderr=asyncio.subprocess.STDOUT, cwd=cwd, env=env,
                start_new_session=True,
            )
        bot.waiter = asyncio.create_task(bot._wait())
    except (OSError, ValueError) as exc:
        bot.start_error = f"cannot start {argv[0]!r}: {exc}"
        bot.log_path.write_text(bot.start_error + "\n")


#: delays before CreateMatch is sent again when the referee is UNAVAILABLE (with a request_id
#: only: the referee then answers a repeat with the match the first call made)
CREATE_RETRY_S = (0.2, 0.5, 1.0, 2.0)


async def _create(stub: Any, job: MatchJob, admin: Any) -> pb.CreateMatchResponse:
    request = match_request(job)
    for delay in (*(CREATE_RETRY_S if job.request_id else ()), None):
        try:
            return await stub.CreateMatch(request, metadata=admin, timeout=30)
        except grpc.aio.AioRpcError as err:
            if delay is None or err.code() != grpc.StatusCode.UNAVAILABLE:
                raise
        await asyncio.sleep(delay)
    raise AssertionError("unreachable")  # the last attempt returned or raised


def match_request(job: MatchJob) -> pb.CreateMatchRequest:
    """The CreateMatch request of ``job`` (game, options, seed, time policy, seat names and the
    persistent entrants bound to seats)."""
    league = job.extra.get("league") or {}  # a league's match (see .league.serve)
    return pb.CreateMatchRequest(
        game=job.game, seats=job.seats, options=job.options, seed=job.seed,
        time_policy=time_policy_proto(job.time_policy),
        seat_names=[f"{n}" for n in job.seating],
        # a league binds every seat (hosted ones too: the referee pushes them no Assignment)
        seat_bots=league.get("seat_bots") or job.seat_bots,
        league=league.get("name", ""), unlisted=bool(league.get("unlisted")),
        seat_bot_versions=league.get("seat_bot_versions") or [],
        request_id=job.request_id, event=job.event,
        reveal_policy=pb.REVEAL_POLICY_SAFE,  # the referee's default, said explicitly
    )


async def start_seat_bot(job: MatchJob, bot: _Bot, match_id: str, token: str) -> None:
    """Start the process of ``bot.seat`` for match ``match_id``: its command with the
    placeholders filled, sandboxed when the entrant is (then with its own environment only);
    never with the runner's secrets (:func:`.sandbox.bot_env`). A start failure is left in
    ``bot.start_error`` and its log."""
    seat = bot.seat
    spec = job.sandboxes[seat] if seat < len(job.sandboxes) else None
    sandbox = SandboxSpec(**spec) if spec else None
    assert job.address is not None  # play_match gives an address-less job a referee first
    values = {"address": ADDRESS_IN_SANDBOX if sandbox else (job.bot_address or job.address),
              "match": match_id, "token": token,
              "seat": str(seat), "seed": str(job.bot_seeds[seat]), "name": job.seating[seat],
              "game": job.game, "python": sys.executable}
    # the connection also in the environment, as the conformance kit gives it: the seat token
    # belongs there (only this process and its children see it), not in {token} on the
    # command line, which every process of the machine can read (kept for old configs)
    connect = {"REFEREE_ADDRESS": values["address"], "REFEREE_MATCH": match_id,
               "REFEREE_TOKEN": token}
    env = bot_env({**job.envs[seat], **connect}, sandboxed=sandbox is not None)
    await _spawn(bot, fill(job.commands[seat], values), job.cwds[seat], env,
                 sandbox, job.unix_socket)


async def _abandon_lost(stub, admin, match_id: str, bots: list[_Bot], job: MatchJob,
                        join_due: bool) -> None:
    """Fail fast: tell the referee to stop waiting for a bot whose process is gone, and (once
    the join timeout has passed) for one that never joined. The referee forfeits it under
    on_expiry = forfeit and otherwise plays its decisions by the time policy at once."""
    for b in bots:
        if b.abandoned or b.person:
            continue
        if b.start_error is not None or b.exit_code is not None:
            tail = _tail(b.log_path)[0]
            code = f"code {b.exit_code}" if b.exit_code is not None else "no start"
            reason, unless_joined = f"bot exited ({code}): {error_line(tail)}", False
        elif join_due:
            reason, unless_joined = f"bot did not join within {job.join_timeout_s:g}s", True
        else:
            continue
        b.abandoned = True
        try:
            resp = await stub.AbandonSeat(pb.AbandonSeatRequest(
                match_id=match_id, seat=b.seat, reason=reason[:200],
                unless_joined=unless_joined), metadata=admin, timeout=30)
        except grpc.aio.AioRpcError:
            continue  # an older referee, or it is down: its time policy still plays for the seat
        if resp.abandoned:
            b.given_up = "never joined" if unless_joined else "exited"


async def _end_bots(bots: list[_Bot], grace_s: float) -> None:
    """Give running bots ``grace_s`` to exit, then SIGTERM, then SIGKILL."""
    waiters = [b.waiter for b in bots if b.alive and b.waiter]
    if waiters and grace_s > 0:
        await asyncio.wait(waiters, timeout=grace_s)
    for sig, wait_s in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        alive = [b for b in bots if b.alive]
        if not alive:
            return
        for b in alive:
            b.killed = True
            b.signal(sig)
        await asyncio.wait([b.waiter for b in alive if b.waiter], timeout=wait_s)


_TRACEBACK = "Traceback (most recent call last):"
_ERRORISH = re.compile(r"error|exception|fatal|panic|cannot|can't|not found|no such|denied|"
                       r"abort|refused|killed", re.IGNORECASE)


def error_line(text: str) -> str:
    """The line of a bot's output that says what went wrong: the exception of the first Python
    traceback, else the first line that reads like an error (Node, Go, C++, shells), else the
    last line. At most 300 characters."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    found = ""
    if _TRACEBACK in lines:
        for line in lines[lines.index(_TRACEBACK) + 1:]:
            if not line.startswith((" ", "\t")):  # past the frames: the exception itself
                found = line
                break
    if not found:
        found = next((line for line in lines if _ERRORISH.search(line)), "")
    if not found and lines:
        found = lines[-1]
    return found.strip()[:300]


def _tail(path: Path) -> tuple[str, int, str]:
    """The end of a bot's log, how many "move rejected" lines it has, and the first of them
    (see :func:`refusal_line`)."""
    try:
        data = path.read_bytes()
    except OSError:
        return "", 0, ""
    return (data[-TAIL_BYTES:].decode("utf-8", "replace"), len(REJECTED_RE.findall(data)),
            refusal_line(data))


#: the key=value pairs that follow the event on a readable log line (the Python SDK's)
_PAIRS = re.compile(r"\s+[a-z_]+=")


def refusal_line(data: bytes) -> str:
    """The first "move rejected" line of a bot's log, as a short text with the referee's
    reason and message: from a JSON line (the kits') its event, reason and message; from a
    readable line (the Python SDK's, whose event carries both) the event. At most 300
    characters; "" when there is none."""
    found = REJECTED_RE.search(data)
    if found is None:
        return ""
    start = data.rfind(b"\n", 0, found.start()) + 1
    end = data.find(b"\n", found.end())
    line = data[start:end if end >= 0 else len(data)].decode("utf-8", "replace").strip()
    try:
        fields = json.loads(line)
    except ValueError:
        fields = None
    if isinstance(fields, dict):
        event = str(fields.get("event") or "move rejected")
        text = ": ".join([event, *(str(fields[k]) for k in ("reason", "message")
                                   if fields.get(k) and str(fields[k]) not in event)])
    else:
        at = re.search("move[ _-]rejected", line, re.IGNORECASE)
        text = _PAIRS.split(line[at.start() if at else 0:], maxsplit=1)[0]
    return text[:300]


#: a bot's log line saying it stopped answering a decision its answers to were refused (the
#: Python SDK and every kit log it: "stopped answering after ... refused ...", incident gave_up)
GAVE_UP_RE = re.compile(rb"stopped answering", re.IGNORECASE)
#: a seat whose answer was refused and that has sent no accepted answer this long after (and
#: whose decision the time policy has not played meanwhile) is taken to have given up
SILENT_AFTER_REFUSAL_S = 5.0


class GiveUpWatch:
    """Whether the bot of one seat gave up on a decision after the referee refused its answers,
    read from the running match's record (any language: its per-seat refusal count and its
    moves) and from the bot's own log (the SDKs' "stopped answering" line: at once):

    * its log says it stopped answering; or
    * the referee counted a refusal of the seat, and the seat's next move in the record was
      played by the time policy (a timeout); or
    * the referee counted a refusal and no move has been played since, for
      :data:`SILENT_AFTER_REFUSAL_S` (one seat decides at a time, so the decision is still the
      seat's).

    ``check`` returns None, or what ``referee-bot play`` reports: the seat, why, and the
    refusal as the bot logged it (the referee's reason and message)."""

    def __init__(self, seat: int, log_path: Path):
        self.seat, self.log_path = seat, log_path
        self.refused = 0  # the referee's count when last seen
        self.pending_from: int | None = None  # moves in the record when a refusal was seen
        self.since = 0.0

    def check(self, record: dict[str, Any], now: float) -> dict[str, Any] | None:
        counted = record.get("rejected_moves") or []
        refused = int(counted[self.seat]) if self.seat < len(counted) else 0
        moves = record.get("moves") or []
        if refused > self.refused:
            start = self.pending_from if self.pending_from is not None else len(moves)
            self.refused, self.since = refused, now
            # the refusals happened since the last look: moves played since then are checked
            self.pending_from = min(start, len(moves))
        if self.pending_from is None:
            return None
        why = ""
        later = [m for m in moves[self.pending_from:] if int(m.get("seat", -1)) == self.seat]
        try:
            logged = self.log_path.read_bytes()
        except OSError:
            logged = b""
        if GAVE_UP_RE.search(logged):
            why = "it stopped answering a decision after its answers were refused"
        elif later and later[0].get("timeout"):
            why = "the time policy played a decision its answers to were refused"
        elif later:
            self.pending_from = None  # it answered that decision after all
            return None
        elif len(moves) == self.pending_from and now - self.since > SILENT_AFTER_REFUSAL_S:
            why = (f"it has not answered for {SILENT_AFTER_REFUSAL_S:g} s since its answer was "
                   "refused")
        if not why:
            return None
        return {"seat": self.seat, "why": why, "refused": self.refused,
                "refusal": refusal_line(logged)}


async def play_match(job: MatchJob, on_created: Callable[[str], None] | None = None,
                     *, existing: tuple[str, dict[int, str]] | None = None,
                     on_tokens: Callable[[str, dict[int, str]], None] | None = None
                     ) -> dict[str, Any]:
    """Play ``job`` to the end; never raises for a bot's or the referee's failure (the result
    carries ``error``). Cancelling it kills the bots. ``on_created`` is called with the match
    id once the match exists, before any bot starts (``referee-bot play`` prints its viewer
    link then); ``on_tokens`` with the match id and its seat tokens, before any bot starts (a
    league keeps them to follow the match after its own restart). ``existing`` (match id, seat
    tokens): follow a match created before (a restarted league's) instead of creating one; its
    seats' processes are started again."""
    if job.address is None:  # a private referee for this match
        with tempfile.TemporaryDirectory(prefix="referee-task-") as tmp:
            ref = LocalReferee(Path(tmp) / "data", job.admin_token or None)
            ref.launch()  # from this thread: the parent-death signal follows it
            await asyncio.to_thread(ref.wait_ready)
            try:
                inner = MatchJob(**{**job.to_dict(), "address": ref.address,
                                    "admin_token": ref.admin_token,
                                    "unix_socket": ref.unix_socket})
                return await play_match(inner, on_created, existing=existing,
                                        on_tokens=on_tokens)
            finally:
                await asyncio.to_thread(ref.stop)
    if job.log_dir is None:
        with tempfile.TemporaryDirectory(prefix="referee-bots-") as tmp:
            return await _play(job, Path(tmp), on_created, existing, on_tokens)
    Path(job.log_dir).mkdir(parents=True, exist_ok=True)
    return await _play(job, Path(job.log_dir), on_created, existing, on_tokens)


async def _play(job: MatchJob, log_dir: Path,
                on_created: Callable[[str], None] | None = None,
                existing: tuple[str, dict[int, str]] | None = None,
                on_tokens: Callable[[str, dict[int, str]], None] | None = None
                ) -> dict[str, Any]:
    t0 = time.monotonic()
    result: dict[str, Any] = {"idx": job.idx, "referee": job.address, "match_id": None,
                              "scores": None, "ranks": None, "error": None, "record_json": None}
    admin = (("authorization", f"Bearer {job.admin_token}"),)
    bots: list[_Bot] = []
    assert job.address is not None  # play_match gives an address-less job a referee first
    channel = grpc.aio.insecure_channel(job.address, options=CHANNEL_OPTIONS)
    try:
        stub = pb_grpc.RefereeStub(channel)
        if existing is not None:
            match_id, tokens = existing[0], dict(existing[1])
        else:
            try:
                created = await _create(stub, job, admin)
            except grpc.aio.AioRpcError as err:
                result["error"] = f"CreateMatch failed: {err.code().name}: {err.details()}"
                result["referee_down"] = err.code() in (grpc.StatusCode.UNAVAILABLE,
                                                        grpc.StatusCode.DEADLINE_EXCEEDED)
                result["refused"] = err.code() in (grpc.StatusCode.INVALID_ARGUMENT,
                                                   grpc.StatusCode.FAILED_PRECONDITION,
                                                   grpc.StatusCode.NOT_FOUND)
                result["seconds"] = round(time.monotonic() - t0, 3)
                return result
            match_id = created.match_id
            tokens = {s.seat: s.token for s in created.seats}
        result["match_id"] = match_id
        if on_tokens is not None:
            on_tokens(match_id, tokens)
        if on_created is not None:
            on_created(match_id)
        for seat in range(job.seats):
            name = job.seating[seat]
            bot = _Bot(seat, name, log_dir / f"{job.idx:05d}-seat{seat}-{name}.log")
            bots.append(bot)
            if seat in job.people:  # a person plays it from the web page: no process
                bot.person = True
                bot.log_path.write_text(f"seat {seat} was played by a person\n")
                continue
            if job.seat_bots and job.seat_bots[seat]:  # played by a persistent process
                bot.log_path.write_text(f"seat {seat} was played by the persistent entrant "
                                        f"{name}: {job.persistent_logs.get(name, '')}\n")
                continue
            await start_seat_bot(job, bot, match_id, tokens[seat])

        deadline = t0 + job.match_wall_s
        watches = [GiveUpWatch(s, bots[s].log_path) for s in job.stop_on_give_up
                   if 0 <= s < len(bots)]
        record: dict[str, Any] | None = None
        last_poll = 0.0
        last_alive = len(bots) + 1
        unreachable_since: float | None = None
        while True:
            now = time.monotonic()
            alive = [b for b in bots if b.alive]
            # ask for the record when a bot has exited (usually: the match is over) and
            # every poll_s anyway (a bot that hangs after the end, or that never started)
            if len(alive) < last_alive or now - last_poll >= job.poll_s:
                last_poll, last_alive = now, len(alive)
                try:
                    if job.seat_bots and not await _over(stub, match_id, tokens[0]):
                        continue  # cheaper than a running match's record
                    resp = await stub.GetRecord(pb.GetRecordRequest(match_id=match_id),
                                                metadata=admin, timeout=30)
                    unreachable_since = None
                    if resp.complete:
                        result["record_json"] = resp.record_json
                        record = json.loads(resp.record_json)
                        break
                    if watches:
                        running = json.loads(resp.record_json)
                        stops = [w.check(running, now) for w in watches]
                        stop = next((x for x in stops if x is not None), None)
                        if stop is not None:
                            result["error"] = f"stopped: {stop['why']}"
                            result["gave_up"] = stop
                            result["record_json"] = resp.record_json  # the moves so far
                            break
                except grpc.aio.AioRpcError as err:
                    result["error"] = f"GetRecord failed: {err.code().name}: {err.details()}"
                    if err.code() in (grpc.StatusCode.UNAVAILABLE,
                                      grpc.StatusCode.DEADLINE_EXCEEDED):
                        unreachable_since = unreachable_since or now
                        if now - unreachable_since > REFEREE_DOWN_S:
                            result["error"] = (f"the referee at {job.address} has been "
                                               f"unreachable for {REFEREE_DOWN_S:.0f}s")
                            result["referee_down"] = True
                            break
            if now > deadline:
                result["error"] = (f"wall-clock limit of {job.match_wall_s:.0f}s exceeded; "
                                   "bots killed")
                break
            await _abandon_lost(stub, admin, match_id, bots, job,
                                join_due=now - t0 > job.join_timeout_s > 0)
            timeout = max(0.01, min(job.poll_s - (now - last_poll), deadline - now))
            waiters = [b.waiter for b in bots if b.alive and b.waiter]
            if waiters:
                await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.sleep(timeout)
        if record is not None:
            result["error"] = None
        await _end_bots(bots, job.bot_grace_s if record is not None else 0.0)
        result["seconds"] = round(time.monotonic() - t0, 3)
        result["outcome"] = _outcome(job, bots, record)
        if record is not None and record.get("result"):
            res = record["result"]
            result["scores"] = [int(x) for x in res["scores"]]
            result["ranks"] = [int(x) for x in res["ranks"]]
            result["forfeited"] = record.get("forfeited")
        elif record is not None and not result["error"]:
            result["error"] = "the record is complete but has no result"
        return result
    except asyncio.CancelledError:
        for b in bots:
            b.killed = True
            b.signal(signal.SIGKILL)
        raise
    finally:
        for b in bots:
            if b.alive:
                b.signal(signal.SIGKILL)
        await channel.close(grace=None)


async def _over(stub, match_id: str, token: str) -> bool:
    try:
        view = await stub.GetView(pb.GetViewRequest(match_id=match_id),
                                  metadata=(("authorization", f"Bearer {token}"),), timeout=30)
    except grpc.aio.AioRpcError as err:
        if err.code() == grpc.StatusCode.FAILED_PRECONDITION:
            return True  # MATCH_OVER: over and no longer held
        raise
    return view.HasField("game_over")


#: a chat-model seat's counts in its outcome ("llm"): its moves with a cost line, then the
#: line's fields (referee_client.llm.usage_line)
LLM_FIELDS = ("moves", "tokens", "asks", "reasks", "illegal")


def _outcome(job: MatchJob, bots: list[_Bot], record: dict[str, Any] | None) -> dict[str, Any]:
    timeouts = [0] * job.seats
    moves = [0] * job.seats
    # a chat-model bot's cost per move, from the first line of its notes (referee_client.llm)
    llm: list[dict[str, int] | None] = [None] * job.seats
    if record:
        for m in record.get("moves", ()):
            s = int(m.get("seat", -1))
            if 0 <= s < job.seats:
                moves[s] += 1
                if m.get("timeout"):
                    timeouts[s] += 1
                cost = parse_usage_line(str(m.get("note") or ""))
                if cost is not None:
                    c = llm[s] = llm[s] or dict.fromkeys(LLM_FIELDS, 0)
                    c["moves"] += 1
                    for name, value in zip(LLM_FIELDS[1:], cost, strict=True):
                        c[name] += value
    forfeited = record.get("forfeited") if record else None
    # the referee counts refused moves per seat in the record (any language); bots' own
    # "move rejected" lines are the fallback for referees that do not
    counted = record.get("rejected_moves") if record else None
    seats = []
    for b in bots:
        tail, rejected, refusal = _tail(b.log_path)
        if counted and 0 <= b.seat < len(counted):
            rejected = max(rejected, int(counted[b.seat]))
        crashed = b.start_error is not None or (
            b.exit_code not in (0, None) and not b.killed
        )
        seats.append({
            "seat": b.seat, "entrant": b.name, "exit_code": b.exit_code,
            "crashed": crashed, "hung": b.killed, "start_error": b.start_error,
            # the referee gave up on the seat mid-match (AbandonSeat): "exited" (the process was
            # gone before the end) or "never joined" (not within join_timeout_s); else ""
            "abandoned": b.given_up or "",
            "timeouts": timeouts[b.seat], "moves": moves[b.seat], "rejected": rejected,
            # the first refused move as the bot logged it (the referee's reason and message)
            "refusal": refusal if rejected else "",
            "forfeited": forfeited == b.seat, "log": str(b.log_path) if job.log_dir else None,
            **({"llm": llm[b.seat]} if llm[b.seat] else {}),
            "stderr_tail": tail if (crashed or b.killed or b.given_up or rejected
                                    or timeouts[b.seat]) else "",
            "error": (b.start_error or error_line(tail)
                      or (f"did not join within {job.join_timeout_s:g}s"
                          if b.given_up == "never joined" else ""))
            if (crashed or b.killed or b.given_up) else "",
        })
    return {"seats": seats}


def play_match_sync(job_dict: dict[str, Any]) -> dict[str, Any]:
    """Blocking entry point (a Ray task): play the job given as a dict."""
    return asyncio.run(play_match(MatchJob(**job_dict)))
