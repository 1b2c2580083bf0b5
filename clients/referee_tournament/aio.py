"""Running the runner's coroutines from the command line."""
from __future__ import annotations

import asyncio
import signal


def run_async(coro):
    """asyncio.run with SIGTERM treated like Ctrl-C (both cancel cleanly; resumable)."""

    async def main():
        task = asyncio.current_task()
        assert task is not None  # main() runs as asyncio.run's task
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        except (NotImplementedError, RuntimeError):
            pass
        try:
            return await coro
        except asyncio.CancelledError:
            raise KeyboardInterrupt from None

    return asyncio.run(main())
