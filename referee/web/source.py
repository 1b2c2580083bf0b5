"""What the web app knows about matches, read from the referee service without changing it:
live matches from its memory, finished ones from its store and record files. Only public facts
leave this module (no seed, token, option secrets or raw record of a running match)."""
from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import Any

from referee.core import registry
from referee.core.match import ReplayError

from . import frames as F

REPLAY_CACHE = 16  # replays (frames of one match) kept in memory


class NotFound(Exception):
    pass


class MatchSource:
    def __init__(self, service: Any):
        self.service = service
        self._cache: OrderedDict[tuple[str, int], list[dict[str, Any]]] = OrderedDict()
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------ listing
    def _live_meta(self, rt: Any) -> dict[str, Any]:
        game = rt.game
        over = rt.game_over is not None
        d = rt.decision
        result = None
        if over:
            r = rt.match.result()
            if r is not None:
                result = F.result_summary(
                    {"scores": r.scores, "ranks": r.ranks, "winners": r.winners,
                     "summary": r.summary}, rt.names)
        return {
            "id": rt.id, "game": game.spec.name, "title": game.spec.title,
            "seats": rt.match.seat_count, "names": list(rt.names),
            "state": "broken" if rt.broken else ("finished" if over else "running"),
            "created_ms": rt.created_ms, "finished_ms": rt.finished_ms,
            "version": rt.match.version,
            "current_seat": d.seat if d is not None and not over else -1,
            "result": result,
        }

    def _row_meta(self, row: Any) -> dict[str, Any]:
        try:
            title = registry.get(row.game).spec.title
        except KeyError:
            title = row.game
        return {
            "id": row.id, "game": row.game, "title": title, "seats": row.seats,
            "names": list(row.names),
            "state": row.status if row.id not in self.service.unavailable else "broken",
            "created_ms": row.created_ms, "finished_ms": row.finished_ms,
            "version": None, "current_seat": -1,
            "result": F.result_summary(row.result, list(row.names)),
        }

    async def list(self, limit: int = 500) -> list[dict[str, Any]]:
        """Live matches first (newest first), then those only the store holds."""
        live = [self._live_meta(rt) for rt in list(self.service.matches.values())]
        rows = await asyncio.get_running_loop().run_in_executor(
            None, self.service.store.load_matches)
        known = {m["id"] for m in live}
        stored = [self._row_meta(r) for r in rows if r.id not in known]
        live.sort(key=lambda m: m["created_ms"], reverse=True)
        stored.sort(key=lambda m: m["created_ms"], reverse=True)
        return (live + stored)[:limit]

    async def meta(self, match_id: str) -> dict[str, Any]:
        rt = self.service.matches.get(match_id)
        if rt is not None:
            return self._live_meta(rt)
        if not _plausible_id(match_id):
            raise NotFound(match_id)
        rows = await asyncio.get_running_loop().run_in_executor(
            None, self._load_row, match_id)
        if rows is None:
            raise NotFound(match_id)
        return self._row_meta(rows)

    def _load_row(self, match_id: str) -> Any:
        if self.service.store.match_status(match_id) is None:
            return None
        for r in self.service.store.load_matches():
            if r.id == match_id:
                return r
        return None

    def runtime(self, match_id: str) -> Any:
        return self.service.matches.get(match_id)

    # ------------------------------------------------------------ replays
    async def frames(self, meta: dict[str, Any]) -> list[dict[str, Any]]:
        """Every version's public view of a match, re-simulated from its record (finished) or
        its move log so far (running); cached."""
        match_id = meta["id"]
        rt = self.service.matches.get(match_id)
        loop = asyncio.get_running_loop()
        if meta["state"] == "running" and rt is not None:
            m = rt.match
            moves = [e.to_json() for e in m.moves]  # a snapshot, taken on the loop
            key = (match_id, len(moves))
            job = (rt.game, m.options, m.seat_count, m.seed, moves, m.components, None)
        elif meta["state"] == "finished":
            key = (match_id, -1)
            job = None
        else:
            raise NotFound(match_id)
        async with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
            if job is None:
                frames = await loop.run_in_executor(None, self._frames_from_file, match_id)
            else:
                frames = await loop.run_in_executor(None, lambda: F.frames_from_moves(*job))
            self._cache[key] = frames
            for k in [k for k in self._cache if k[0] == match_id and k != key]:
                del self._cache[k]
            while len(self._cache) > REPLAY_CACHE:
                self._cache.popitem(last=False)
            return frames

    def _frames_from_file(self, match_id: str) -> list[dict[str, Any]]:
        path = self.service.records_dir / f"{match_id}.json"
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise NotFound(match_id) from None
        game = registry.get(record["game"])
        options = game.spec.parse_options(record.get("options") or {})
        sheet = self.service.sheet_for(game, options)
        try:
            return F.frames_from_record(game, record, sheet)
        except ReplayError:
            raise NotFound(match_id) from None

    def record_path(self, meta: dict[str, Any]):
        if meta["state"] != "finished":
            return None
        path = self.service.records_dir / f"{meta['id']}.json"
        return path if path.is_file() else None


def _plausible_id(match_id: str) -> bool:
    return 0 < len(match_id) <= 64 and all(c in "0123456789abcdef" for c in match_id)
