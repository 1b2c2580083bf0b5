"""A cluster worker hands a call for a match it does not own to the worker that does.

The proxy routes by the token a call carries (``referee.server.base.shard``); a call that names its
match only in its body (Watch, GetRecord, a spectator's GetView, the admin's AbandonSeat) lands
on any worker. That worker parses the match id and, when another shard owns it, passes the
request bytes on to the owner over the owner's Unix socket and its answer (messages, status,
reason trailer) back, unchanged. CreateMatch binding bots (``seat_bots``) or a league goes to the
home worker, which keeps the bots, their sessions and the leagues. Everything else is served
where it lands. The owner sees the original client in CLIENT_HEADER (for its rate limits) and
the original ``authorization``.

On several hosts (``referee serve --advertise``, a "roaming" referee; the workers of
``--workers N`` are started so too) the owner is not a fixed
shard but whoever holds the match's lease in the shared store, which names its address: a call
for a match this referee does not hold goes to that address while the lease is live, and is
served here otherwise (the registry then takes the match over, ``MatchRegistry.adopt``). A Play
stream is handed on as a whole, found by its seat token. A forwarded call is never forwarded
again (FORWARDED_HEADER), so two referees with different ideas of the owner cannot bounce it.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog

from referee.core import registry
from referee.server.base import errors, shard
from referee.server.base.auth import (
    CLIENT_HEADER,
    Context,
    bearer,
    peer_address,
    token_hash,
    trusted_peer,
)
from referee.server.base.errors import RefereeError
from referee.server.play.registry import MatchRegistry
from referee.server.play.sessions import BotSessions
from referee.server.play.streams import CLOSE, Stream
from referee.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.server")

#: the service whose calls are handed on (the servicer, front.service, names it the same way)
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Referee"].full_name

#: set on a call one referee hands to another: the receiver serves it, never hands it on
FORWARDED_HEADER = "x-referee-forwarded"


def _match(request: Any) -> str:
    return request.match_id


def _create(request: Any) -> str | None:
    return shard.HOME if (request.league or any(request.seat_bots)) else None


def _home(request: Any) -> str | None:
    return shard.HOME


#: the calls a worker may hand on: request type, and what names the owner: the match id
#: (``_match``), or a shard (``_create``; None: here)
ROUTED: dict[str, tuple[Any, Callable[[Any], str | None]]] = {
    "SubmitMove": (pb.SubmitMoveRequest, _match),
    "GetView": (pb.GetViewRequest, _match),
    "GetLegalMoves": (pb.GetLegalMovesRequest, _match),
    "DescribeSeat": (pb.DescribeSeatRequest, _match),
    "GetRecord": (pb.GetRecordRequest, _match),
    "AbandonSeat": (pb.AbandonSeatRequest, _match),
    "Watch": (pb.WatchRequest, _match),
    "CreateMatch": (pb.CreateMatchRequest, _create),
    # the lobby (issue 33) lives on the home shard, beside the bot sessions it seats: every
    # worker hands its calls there, so all see one set of seeks
    "EnterLobby": (pb.EnterLobbyRequest, _home),
    "OpenSeek": (pb.OpenSeekRequest, _home),
    "Challenge": (pb.ChallengeRequest, _home),
    "ListSeeks": (pb.ListSeeksRequest, _home),
    "JoinSeek": (pb.JoinSeekRequest, _home),
    "CancelSeek": (pb.CancelSeekRequest, _home),
    "GetSeek": (pb.GetSeekRequest, _home),
}

_PASSED = ("authorization",)
#: a dead peer is tried again soon after it comes back (gRPC's default backoff grows to 2 min)
_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 16 << 20),
                    ("grpc.max_send_message_length", 16 << 20),
                    ("grpc.initial_reconnect_backoff_ms", 200),
                    ("grpc.min_reconnect_backoff_ms", 200),
                    ("grpc.max_reconnect_backoff_ms", 2000)]


class Forwarder:
    """This referee's view of the others. A worker given ``--shard`` and ``--peers`` alone:
    ``peers`` maps each shard to its gRPC address, which owns that shard's matches. A host of
    several, or a worker of ``--workers N`` (which advertises its socket so that the others
    take its matches over while it restarts), ``held`` given, the registry of this referee's
    matches (``--advertise``): a match's owner
    is its lease's holder (``MatchRegistry.holder_address``); ``peers`` may still name the home shard's address,
    for the CreateMatch calls that bind bots or a league."""

    def __init__(self, own: str, peers: dict[str, str], trust_proxy: bool = True,
                 held: MatchRegistry | None = None, proxies: frozenset[str] = frozenset()):
        self.own = own
        self.peers = dict(peers)
        self.trust_proxy = trust_proxy
        self.proxies = proxies
        self.held = held
        self._channels: dict[str, grpc.aio.Channel] = {}

    def address_of(self, match_id: str) -> str | None:
        """The address of the referee to hand a call for ``match_id`` to, or None (here).
        RefereeError (NOT_OWNER) when another referee holds it but gave no address."""
        if self.held is not None:
            return self.held.holder_address(match_id)
        owner = shard.of_match(match_id)
        return self.peers[owner] if owner and owner != self.own and owner in self.peers \
            else None

    def target(self, method: str, data: bytes, context: Context | None = None) -> str | None:
        """The address to hand the call to, or None to serve it here (a body that does not
        parse is served here too: the local handler answers MALFORMED)."""
        route = ROUTED.get(method.rpartition("/")[2])
        if route is None or _forwarded(context):
            return None
        request_type, pick = route
        try:
            request = request_type.FromString(data)
        except Exception:  # noqa: BLE001 - any parse failure: the local handler reports it
            return None
        if pick is _match:
            return self.address_of(request.match_id)
        owner = pick(request)
        return self.peers[owner] if owner and owner != self.own and owner in self.peers \
            else None

    def seat_target(self, context: Context) -> str | None:
        """Where a Play stream goes (a host's): its seat token's match's holder, or None."""
        if self.held is None or _forwarded(context):
            return None
        token = bearer(context.invocation_metadata())
        if not token:
            return None
        h = token_hash(token)
        if h in self.held.tokens:
            return None
        found = self.held.store.match_of_token(h)
        return self.address_of(found[0]) if found is not None else None

    def channel(self, address: str) -> grpc.aio.Channel:
        ch = self._channels.get(address)
        if ch is None:
            ch = self._channels[address] = grpc.aio.insecure_channel(address,
                                                                     options=_CHANNEL_OPTIONS)
        return ch

    def metadata(self, context: Context) -> list[tuple[str, str | bytes]]:
        """What the owner is told: the caller's credentials and who the caller is."""
        md = [(k, v) for k, v in context.invocation_metadata() or () if k in _PASSED]
        md.append((FORWARDED_HEADER, "1"))
        peer = context.peer() or ""
        client = None
        if trusted_peer(peer, self.trust_proxy, self.proxies):
            client = next((v for k, v in context.invocation_metadata() or ()
                           if k == CLIENT_HEADER), None)
        md.append((CLIENT_HEADER, client if client is not None else peer_address(peer)))
        return md

    def reachable(self, address: str) -> bool:
        """Whether ``address`` may be up: not after its last connection attempt failed."""
        return self.channel(address).get_state(try_to_connect=True) \
            != grpc.ChannelConnectivity.TRANSIENT_FAILURE

    async def unary(self, method: str, target: str, data: bytes, context: Context,
                    local: Callable[[bytes, Context], Awaitable[Any]] | None = None) -> Any:
        """The call handed to ``target``; with ``local``, served by it instead when ``target``
        cannot be reached (the call never left this referee)."""
        if local is not None and not self.reachable(target):
            return await local(data, context)
        rpc: Any = self.channel(target).unary_unary(method)
        try:
            return await rpc(data, metadata=self.metadata(context),
                              timeout=context.time_remaining())
        except grpc.aio.AioRpcError as exc:
            if local is not None and _unreached(exc):
                return await local(data, context)
            await context.abort(*_passed_on(exc))
            raise  # pragma: no cover - abort raises

    async def stream(self, method: str, target: str, data: bytes,
                     context: Context) -> AsyncIterator[bytes]:
        rpc: Any = self.channel(target).unary_stream(method)
        call = rpc(data, metadata=self.metadata(context), timeout=context.time_remaining())
        try:
            async for item in call:
                yield item
        except grpc.aio.AioRpcError as exc:
            await context.abort(*_passed_on(exc))
        finally:
            call.cancel()

    async def bidi(self, method: str, target: str, requests: AsyncIterator[bytes],
                   context: Context) -> AsyncIterator[bytes]:
        """A bidirectional stream (Play) handed on whole: the caller's frames to the owner as
        they come, the owner's messages and status back."""
        rpc: Any = self.channel(target).stream_stream(method)
        call = rpc(metadata=self.metadata(context), timeout=context.time_remaining())

        async def pump() -> None:
            try:
                async for data in requests:
                    await call.write(data)
                await call.done_writing()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - either side is gone: the read below ends too
                call.cancel()

        task = asyncio.ensure_future(pump())
        try:
            while True:
                item = await call.read()
                if item is grpc.aio.EOF:
                    break
                yield item
        except grpc.aio.AioRpcError as exc:
            await context.abort(*_passed_on(exc))
        finally:
            task.cancel()
            call.cancel()

    async def hand_back_sessions(self, sessions: BotSessions, every_s: float) -> None:
        """On a host other than the home one (several hosts): the bot sessions the proxy sent
        here while the home host was down are ended (UNAVAILABLE / NOT_OWNER) once it is
        reachable again, so that their bots reconnect to it, where bound matches are created
        (a CreateMatch binding bots is handed to the home host whenever it is up)."""
        home = self.peers[shard.HOME]
        while True:
            await asyncio.sleep(every_s)
            if sessions.conns and self.channel(home).get_state(try_to_connect=True) \
                    == grpc.ChannelConnectivity.READY:
                n = sessions.end_all(errors.not_owner(
                    "the home referee is up again: reconnect (through the proxy)"), shard.HOME)
                if n:
                    log.info("sessions_handed_back", sessions=n, home=home)

    def remote(self, match_id: str, game: str) -> RemoteMatch | None:
        """What the web viewer's live feed needs of another referee's running match."""
        try:
            address = self.address_of(match_id)
        except RefereeError:
            return None
        return RemoteMatch(self, address, match_id, game) if address else None

    async def close(self) -> None:
        for ch in self._channels.values():
            await ch.close()
        self._channels.clear()


def _forwarded(context: Context | None) -> bool:
    return context is not None and any(k == FORWARDED_HEADER
                                       for k, _ in context.invocation_metadata() or ())


async def _where(context: Context, find: Callable[[], str | None]) -> str | None:
    """``find()``, its RefereeError (NOT_OWNER) turned into the call's status."""
    try:
        return find()
    except RefereeError as exc:
        await context.abort(exc.code, exc.message, exc.trailing_metadata())
        raise  # pragma: no cover - abort raises


def routed(inner: grpc.GenericRpcHandler, fwd: Forwarder,
           track: Callable[[Any], Any] = lambda fn: fn) -> grpc.GenericRpcHandler:
    """``inner`` (the Referee service's handlers) with the ROUTED calls handed to their owner
    when another referee owns them (and, on a host of several, Play streams too). ``track``
    wraps each routed unary handler (the service's ``track_unary``: a drain waits for the
    calls being handed on too)."""

    class Routed(grpc.GenericRpcHandler):
        def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
            handler = inner.service(details)
            method = details.method
            name = method.rpartition("/")[2]
            if handler is None or not method.startswith(f"/{SERVICE_NAME}/"):
                return handler
            if name == "Play" and fwd.held is not None:
                return _routed_play(handler, method, fwd)
            if name not in ROUTED:
                return handler
            if handler.unary_unary is not None:
                # (grpc's stubs type a handler's function for the sync server only)
                local_unary: Any = handler.unary_unary

                # a host's CreateMatch for the home one: served here while that one is down
                fallback = local_unary if name == "CreateMatch" and fwd.held is not None \
                    else None

                async def unary(data: bytes, context: Context) -> Any:
                    target = await _where(context, lambda: fwd.target(method, data, context))
                    if target is None:
                        return await local_unary(data, context)
                    return await fwd.unary(method, target, data, context, fallback)

                return grpc.unary_unary_rpc_method_handler(
                    track(unary), None, handler.response_serializer)
            local_stream: Any = handler.unary_stream

            async def stream(data: bytes, context: Context) -> AsyncIterator[Any]:
                target = await _where(context, lambda: fwd.target(method, data, context))
                items: Any = (local_stream(data, context) if target is None
                              else fwd.stream(method, target, data, context))
                async for item in items:
                    yield item

            return grpc.unary_stream_rpc_method_handler(
                stream, None, handler.response_serializer)

    return Routed()


def _routed_play(handler: Any, method: str, fwd: Forwarder) -> Any:
    """A host's Play: handed whole to the referee holding its seat token's match, if another
    does."""
    local: Any = handler.stream_stream

    async def play(requests: AsyncIterator[bytes], context: Context) -> AsyncIterator[Any]:
        target = await _where(context, lambda: fwd.seat_target(context))
        items: Any = (local(requests, context) if target is None
                      else fwd.bidi(method, target, requests, context))
        async for item in items:
            yield item

    return grpc.stream_stream_rpc_method_handler(play, None, handler.response_serializer)


class RemoteMatch:
    """Another worker's running match as the web viewer's live feed (``referee.web.live``) sees
    a runtime: ``watch`` opens a Watch on its owner and puts what arrives (serialised
    WatchMessages, then CLOSE) on the feed's stream; ``detach`` ends it. The clocks come in
    the owner's updates (``SpectatorUpdate.clock``), timed by the owner's clock (``remote``:
    the feed allows for its difference from this one's)."""

    remote = True

    def __init__(self, fwd: Forwarder, owner: str, match_id: str, game: str):
        self.fwd = fwd
        self.owner = owner  # its address
        self.id = match_id
        self.game = registry.get(game)
        self._tasks: dict[int, asyncio.Task] = {}

    def watch(self, stream: Stream) -> None:
        self._tasks[id(stream)] = asyncio.ensure_future(self._pump(stream))

    async def _pump(self, stream: Stream) -> None:
        rpc: Any = self.fwd.channel(self.owner).unary_stream(f"/{SERVICE_NAME}/Watch")
        call = rpc(pb.WatchRequest(match_id=self.id).SerializeToString())
        try:
            async for item in call:
                stream.put(item)
        except grpc.aio.AioRpcError:
            pass  # the owner is restarting, or the match went away: the page reloads
        finally:
            call.cancel()
            stream.put(CLOSE)

    def detach(self, stream: Stream) -> None:
        task = self._tasks.pop(id(stream), None)
        if task is not None:
            task.cancel()


def _unreached(exc: grpc.aio.AioRpcError) -> bool:
    """Whether a call failed before it reached the other referee (no connection to it)."""
    return exc.code() == grpc.StatusCode.UNAVAILABLE \
        and "failed to connect" in (exc.details() or "").lower()


def _passed_on(exc: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, tuple]:
    """What the caller is told of a call the owner refused: its status, message and trailers
    (``context.abort`` takes them as a tuple; aio gives Metadata), or, when the owner could not
    be reached at all (restarting, or a dead host whose lease has not expired yet),
    UNAVAILABLE / NOT_OWNER, which clients retry."""
    if _unreached(exc):
        err = errors.not_owner("the referee running this match cannot be reached now; call "
                               "again (another takes it over once its lease expires)")
        return err.code, err.message, err.trailing_metadata()
    return exc.code(), exc.details() or "", tuple(exc.trailing_metadata() or ())


def remote_error(exc: grpc.aio.AioRpcError) -> RefereeError:
    """The refusal another referee answered a call this one made for a client of its own
    (the web's play page, front.service's seat calls), with the owner's status, message and
    reason (its REASON_KEY trailer); NOT_OWNER when the owner could not be reached."""
    code, message, trailers = _passed_on(exc)
    reason = next((v if isinstance(v, str) else v.decode("utf-8", "replace")
                   for k, v in trailers if k == errors.REASON_KEY), code.name)
    return RefereeError(code, reason, message)
