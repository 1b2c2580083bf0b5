"""What the web app knows about matches, read from the referee service without changing it:
live matches from its memory, finished ones from its store and record files. Only public facts
leave this module (no seed, token, option secrets or raw record of a running match, nor the
replay or record of a finished match under embargo)."""
from __future__ import annotations

import asyncio
import builtins
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from referee.core import registry
from referee.core.contract import Game
from referee.core.match import Match, ReplayError
from referee.server.base import shard
from referee.server.base.auth import same_hash, token_hash
from referee.server.base.clock import clock_json, now_ms
from referee.server.play.records import replay_log
from referee.server.play.runtime import MatchRuntime
from referee.server.store.sqlite import MatchRow

from . import frames as F
from . import params
from .reader import ServerView, Watchable

REPLAY_CACHE = 16  # replays (frames of one match) kept in memory
ROWS_TTL_S = 1.0  # how long the list of stored matches is reused


class NotFound(Exception):
    pass


class StoredMatch(NamedTuple):
    """Another cluster worker's running match rebuilt from its stored move log: what the
    replay of a live match reads of a runtime (its match and its game)."""

    match: Match
    game: Game


#: (frames, reveal or None): a public record's replay from one seat's view, or the reveal
SeatFrames = tuple[builtins.list[str], builtins.list[dict[str, Any]] | None]
#: what the replay cache keeps, by (match id, kind): "live" a running match's Replayer,
#: "final" a finished match's frames, "seat<N>"/"seatreveal" its SeatFrames
Cached = F.Replayer | builtins.list[str] | SeatFrames


