"""The matches this referee plays: its live runtimes by id and the index of their seat tokens,
the matches it could not resume, the per-game wires, its background tasks, and their life from
creation (or resumption after a restart, or a take-over of a lease) to eviction.

Apart from the gRPC front (``referee.server.front.service``), which authenticates, rate-limits
and checks each call and then asks this registry; the web viewer reads it through the front's
read-only names. It imports nothing of the front (play is below it: tests/test_layers.py)."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
from google.protobuf import json_format

from referee.core import registry
from referee.core.components import ComponentSheet
from referee.core.contract import Game
from referee.core.match import Match, ReplayError
from referee.server.base import errors, shard
from referee.server.base.clock import DEFAULT_JOIN_MS, now_ms
from referee.server.base.embargo import Embargo, unfinished_twins
from referee.server.base.wire import GameWire
from referee.server.play.records import replay_log
from referee.server.play.runtime import MatchRuntime, RuntimeContext
from referee.server.play.sessions import BotSessions
from referee.server.play.streams import end_with
from referee.server.store.sqlite import MatchRow, Store, store_outage
from referee.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.server")


def league_fields(league: str, bots: list[str], versions: list[int]) -> dict[str, Any]:
    """What a league match's record adds (nothing for another match: its record is as
    before)."""
    out: dict[str, Any] = {}
    if league:
        out["league"] = league
    if any(bots):
        out["seat_bots"] = list(bots)
        if versions:
            out["seat_bot_versions"] = list(versions)
    return out


class MatchRegistry:
    """Owns the matches this referee plays. Its callers (the front) have checked the call
    already: nothing here authenticates or rate-limits."""

    def __init__(
        self,
        store: Store,
        records_dir: Path,
        sessions: BotSessions,
        sign: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        components: dict[tuple[str, str], ComponentSheet] | None = None,
        keep_finished_s: float = 300.0,
        join_ms: int = DEFAULT_JOIN_MS,
        shard: str | None = None,
        roaming: bool = False,
    ):
        self.store = store
        self.sessions = sessions
        # a finished match's record file, one per match (written at its final commit)
        self.records_dir = records_dir
        self.records_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.components = dict(components or {})
        # a cluster worker's shard (referee.server.base.shard): it makes the ids and tokens of its
        # matches and bots, and resumes only its own matches
        self.shard = shard
        # one of several hosts (``--advertise``): it takes over any shard's match whose lease
        # expired, and hands the calls for a match another live referee holds to that one
        self.roaming = roaming
        self.matches: dict[str, MatchRuntime] = {}
        self.tokens: dict[str, tuple[str, int]] = {}  # sha256(token) -> (match id, seat)
        # A finished match stays in memory keep_finished_s seconds (reconnecting seats get its
        # GameOver, spectators its final view), then only the store and its record file hold it:
        # a long-running referee's memory does not grow with the matches it has played.
        self.keep_finished_s = keep_finished_s
        # how long a match's first decision waits for its seats when its policy says 0
        self.join_ms = join_ms
        self.unavailable: dict[str, str] = {}  # running in the store, but failed to resume
        self.draining = False  # set by the front's drain: this referee takes no match over
        self._wires: dict[str, GameWire] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.ctx = RuntimeContext(store=store, records_dir=self.records_dir, wire=self.wire,
                                  spawn=self.spawn, finished=self.finished, sign=sign)

    # ------------------------------------------------------------------ helpers
    def wire(self, game: Game) -> GameWire:
        w = self._wires.get(game.spec.name)
        if w is None:
            w = self._wires[game.spec.name] = GameWire(game)
        return w

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background_task_failed", error=repr(task.exception()))

    def sheet_for(self, game: Game, options: dict[str, Any]) -> ComponentSheet:
        key = (game.spec.name, game.sheet_variant(options))
        return self.components.get(key) or game.default_components(options)

    def raise_if_gone(self, match_id: str) -> None:
        """A match the store knows but memory no longer holds: over (its record is on disk),
        or one that could not be resumed at start-up."""
        if match_id in self.unavailable:
            raise errors.precondition(
                "MATCH_OVER", f"match {match_id} is unavailable: {self.unavailable[match_id]}")
        if match_id and self.store.match_status(match_id) in ("finished", "broken"):
            raise errors.precondition(
                "MATCH_OVER", f"match {match_id} is over; GetRecord returns its record")

    def embargo(self, match_id: str) -> Embargo | None:
        """The embargo on the hidden information of ``match_id`` (a finished match), or None
        when it may be shown (see embargo.py)."""
        key = self.store.reveal_key(match_id)
        if key is None or key[2] == "none":
            return None
        game, seed, _ = key
        twins = unfinished_twins(game, seed, match_id, list(self.matches.values()))
        if self.store.owner:  # other referees on the store may run a twin
            twins = sorted(set(twins) | {m for m in self.store.running_twins(game, seed, match_id)
                                         if m not in self.unavailable})
        return Embargo(match_id, tuple(twins)) if twins else None

    # ------------------------------------------------------------------ a match's life
    def new_match_id(self) -> str:
        """A match id neither live nor in the store."""
        match_id = shard.match_id(self.shard)
        while match_id in self.matches or self.store.match_status(match_id) is not None:
            match_id = shard.match_id(self.shard)
        return match_id

    def new_runtime(self, match_id: str, match: Match, names: list[str], policy: pb.TimePolicy,
                    token_hashes: list[str], seed_salt: str) -> MatchRuntime:
        """A new match's runtime, not yet registered (CreateMatch registers it once stored)."""
        return MatchRuntime(
            self.ctx, match_id, match, names=names, policy=policy,
            token_hashes=token_hashes, created_ms=now_ms(), seed_salt=seed_salt,
        )

    def register(self, rt: MatchRuntime) -> None:
        self.matches[rt.id] = rt
        for seat, h in enumerate(rt.token_hashes):
            self.tokens[h] = (rt.id, seat)

    def finished(self, rt: MatchRuntime) -> None:
        """Called once a match is over and committed: forget it after keep_finished_s."""
        self.sessions.match_over(rt.id)
        loop = asyncio.get_running_loop()
        loop.call_later(max(0.0, self.keep_finished_s), self.evict, rt)

    def evict(self, rt: MatchRuntime) -> None:
        if self.matches.get(rt.id) is not rt:
            return
        self._forget(rt)
        log.debug("match_evicted", match_id=rt.id)

    def _forget(self, rt: MatchRuntime) -> None:
        """Take a held match and its seat tokens out of memory and stop its timer."""
        del self.matches[rt.id]
        for h in rt.token_hashes:
            if self.tokens.get(h, (None,))[0] == rt.id:
                del self.tokens[h]
        rt.cancel_timer()

    # ------------------------------------------------------------------ leases
    def adopt(self, match_id: str, token_h: str | None = None) -> bool:
        """Take over a running match this referee does not hold, when a call names it (with
        one of its seat tokens, ``token_h``, if the call carries one): if its lease is free
        (its referee stopped cleanly, or was killed or cut off and let the lease expire), the
        lease is acquired with the next epoch and the match is loaded from the store as at
        start-up. UNAVAILABLE / NOT_OWNER while another referee holds it; False for anything
        else (an unknown token or match, a match that is over)."""
        if not self.store.owner or not match_id or match_id in self.matches \
                or not (self.roaming or self.owns(match_id)):
            return False  # a worker without --advertise never takes another shard's
        if token_h is not None:
            found = self.store.match_of_token(token_h)
            if found is None or found[0] != match_id:
                return False
        if match_id in self.unavailable or self.store.match_status(match_id) != "running":
            return False
        if self.draining:  # it is about to release its leases, not to take one
            raise errors.draining()
        epoch = self.store.try_lease(match_id)
        if epoch is None:
            raise errors.not_owner(f"match {match_id} is run by another referee on this store; "
                                   "call again through the proxy (or that referee)")
        row = self.store.load_match(match_id)
        assert row is not None
        rt = self._bring_back(row)
        if rt is None:
            return False
        log.info("match_taken_over", match_id=match_id, epoch=epoch, move=len(rt.match.moves))
        self.sessions.restore(lambda mid: mid == match_id, lambda mid: False)
        return True

    def drop(self, match_id: str) -> None:
        """A write found this match taken over by another referee (fencing): forget it here,
        and end its streams with UNAVAILABLE / NOT_OWNER so that its bots call again."""
        rt = self.matches.get(match_id)
        if rt is None:
            return
        self._forget(rt)
        err = errors.not_owner(f"match {match_id} is now run by another referee; call again")
        for stream in [*(st for lst in rt.streams.by_seat.values() for st in lst),
                       *rt.streams.watchers]:
            end_with(stream.queue, err)
        self.sessions.forget(match_id)
        log.warning("match_lost", match_id=match_id, move=len(rt.match.moves))

    async def keep_leases(self, every_s: float) -> None:
        """Renew this referee's leases, all in one statement, every ``every_s`` seconds."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await self.store.renew_leases()
            except Exception as exc:  # noqa: BLE001 - the next round tries again
                # the store away: it logged the outage once; no warning every round
                (log.debug if store_outage(exc) else log.warning)(
                    "lease_renewal_failed", error=repr(exc))

    # ------------------------------------------------------------------ startup
    def resume_all(self) -> int:
        """Rebuild every unfinished match from its move log (checking each state hash): those
        whose lease is free or was this referee's (see ``adopt``); another referee sharing the
        store runs the others."""
        resumed = 0
        # a host (roaming) also takes back what it had taken over from another shard
        mine = set(self.store.held_leases()) if self.roaming else set()
        for row in self.store.load_matches():
            if row.status != "running" or not (self.owns(row.id) or row.id in mine):
                continue  # over: the store and its record file answer for it
            if self.store.owner and self.store.try_lease(row.id) is None:
                continue  # held by another referee on the store
            if self._bring_back(row) is not None:
                resumed += 1
        # another shard's open assignments stay as they are (is_over is False for them)
        self.sessions.restore(lambda mid: mid in self.matches,
                              lambda mid: self.owns(mid)
                              and self.store.match_status(mid) != "running")
        self.store.release_leases(keep=self.matches)  # matches of a previous run not resumed
        return resumed

    def holder_address(self, match_id: str) -> str | None:
        """Where to hand a call for ``match_id`` (a host's, ``roaming``): the address of the
        other referee whose live lease holds it, or None to serve it here (held here, free or
        expired: ``adopt`` takes it; over or unknown: the handler answers)."""
        if match_id in self.matches or not match_id:
            return None
        lease = self.store.lease_holder(match_id)
        if lease is None:
            return None
        owner, expires_ms, address = lease
        if not owner or owner == self.store.owner or expires_ms < now_ms():
            return None
        if not address:
            raise errors.not_owner(f"match {match_id} is run by another referee on this store; "
                                   "call again through the proxy (or that referee)")
        return address

    def owns(self, match_id: str) -> bool:
        """Whether this referee owns the match: always, unless it is a cluster worker, which
        owns its shard's matches (and the home worker those of ids without a shard)."""
        return self.shard is None or shard.of_match(match_id) == self.shard or (
            shard.of_match(match_id) is None and self.shard == shard.HOME)

    def _bring_back(self, row: MatchRow) -> MatchRuntime | None:
        """A running match of the store held here again (at start-up, or taken over): rebuilt,
        registered and given its next decision (or its finish, when its referee stopped
        between the last move and the end); None, noted in ``unavailable``, if it cannot be
        rebuilt (this match only: one bad match must not stop the others)."""
        try:
            rt = self._resume(row)
        except Exception as exc:  # noqa: BLE001 - this match only
            log.error("resume_failed", match_id=row.id, error=str(exc))
            self.unavailable[row.id] = f"it could not be resumed ({exc})"
            return None
        self.register(rt)
        if rt.match.decision() is None:  # stopped between the last move and the finish
            self.spawn(self._finish_locked(rt))
        else:
            rt.issue_decision()
        return rt

    async def _finish_locked(self, rt: MatchRuntime) -> None:
        async with rt.lock:
            if rt.game_over is None:
                await rt.finish()

    def _resume(self, row: MatchRow) -> MatchRuntime:
        game = registry.get(row.game)
        sheet = self.sheet_for(game, game.spec.parse_options(row.options))
        if sheet.sha256 != row.components_sha256:
            raise ReplayError(
                f"match was created with component sheet {row.components_sha256[:12]}…, "
                f"this referee has {sheet.sha256[:12]}… (pass it with --components)"
            )
        m = replay_log(game, row, self.store.load_moves(row.id), sheet)
        policy = json_format.ParseDict(row.time_policy, pb.TimePolicy())
        rt = MatchRuntime(
            self.ctx, row.id, m, names=row.names, policy=policy, token_hashes=row.token_hashes,
            created_ms=row.created_ms, seed_salt=row.seed_salt,
        )
        rt.league_fields = league_fields(row.league, row.seat_bots or [], row.seat_versions or [])
        rt.league_fields.update(row.extra or {})  # a lobby match's "lobby", kept in its row
        rt.unlisted = row.unlisted
        rt.restore_clocks()
        if row.rejected:
            rt.restore_rejections(row.rejected)
        if row.abandoned:
            rt.restore_abandoned(row.abandoned)  # issue_decision then plays them at once
        rt.restore_joined(row.joined or [])
        log.info("match_resumed", match_id=row.id, move=len(m.moves), game=row.game)
        return rt

    def shutdown(self) -> None:
        """Stop every match's timer and stream and every background task (the sessions are
        closed first, by the front)."""
        for rt in self.matches.values():
            rt.cancel_timer()
            rt.streams.close()
        for task in list(self._tasks):
            task.cancel()
