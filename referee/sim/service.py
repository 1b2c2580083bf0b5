"""The Simulator gRPC service (``proto/referee/v1/sim.proto``; ``referee sim serve``): the
forward model (:class:`referee.sim.Simulation`) for bots in other languages. It holds states
under opaque handles, at most ``max_handles`` of them, each dropped after ``idle_s`` seconds
unused; every refusal is a gRPC status with the referee's machine-readable reason (the
``referee-reason`` trailer and a google.rpc.ErrorInfo, as ``referee.server.base.errors`` sends them)
and changes no state.

Handlers get the raw request bytes and parse them inside their guard (as the referee's do), so
bytes that are no request are INVALID_ARGUMENT/MALFORMED, never an UNKNOWN status."""
from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from referee.core import registry
from referee.core.contract import BadOptions, Game, IllegalMove, MalformedMove
from referee.core.match import ReplayError, redraw_rng, start_doc
from referee.core.rng import Rng
from referee.v1 import referee_pb2 as pb
from referee.v1 import sim_pb2 as spb

from .convert import events_from_proto
from .model import Simulation, playout, uniform

log = logging.getLogger("referee.sim")
SERVICE_NAME = "referee.v1.Simulator"
DOMAIN = "referee.v1"
REASON_KEY = "referee-reason"
#: Defaults of ``referee sim serve``.
MAX_HANDLES = 4096
IDLE_S = 600.0
#: Longest error message; client values are quoted by a short prefix only.
MAX_MESSAGE_CHARS = 300


class SimError(Exception):
    """A refusal: its gRPC code, the reason name and a message."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str):
        super().__init__(message[:MAX_MESSAGE_CHARS])
        self.code, self.reason, self.message = code, reason, message[:MAX_MESSAGE_CHARS]

    def abort(self, context: grpc.ServicerContext) -> None:
        """End the call with this status, its reason in the ``referee-reason`` trailer and an
        ErrorInfo in the rich status details (what the referee's clients already read)."""
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN))
        status = rpc_status.to_status(status_pb2.Status(
            code=self.code.value[0], message=self.message, details=[detail]))
        context.set_trailing_metadata(
            tuple(status.trailing_metadata) + ((REASON_KEY, self.reason),))
        context.abort(self.code, self.message)


def malformed(message: str, reason: str = "MALFORMED") -> SimError:
    return SimError(grpc.StatusCode.INVALID_ARGUMENT, reason, message)


def _wrap(envelope: Any, name: str, message: Message) -> Any:
    """A game's message in its field of a referee.v1 envelope (Move, View)."""
    getattr(envelope, name).CopyFrom(message)
    return envelope


def _clip(value: object, limit: int = 24) -> str:
    text = str(value)
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


@dataclass(slots=True)
class Held:
    """One state held under a handle: its simulation, a lock (one call at a time uses it) and
    when it was last used."""

    sim: Simulation
    used: float
    lock: threading.Lock = field(default_factory=threading.Lock)


class Handles:
    """The states a Simulator holds, by handle: at most ``cap``, each dropped ``idle_s``
    seconds after its last use (swept on every call; ``clock`` is injectable for tests)."""

    def __init__(self, cap: int = MAX_HANDLES, idle_s: float = IDLE_S,
                 clock: Callable[[], float] = time.monotonic):
        self.cap, self.idle_s, self.clock = cap, idle_s, clock
        self._held: OrderedDict[str, Held] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._held)

    def _sweep(self, now: float) -> None:
        while self._held:
            handle, held = next(iter(self._held.items()))
            if now - held.used < self.idle_s:
                return
            del self._held[handle]

    def add(self, sim: Simulation) -> str:
        with self._lock:
            now = self.clock()
            self._sweep(now)
            if len(self._held) >= self.cap:
                raise SimError(grpc.StatusCode.RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED",
                               f"this simulator holds {self.cap} states already; Release "
                               "handles you no longer need")
            handle = secrets.token_hex(8)
            self._held[handle] = Held(sim, now)
            return handle

    def get(self, handle: str) -> Held:
        with self._lock:
            now = self.clock()
            self._sweep(now)
            held = self._held.get(handle)
            if held is None:
                raise SimError(grpc.StatusCode.NOT_FOUND, "NOT_FOUND",
                               f"no state with handle {_clip(handle)} (unknown, released, or "
                               f"unused for {self.idle_s:g} s)")
            held.used = now
            self._held.move_to_end(handle)
            return held

    def release(self, handle: str) -> bool:
        with self._lock:
            self._sweep(self.clock())
            return self._held.pop(handle, None) is not None


