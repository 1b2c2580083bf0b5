"""Blocking helpers for simple clients: one seat's unary calls, admin calls and spectating.

A bot that does not want a stream can poll::

    seat = SeatClient("127.0.0.1:50051", match_id, token)
    while (decision := seat.wait_for_decision()) is not None:
        seat.submit(decision.state_version, decision.legal_moves[0])

Failed calls raise :class:`~referee_client.connection.RefereeError` with the gRPC code and the
referee's reason (``NOT_YOUR_TURN``, ``STALE_STATE``, ``ILLEGAL_MOVE``, ...).
"""
from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import grpc

from referee.v1 import referee_pb2, referee_pb2_grpc

from .bot import RETRYABLE, STORE_RESEND_LIMIT_S, STORE_RESEND_S, Backoff, clean_note
from .connection import RefereeError, TlsConfig, bearer, sync_channel

#: ``TimePolicy.on_expiry`` values by their lower-case names (default_move, random_legal,
#: forfeit), from the proto enum; ON_EXPIRY_UNSPECIFIED (the referee's default) aside.
ON_EXPIRY: dict[str, referee_pb2.OnExpiry] = {
    name.lower(): cast("referee_pb2.OnExpiry", value)
    for name, value in referee_pb2.OnExpiry.items() if value}


def time_policy_proto(tp: dict[str, Any]) -> referee_pb2.TimePolicy:
    """A TimePolicy from a dict of its fields (``on_expiry`` by its :data:`ON_EXPIRY` name);
    a field left out is 0, and ``on_expiry`` random_legal."""
    return referee_pb2.TimePolicy(
        move_ms=int(tp.get("move_ms", 0)), bank_ms=int(tp.get("bank_ms", 0)),
        grace_ms=int(tp.get("grace_ms", 0)), strikes=int(tp.get("strikes", 0)),
        on_expiry=ON_EXPIRY.get(str(tp.get("on_expiry", "random_legal")),
                                referee_pb2.RANDOM_LEGAL),
        join_ms=int(tp.get("join_ms", 0)), first_move_ms=int(tp.get("first_move_ms", 0)),
        increment_ms=int(tp.get("increment_ms", 0)),
    )


