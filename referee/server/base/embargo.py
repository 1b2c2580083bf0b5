"""The embargo on a finished match's hidden information.

Duplicate matches (same game, same seed) deal the same cards, tiles and dice: the record of a
finished one (it carries the seed), its replay and even its final public view show what another
match on that seed still has face down. So while any other match of the same game on the same
seed is unfinished on this referee (created and not over, held in memory: after a restart every
resumable one is), a finished match under the SAFE policy shows spectators only what a running
match would (who plays, its state and result) and says why; the admin token still reads its
record. Under the NONE policy (``CreateMatchRequest.reveal_policy``) it is public at once.
With several referees on one store (leases), the running matches the store lists count too,
whichever referee runs them."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: the reason GetRecord and Watch answer with (FAILED_PRECONDITION), and the web viewer shows
REASON = "EMBARGOED"


@dataclass(frozen=True, slots=True)
class Embargo:
    match_id: str
    until: tuple[str, ...]  # the unfinished matches on the same seed, sorted

    def message(self) -> str:
        shown = ", ".join(self.until[:5]) + (" …" if len(self.until) > 5 else "")
        return (f"match {self.match_id} is over, but its record and replay are embargoed until "
                f"{len(self.until)} other match(es) on the same seed finish ({shown})")

    def to_json(self) -> dict[str, Any]:
        return {"reason": REASON, "until": list(self.until), "message": self.message()}


def unfinished_twins(game: str, seed: int, match_id: str, runtimes: Iterable[Any]) -> list[str]:
    """The ids of the matches in ``runtimes`` other than ``match_id`` that are of ``game`` on
    ``seed`` and not over (a broken one will never be played on)."""
    return sorted(rt.id for rt in runtimes
                  if rt.id != match_id and rt.game_over is None and not rt.broken
                  and rt.match.seed == seed and rt.game.spec.name == game)
