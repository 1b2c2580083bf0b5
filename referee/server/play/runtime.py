"""One live match inside the server: the core Match and the order of what happens to it (a
decision issued, a move submitted or played by the time policy, committed, announced; a seat
abandoned; the end). Game-agnostic: everything game-specific goes through the Game contract.
Its other jobs have modules of their own: the wire encoding (``wire``), the connected streams
(``streams``), the clock under the time policy (``clock``) and the record (``records``).

Per-move path (kept lean on purpose): unwrap + ``move_from_proto`` once, ``Match.submit`` (one
``apply``, one ``hash_state``), one group-committed store write, then the events and the next
decision are built and serialised ONCE and the same bytes are queued to every stream."""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from google.protobuf import json_format

from referee.core.contract import Decision, Event, Game, IllegalMove
from referee.core.match import Match, MoveEntry, result_json
from referee.core.provenance import seed_commitment
from referee.server.base import errors, metrics
from referee.server.base.clock import MatchClock, StartGate, now_ms
from referee.server.base.wire import (
    GameWire,
    check_note,
    match_event,
    opt_str,
    refusal,
    server_decision,
    server_move_result,
)
from referee.server.play import records
from referee.server.play.streams import CLOSE, MatchStreams, Stream
from referee.server.store.sqlite import Backoff, CommitUnknown, Store, store_outage, unavailable
from referee.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.match")

#: An accepted move's answer still to send: the mover's stream (which joined with
#: combine_decision) and the ServerMessage of its MoveResult
Answer = tuple[Stream, pb.ServerMessage]


@dataclass(frozen=True, slots=True)
class Unsure:
    """A move whose commit's outcome is unknown (``store.CommitUnknown``: the store went away
    as it committed, and may have committed it). The match was rewound and the move refused;
    until the store says which (``MatchRuntime._reconcile``), this keeps what the move had
    made of the match, so that it can go on exactly as if the move had been acknowledged."""

    played: Match  # the match with the move applied (rewind built a new one without it)
    entry: MoveEntry
    events: list[Event]  # what its commit would have announced
    clock: tuple[list[int], list[int]]  # banks and strikes as the move left them
    rejected: list[int] | None  # the refusal counts its commit carried


@dataclass(frozen=True, slots=True)
class RuntimeContext:
    """What a live match needs from the referee around it, and nothing more (no back-pointer
    to the service, so this module imports nothing of it)."""

    store: Store
    records_dir: Path
    wire: Callable[[Game], GameWire]  # the shared envelope codec of a game
    spawn: Callable[[Awaitable], None]  # run a background task (a time-policy expiry)
    finished: Callable[[MatchRuntime], None]  # the match is over and committed
    # signs a finished record (signing.RecordSigner.sign), once per match; None: unsigned
    sign: Callable[[dict[str, Any]], dict[str, Any]] | None = None


#: Public events a runtime keeps for DescribeSeat once asked (the newest; a whole match of any
#: game here has fewer)
EVENT_LOG_LIMIT = 20_000


def timeout_event(entry: MoveEntry) -> Event:
    """The referee's event for a move the time policy played. The game's own events say
    publicly what the move did; the move itself may carry a seat's secret choice, so it stays
    out of this broadcast."""
    return Event("referee.timeout", entry.seat,
                 f"seat {entry.seat} ran out of time ({entry.policy})",
                 {"policy": entry.policy, "move_number": entry.n})


def replayed_events(match: Match) -> list[pb.MatchEvent]:
    """The public events of ``match``'s moves so far, as its event streams were sent them,
    rebuilt by playing its stored moves again from its start (the engine is deterministic)."""
    game = match.game
    m = Match.create(game, match.options, match.seat_count, match.seed, match.components,
                     record_format=match.record_format, start=match.start)
    out: list[pb.MatchEvent] = []
    for entry in match.moves:
        msg = game.move_message()
        json_format.ParseDict(entry.move, msg)
        _e, events = m.submit(entry.seat, game.move_from_proto(msg), entry.version_before)
        if entry.timeout:
            events = [timeout_event(entry), *events]
        out.extend(match_event(e, m.version, entry.timeout) for e in events)
    return out