class MatchSource:
    def __init__(self, service: ServerView):
        self.service = service
        self._cache: OrderedDict[tuple[str, str], Cached] = OrderedDict()
        self._rows: tuple[float, list[MatchRow]] | None = None  # (when, store rows): 1 s cache
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------ listing
    def _live_meta(self, rt: MatchRuntime) -> dict[str, Any]:
        game = rt.game
        over = rt.game_over is not None
        d = rt.decision
        result = None
        if over:
            r = rt.match.result()
            if r is not None:
                result = F.result_summary(
                    {"scores": r.scores, "ranks": r.ranks, "winners": r.winners,
                     "details": r.details, "summary": r.summary}, rt.names)
        return {
            "id": rt.id, "game": game.spec.name, "title": game.spec.title,
            "seats": rt.match.seat_count, "names": list(rt.names),
            "state": "broken" if rt.broken else ("finished" if over else "running"),
            "created_ms": rt.created_ms, "finished_ms": rt.finished_ms,
            "version": rt.match.version,
            "current_seat": d.seat if d is not None and not over else -1,
            "result": result,
            # public, like a chess clock's faces; now_ms lets a page allow for its own clock
            "clock": clock_json(rt.clock.public_proto()) if not over else None, "now_ms": now_ms(),
            "league": rt.league_fields.get("league", ""),
            "event": str(rt.league_fields.get("event", "")),
            "bots": list(rt.league_fields.get("seat_bots", ())),
            "bot_versions": list(rt.league_fields.get("seat_bot_versions", ())),
            "unlisted": rt.unlisted,
        }

    def _row_meta(self, row: MatchRow) -> dict[str, Any]:
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
            "league": row.league, "event": str((row.extra or {}).get("event", "")),
            "bots": list(row.seat_bots or ()),
            "bot_versions": list(row.seat_versions or ()), "unlisted": row.unlisted,
        }

    async def list(self, limit: int = 500) -> list[dict[str, Any]]:
        """Live matches first (newest first), then those only the store holds (unlisted
        matches left out)."""
        live = [self._live_meta(rt) for rt in list(self.service.matches.values())
                if not rt.unlisted]
        rows = await self._store_rows()
        known = {m["id"] for m in live}
        stored = [self._row_meta(r) for r in rows if r.id not in known and not r.unlisted]
        live.sort(key=lambda m: m["created_ms"], reverse=True)
        stored.sort(key=lambda m: m["created_ms"], reverse=True)
        return (live + stored)[:limit]

    async def page(self, *, game: str = "", league: str = "", bot: str = "", limit: int = 50,
                   after: tuple[int, str] | None = None,
                   before: tuple[int, str] | None = None) -> dict[str, Any]:
        """One page of the listed matches, newest first (by creation time, then id), filtered
        by game, league and bound bot; ``after``: the page that follows a match's key (older),
        ``before``: the page that precedes it (newer). Returns the matches and the keys of the
        pages on either side (None at an end)."""
        live = {rt.id: rt for rt in list(self.service.matches.values())}

        def keep(game_: str, league_: str, bots: builtins.list[str] | None,
                 unlisted: bool) -> bool:
            return (not unlisted and (not game or game_ == game)
                    and (not league or league_ == league) and (not bot or bot in (bots or ())))

        # (key, match) of every match that passes, built into its summary only if on the page
        chosen: builtins.list[tuple[tuple[int, str], MatchRow | MatchRuntime]] = [
            ((r.created_ms, r.id), r) for r in await self._store_rows()
            if r.id not in live and keep(r.game, r.league, r.seat_bots, r.unlisted)]
        chosen += [((rt.created_ms, rt.id), rt) for rt in live.values()
                   if keep(rt.game.spec.name, rt.league_fields.get("league", ""),
                           rt.league_fields.get("seat_bots"), rt.unlisted)]
        chosen.sort(key=lambda c: c[0], reverse=True)  # newest first
        if after is not None:
            start = next((i for i, (k, _) in enumerate(chosen) if k < after), len(chosen))
        elif before is not None:
            newer = [i for i, (k, _) in enumerate(chosen) if k > before]
            start = max(0, (newer[-1] + 1 if newer else 0) - limit)
        else:
            start = 0
        items = [self._live_meta(m) if isinstance(m, MatchRuntime) else self._row_meta(m)
                 for _, m in chosen[start:start + limit]]
        return {
            "matches": items,
            "next": _cursor(items[-1]) if items and start + limit < len(chosen) else None,
            "previous": _cursor(items[0]) if items and start > 0 else None,
        }

    async def _store_rows(self) -> builtins.list[MatchRow]:
        """Every match the store holds, read at most once a second (a list page per viewer
        must not mean a table scan per viewer)."""
        loop = asyncio.get_running_loop()
        if self._rows is None or loop.time() - self._rows[0] > ROWS_TTL_S:
            rows = await loop.run_in_executor(None, self.service.store.load_matches)
            self._rows = (loop.time(), rows)
        return self._rows[1]

    async def meta(self, match_id: str) -> dict[str, Any]:
        """The public facts of one match, with ``embargo``: None, or why and until when its
        replay and record are held back (see referee.server.base.embargo)."""
        meta = await self._meta(match_id)
        emb = self.service.embargo(match_id) if meta["state"] == "finished" else None
        meta["embargo"] = emb.to_json() if emb is not None else None
        return meta

    async def _meta(self, match_id: str) -> dict[str, Any]:
        rt = self.service.matches.get(match_id)
        if rt is not None:
            return self._live_meta(rt)
        if not _plausible_id(match_id):
            raise NotFound(match_id)
        if self.service.store.match_status(match_id) is None:  # one primary-key lookup
            raise NotFound(match_id)
        row = next((r for r in await self._store_rows() if r.id == match_id), None)
        if row is None:  # stored since the rows were read
            self._rows = None
            row = next((r for r in await self._store_rows() if r.id == match_id), None)
        if row is None:
            raise NotFound(match_id)
        return self._row_meta(row)

    def runtime(self, match_id: str, game: str = "") -> Watchable | None:
        """The match's live runtime; in a cluster, for another worker's running match, a
        stand-in watching it on its owner (referee.server.front.forward.RemoteMatch)."""
        rt = self.service.matches.get(match_id)
        if rt is None and game and self.service.forwarder is not None:
            return self.service.forwarder.remote(match_id, game)
        return rt

    def _stored_match(self, match_id: str) -> StoredMatch:
        """Another cluster worker's running match, rebuilt from the move log it has stored
        (its owner holds the runtime): what the replay of a live match needs of one."""
        row = next((r for r in self.service.store.load_matches("running") if r.id == match_id),
                   None)
        if row is None:
            raise NotFound(match_id)
        game = registry.get(row.game)
        sheet = self.service.sheet_for(game, game.spec.parse_options(row.options))
        try:
            m = replay_log(game, row, self.service.store.load_moves(match_id), sheet)
        except (ReplayError, KeyError, ValueError):
            raise NotFound(match_id) from None
        return StoredMatch(m, game)

    # ------------------------------------------------------------ replays
    async def frames(self, meta: dict[str, Any]) -> builtins.list[str]:
        """Every version's public view of a match, re-simulated from its move log so far
        (running) or its record (finished; with the bots' notes). Per match, the re-simulation
        carries on from where the last request left it: a page load costs the new moves only."""
        async with self._lock:  # one re-simulation at a time, on a worker thread
            return await self._frames(meta)

    async def seat_frames(self, meta: dict[str, Any], viewer: int | str) -> SeatFrames:
        """A public record's replay as ``viewer`` saw it (a seat number), or the spectator's
        with every seat's final view (``"reveal"``): (frames, reveal or None). Only for a
        finished match that is not embargoed: the caller checks (``public_record``)."""
        if not public_record(meta):
            raise NotFound(meta["id"])
        key = (meta["id"], f"seat{viewer}")
        async with self._lock:
            got = self._cache.get(key)
            if not isinstance(got, tuple):  # not cached (a seat's key holds SeatFrames only)
                loop = asyncio.get_running_loop()
                got = await loop.run_in_executor(
                    None, self._seat_frames_from_file, meta["id"], viewer)
                self._cache[key] = got
                while len(self._cache) > REPLAY_CACHE:
                    self._cache.popitem(last=False)
            self._cache.move_to_end(key)
            frames, reveal = got
            return frames, reveal

    def _seat_frames_from_file(self, match_id: str, viewer: int | str) -> SeatFrames:
        record = self._record(match_id)
        try:
            game = registry.get(record["game"])
            options = game.spec.parse_options(record.get("options") or {})
            seat = viewer if isinstance(viewer, int) else None
            r = F.record_replayer(game, record, self.service.sheet_for(game, options), seat)
            moves = list(record.get("moves") or [])
            r.extend(moves)
            r.add_notes(moves)
            return (r.final_encoded(record.get("forfeited")),
                    r.reveal() if viewer == "reveal" else None)
        except (ReplayError, KeyError, ValueError):
            raise NotFound(match_id) from None

    def _record(self, match_id: str) -> dict[str, Any]:
        path = self.service.records_dir / f"{match_id}.json"
        try:
            record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return record
        except (OSError, ValueError):
            raise NotFound(match_id) from None

    async def _frames(self, meta: dict[str, Any]) -> builtins.list[str]:
        match_id = meta["id"]
        rt: MatchRuntime | StoredMatch | None = self.service.matches.get(match_id)
        loop = asyncio.get_running_loop()
        if meta["state"] == "running" and rt is None and self.service.forwarder is not None:
            rt = await loop.run_in_executor(None, self._stored_match, match_id)
        job: Callable[[], tuple[builtins.list[str], F.Replayer | None]]
        if meta["state"] == "running" and rt is not None:
            m, game = rt.match, rt.game
            # a snapshot, taken on the loop; the moves only (never a bot's note while live)
            moves: builtins.list[Mapping[str, Any]] = [
                {"n": e.n, "seat": e.seat, "move": e.move, "state_hash": e.state_hash}
                for e in m.moves]
            live = _replayer(self._cache.get((match_id, "live")))

            def job() -> tuple[list[str], F.Replayer | None]:
                r = live
                if r is None or r.moves_done > len(moves) or (
                        r.moves_done and moves[r.moves_done - 1]["state_hash"] != r.last_hash()):
                    r = F.Replayer(game, m.options, m.seat_count, m.seed, m.components,
                                   m.record_format, start=m.start)
                r.extend(moves, verify=False)  # the referee's own log, hashed as it was played
                return list(r.encoded), r
        elif meta["state"] == "finished":
            final = self._cache.get((match_id, "final"))
            if isinstance(final, list):  # a "final" key holds a finished match's frames only
                self._cache.move_to_end((match_id, "final"))
                return final
            carry_on = _replayer(self._cache.get((match_id, "live")))

            def job() -> tuple[list[str], F.Replayer | None]:
                return self._frames_from_file(match_id, carry_on), None
        else:
            raise NotFound(match_id)
        frames, replayer = await loop.run_in_executor(None, job)
        # the cache is only touched here, on the event loop
        if replayer is not None:
            self._cache[(match_id, "live")] = replayer
            self._cache.move_to_end((match_id, "live"))
        else:
            self._cache.pop((match_id, "live"), None)
            self._cache[(match_id, "final")] = frames
        while len(self._cache) > REPLAY_CACHE:
            self._cache.popitem(last=False)
        return frames

    def _frames_from_file(self, match_id: str, r: F.Replayer | None) -> builtins.list[str]:
        """From the record file; carries on from ``r`` (the live replay) when it fits."""
        record = self._record(match_id)
        try:
            game = registry.get(record["game"])
            moves = list(record.get("moves") or [])
            if r is None or r.moves_done > len(moves) or (
                    r.moves_done and moves[r.moves_done - 1]["state_hash"] != r.last_hash()):
                options = game.spec.parse_options(record.get("options") or {})
                r = F.record_replayer(game, record, self.service.sheet_for(game, options))
            r.extend(moves)
            r.add_notes(moves)  # public now; the frames made while live have none
            return r.final_encoded(record.get("forfeited"))
        except (ReplayError, KeyError, ValueError):
            raise NotFound(match_id) from None

    # ------------------------------------------------------------ a seat's own notes
    async def token_seat(self, match_id: str, token: str) -> int | None:
        """The seat of ``match_id`` whose token ``token`` is, or None (compared as hashes, in
        constant time; a token is never kept or logged)."""
        h = token_hash(token)
        rt = self.service.matches.get(match_id)
        if rt is not None:
            hashes = list(rt.token_hashes)
        else:
            row = next((r for r in await self._store_rows() if r.id == match_id), None)
            hashes = list(row.token_hashes) if row is not None else []
        seat = None
        for s, want in enumerate(hashes):
            if same_hash(want, h):
                seat = s
        return seat

    def seat_notes(self, match_id: str, seat: int, since: int = 0
                   ) -> builtins.list[dict[str, Any]]:
        """``seat``'s notes on its moves after move ``since``: ``{"n": move number, "v": state
        version after it, "note"}`` each. For the holder of that seat's token only (while
        the match is live nobody else sees them)."""
        rt = self.service.matches.get(match_id)
        moves: builtins.list[Mapping[str, Any]]
        if rt is not None and rt.game_over is None:
            moves = [{"n": e.n, "seat": e.seat, "version_before": e.version_before,
                      "note": e.note} for e in rt.match.moves[since:]]
        else:
            try:
                moves = list(self._record(match_id).get("moves") or [])[since:]
            except NotFound:
                moves = []
        return [{"n": int(m["n"]), "v": int(m["version_before"]) + 1, "note": str(m["note"])}
                for m in moves if m.get("note") and int(m["seat"]) == seat]

    def record_path(self, meta: dict[str, Any]) -> Path | None:
        """The record file of a finished match that is not embargoed, or None."""
        if meta["state"] != "finished" or meta.get("embargo"):
            return None
        path = self.service.records_dir / f"{meta['id']}.json"
        return path if path.is_file() else None


