"""One live match inside the server: the core Match, its connected seats and watchers, its clock
and its persistence. Game-agnostic: everything game-specific goes through the Game contract and
the wire convention (the game's field in referee.v1.Move / View is named ``spec.name``).

Per-move path (kept lean on purpose): unwrap + ``move_from_proto`` once, ``Match.submit`` (one
``apply``, one ``hash_state``), one group-committed store write, then the events and the next
decision are built and serialised ONCE and the same bytes are queued to every stream."""
from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from google.protobuf import json_format

from referee.core.contract import Decision, Event, Game, IllegalMove, MalformedMove
from referee.core.match import Match, MoveEntry, result_json
from referee.v1 import referee_pb2 as pb

from . import errors
from .store import MoveRow, Store

log = structlog.get_logger("referee.match")

POLICY_NAMES = {pb.DEFAULT_MOVE: "DEFAULT_MOVE", pb.RANDOM_LEGAL: "RANDOM_LEGAL"}
CLOSE = None  # queued to a stream to end it


def now_ms() -> int:
    return int(time.time() * 1000)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field: tag, length, bytes. Appending it to an encoded
    message is the same as setting (or, for a repeated field, adding) that field."""
    return _varint((number << 3) | 2) + _varint(len(payload)) + payload


_DECISION_VIEW = pb.Decision.DESCRIPTOR.fields_by_name["view"].number
_DECISION_MOVES = pb.Decision.DESCRIPTOR.fields_by_name["legal_moves"].number
_SERVER_DECISION = pb.ServerMessage.DESCRIPTOR.fields_by_name["decision"].number


class GameWire:
    """Wraps and unwraps a game's messages in the referee.v1 envelopes (no game named here)."""

    __slots__ = ("_move_fields", "_view_field", "field", "game")

    def __init__(self, game: Game):
        self.game = game
        self.field = game.spec.name
        self._move_fields: dict[Any, bytes] = {}
        self._view_field = pb.View.DESCRIPTOR.fields_by_name[self.field].number

    def decision_body(self, head: pb.Decision, state: Any, seat: int, moves: list) -> bytes:
        """The encoded Decision: ``head`` (its scalar fields) + the seat's view + every legal
        move, assembled from encodings (each move's is cached) instead of building and copying
        messages. Parses to the message built field by field (tests/server/test_wire.py)."""
        cache = self._move_fields
        parts = [head.SerializeToString(), _field(_DECISION_VIEW, _field(
            self._view_field, self.game.view_bytes(state, seat)))]
        for m in moves:
            enc = cache.get(m)
            if enc is None:
                enc = _field(_DECISION_MOVES, self.move(m).SerializeToString())
                if len(cache) < 65536:
                    cache[m] = enc
            parts.append(enc)
        return b"".join(parts)

    def move(self, native: Any) -> pb.Move:
        wrapped = pb.Move()
        getattr(wrapped, self.field).CopyFrom(self.game.move_to_proto(native))
        return wrapped

    def view(self, state: Any, seat: int | None) -> pb.View:
        wrapped = pb.View()
        getattr(wrapped, self.field).CopyFrom(self.game.view(state, seat))
        return wrapped

    def unwrap(self, move: pb.Move) -> Any:
        which = move.WhichOneof("game")
        if which is None:
            raise errors.malformed("empty move: set the field of the match's game")
        if which != self.field:
            raise errors.malformed(f"this match plays {self.field}, not {which}")
        try:
            return self.game.move_from_proto(getattr(move, which))
        except MalformedMove as exc:
            raise errors.malformed(f"malformed {self.field} move: {exc}") from None


#: Messages a stream may have waiting before the referee drops it as too slow a reader (a bot
#: that never reads must not make the referee buffer a whole match for it).
MAX_BACKLOG = 4096


class Stream:
    """One connected Play or Watch stream: an outbound queue of messages (or bytes)."""

    __slots__ = ("dropped", "events", "queue", "seat")

    def __init__(self, seat: int | None, events: bool = True):
        self.seat = seat
        self.events = events  # push MatchEvents (Play: Join.events; Watch: always)
        self.queue: asyncio.Queue = asyncio.Queue()
        self.dropped = False

    def put(self, item: Any) -> None:
        if not self.dropped:
            self.dropped = not put_bounded(self.queue, item)