class SimulatorService:
    """The Simulator's RPCs over a :class:`Handles` table. Each handler takes the parsed
    request and returns the response message; a SimError is the refusal. A state is used by
    one call at a time (a per-state lock), so concurrent clients on different handles run
    side by side and a client racing itself on one handle cannot corrupt it."""

    def __init__(self, handles: Handles | None = None):
        self.handles = handles or Handles()

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _game(name: str) -> Game:
        try:
            return registry.get(name)
        except KeyError:
            raise malformed(f"unknown game {_clip(name)}; this simulator has "
                            f"{', '.join(sorted(registry.games()))}") from None

    @staticmethod
    def _options(game: Game, raw: Any) -> dict[str, Any]:
        try:
            return game.spec.parse_options(dict(raw))
        except BadOptions as exc:
            raise malformed(str(exc)[:200]) from None

    @staticmethod
    def _seats(game: Game, asked: int) -> int:
        spec = game.spec
        seats = asked or spec.min_seats
        if not spec.min_seats <= seats <= spec.max_seats:
            raise malformed(f"{spec.name} is for {spec.min_seats} to {spec.max_seats} seats, "
                            f"not {seats}")
        return seats

    def _state(self, sim: Simulation) -> spb.SimState:
        decision = sim.decision()
        return spb.SimState(handle="", over=decision is None,
                            to_move=-1 if decision is None else decision.seat,
                            state_hash=sim.hash())

    def _new_handle(self, sim: Simulation) -> spb.SimState:
        out = self._state(sim)
        out.handle = self.handles.add(sim)
        return out

    def _result(self, handle: str, sim: Simulation, moves: int = 0) -> spb.SimResult:
        result = sim.result()
        if result is None:
            return spb.SimResult(handle=handle, over=False, moves=moves)
        return spb.SimResult(handle=handle, over=True, scores=[int(s) for s in result.scores],
                             ranks=[int(r) for r in result.ranks],
                             winners=list(result.winners), summary=result.summary,
                             moves=moves)

    # ------------------------------------------------------------------ RPCs
    def New(self, request: spb.SimNewRequest) -> spb.SimState:
        game = self._game(request.game)
        options = self._options(game, request.options)
        seats = self._seats(game, request.seats)
        if not request.HasField("start"):
            return self._new_handle(Simulation.new(game, seats, request.seed, options))
        start = request.start
        try:
            record = json.loads(start.record_json)
            if not isinstance(record, dict):
                raise ReplayError("start.record_json is not a JSON object")
            if record.get("game") != game.spec.name:
                raise ReplayError(f"the record is for {_clip(record.get('game'))}, not "
                                  f"{game.spec.name!r}")
            doc = start_doc(record, start.move, start.redraw_hidden)
            sim = Simulation.from_record(record, start.move,
                                         redraw_rng(request.seed) if start.redraw_hidden
                                         else None,
                                         game.default_components(options))
        except ValueError:
            raise malformed("start.record_json is not JSON") from None
        except ReplayError as exc:
            raise malformed(f"start: {exc}") from None
        except NotImplementedError:
            raise SimError(grpc.StatusCode.UNIMPLEMENTED, "NO_SAMPLER",
                           f"{game.spec.name} has no sampler to redraw with") from None
        if sim.options != options or sim.seat_count != seats:
            raise malformed(f"start: the record was played with other options or "
                            f"{int(doc['record']['seats'])} seats")
        return self._new_handle(sim)

    def FromViews(self, request: spb.SimFromViewsRequest) -> spb.SimState:
        game = self._game(request.game)
        options = self._options(game, request.options)
        seats = self._seats(game, request.seats)
        if not request.views:
            raise malformed("give at least one seat's view")
        views: dict[int, Message] = {}
        for sv in request.views:
            if not 0 <= sv.seat < seats or sv.seat in views:
                raise malformed(f"views: seat {sv.seat} is not a seat of {seats}, or twice")
            if sv.view.WhichOneof("game") != game.spec.name:
                raise malformed(f"views: seat {sv.seat}'s view is not a {game.spec.name} view",
                                "WRONG_GAME")
            views[sv.seat] = getattr(sv.view, game.spec.name)
        try:
            history = events_from_proto(request.history)
        except ValueError:
            raise malformed("history: an event's data_json is not JSON") from None
        try:
            sim = Simulation.from_views(game, views, seats, Rng(request.seed), history, options)
        except NotImplementedError:
            raise SimError(grpc.StatusCode.UNIMPLEMENTED, "NO_SAMPLER",
                           f"{game.spec.name} has no sampler yet") from None
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            # a view no state of this game shows (made up, or of other options or seats)
            raise malformed(f"views: no {game.spec.name} state shows them "
                            f"({type(exc).__name__}: {str(exc)[:120]})") from None
        return self._new_handle(sim)

    def LegalMoves(self, request: spb.SimHandle) -> spb.SimDecision:
        held = self.handles.get(request.handle)
        sim = held.sim
        with held.lock:
            d = sim.decision()
            if d is None:
                return spb.SimDecision(handle=request.handle, over=True, seat=-1)
            name = sim.game.spec.name
            return spb.SimDecision(
                handle=request.handle, seat=d.seat, kind=d.kind, prompt=d.prompt,
                legal_moves=[_wrap(pb.Move(), name, sim.move_to_proto(m)) for m in d.moves])

    def Apply(self, request: spb.SimApplyRequest) -> spb.SimState:
        held = self.handles.get(request.handle)
        sim = held.sim
        name = sim.game.spec.name
        which = request.move.WhichOneof("game")
        if which != name:
            raise malformed(f"the move is for {which or 'no game'}, this state is {name}",
                            "WRONG_GAME")
        try:
            move = sim.move_from_proto(getattr(request.move, name))
        except MalformedMove as exc:
            raise malformed(str(exc)[:200]) from None
        with held.lock:
            d = sim.decision()
            if d is None:
                raise SimError(grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER",
                               "the game is over")
            try:
                sim.apply(move, d.seat)
            except IllegalMove as exc:
                raise SimError(grpc.StatusCode.FAILED_PRECONDITION, exc.code or "ILLEGAL_MOVE",
                               exc.message[:200]) from None
            out = self._state(sim)
        out.handle = request.handle
        return out

    def Clone(self, request: spb.SimHandle) -> spb.SimState:
        held = self.handles.get(request.handle)
        with held.lock:
            copy = held.sim.clone()
        return self._new_handle(copy)

    def Rollout(self, request: spb.SimRolloutRequest) -> spb.SimResult:
        held = self.handles.get(request.handle)
        with held.lock:
            target = held.sim.clone() if request.on_copy else held.sim
            moves = playout(target.game, target.state, uniform(Rng(request.seed)))
        return self._result(request.handle, target, moves)

    def Result(self, request: spb.SimHandle) -> spb.SimResult:
        held = self.handles.get(request.handle)
        with held.lock:
            return self._result(request.handle, held.sim)

    def GetView(self, request: spb.SimViewRequest) -> pb.View:
        held = self.handles.get(request.handle)
        sim = held.sim
        if not -1 <= request.seat < sim.seat_count:
            raise malformed(f"seat {request.seat}: this game has seats 0 to "
                            f"{sim.seat_count - 1} (-1: a spectator)")
        with held.lock:
            view = sim.view(None if request.seat < 0 else request.seat)
        return _wrap(pb.View(), sim.game.spec.name, view)

    def Release(self, request: spb.SimHandle) -> spb.SimReleaseResponse:
        return spb.SimReleaseResponse(released=self.handles.release(request.handle))


