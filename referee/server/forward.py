"""A cluster worker hands a call for a match it does not own to the worker that does.

The proxy routes by the token a call carries (``referee.server.shard``); a call that names its
match only in its body (Watch, GetRecord, a spectator's GetView, the admin's AbandonSeat) lands
on any worker. That worker parses the match id and, when another shard owns it, passes the
request bytes on to the owner over the owner's Unix socket and its answer (messages, status,
reason trailer) back, unchanged. CreateMatch binding bots (``seat_bots``) or a league goes to the
home worker, which keeps the bots, their sessions and the leagues. Everything else is served
where it lands. The owner sees the original client in CLIENT_HEADER (for its rate limits) and
the original ``authorization``.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from referee.core import registry
from referee.v1 import referee_pb2 as pb

from . import shard
from .auth import CLIENT_HEADER, peer_address
from .service import SERVICE_NAME
from .streams import CLOSE, Stream


def _match(request: Any) -> str | None:
    return shard.of_match(request.match_id)


def _create(request: Any) -> str | None:
    return shard.HOME if (request.league or any(request.seat_bots)) else None


#: the calls a worker may hand on: request type, and the shard the request names (None: here)
ROUTED: dict[str, tuple[Any, Callable[[Any], str | None]]] = {
    "SubmitMove": (pb.SubmitMoveRequest, _match),
    "GetView": (pb.GetViewRequest, _match),
    "GetLegalMoves": (pb.GetLegalMovesRequest, _match),
    "GetRecord": (pb.GetRecordRequest, _match),
    "AbandonSeat": (pb.AbandonSeatRequest, _match),
    "Watch": (pb.WatchRequest, _match),
    "CreateMatch": (pb.CreateMatchRequest, _create),
}

_PASSED = ("authorization",)


class Forwarder:
    """This worker's view of the others: ``peers`` maps each shard to its gRPC address."""

    def __init__(self, own: str, peers: dict[str, str], trust_proxy: bool = True):
        self.own = own
        self.peers = dict(peers)
        self.trust_proxy = trust_proxy
        self._channels: dict[str, grpc.aio.Channel] = {}

    def target(self, method: str, data: bytes) -> str | None:
        """The shard to hand the call to, or None to serve it here (a body that does not parse
        is served here too: the local handler answers MALFORMED)."""
        route = ROUTED.get(method.rpartition("/")[2])
        if route is None:
            return None
        request_type, pick = route
        try:
            owner = pick(request_type.FromString(data))
        except Exception:  # noqa: BLE001 - any parse failure: the local handler reports it
            return None
        return owner if owner and owner != self.own and owner in self.peers else None

    def channel(self, target: str) -> grpc.aio.Channel:
        ch = self._channels.get(target)
        if ch is None:
            ch = self._channels[target] = grpc.aio.insecure_channel(
                self.peers[target], options=[("grpc.max_receive_message_length", 16 << 20),
                                             ("grpc.max_send_message_length", 16 << 20)])
        return ch

    def metadata(self, context) -> list[tuple[str, str]]:
        """What the owner is told: the caller's credentials and who the caller is."""
        md = [(k, v) for k, v in context.invocation_metadata() or () if k in _PASSED]
        peer = context.peer() or ""
        client = None
        if self.trust_proxy and peer.startswith("unix:"):
            client = next((v for k, v in context.invocation_metadata() or ()
                           if k == CLIENT_HEADER), None)
        md.append((CLIENT_HEADER, client if client is not None else peer_address(peer)))
        return md

    async def unary(self, method: str, target: str, data: bytes, context) -> bytes:
        rpc: Any = self.channel(target).unary_unary(method)
        try:
            return await rpc(data, metadata=self.metadata(context),
                              timeout=context.time_remaining())
        except grpc.aio.AioRpcError as exc:
            await context.abort(exc.code(), exc.details() or "",
                                tuple(exc.trailing_metadata() or ()))
            raise  # pragma: no cover - abort raises

    async def stream(self, method: str, target: str, data: bytes, context) -> AsyncIterator[bytes]:
        rpc: Any = self.channel(target).unary_stream(method)
        call = rpc(data, metadata=self.metadata(context), timeout=context.time_remaining())
        try:
            async for item in call:
                yield item
        except grpc.aio.AioRpcError as exc:
            await context.abort(exc.code(), exc.details() or "",
                                tuple(exc.trailing_metadata() or ()))
        finally:
            call.cancel()

    def remote(self, match_id: str, game: str) -> RemoteMatch | None:
        """What the web viewer's live feed needs of another worker's running match."""
        owner = shard.of_match(match_id)
        if owner is None or owner == self.own or owner not in self.peers:
            return None
        return RemoteMatch(self, owner, match_id, game)

    async def close(self) -> None:
        for ch in self._channels.values():
            await ch.close()
        self._channels.clear()


def routed(inner: grpc.GenericRpcHandler, fwd: Forwarder) -> grpc.GenericRpcHandler:
    """``inner`` (the Referee service's handlers) with the ROUTED calls handed to their owner
    when another shard owns them."""

    class Routed(grpc.GenericRpcHandler):
        def service(self, details):
            handler = inner.service(details)
            method = details.method
            if handler is None or not method.startswith(f"/{SERVICE_NAME}/") \
                    or method.rpartition("/")[2] not in ROUTED:
                return handler
            if handler.unary_unary is not None:
                local_unary = handler.unary_unary

                async def unary(data: bytes, context):
                    target = fwd.target(method, data)
                    if target is None:
                        return await local_unary(data, context)
                    return await fwd.unary(method, target, data, context)

                return grpc.unary_unary_rpc_method_handler(
                    unary, None, handler.response_serializer)
            local_stream: Any = handler.unary_stream

            async def stream(data: bytes, context):
                target = fwd.target(method, data)
                items: Any = (local_stream(data, context) if target is None
                              else fwd.stream(method, target, data, context))
                async for item in items:
                    yield item

            return grpc.unary_stream_rpc_method_handler(
                stream, None, handler.response_serializer)

    return Routed()


class _NoClock:
    @staticmethod
    def public_json() -> None:
        return None  # the owner's clock: the page shows none rather than a stale one


class RemoteMatch:
    """Another worker's running match as the web viewer's live feed (``referee.web.live``) sees
    a runtime: ``watch`` opens a Watch on its owner and puts what arrives (serialised
    WatchMessages, then CLOSE) on the feed's stream; ``detach`` ends it."""

    clock = _NoClock()

    def __init__(self, fwd: Forwarder, owner: str, match_id: str, game: str):
        self.fwd = fwd
        self.owner = owner
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