def put_bounded(queue: asyncio.Queue, item: Any) -> bool:
    """Queue ``item`` for a stream's writer, or, with MAX_BACKLOG messages already waiting,
    empty the queue and leave only a RESOURCE_EXHAUSTED error that ends the stream; False then
    (the caller queues nothing more)."""
    if queue.qsize() < MAX_BACKLOG:
        queue.put_nowait(item)
        return True
    while queue.qsize():
        queue.get_nowait()
    queue.put_nowait(errors.exhausted(
        f"more than {MAX_BACKLOG} messages waiting: this stream reads too slowly; "
        "reconnect with the same token to resume"))
    return False


@dataclass(frozen=True, slots=True)
class RuntimeContext:
    """What a live match needs from the referee around it, and nothing more (no back-pointer
    to the service, so this module imports nothing of it)."""

    store: Store
    records_dir: Path
    wire: Callable[[Game], GameWire]  # the shared envelope codec of a game
    spawn: Callable[[Awaitable], None]  # run a background task (a time-policy expiry)
    finished: Callable[[MatchRuntime], None]  # the match is over and committed


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
    ):
        self.ctx = ctx
        self.id = match_id
        self.match = match
        self.game = match.game
        self.wire: GameWire = ctx.wire(match.game)
        self.names = names
        self.policy = policy
        self.token_hashes = token_hashes
        self.created_ms = created_ms
        self.finished_ms: int | None = None
        self.lock = asyncio.Lock()
        self.streams: dict[int, list[Stream]] = {s: [] for s in range(match.seat_count)}
        self.watchers: list[Stream] = []
        self.log = log.bind(match_id=match_id)
        # current decision, built once per version
        self.decision: Decision | None = None
        self.decision_proto: pb.Decision | None = None  # parsed on demand from the body
        self._decision_body: bytes = b""
        self.decision_bytes: bytes = b""  # the ServerMessage, as sent
        self.issued_at = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.game_over: pb.GameOver | None = None
        self.game_over_bytes: bytes = b""
        self.record_path: Path | None = None
        self.broken: str | None = None
        n = match.seat_count
        self.bank_left = [policy.bank_ms] * n
        self.strikes_used = [0] * n
        # moves refused per seat (malformed or not legal then), for the record. A refusal changes
        # nothing, so it costs no commit of its own: the counts ride with the next stored move
        # (and the final commit); a referee restart loses at most those since the last move.
        self.rejections = [0] * n
        self._rejections_stored = [0] * n
        # seats whose bot the host gave up on (AbandonSeat), with the host's reason: their
        # decisions are played at once, for the rest of the match (stored, restored on resume)
        self.abandoned: dict[int, str] = {}
        self.joined = [False] * n  # a stream of the seat has joined (this process's lifetime)

    # ------------------------------------------------------------------ setup
    def restore_clocks(self) -> None:
        """Bank and strikes from the recorded moves (after a restart)."""
        p = self.policy
        for e in self.match.moves:
            if e.timeout:
                self.strikes_used[e.seat] += 1
                self.bank_left[e.seat] = 0
            elif p.move_ms and e.elapsed_ms > p.move_ms:
                self.bank_left[e.seat] = max(0, self.bank_left[e.seat] - (e.elapsed_ms - p.move_ms))

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

    def welcome(self, seat: int) -> pb.ServerMessage:
        return pb.ServerMessage(
            welcome=pb.Welcome(
                match_id=self.id,
                game=self.game.spec.name,
                seat=seat,
                seat_count=self.match.seat_count,
                seat_names=self.names,
                options={k: _opt_str(v) for k, v in self.match.options.items()},
                time_policy=self.policy,
            )
        )

    # ------------------------------------------------------------------ decisions
    def issue_decision(self) -> None:
        """Compute and cache the pending decision (one view + one legal-move list), start its
        clock and push it to the acting seat."""
        self.cancel_timer()
        d = self.match.decision()
        self.decision = d
        if d is None:
            self.decision_proto = None
            self.decision_bytes = b""
            return
        seat = d.seat
        wire = self.wire
        deadline = 0
        p = self.policy
        self.issued_at = time.monotonic()
        if seat in self.abandoned:  # nobody will answer: the time policy plays it now
            self.timer = asyncio.get_running_loop().call_later(
                0, self._expired, self.match.version)
        elif p.move_ms:
            allowed = p.move_ms + self.bank_left[seat]
            deadline = now_ms() + allowed
            loop = asyncio.get_running_loop()
            self.timer = loop.call_later(
                (allowed + p.grace_ms) / 1000.0, self._expired, self.match.version
            )
        # Encoded once, straight from encodings (the view's and each move's), and the same bytes
        # go to every stream of the seat; the message itself is parsed only if a unary call
        # asks for it (decision_for).
        head = pb.Decision(
            match_id=self.id, state_version=self.match.version, seat=seat, kind=d.kind,
            prompt=d.prompt, deadline_unix_ms=deadline,
        )
        body = wire.decision_body(head, self.match.state, seat, d.moves)
        self.decision_proto = None
        self._decision_body = body
        self.decision_bytes = _field(_SERVER_DECISION, body)
        for st in self.streams[seat]:
            st.put(self.decision_bytes)

    def decision_for(self, seat: int) -> pb.Decision | None:
        if self.decision is not None and self.decision.seat == seat:
            if self.decision_proto is None:
                self.decision_proto = pb.Decision.FromString(self._decision_body)
            return self.decision_proto
        return None

    def view_for(self, seat: int | None) -> pb.View:
        dp = self.decision_for(seat) if seat is not None else None
        if dp is not None:
            return dp.view
        return self.wire.view(self.match.state, seat)

    def spectator_update(self) -> pb.WatchMessage:
        d = self.decision
        return pb.WatchMessage(
            update=pb.SpectatorUpdate(
                state_version=self.match.version,
                view=self.wire.view(self.match.state, None),
                current_seat=d.seat if d is not None else -1,
                decision_kind=d.kind if d is not None else "",
            )
        )

    # ------------------------------------------------------------------ streams
    def attach(self, stream: Stream) -> None:
        """A seat (re)connects: Welcome, then the pending decision with a full view, or the
        GameOver if the match is over."""
        seat = stream.seat
        assert seat is not None
        self.streams[seat].append(stream)
        self.joined[seat] = True
        stream.put(self.welcome(seat))
        if self.game_over is not None:
            stream.put(self.game_over_bytes)
            stream.put(CLOSE)
        elif self.decision is not None and self.decision.seat == seat:
            stream.put(self.decision_bytes)

    def detach(self, stream: Stream) -> None:
        lst = self.streams.get(stream.seat) if stream.seat is not None else self.watchers
        if lst is not None and stream in lst:
            lst.remove(stream)

    def watch(self, stream: Stream) -> None:
        self.watchers.append(stream)
        stream.put(self.spectator_update())
        if self.game_over is not None:
            stream.put(pb.WatchMessage(game_over=self.game_over))
            stream.put(CLOSE)

    # ------------------------------------------------------------------ moves
    def reject(self, code: str, message: str, request_id: str) -> pb.MoveResult:
        return pb.MoveResult(
            accepted=False,
            reason=errors.reason_value(code, pb.ILLEGAL_MOVE),
            message=message,
            state_version=self.match.version,
            request_id=request_id,
        )

    async def submit(
        self, seat: int, move: pb.Move, version: int, request_id: str, stream: Stream | None
    ) -> pb.MoveResult:
        """Validate, apply, commit, then acknowledge. Raises RefereeError(MALFORMED) for a move
        that cannot be one; returns a rejected MoveResult for a move that is not legal now."""
        try:
            native = self.wire.unwrap(move)
        except errors.RefereeError:
            self.rejections[seat] += 1
            raise
        async with self.lock:
            if self.broken:
                raise errors.precondition("MATCH_OVER", f"match is unavailable: {self.broken}")
            if self.game_over is not None:
                return self.reject("MATCH_OVER", "the match is over", request_id)
            elapsed = int((time.monotonic() - self.issued_at) * 1000)
            try:
                entry, events = self.match.submit(seat, native, version, elapsed_ms=elapsed)
            except IllegalMove as exc:
                self.rejections[seat] += 1
                self.log.debug("move_rejected", seat=seat, reason=exc.code, message=exc.message)
                return self.reject(exc.code, exc.message, request_id)
            p = self.policy
            if p.move_ms and elapsed > p.move_ms:
                self.bank_left[seat] = max(0, self.bank_left[seat] - (elapsed - p.move_ms))
            await self._commit(entry)
            sm = pb.ServerMessage()
            result = sm.move_result
            result.accepted = True
            result.state_version = self.match.version
            result.request_id = request_id
            if stream is not None:
                stream.put(sm)
            await self._after_move(entry, events)
            return result

    async def _commit(self, entry: MoveEntry) -> None:
        self.cancel_timer()
        rejected = None
        if self.rejections != self._rejections_stored:
            rejected = list(self.rejections)
        try:
            await self.ctx.store.insert_move(
                self.id,
                MoveRow(
                    entry.n, entry.seat, entry.version_before, entry.move, entry.state_hash,
                    entry.elapsed_ms, entry.timeout, entry.policy,
                ),
                rejected,
            )
            if rejected is not None:
                self._rejections_stored = rejected
        except Exception as exc:
            # The state moved on but the move is not on disk: never acknowledge it, and take
            # the match offline rather than diverge from the log.
            self.broken = f"store failure at move {entry.n}"
            self.log.error("store_failed", move=entry.n, seat=entry.seat, error=repr(exc))
            raise
        self.log.debug(
            "move", seat=entry.seat, move=entry.n, elapsed_ms=entry.elapsed_ms,
            timeout=entry.timeout or None, policy=entry.policy,
        )

    async def _after_move(self, entry: MoveEntry | None, events: list[Event]) -> None:
        version = self.match.version
        timeout = bool(entry and entry.timeout)
        if events:
            self._broadcast_events(events, version, timeout)
        self.issue_decision()
        if self.decision is None:
            await self.finish()
            return
        if self.watchers:
            upd = self.spectator_update().SerializeToString()
            for w in self.watchers:
                w.put(upd)

    def _broadcast_events(self, events: list[Event], version: int, timeout: bool) -> None:
        streams = [st for lst in self.streams.values() for st in lst if st.events]
        watchers = self.watchers
        if not streams and not watchers:
            return
        for e in events:
            me = pb.MatchEvent(
                state_version=version,
                seat=e.seat,
                kind=e.kind,
                text=e.text,
                data_json=json.dumps(e.data, separators=(",", ":")) if e.data else "{}",
                timeout=timeout,
            )
            if streams:
                data = pb.ServerMessage(event=me).SerializeToString()
                for st in streams:
                    st.put(data)
            if watchers:
                data = pb.WatchMessage(event=me).SerializeToString()
                for w in watchers:
                    w.put(data)

    # ------------------------------------------------------------------ time policy
    def cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expired(self, version: int) -> None:
        self.timer = None
        self.ctx.spawn(self._expire(version))

    async def _expire(self, version: int) -> None:
        async with self.lock:
            if self.match.version != version or self.game_over is not None or self.broken:
                return
            d = self.decision
            if d is None:
                return
            seat = d.seat
            p = self.policy
            self.strikes_used[seat] += 1
            self.bank_left[seat] = 0
            on_expiry = p.on_expiry or pb.RANDOM_LEGAL
            elapsed = int((time.monotonic() - self.issued_at) * 1000)
            forfeit = (on_expiry == pb.FORFEIT or p.strikes > 0) and (
                self.strikes_used[seat] > p.strikes
            )
            if forfeit:
                self.log.info("timeout_forfeit", seat=seat, strikes=self.strikes_used[seat])
                await self._forfeit(seat, f"seat {seat} ran out of time and forfeits",
                                    {"reason": "timeout", "strikes": self.strikes_used[seat]})
                return
            policy = POLICY_NAMES.get(on_expiry, "RANDOM_LEGAL")  # FORFEIT within strikes
            move = self.match.timeout_move(policy)
            entry, events = self.match.submit(
                seat, move, version, elapsed_ms=elapsed, timeout=True, policy=policy
            )
            self.log.info("timeout_move", seat=seat, move=entry.n, policy=policy)
            await self._commit(entry)
            events = [
                # the game's own events say publicly what the move did; the move itself may
                # carry a seat's secret choice, so it stays out of this broadcast
                Event("referee.timeout", seat, f"seat {seat} ran out of time ({policy})",
                      {"policy": policy, "move_number": entry.n}),
                *events,
            ]
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
            if unless_joined and self.joined[seat]:
                return False, False
            self.log.info("seat_abandoned", seat=seat, reason=reason)
            if (self.policy.on_expiry or pb.RANDOM_LEGAL) == pb.FORFEIT:
                await self._forfeit(seat, f"seat {seat} forfeits: {reason}",
                                    {"reason": "abandoned", "detail": reason})
                return True, True
            abandoned = {**self.abandoned, seat: reason}
            # on disk before it takes effect or is acknowledged; a failed write changes nothing
            await self.ctx.store.set_abandoned(self.id, abandoned)
            self.abandoned = abandoned
            if self.decision is not None and self.decision.seat == seat:
                self.cancel_timer()
                self.timer = asyncio.get_running_loop().call_later(
                    0, self._expired, self.match.version)
            return True, False

    async def _forfeit(self, seat: int, text: str, data: dict[str, Any]) -> None:
        self.cancel_timer()
        self.match.forfeit(seat)
        self._broadcast_events([Event("referee.forfeit", seat, text, data)],
                               self.match.version, True)
        await self.finish()

    # ------------------------------------------------------------------ the end
    def record(self) -> dict[str, Any]:
        return self.match.record(
            match_id=self.id,
            seat_names=list(self.names),
            time_policy=json_format.MessageToDict(
                self.policy, preserving_proto_field_name=True,
                always_print_fields_with_no_presence=True,
            ),
            created_unix_ms=self.created_ms,
            finished_unix_ms=self.finished_ms,
            rejected_moves=list(self.rejections),
        )

    async def finish(self) -> None:
        self.cancel_timer()
        self.decision = None
        self.decision_proto = None
        self.finished_ms = now_ms()
        result = self.match.result()
        self.record_path = (self.ctx.records_dir / f"{self.id}.json").resolve()
        record = self.record()
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
        self.game_over = self.make_game_over()
        self.game_over_bytes = pb.ServerMessage(game_over=self.game_over).SerializeToString()
        self.log.info(
            "match_over", moves=len(self.match.moves), winners=list(self.game_over.winners),
            record=str(self.record_path),
        )
        # The record is on disk and GetRecord serves it from there: while the match is held
        # for --keep-finished, it costs its final state, not its whole move history.
        self.match.moves = []
        for lst in self.streams.values():
            for st in lst:
                st.put(self.game_over_bytes)
                st.put(CLOSE)
        if self.watchers:
            final = self.spectator_update().SerializeToString()
            data = pb.WatchMessage(game_over=self.game_over).SerializeToString()
            for w in self.watchers:
                w.put(final)
                w.put(data)
                w.put(CLOSE)
        self.ctx.finished(self)

    def make_game_over(self) -> pb.GameOver:
        result = self.match.result()
        go = pb.GameOver(match_id=self.id, record_path=str(self.record_path or ""))
        if result is None:
            return go
        forfeited = self.match.forfeited
        for s in range(self.match.seat_count):
            go.seats.append(
                pb.SeatResult(
                    seat=s,
                    name=self.names[s],
                    score=int(result.scores[s]),
                    rank=int(result.ranks[s]),
                    details_json=json.dumps(result.details[s]) if s < len(result.details) else "",
                    forfeited=forfeited == s,
                )
            )
        go.winners.extend(result.winners)
        go.summary = result.summary
        return go


def _opt_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
