"""The referee's own reference bots in the lobby (``referee serve --house-bots``, issue 33):
so that a person always finds someone to play.

Each house bot is an SDK reference bot (``referee-bot session NAME --accept-challenges``) run as
a child process of the referee, registered as ``house-NAME`` and connected to the referee over
its own gRPC port (or its ``--unix`` socket) through an ordinary Session, exactly as any other
bot that accepts challenges. Why processes and not bots inside the referee: the server may not
import the SDK (tests/test_layers.py), a bot's move search must not run on the referee's event
loop (every match's clock and stream share it), and a bot that crashes must not take the
referee with it. The process is started with the module name only (``python -m
referee_client.cli``), so nothing of the SDK is imported here; its bot token goes in its
environment (``REFEREE_BOT_TOKEN``), never on its command line. A house bot that exits is
started again after a pause that doubles up to a minute; all are stopped with the referee, and die with it if it is killed.
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger("referee.house")

#: The SDK's reference bots (``referee-bot session``'s choices): what ``--house-bots`` starts
#: when given no list. Their names are the SDK's; the games each accepts it says itself, in
#: its SessionHello (a greedy bot its own game), so nothing here knows a game.
DEFAULT_HOUSE_BOTS = ("random", "greedy-batavia", "greedy-goa", "greedy-santa-maria")
PREFIX = "house-"
MAX_PAUSE_S = 60.0
_PR_SET_PDEATHSIG = 1
#: libc, loaded here in the parent: between fork and exec the child (of a process with gRPC's
#: threads) only makes the one call, no dlopen
_LIBC = ctypes.CDLL(None, use_errno=True)


def _die_with_referee() -> None:
    """In the child: SIGTERM when the referee dies, however it dies (kill -9 included), so no
    house bot outlives it, retrying a referee that is gone."""
    with contextlib.suppress(OSError, AttributeError):
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def house_name(bot: str) -> str:
    return PREFIX + bot


class HouseBots:
    """Start, watch and stop the house bots' processes."""

    def __init__(self, bots: tuple[str, ...], target: str, capacity: int,
                 register: Callable[[str], Awaitable[str]]):
        self.bots = bots
        self.target = target  # the referee's own address, as a gRPC target
        self.capacity = capacity
        self.register = register  # a bot's name -> its new bot token
        self.tasks: list[asyncio.Task[None]] = []
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self.stopping = False

    def command(self, bot: str) -> list[str]:
        return [sys.executable, "-m", "referee_client.cli", "session", bot,
                "--accept-challenges", "--capacity", str(self.capacity),
                "--address", self.target, "--give-up-after", "0", "--log-level", "warning"]

    async def start(self) -> None:
        for bot in self.bots:
            token = await self.register(house_name(bot))
            self.tasks.append(asyncio.ensure_future(self._keep(bot, token)))
        log.info("house_bots", bots=[house_name(b) for b in self.bots], target=self.target)

    async def _keep(self, bot: str, token: str) -> None:
        pause = 1.0
        env = {**os.environ, "REFEREE_BOT_TOKEN": token}
        env.pop("REFEREE_ADMIN_TOKEN", None)
        while not self.stopping:
            proc = await asyncio.create_subprocess_exec(
                *self.command(bot), env=env, stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True, preexec_fn=_die_with_referee)
            self.procs[bot] = proc
            code = await proc.wait()
            if self.stopping:
                return
            log.warning("house_bot_exited", bot=house_name(bot), code=code, restart_in_s=pause)
            await asyncio.sleep(pause)
            pause = min(MAX_PAUSE_S, pause * 2)

    async def stop(self) -> None:
        self.stopping = True
        for proc in self.procs.values():
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