class _Client:
    def __init__(self, address: str, *, tls: TlsConfig | None = None, timeout: float = 10.0):
        self.address = address
        self.timeout = timeout
        self._channel = sync_channel(address, tls=tls)
        self.stub = referee_pb2_grpc.RefereeStub(self._channel)

    def _call(self, method, request, metadata=()):
        try:
            return method(request, metadata=metadata, timeout=self.timeout)
        except grpc.RpcError as err:
            raise RefereeError.from_rpc_error(err) from None

    def close(self) -> None:
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SeatClient(_Client):
    """One seat of one match, over unary calls (``GetView``, ``GetLegalMoves``,
    ``SubmitMove``)."""

    def __init__(
        self,
        address: str,
        match_id: str,
        token: str,
        *,
        tls: TlsConfig | None = None,
        timeout: float = 10.0,
    ):
        super().__init__(address, tls=tls, timeout=timeout)
        self.match_id = match_id
        self._metadata = bearer(token)

    def view(self) -> referee_pb2.GetViewResponse:
        """The seat's view; ``.decision`` is set when it is the seat's turn, ``.game_over``
        when the match is over."""
        return self._call(
            self.stub.GetView, referee_pb2.GetViewRequest(match_id=self.match_id), self._metadata
        )

    def legal_moves(self) -> referee_pb2.Decision:
        """The pending decision with every legal move (no moves if it is not this seat's
        turn)."""
        return self._call(
            self.stub.GetLegalMoves,
            referee_pb2.GetLegalMovesRequest(match_id=self.match_id),
            self._metadata,
        )

    def describe(self, since_version: int = 0) -> referee_pb2.SeatText:
        """This seat's view, decision (every legal move with its short id, kind, one line and
        rule) and the public events after ``since_version``, in words (``DescribeSeat``): the
        text a language model or a person reads, and a debugger's ``describe``. Each listed
        ``moves[i].move`` can be passed to :meth:`submit` unchanged."""
        return self._call(
            self.stub.DescribeSeat,
            referee_pb2.DescribeSeatRequest(match_id=self.match_id, since_version=since_version),
            self._metadata,
        )

    def submit(self, state_version: int, move: referee_pb2.Move,
               note: str = "", *, deadline_unix_ms: int = 0) -> referee_pb2.MoveResult:
        """Submit ``move`` for the decision at ``state_version``, with an optional ``note``
        (cleaned by :func:`~referee_client.bot.clean_note`). A rejected move raises
        RefereeError (FAILED_PRECONDITION with its reason) or comes back with
        ``accepted=False``, depending on the referee; either way the match is unchanged.

        A call that ends with a status clients retry (:data:`~referee_client.bot.RETRYABLE`:
        STORE_UNAVAILABLE, a referee restarting, a stream reset by a proxy whose referee died)
        is sent again, the same move at the same ``state_version``, after a delay doubling from
        0.1 to 2 s, until the decision's ``deadline_unix_ms`` (pass the Decision's) or for 60 s
        without one; then the last error is raised. Safe: the state version lets the move be
        played once at most; a resend answered STALE_STATE means an earlier copy was played
        (or the time policy moved): read the view for where the match stands."""
        request = referee_pb2.SubmitMoveRequest(
            match_id=self.match_id, state_version=state_version, move=move,
            request_id=uuid.uuid4().hex[:12], note=clean_note(note))
        delays = Backoff(initial=STORE_RESEND_S[0], maximum=STORE_RESEND_S[1]).delays(
            random.Random())
        started = time.monotonic()
        while True:
            try:
                return self._call(self.stub.SubmitMove, request, self._metadata)
            except RefereeError as err:
                if err.code not in RETRYABLE:
                    raise
                delay = next(delays)
                if deadline_unix_ms:
                    if time.time() * 1000 + delay * 1000 >= deadline_unix_ms:
                        raise
                elif time.monotonic() + delay - started > STORE_RESEND_LIMIT_S:
                    raise
                time.sleep(delay)

    def wait_for_decision(
        self, poll_s: float = 0.05, timeout_s: float | None = None
    ) -> referee_pb2.Decision | None:
        """Poll ``GetView`` until it is this seat's turn (returns the decision) or the match is
        over (returns None)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            response = self.view()
            if response.HasField("game_over"):
                return None
            if response.HasField("decision") and response.decision.legal_moves:
                return response.decision
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"no decision for this seat within {timeout_s}s")
            time.sleep(poll_s)


#: how often ``AdminClient.create_match`` sends its request again on UNAVAILABLE, and when
CREATE_RETRIES = 6
CREATE_BACKOFF = Backoff(initial=0.2, maximum=5.0)


class AdminClient(_Client):
    """Calls needing the referee's admin token (``CreateMatch``; ``GetRecord`` of a running
    match) plus the open ones (``ListGames``)."""

    def __init__(
        self,
        address: str,
        admin_token: str = "",
        *,
        tls: TlsConfig | None = None,
        timeout: float = 10.0,
    ):
        super().__init__(address, tls=tls, timeout=timeout)
        self._metadata = bearer(admin_token) if admin_token else ()

    def list_games(self) -> list[referee_pb2.GameSpec]:
        return list(self._call(self.stub.ListGames, referee_pb2.ListGamesRequest()).games)

    def game_rules(self, game: str) -> referee_pb2.GameRules:
        """``game``'s spec, its rulings (RULINGS.md) and the rules and engine versions its
        records carry, as this referee plays them (``GetGameRules``; public)."""
        return self._call(self.stub.GetGameRules, referee_pb2.GetGameRulesRequest(game=game))

    def create_match(
        self,
        game: str,
        seats: int,
        *,
        options: Mapping[str, object] | None = None,
        seed: int | None = None,
        seat_names: Sequence[str] = (),
        time_policy: referee_pb2.TimePolicy | None = None,
        start: referee_pb2.StartPosition | None = None,
        request_id: str | None = None,
        retries: int = CREATE_RETRIES,
        backoff: Backoff | None = None,
        reveal_policy: referee_pb2.RevealPolicy = referee_pb2.REVEAL_POLICY_SAFE,
    ) -> referee_pb2.CreateMatchResponse:
        """Create a match; returns its id and one secret token per seat. ``start``: begin where
        a recorded match stood after some moves (``start_position``) instead of the set-up.

        The call is idempotent: it carries ``request_id`` (by default a fresh random one) and,
        when the referee is UNAVAILABLE (restarting, or the connection broke before the
        reply), is sent again with the same id up to ``retries`` times, after ``backoff``'s
        delays; the referee answers a repeat with the first call's match and tokens, so a
        lost reply never makes a second match. ``request_id=""`` sends none (and so does not
        retry).

        ``reveal_policy``: when the finished match's hidden information becomes public
        (``REVEAL_POLICY_SAFE``, the referee's default, or ``REVEAL_POLICY_NONE``); always
        sent, never left for the referee to read as its default."""
        request = referee_pb2.CreateMatchRequest(
            game=game,
            seats=seats,
            options={k: _option_text(v) for k, v in (options or {}).items()},
            seat_names=list(seat_names),
            request_id=uuid.uuid4().hex if request_id is None else request_id,
            reveal_policy=reveal_policy,
        )
        if seed is not None:
            request.seed = seed
        if time_policy is not None:
            request.time_policy.CopyFrom(time_policy)
        if start is not None:
            request.start.CopyFrom(start)
        delays = (backoff or CREATE_BACKOFF).delays(random.Random())
        left = retries if request.request_id else 0
        while True:
            try:
                return self._call(self.stub.CreateMatch, request, self._metadata)
            except RefereeError as err:
                if err.code != grpc.StatusCode.UNAVAILABLE or left <= 0:
                    raise
            left -= 1
            time.sleep(next(delays))

    def record(self, match_id: str) -> referee_pb2.GetRecordResponse:
        return self._call(
            self.stub.GetRecord, referee_pb2.GetRecordRequest(match_id=match_id), self._metadata
        )


def start_position(record: Mapping[str, Any], move: int,
                   redraw_hidden: bool = False) -> referee_pb2.StartPosition:
    """A CreateMatchRequest.start at ``move`` moves into ``record`` (a record as GetRecord or a
    record file gives it), sending only what the referee replays: the moves after ``move``, the
    result and the bots' notes are left out, so the request stays small."""
    cut = {k: v for k, v in record.items() if k not in ("result", "forfeited")}
    cut["moves"] = [{k: v for k, v in entry.items() if k != "note"}
                    for entry in list(record.get("moves") or [])[:move]]
    return referee_pb2.StartPosition(record_json=json.dumps(cut, separators=(",", ":")),
                                     move=move, redraw_hidden=redraw_hidden)


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def watch(
    address: str, match_id: str, *, tls: TlsConfig | None = None,
    backoff: Backoff | None = None,
) -> Iterator[referee_pb2.WatchMessage]:
    """Spectate a match: yields public ``WatchMessage``s until the ``GameOver``.

    A stream that ends with a status clients retry (:data:`~referee_client.bot.RETRYABLE`: a
    host that died behind a proxy ends it INTERNAL, docs/bot/protocol.md *Reconnecting*) is
    opened again after ``backoff``'s delay; it gives up (raising the last error) after
    ``backoff.give_up_after`` seconds without a message. A reopened stream starts with the
    match's current public view (a ``SpectatorUpdate``); the events of the moves made while it
    was cut are not sent again, the view shows their outcome."""
    backoff = backoff or Backoff(maximum=2.0)
    delays = backoff.delays(random.Random())
    channel = sync_channel(address, tls=tls)
    last_message = time.monotonic()
    try:
        stub = referee_pb2_grpc.RefereeStub(channel)
        while True:
            try:
                for message in stub.Watch(referee_pb2.WatchRequest(match_id=match_id)):
                    last_message = time.monotonic()
                    delays = backoff.delays(random.Random())  # a message: start afresh
                    yield message
                    if message.WhichOneof("msg") == "game_over":
                        return
                return  # ended without a GameOver (the referee closed it): nothing to resume
            except grpc.RpcError as err:
                error = RefereeError.from_rpc_error(err)
                waited = time.monotonic() - last_message
                if error.code not in RETRYABLE or (
                        backoff.give_up_after and waited >= backoff.give_up_after):
                    raise error from None
            time.sleep(next(delays))
    finally:
        channel.close()
