"""Persistent entrants: started once, fed every match over a bot session.

An entrant with ``persistent = true`` is registered on each referee of the run
(``RegisterBot``) and its command is started ``copies`` times per referee with ``{address}``
and ``{capacity}``, its bot token in ``$REFEREE_BOT_TOKEN`` (``{bot_token}`` still fills in,
but puts the token on a command line that any process can read); the runner then creates
matches whose seats are bound to the entrant's name (``CreateMatch.seat_bots``) instead of
starting a process per seat. A persistent process that exits during the run is started again
(with a growing delay) and counted as a crash; its matches meanwhile go on under the time
policy. Sandboxed persistent entrants run inside the sandbox like per-match ones and reach the
referee through its Unix socket.
"""
from __future__ import annotations

import asyncio
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from .config import Entrant, TournamentConfig
from .play import _Bot, _end_bots, _spawn, fill
from .sandbox import ADDRESS_IN_SANDBOX, bot_env


class PersistentError(RuntimeError):
    pass


@dataclass
class _Proc:
    entrant: Entrant
    endpoint: Any
    copy: int
    argv: list[str]
    cwd: str | None
    env: dict[str, str]
    log_path: Path
    bot: _Bot | None = None
    starts: int = 0
    crashes: list[dict[str, Any]] = field(default_factory=list)


def _cwd(cfg: TournamentConfig, e: Entrant) -> str:
    if e.cwd is None:
        return cfg.base_dir
    p = Path(e.cwd)
    return str(p if p.is_absolute() else Path(cfg.base_dir) / p)


async def register(endpoint, name: str) -> str:
    """RegisterBot on a referee endpoint (address + admin token); the bot token."""
    async with grpc.aio.insecure_channel(endpoint.address) as ch:
        try:
            resp = await pb_grpc.RefereeStub(ch).RegisterBot(
                pb.RegisterBotRequest(name=name),
                metadata=(("authorization", f"Bearer {endpoint.admin_token}"),), timeout=30)
        except grpc.aio.AioRpcError as err:
            raise PersistentError(f"cannot register {name!r} at {endpoint.address}: "
                                  f"{err.code().name}: {err.details()}") from None
    return resp.bot_token


class PersistentPool:
    """The processes of every persistent entrant, for one run of the runner."""

    def __init__(self, cfg: TournamentConfig, log_dir: Path, log=None):
        self.cfg = cfg
        self.log_dir = Path(log_dir)
        self.log = log
        self.procs: list[_Proc] = []
        self._watch: asyncio.Task | None = None
        self._stopping = False

    @property
    def entrants(self) -> list[Entrant]:
        return [e for e in self.cfg.entrants if e.persistent]

    def capacity(self, e: Entrant) -> int:
        if e.capacity:
            return e.capacity
        # enough for every match of the run (a match counts once, whatever its seats)
        return max(1, min(256, math.ceil(self.cfg.run.concurrency / e.copies)))

    async def start(self, endpoints: list, supervise: bool = True) -> None:
        """Register every persistent entrant on every endpoint and start its processes;
        ``supervise``: restart a process that exits (``check`` reports it instead)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for i, ep in enumerate(endpoints):
            for e in self.entrants:
                if e.sandbox and not ep.unix_socket:
                    raise PersistentError(f"{e.name} runs sandboxed: the referee at "
                                          f"{ep.address} needs a Unix socket")
                token = await register(ep, e.name)
                values = {"address": ADDRESS_IN_SANDBOX if e.sandbox else ep.address,
                          "bot_token": token, "capacity": str(self.capacity(e)),
                          "name": e.name, "game": self.cfg.game, "python": sys.executable}
                argv = fill(list(e.command), values)
                extra = {**dict(e.env), "REFEREE_BOT_TOKEN": token}
                env = bot_env(extra, sandboxed=e.sandbox is not None)
                for c in range(e.copies):
                    p = _Proc(e, ep, c, argv, _cwd(self.cfg, e), env,
                              self.log_dir / f"persistent-{e.name}-r{i}-c{c}.log")
                    self.procs.append(p)
                    await self._launch(p)
        if supervise:
            self._watch = asyncio.create_task(self._supervise())

    async def _launch(self, p: _Proc) -> None:
        p.starts += 1
        bot = _Bot(-1, p.entrant.name, p.log_path)
        # a restarted process appends to its log: _spawn truncates, so keep the old one
        if p.log_path.exists() and p.starts > 1:
            p.log_path.rename(p.log_path.with_suffix(f".{p.starts - 1}.log"))
        await _spawn(bot, p.argv, p.cwd, p.env, p.entrant.sandbox, p.endpoint.unix_socket)
        p.bot = bot
        if bot.start_error:
            raise PersistentError(f"persistent entrant {p.entrant.name}: {bot.start_error}")
        if self.log is not None:
            self.log.info("persistent_start", entrant=p.entrant.name, copy=p.copy,
                          referee=p.endpoint.address, start=p.starts, log=str(p.log_path))

    async def _supervise(self) -> None:
        delay: dict[int, float] = {}
        while not self._stopping:
            waiters = [p.bot.waiter for p in self.procs if p.bot and p.bot.waiter
                       and p.bot.alive]
            if waiters:
                await asyncio.wait(waiters, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.sleep(0.5)
            if self._stopping:
                return
            for idx, p in enumerate(self.procs):
                if p.bot is None or p.bot.alive:
                    continue
                crash = {"exit_code": p.bot.exit_code, "at": round(time.time(), 3),
                         "log": str(p.log_path)}
                p.crashes.append(crash)
                if self.log is not None:
                    self.log.warning("persistent_exit", entrant=p.entrant.name, copy=p.copy,
                                     **crash)
                d = delay.get(idx, 0.5)
                delay[idx] = min(d * 2, 30.0)
                await asyncio.sleep(d)
                if self._stopping:
                    return
                try:
                    await self._launch(p)
                except PersistentError as exc:
                    if self.log is not None:
                        self.log.error("persistent_restart_failed", error=str(exc))

    def crashes(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for p in self.procs:
            if p.crashes:
                out.setdefault(p.entrant.name, []).extend(p.crashes)
        return out

    def log_of(self, name: str) -> str | None:
        for p in self.procs:
            if p.entrant.name == name:
                return str(p.log_path)
        return None

    async def stop(self) -> None:
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        bots = [p.bot for p in self.procs if p.bot is not None]
        await _end_bots(bots, 0.0)
