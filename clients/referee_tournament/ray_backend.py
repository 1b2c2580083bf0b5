"""``--backend ray``: every match is a Ray task (``pip install 'boardgame-referee[ray]'``).

A task runs :func:`referee_tournament.play.play_match_sync` on whichever node Ray picks: it
starts that match's bot processes there, against the referee address in the job (every node
must reach it: start the referee on an address the cluster can reach and pass ``--address``),
or, with ``[run] task_referee = true``, against a private referee it starts for that one match.
Bot commands must exist on every node (same paths, same installs). Results (scores, ranks, bot
outcomes, the record JSON) travel back to the driver, which alone writes the results folder.

With no ``ray_address`` a local Ray instance is started (``num_cpus`` = concurrency).
"""
from __future__ import annotations

import asyncio
from typing import Any

from .play import MatchJob, play_match_sync


class RayUnavailable(RuntimeError):
    pass


class RayBackend:
    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None):
        try:
            import ray
        except ImportError as exc:
            raise RayUnavailable(
                "the Ray backend needs Ray: pip install 'boardgame-referee[ray]' "
                f"({exc})"
            ) from None
        self.ray = ray
        self._owns = False
        if not ray.is_initialized():
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                start_local_ray(ray, num_cpus or 2)
                self._owns = True
        self._remote = ray.remote(num_cpus=1, max_retries=0)(play_match_sync)

    async def play(self, job: MatchJob) -> dict[str, Any]:
        ref = self._remote.remote(job.to_dict())
        try:
            return await ref
        except asyncio.CancelledError:
            self.ray.cancel(ref, force=True)
            raise

    async def close(self) -> None:
        if self._owns:
            await asyncio.to_thread(self.ray.shutdown)


#: Ray waits a fixed time for its raylet to register, and for its GCS server to write its port
#: file, at start-up, which a loaded machine (a build or a test suite beside it) can miss; a
#: local instance is started again this many times
START_ATTEMPTS = 3
#: what Ray's start-up says when it gave up waiting (a bare Exception for the raylet, a
#: RuntimeError for the GCS server's port file, seen in a clean-checkout CI run)
SLOW_START = ("timed out during startup", "Timed out waiting for file")


def start_local_ray(ray: Any, num_cpus: int) -> None:
    """Start a local Ray instance of ``num_cpus`` for this process, trying again after Ray's
    start-up timed out (:data:`SLOW_START`: its raylet slow to register, its GCS server slow to
    write its port), at most ``START_ATTEMPTS`` times."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
            return
        except Exception as exc:  # Ray raises a bare Exception for this
            if not any(w in str(exc) for w in SLOW_START) or attempt == START_ATTEMPTS:
                raise
            ray.shutdown()