class MatchRuntime:
    def __init__(
        self,
        ctx: RuntimeContext,
        match_id: str,
        match: Match,
        *,
        names: list[str],
        policy: pb.TimePolicy,
        token_hashes: list[str],
        created_ms: int,
        seed_salt: str = "",
    ):
        self.ctx = ctx
        self.id = match_id
        self.match = match
        self.game = match.game
        self.wire: GameWire = ctx.wire(match.game)
        # this match's series (bound once: a move pays the increment, not the label lookup)
        game = match.game.spec.name
        self._moves = metrics.MOVES.labels(game)
        self._move_seconds = metrics.MOVE_SECONDS.labels(game)
        self._commit_seconds = metrics.COMMIT_SECONDS.labels(ctx.store.kind)
        self._expiries = (metrics.CLOCK_EXPIRIES.labels(game, "move"),
                          metrics.CLOCK_EXPIRIES.labels(game, "forfeit"))
        self.names = names
        self.policy = policy
        self.token_hashes = token_hashes
        self.created_ms = created_ms
        # the salt of the seed commitment every seat's Welcome carries (kept in the store,
        # revealed by the finished record only; "" for a match from a store without one)
        self.seed_salt = seed_salt
        self.seed_commitment = seed_commitment(seed_salt, match.seed) if seed_salt else ""
        # a league match's record also names its league and the bot (and version) of each
        # seat (CreateMatch.league, seat_bots, seat_bot_versions); set by the service
        self.league_fields: dict[str, Any] = {}
        self.unlisted = False  # CreateMatch.unlisted: kept out of the web's match list
        self.finished_ms: int | None = None
        self.lock = asyncio.Lock()
        n = match.seat_count
        self.streams = MatchStreams(n)
        self.clock = MatchClock(policy, n, self._expired)
        # no decision is timed until every seat has joined (or join_ms is up): until then the
        # pending decision is held back, neither timed nor sent (``held``)
        self.gate = StartGate(policy, created_ms)
        self.held = False
        self._held_version = -1
        self.log = log.bind(match_id=match_id)
        #: the match's public events with the version each led to, kept only once a client
        #: asked for them (DescribeSeat, ``events_since``): None until then, so a match nobody
        #: describes pays nothing per move for it
        self.event_log: list[pb.MatchEvent] | None = None
        # current decision, built once per version
        self.decision: Decision | None = None
        self.decision_proto: pb.Decision | None = None  # parsed on demand from the body
        self._decision_body: bytes = b""
        self.decision_bytes: bytes = b""  # the ServerMessage, as sent
        # each view encoded once per state version (key: a seat, None for spectators), and the
        # spectators' update once per version and decision
        self._views: dict[int | None, bytes] = {}
        self._views_version = -1
        self._spectator: tuple[tuple[int, int, int, bool], Decision | None, bytes] | None = None
        self.game_over: pb.GameOver | None = None
        self.game_over_bytes: bytes = b""
        self.record_path: Path | None = None
        self.broken: str | None = None
        # moves refused per seat (malformed or not legal then), for the record. A refusal changes
        # nothing, so it costs no commit of its own: the counts ride with the next stored move
        # (and the final commit); a referee restart loses at most those since the last move.
        self.rejections = [0] * n
        self._rejections_stored = [0] * n
        # seats whose bot the host gave up on (AbandonSeat), with the host's reason: their
        # decisions are played at once, for the rest of the match (stored, restored on resume)
        self.abandoned: dict[int, str] = {}
        # seats whose bot has joined (a Play stream or a call with its seat token), stored so
        # that AbandonSeat's unless_joined still sees a join from before a restart
        self.joined = [False] * n
        # a move whose commit's outcome is unknown, until the store says (``_reconcile``);
        # and the last one found stored after all (its resend is a duplicate, not a refusal
        # to count)
        self.unsure: Unsure | None = None
        self._recovered: MoveEntry | None = None
        # the time policy waiting for the store (``_when_store_back``): the state version it
        # waits at and its backoff, and the version whose decision it timed afresh already
        self._waiting: tuple[int, Backoff] | None = None
        self._retimed = -1

    # ------------------------------------------------------------------ setup
    def restore_clocks(self) -> None:
        """Bank and strikes from the recorded moves (after a restart)."""
        self.clock.restore(self.match.moves)

    def restore_rejections(self, counts: list[int]) -> None:
        """Refused-move counts as last stored (after a restart)."""
        if len(counts) == len(self.rejections):
            self.rejections = list(counts)
            self._rejections_stored = list(counts)

    def restore_abandoned(self, abandoned: dict[int, str]) -> None:
        """Abandoned seats as stored (after a restart): the next decision of each is played at
        once again by the time policy."""
        n = self.match.seat_count
        self.abandoned = {s: r for s, r in abandoned.items() if 0 <= s < n}

    def restore_joined(self, seats: list[int]) -> None:
        """Joined seats as stored, and every seat with a move of its own in the log (after a
        restart): a bot that joined before it is not taken for one that never came."""
        n = self.match.seat_count
        for s in [*seats, *(m.seat for m in self.match.moves if not m.timeout)]:
            if 0 <= s < n:
                self.joined[s] = True

    def mark_joined(self, seat: int) -> None:
        """The seat's bot showed up; the first time, the joined seats are stored (not awaited:
        it decides only a later AbandonSeat unless_joined, and a failed write is logged)."""
        if self.joined[seat]:
            return
        self.joined[seat] = True
        fut = self.ctx.store.set_joined(self.id, [s for s, j in enumerate(self.joined) if j])
        fut.add_done_callback(self._joined_stored)
        if self.held:
            self._open_gate()

    def _joined_stored(self, fut: asyncio.Future) -> None:
        if not fut.cancelled() and (exc := fut.exception()) is not None:
            # the store away: it logged the outage; the next join stores every joined seat
            (self.log.debug if store_outage(exc) else self.log.error)(
                "store_failed", what="joined seats", error=repr(exc))

    def welcome(self, seat: int) -> pb.ServerMessage:
        return pb.ServerMessage(
            welcome=pb.Welcome(
                match_id=self.id,
                game=self.game.spec.name,
                seat=seat,
                seat_count=self.match.seat_count,
                seat_names=self.names,
                options={k: opt_str(v) for k, v in self.match.options.items()},
                time_policy=self.policy,
                seed_commitment=self.seed_commitment,
                event=self.league_fields.get("event", ""),
            )
        )

    # ------------------------------------------------------------------ decisions
    def issue_decision(self, answer: Answer | None = None) -> bool:
        """Compute and cache the pending decision (one view + one legal-move list), start its
        clock and push it to the acting seat; or, while the match waits for its seats to join,
        hold it back (untimed, unsent) until the start gate opens. ``answer``: the accepted
        MoveResult of a stream that joined with combine_decision; True when the Decision went
        out inside it (the same seat acts again), else the caller still owes it."""
        self.clock.cancel()
        d = self.match.decision()
        self.decision = d
        self.held = False
        if d is None:
            self.decision_proto = None
            self.decision_bytes = b""
            self.gate.cancel()
            return False
        if not self.gate.open and d.seat not in self.abandoned \
                and not self.gate.check(self._present()):
            self.held = True
            self._held_version = self.match.version
            self.clock.hold()
            self.decision_proto = None
            self.decision_bytes = b""
            self.gate.arm(self._open_gate)
            return False
        return self._send_decision(d, answer)

    def _present(self) -> list[bool]:
        """Each seat that has joined or been abandoned (nobody to wait for)."""
        return [j or s in self.abandoned for s, j in enumerate(self.joined)]

    def _open_gate(self) -> None:
        """A seat joined, one was abandoned or the join time is up: if the gate opens, the
        held decision's clock starts now and it goes out with that deadline. (Not under the
        match's lock: a move accepted meanwhile has moved the state on and issues the next
        decision itself, which the version check leaves alone.)"""
        d = self.decision
        if (not self.held or d is None or self._held_version != self.match.version
                or self.game_over is not None or self.broken):
            return
        if not self.gate.check(self._present()):
            return
        self.held = False
        self.log.info("clocks_started", seat=d.seat, waited_ms=now_ms() - self.created_ms)
        self._send_decision(d)
        if self.streams.watchers:  # the spectators see the clocks start
            self.streams.to_watchers(self.spectator_update())

    def _send_decision(self, d: Decision, answer: Answer | None = None) -> bool:
        seat = d.seat
        deadline = self.clock.start(seat, self.match.version, seat in self.abandoned)
        body = self._encode_decision(d, deadline)
        if answer is not None and answer[0].seat == seat:
            # the mover acts again and asked for combine_decision: one message, the MoveResult
            # carrying this Decision; the seat's other streams (if any) get it as usual
            mover = answer[0]
            mover.put(server_move_result(answer[1].move_result, body))
            for st in self.streams.by_seat[seat]:
                if st is not mover:
                    st.put(self.decision_bytes)
            return True
        self.streams.to_seat(seat, self.decision_bytes)
        return False

    def _encode_decision(self, d: Decision, deadline: int) -> bytes:
        """The pending decision ``d`` with its ``deadline``, as the seat's streams are sent it
        (``decision_bytes``) and a unary call reads it (``decision_for``). Encoded once,
        straight from encodings (the view's and each move's), and the same bytes go to every
        stream of the seat; the message itself is parsed only if a unary call asks for it."""
        head = pb.Decision(
            match_id=self.id, state_version=self.match.version, seat=d.seat, kind=d.kind,
            prompt=d.prompt, deadline_unix_ms=deadline,
        )
        body = self.wire.decision_body(head, self.match.state, d.seat, d.moves,
                                       self.view_bytes(d.seat))
        self.decision_proto = None
        self._decision_body = body
        self.decision_bytes = server_decision(body)
        return body

    def decision_for(self, seat: int) -> pb.Decision | None:
        if self.decision is not None and self.decision.seat == seat and not self.held:
            if self.decision_proto is None:
                self.decision_proto = pb.Decision.FromString(self._decision_body)
            return self.decision_proto
        return None

    def view_bytes(self, seat: int | None) -> bytes:
        """The game's View of ``seat`` (None: a spectator's) at the current state version,
        encoded once per version and seat: the Decision, GetView and the spectators' update
        share it. Keyed by the seat, dropped when the version moves on."""
        version = self.match.version
        if self._views_version != version:
            self._views = {}
            self._views_version = version
        view = self._views.get(seat)
        if view is None:
            view = self._views[seat] = self.game.view_bytes(self.match.state, seat)
        return view

    def view_for(self, seat: int | None) -> pb.View:
        dp = self.decision_for(seat) if seat is not None else None
        if dp is not None:
            return dp.view
        return self.wire.view_message(self.view_bytes(seat))

    def spectator_update(self) -> bytes:
        """The encoded WatchMessage update for spectators: the public view, who is to act, the
        kind of decision and the public clocks (unset once the match is over), built once per
        state version, decision and clock start; then the send time, fresh on every call (a
        viewer on another worker or host allows with it for the difference between its clock
        and this referee's). The send time is a second ``update`` field appended to the cached
        bytes: a protobuf parser merges the two into one SpectatorUpdate."""
        d = self.decision
        clock = self.clock
        key = (self.match.version, clock.seat, clock.deadline_ms, self.game_over is None)
        cached = self._spectator
        if cached is None or cached[0] != key or cached[1] is not d:
            data = self.wire.spectator_update(key[0], self.view_bytes(None),
                                              d.seat if d is not None else -1,
                                              d.kind if d is not None else "")
            if self.game_over is None:
                data += pb.WatchMessage(update=pb.SpectatorUpdate(
                    clock=clock.public_proto())).SerializeToString()
            self._spectator = cached = (key, d, data)
        return cached[2] + pb.WatchMessage(update=pb.SpectatorUpdate(
            sent_unix_ms=now_ms())).SerializeToString()

    # ------------------------------------------------------------------ streams
    def attach(self, stream: Stream) -> None:
        """A seat (re)connects: Welcome, then the pending decision with a full view, or the
        GameOver if the match is over."""
        seat = stream.seat
        assert seat is not None
        self.streams.add(stream)
        stream.put(self.welcome(seat))
        if self.game_over is not None:
            stream.put(self.game_over_bytes)
            stream.put(CLOSE)
        elif self.decision is not None and self.decision.seat == seat and not self.held:
            stream.put(self.decision_bytes)

    def detach(self, stream: Stream) -> None:
        self.streams.remove(stream)

    def watch(self, stream: Stream) -> None:
        self.streams.add(stream)
        stream.put(self.spectator_update())
        if self.game_over is not None:
            stream.put(pb.WatchMessage(game_over=self.game_over))
            stream.put(CLOSE)

    # ------------------------------------------------------------------ moves
    def reject(self, code: str, message: str, request_id: str) -> pb.MoveResult:
        return refusal(code, message, self.match.version, request_id, unknown=pb.ILLEGAL_MOVE)

    async def submit(
        self, seat: int, move: pb.Move, version: int, request_id: str, stream: Stream | None,
        note: str = "",
    ) -> pb.MoveResult:
        """``play``, then wait for the commit (SubmitMove): the accepted MoveResult once the
        move is committed and announced; a refused one at once. Raises as ``play`` does, and
        with the commit's error if the store fails. A caller cancelled meanwhile does not stop
        the move: its commit and announcement run on without it."""
        done: asyncio.Future = asyncio.get_running_loop().create_future()
        refused = await self.play(seat, move, version, request_id, stream, note, done)
        if refused is not None:
            return refused
        return await asyncio.shield(done)

    async def play(
        self, seat: int, move: pb.Move, version: int, request_id: str, stream: Stream | None,
        note: str = "", done: asyncio.Future | None = None,
    ) -> pb.MoveResult | None:
        """Validate and apply under the match's lock and queue the commit; None when the move
        was applied. Nothing here waits for the commit (no task, future or await per move on
        the Play path): the lock stays held until the store's commit calls back, which
        acknowledges the move (on ``stream``, or in ``done``) and announces it, so a second
        frame waits its turn and every answer keeps its order; a stream cut meanwhile cannot
        stop a played move half-way. Raises RefereeError(MALFORMED) for a move that cannot be
        one (or a note that is not one: see ``check_note``); returns a rejected MoveResult,
        nothing changed, for a move that is not legal now. The note is stored and recorded
        with the move and sent to nobody while the match is live."""
        lock = self.lock
        await lock.acquire()  # no suspension when the lock is free: the usual case
        began = time.perf_counter()
        queued = False
        try:
            try:
                native = self.wire.unwrap(move)
                note = check_note(note)
            except errors.RefereeError:
                self.rejections[seat] += 1
                raise
            store = self.ctx.store
            if self.unsure is not None and not await self._reconcile():
                # the last move's commit may have gone through: nothing is accepted until the
                # store says whether it did
                self._retime()
                raise unavailable(store.kind)
            if self.broken:
                raise errors.precondition("MATCH_OVER", f"match is unavailable: {self.broken}")
            if self.game_over is not None:
                return self.reject("MATCH_OVER", "the match is over", request_id)
            if seat in self.abandoned:
                # final for the match (AbandonSeat): the time policy plays this seat, never its bot
                return self.reject("SEAT_ABANDONED", "the host abandoned this seat "
                                   "(AbandonSeat); the time policy plays its decisions", request_id)
            if not store.available and not await store.probe():
                # the store is known to be away: refused before it is applied, so that no
                # replay is needed to take it back (``_unplay``: ~25 ms for a 190-move match)
                self._retime()
                raise unavailable(store.kind)
            elapsed = self.clock.elapsed_ms()
            try:
                entry, events = self.match.submit(seat, native, version, elapsed_ms=elapsed,
                                                  note=note)
            except IllegalMove as exc:
                if not self._resent(seat, version, exc.code):
                    self.rejections[seat] += 1
                self.log.debug("move_rejected", seat=seat, reason=exc.code, message=exc.message)
                return self.reject(exc.code, exc.message, request_id)
            self.clock.charge(seat, elapsed)
            queued_at = time.perf_counter()
            stored, rejected = self._store(entry)
            self._recovered = None
            stored.add_done_callback(
                lambda fut: self._committed(fut, entry, events, rejected, request_id, stream,
                                            done, (began, queued_at)))
            queued = True
            return None
        finally:
            if not queued:  # refused or raised: nothing changed, nothing to wait for
                lock.release()

    def _store(self, entry: MoveEntry) -> tuple[asyncio.Future, list[int] | None]:
        """Queue the move's commit (with the refusal counts when they changed)."""
        self.clock.cancel()
        rejected = None
        if self.rejections != self._rejections_stored:
            rejected = list(self.rejections)
        try:
            fut = self.ctx.store.insert_move(self.id, records.move_row(entry), rejected)
        except Exception as exc:  # noqa: BLE001 - a failed commit, answered as one
            fut = asyncio.get_running_loop().create_future()
            fut.set_exception(exc)
        return fut, rejected

    def _stored(self, fut: asyncio.Future, entry: MoveEntry, rejected: list[int] | None,
                events: list[Event]) -> None:
        """After the commit of ``entry``: raises its error, after taking the match offline (the
        state moved on but the move is not on disk: it is never acknowledged, and the match
        must not diverge from its log)."""
        exc = asyncio.CancelledError() if fut.cancelled() else fut.exception()
        if exc is not None:
            metrics.STORE_ERRORS.labels(self.ctx.store.kind,
                                        "outage" if store_outage(exc) else "failure").inc()
        if exc is not None and store_outage(exc):
            # the store is away: the move is not played (it is refused with STORE_UNAVAILABLE
            # and may be sent again); the time policy's own move is tried again by _expire
            played, clock = self.match, self.clock.snapshot()
            self._unplay(entry)
            if isinstance(exc, CommitUnknown):
                # it may be stored all the same (its reply lost): asked of the store before
                # anything else is accepted, and at once in the background
                self.unsure = Unsure(played, entry, events, clock, rejected)
                self.ctx.spawn(self._reconcile_soon())
            if not entry.timeout:
                self.clock.uncharge()
                self._retime()
            raise exc
        if exc is not None:
            self.broken = f"store failure at move {entry.n}"
            self.log.error("store_failed", move=entry.n, seat=entry.seat, error=repr(exc))
            raise exc
        if rejected is not None:
            self._rejections_stored = rejected
        self.log.debug(
            "move", seat=entry.seat, move=entry.n, elapsed_ms=entry.elapsed_ms,
            timeout=entry.timeout or None, policy=entry.policy,
        )

    def _unplay(self, entry: MoveEntry) -> None:
        """Take back ``entry``, applied but not committed (the store was away): the match as it
        stood before it, its state version, its log and its decision, so that the same move
        sent again is accepted once the store is back. The views cached meanwhile (a read may
        have seen the move's state) are dropped."""
        self.log.debug("move_not_stored", seat=entry.seat, move=entry.n)
        self.match = records.rewind(self.match)
        self._views_version = -1
        self._spectator = None

    def _retime(self) -> None:
        """After a move the store could not commit: the pending decision is timed afresh from
        now (``MatchClock.restart``), so that the outage costs its seat no time."""
        if self.held or self.decision is None or self.game_over is not None:
            return
        if self.decision.seat in self.abandoned:
            self._wait_for_store(self.match.version)  # its time-policy move, once it is back
            return
        deadline = self.clock.restart(self.match.version)
        # what the seat and the viewer are shown is what is enforced: the seat is sent its
        # decision again with the new deadline (after the refusal that caused it, which is
        # being answered now), and the spectators their clocks
        data = self.decision_bytes
        if data and deadline != self._deadline_sent():
            self._encode_decision(self.decision, deadline)
            data = self.decision_bytes
            seat, version = self.decision.seat, self.match.version
            asyncio.get_running_loop().call_soon(self._resend_decision, seat, version, data)
        if self.streams.watchers:
            self.streams.to_watchers(self.spectator_update())

    def _deadline_sent(self) -> int:
        """The deadline in the pending decision as last encoded (0: none)."""
        proto = self.decision_proto
        if proto is None:
            proto = self.decision_proto = pb.Decision.FromString(self._decision_body)
        return proto.deadline_unix_ms

    def _resend_decision(self, seat: int, version: int, data: bytes) -> None:
        """Push a re-timed decision to its seat, unless the match moved on meanwhile."""
        if self.match.version == version and self.decision_bytes is data \
                and self.game_over is None:
            self.streams.to_seat(seat, data)

    def _wait_for_store(self, version: int) -> None:
        """The time policy could not play (or forfeit) at ``version`` because the store is
        away: once a write goes through again (``Store.probe``), the decision is timed afresh,
        once per state version; after that the time policy tries again at once (never played
        or forfeited while the store is away)."""
        self.clock.cancel()
        self.ctx.spawn(self._when_store_back(version))

    async def _when_store_back(self, version: int) -> None:
        waiting = self._waiting
        if waiting is None or waiting[0] != version:
            # one backoff per state version: a probe that passes where the time policy's
            # move still fails (see below) does not make its tries any more frequent
            waiting = self._waiting = (version, Backoff())
        backoff = waiting[1]
        while True:
            await asyncio.sleep(backoff.failed())
            if self.match.version != version or self.game_over is not None or self.broken:
                return  # a move was played meanwhile: its decision has a clock of its own
            if await self.ctx.store.probe():
                break
        async with self.lock:
            if self.unsure is not None and not await self._reconcile():
                self._wait_for_store(version)  # read nothing: still away
                return
            if self.match.version != version or self.game_over is not None or self.broken \
                    or self.held or self.decision is None:
                return
            if self.decision.seat in self.abandoned or self._retimed == version:
                # The seat has had a full move time since the store came back, and its
                # time-policy move still could not be stored although the probe passed (a
                # nearly full disk can take the probe's write and not the move's): no fresh
                # time again, the time policy tries its move now (and waits again, with a
                # growing delay, if it still fails)
                self.clock.expire_now(version)
            else:
                self._retimed = version
                self._retime()

    async def _reconcile(self) -> bool:
        """Under the match's lock, with a move whose commit's outcome is unknown
        (``self.unsure``): ask the store, which is the truth, and go on from what it holds.
        The match's stored moves from that move's number on are read (as a restart recovers
        a match from its stored log): none, and the match stays rewound (the move was refused
        and may be sent again); that very move (its number, seat and state hash), and the
        match goes on exactly as if it had been acknowledged (the state it made, the clocks
        it left, its events and the next decision); anything else, and the match goes offline
        (its log is not what this referee played). True once settled; False while the store
        cannot be read (still unsure: nothing may be accepted)."""
        unsure = self.unsure
        if unsure is None:
            return True
        entry = unsure.entry
        try:
            stored = self.ctx.store.stored_moves(self.id, entry.n)
        except Exception as exc:
            if not store_outage(exc):
                raise
            return False
        self.unsure = None
        if not stored:
            self.log.info("commit_not_stored", seat=entry.seat, move=entry.n)
            return True
        if stored != [(entry.n, entry.seat, entry.state_hash)]:
            self.broken = f"the store's log differs at move {entry.n}"
            self.log.error("store_log_differs", move=entry.n, stored=stored[:3])
            return True
        self.log.info("commit_stored_after_all", seat=entry.seat, move=entry.n)
        self.match = unsure.played
        self._views_version = -1
        self._spectator = None
        self.clock.rollback(unsure.clock)
        if unsure.rejected is not None:
            self._rejections_stored = unsure.rejected
        self._recovered = entry
        if self._announce(entry, unsure.events):
            await self.finish()
        return True

    async def _reconcile_soon(self) -> None:
        """Settle an unknown commit without waiting for a call: at once, then as the store's
        connections are tried again (``Backoff``), so that the match goes on by itself."""
        backoff = Backoff()
        while True:
            async with self.lock:
                if self.unsure is None or self.broken or await self._reconcile():
                    return
            await asyncio.sleep(backoff.failed())

    def _resent(self, seat: int, version: int, code: str) -> bool:
        """Whether a refused move is the resend of the move last found stored after all
        (its first answer was STORE_UNAVAILABLE): refused as the duplicate it is
        (STALE_STATE, or NOT_YOUR_TURN when another seat acts now), its seat has the next
        decision already, and it is not counted as a refused move."""
        e = self._recovered
        return e is not None and e.seat == seat and e.version_before == version \
            and code in ("STALE_STATE", "NOT_YOUR_TURN")

    def _committed(self, fut: asyncio.Future, entry: MoveEntry, events: list[Event],
                   rejected: list[int] | None, request_id: str, stream: Stream | None,
                   done: asyncio.Future | None, times: tuple[float, float]) -> None:
        """The store's callback for a move ``play`` applied (on the loop): acknowledge it
        (its MoveResult on ``stream``, or in ``done``), announce it, release the lock; a
        failed commit is answered with its error instead. The MoveResult goes out before the
        move's events and next Decision, or after the events and carrying the Decision with
        Join.combine_decision when the same seat acts again (see _send_decision)."""
        finishing = False
        result: pb.MoveResult | None = None
        try:
            self._stored(fut, entry, rejected, events)
            committed = time.perf_counter()
            self._moves.inc()
            self._move_seconds.observe(committed - times[0])
            self._commit_seconds.observe(committed - times[1])
            sm = pb.ServerMessage()
            result = sm.move_result
            result.accepted = True
            result.state_version = self.match.version
            result.request_id = request_id
            # the receipt: the state hash the record stores for this version (computed by
            # Match.submit already; this costs the field)
            result.state_hash = entry.state_hash
            answer: Answer | None = None
            if stream is not None:
                if stream.combine:
                    answer = (stream, sm)
                else:
                    stream.put(sm)
            finishing = self._announce(entry, events, answer)
            if finishing:
                self.ctx.spawn(self._finish_move(result, request_id, stream, done))
            elif done is not None and not done.done():
                done.set_result(result)
        except BaseException as exc:  # noqa: BLE001 - answered, and the lock released
            self._move_failed(exc, request_id, stream, done, logged=result is None)
        finally:
            if not finishing:
                self.lock.release()

    async def _finish_move(self, result: pb.MoveResult, request_id: str, stream: Stream | None,
                           done: asyncio.Future | None) -> None:
        """The match ended with this move: finish it, still under the move's lock."""
        try:
            await self.finish()
            if done is not None and not done.done():
                done.set_result(result)
        except BaseException as exc:  # noqa: BLE001 - answered as the move's failure
            self._move_failed(exc, request_id, stream, done)
        finally:
            self.lock.release()

    def _move_failed(self, exc: BaseException, request_id: str, stream: Stream | None,
                     done: asyncio.Future | None, logged: bool = False) -> None:
        """A move whose commit or announcement failed: its stream gets a refusal (the
        RefereeError's reason, else an internal error, logged unless ``logged``), its waiter
        the error."""
        if done is not None:
            if not done.done():
                done.set_exception(exc)
            return
        if stream is None:
            return
        if isinstance(exc, errors.RefereeError):
            stream.put(pb.ServerMessage(move_result=refusal(
                exc.reason, exc.message, self.match.version, request_id)))
            return
        if not logged:
            self.log.error("internal_error", rpc="Play", error=repr(exc))
        stream.put(pb.ServerMessage(move_result=refusal(
            "INTERNAL", "internal error", self.match.version, request_id)))

    async def _commit(self, entry: MoveEntry, events: list[Event]) -> None:
        fut, rejected = self._store(entry)
        with contextlib.suppress(Exception):
            await fut
        self._stored(fut, entry, rejected, events)

    async def _after_move(self, entry: MoveEntry | None, events: list[Event],
                          answer: Answer | None = None) -> None:
        if self._announce(entry, events, answer):
            await self.finish()

    def _announce(self, entry: MoveEntry | None, events: list[Event],
                  answer: Answer | None = None) -> bool:
        """A move is committed: its events, the next decision (and the spectators' update) go
        out; True when the match is over and must finish."""
        version = self.match.version
        timeout = bool(entry and entry.timeout)
        if events:
            self._broadcast_events(events, version, timeout)
        if not self.issue_decision(answer) and answer is not None:
            # another seat acts next (or nobody): the mover's MoveResult goes out plain
            answer[0].put(answer[1])
        if self.decision is None:
            return True
        if self.streams.watchers:
            self.streams.to_watchers(self.spectator_update())
        return False

    def _broadcast_events(self, events: list[Event], version: int, timeout: bool) -> None:
        if self.event_log is not None:
            self._keep_events([match_event(e, version, timeout) for e in events])
        streams = self.streams.event_streams()
        watchers = self.streams.watchers
        if not streams and not watchers:
            return
        for e in events:
            me = match_event(e, version, timeout)
            if streams:
                data = pb.ServerMessage(event=me).SerializeToString()
                for st in streams:
                    st.put(data)
            if watchers:
                self.streams.to_watchers(pb.WatchMessage(event=me).SerializeToString())

    # ------------------------------------------------------------------ events kept for text
    async def events_since(self, version: int) -> list[pb.MatchEvent]:
        """The public events after state ``version`` (what an event stream was sent), oldest
        first. The first call rebuilds them by replaying the match's moves (once per match and
        process: a restarted referee or a match adopted from a peer has them too), under the
        match's lock, so that no move is between its apply and its commit (it could still be
        taken back, or be announced again after the replay counted it); from then on each
        broadcast keeps its events (at most ``EVENT_LOG_LIMIT``, the newest). A forfeit before
        the first call is said by the result, not here."""
        if self.event_log is None:
            async with self.lock:
                if self.event_log is None:
                    replayed = replayed_events(self.match)
                    self.event_log = []
                    self._keep_events(replayed)
        return [e for e in self.event_log if e.state_version > version]

    def _keep_events(self, events: list[pb.MatchEvent]) -> None:
        assert self.event_log is not None
        self.event_log.extend(events)
        if len(self.event_log) > EVENT_LOG_LIMIT:
            del self.event_log[:len(self.event_log) - EVENT_LOG_LIMIT]

    # ------------------------------------------------------------------ time policy
    def cancel_timer(self) -> None:
        self.clock.cancel()
        self.gate.cancel()

    def _expired(self, version: int) -> None:
        self.ctx.spawn(self._expire(version))

    async def _expire(self, version: int) -> None:
        async with self.lock:
            if self.unsure is not None and not await self._reconcile():
                self._wait_for_store(version)  # never played or forfeited on a guess
                return
            if self.match.version != version or self.game_over is not None or self.broken:
                return
            d = self.decision
            if d is None:
                return
            seat = d.seat
            clock = self.clock
            elapsed = clock.elapsed_ms()
            before = clock.snapshot()
            if clock.strike(seat):
                if not await self.ctx.store.probe():
                    # never forfeit a seat while the store is away (its moves were refused)
                    clock.rollback(before)
                    self._wait_for_store(version)
                    return
                self.log.info("timeout_forfeit", seat=seat, strikes=clock.strikes_used[seat])
                self._expiries[1].inc()
                await self._forfeit(seat, f"seat {seat} ran out of time and forfeits",
                                    {"reason": "timeout", "strikes": clock.strikes_used[seat]})
                return
            policy = clock.expiry_policy()
            move = self.match.timeout_move(policy)
            entry, events = self.match.submit(
                seat, move, version, elapsed_ms=elapsed, timeout=True, policy=policy
            )
            events = [timeout_event(entry), *events]
            try:
                await self._commit(entry, events)
            except errors.RefereeError as exc:
                if not store_outage(exc):
                    raise
                # not played (``_stored`` took it back): no strike, tried again once the
                # store is back, after a fresh move time
                clock.rollback(before)
                self._wait_for_store(version)
                return
            self.log.info("timeout_move", seat=seat, move=entry.n, policy=policy)
            self._expiries[0].inc()
            self._moves.inc()
            await self._after_move(entry, events)

    async def abandon(self, seat: int, reason: str, unless_joined: bool) -> tuple[bool, bool]:
        """The host gave up on ``seat``'s bot: forfeit it now under FORFEIT, else play its
        decisions by the time policy as they come, without waiting for its clock. Either is
        committed before this returns (the forfeit by ``finish``, the abandonment as the
        match's stored set of abandoned seats), so a restarted referee keeps to it. It is final
        for the match: a stream that joins the seat later changes nothing. Returns
        (abandoned, forfeited)."""
        async with self.lock:
            if self.game_over is not None or self.broken or seat in self.abandoned:
                return False, False
            if self.unsure is not None and not await self._reconcile():
                raise unavailable(self.ctx.store.kind)
            if self.game_over is not None or self.broken:  # settled by the store
                return False, False
            if unless_joined and self.joined[seat]:
                return False, False
            forfeit = self.clock.on_expiry_value() == pb.FORFEIT
            if forfeit and not await self.ctx.store.probe():
                raise unavailable(self.ctx.store.kind)  # no forfeit while the store is away
            self.log.info("seat_abandoned", seat=seat, reason=reason)
            if forfeit:
                # for the record: the final commit stores it with the forfeit
                self.abandoned = {**self.abandoned, seat: reason}
                await self._forfeit(seat, f"seat {seat} forfeits: {reason}",
                                    {"reason": "abandoned", "detail": reason})
                return True, True
            abandoned = {**self.abandoned, seat: reason}
            # on disk before it takes effect or is acknowledged; a failed write changes nothing
            await self.ctx.store.set_abandoned(self.id, abandoned)
            self.abandoned = abandoned
            if self.decision is not None and self.decision.seat == seat:
                self.clock.expire_now(self.match.version)
            elif self.held:
                self._open_gate()  # one seat fewer to wait for
            return True, False

    async def _forfeit(self, seat: int, text: str, data: dict[str, Any]) -> None:
        self.clock.cancel()
        self.match.forfeit(seat)
        self._broadcast_events([Event("referee.forfeit", seat, text, data)],
                               self.match.version, True)
        await self.finish()

    # ------------------------------------------------------------------ the end
    def record(self) -> dict[str, Any]:
        doc = records.record(self.match, self.id, self.names, self.policy, self.created_ms,
                             self.finished_ms, self.rejections, self.abandoned,
                             self.seed_salt)
        doc.update(self.league_fields)
        return doc

    async def finish(self) -> None:
        self.clock.stop()
        self.gate.cancel()
        self.held = False
        self.decision = None
        self.decision_proto = None
        self.finished_ms = now_ms()
        result = self.match.result()
        self.record_path = records.record_path(self.ctx.records_dir, self.id)
        record = self.record()
        if self.ctx.sign is not None:  # once per match, over every field of its record
            record = self.ctx.sign(record)
        backoff = Backoff()
        unknown = False  # the last try's COMMIT failed: it may have gone through
        while True:
            if unknown:
                # the store is the truth: a finish already stored is not written again (its
                # lease is gone, so the write would be refused as if the match were lost)
                status = self._stored_status()
                if status == "finished":
                    break
                if status is None:  # cannot be read yet
                    await asyncio.sleep(backoff.failed())
                    continue
            try:
                await self.ctx.store.finish_match(
                    self.id,
                    status="finished",
                    finished_ms=self.finished_ms,
                    forfeited=self.match.forfeited,
                    result=result_json(result) if result else None,
                    record_path=self.record_path,
                    record=record,
                    rejected=list(self.rejections),
                )
                break
            except Exception as exc:
                if not store_outage(exc):
                    raise
                # its last move is committed (acknowledged): the end is committed once the
                # store is back, under the match's lock (calls on it wait)
                self.log.debug("finish_not_stored", error=repr(exc))
                unknown = isinstance(exc, CommitUnknown)
                await asyncio.sleep(backoff.failed())
        self.game_over = self.make_game_over()
        self.game_over_bytes = pb.ServerMessage(game_over=self.game_over).SerializeToString()
        metrics.MATCHES_FINISHED.labels(self.game.spec.name).inc()
        self.log.info(
            "match_over", moves=len(self.match.moves), winners=list(self.game_over.winners),
            record=str(self.record_path),
        )
        # The record is on disk and GetRecord serves it from there: while the match is held
        # for --keep-finished, it costs its final state, not its whole move history.
        self.match.moves = []
        self.streams.to_every_seat(self.game_over_bytes, CLOSE)
        if self.streams.watchers:
            final = self.spectator_update()
            data = pb.WatchMessage(game_over=self.game_over).SerializeToString()
            self.streams.to_watchers(final, data, CLOSE)
        self.ctx.finished(self)

    def _stored_status(self) -> str | None:
        """The match's status in the store ("" for no row), None while it cannot be read."""
        try:
            return self.ctx.store.match_status(self.id) or ""
        except Exception as exc:
            if not store_outage(exc):
                raise
            return None

    def make_game_over(self) -> pb.GameOver:
        return records.game_over(self.match, self.id, self.names, self.record_path)