def _replayer(cached: Cached | None) -> F.Replayer | None:
    """A "live" key's entry (a running match's Replayer), or None when there is none."""
    return cached if isinstance(cached, F.Replayer) else None


def public_record(meta: dict[str, Any]) -> bool:
    """Whether a match's whole record (seat views, notes, the final reveal) may be shown: it
    is over and not embargoed (referee.server.base.embargo)."""
    return meta["state"] == "finished" and not meta.get("embargo")


def _plausible_id(match_id: str) -> bool:
    """Hex digits, after a cluster worker's ``wK-`` (referee.server.base.shard)."""
    hexpart = match_id.partition("-")[2] if shard.of_match(match_id) else match_id
    return 0 < len(match_id) <= 64 and len(hexpart) > 0 and all(
        c in "0123456789abcdef" for c in hexpart)


def _cursor(meta: dict[str, Any]) -> str:
    """A page's edge as the API's opaque cursor: ``<created ms>-<match id>``."""
    return f"{meta['created_ms']}-{meta['id']}"


def parse_cursor(text: str) -> tuple[int, str] | None:
    """The key of a cursor from ``_cursor``; None if it is not one."""
    ms, sep, match_id = text.partition("-")
    if not sep or not params.is_digits(ms) or len(ms) > 15 or not _plausible_id(match_id):
        return None
    return (int(ms), match_id)