#: The Simulator as sim.proto declares it: each RPC's name and its request message, read from
#: the descriptor, so an RPC the .proto gains is served (or the start fails where the servicer
#: lacks it), never answered UNIMPLEMENTED (tests/server/test_handler_parity.py). All are unary.
SIMULATOR = spb.DESCRIPTOR.services_by_name["Simulator"]
METHODS: dict[str, type[Message]] = {
    m.name: getattr(spb, m.input_type.name) for m in SIMULATOR.methods}


def generic_handler(service: SimulatorService) -> grpc.GenericRpcHandler:
    """The Simulator's method handlers, each parsing its raw request inside one guard: bytes
    that are no request are MALFORMED, a SimError its own status, anything else INTERNAL."""

    def unary(name: str, request_type: type[Message]) -> grpc.RpcMethodHandler:
        method = getattr(service, name)

        def handle(data: bytes, context: grpc.ServicerContext) -> bytes:
            try:
                try:
                    request = request_type.FromString(data)
                except Exception:  # noqa: BLE001 - DecodeError, or a recursion/UTF-8 error
                    raise malformed(f"malformed request: the bytes are not a "
                                    f"{request_type.DESCRIPTOR.full_name} message") from None
                return method(request).SerializeToString()
            except SimError as exc:
                exc.abort(context)
            except Exception as exc:  # reported, the server goes on
                log.exception("simulator call %s failed", name)
                SimError(grpc.StatusCode.INTERNAL, "INTERNAL",
                         f"{name} failed: {type(exc).__name__}").abort(context)
            raise AssertionError("unreachable")  # abort raises

        return grpc.unary_unary_rpc_method_handler(handle)

    return grpc.method_handlers_generic_handler(
        SERVICE_NAME, {name: unary(name, t) for name, t in METHODS.items()})


def serve(host: str = "127.0.0.1", port: int = 0, *, max_handles: int = MAX_HANDLES,
          idle_s: float = IDLE_S, workers: int = 4) -> tuple[grpc.Server, int]:
    """A started Simulator server and the port it listens on (``port`` 0: any free one)."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers,
                                                    thread_name_prefix="referee-sim"))
    server.add_generic_rpc_handlers((generic_handler(
        SimulatorService(Handles(max_handles, idle_s))),))
    bound = server.add_insecure_port(f"{host}:{port}")
    if not bound:
        raise OSError(f"cannot listen on {host}:{port}")
    server.start()
    return server, bound
