"""The bots' way to the referee in ``referee-bot play --delay-ms N``: a gRPC proxy on a
loopback port that passes every call of the Referee service through unchanged, as bytes, and
holds each answer back ``N`` ms before it goes on (a ``Submit`` on a ``Play`` stream, a
``SubmitMove`` call), so that a match of bots is played at a person's pace whatever language
the bots are written in (nothing in the bot needs to know).

Everything else passes at once and unchanged: the metadata (the seat token in
``authorization``), the deadlines, and the referee's errors with their trailing metadata (the
machine-readable reason a bot acts on). The proxy only parses a ``Play`` stream's client
messages, to tell an answer from a ``Join``."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import grpc

from referee.v1 import referee_pb2

SERVICE = referee_pb2.DESCRIPTOR.services_by_name["Referee"]
#: the calls whose answer is held back: the bots' moves
PLAY = f"/{SERVICE.full_name}/Play"
SUBMIT_MOVE = f"/{SERVICE.full_name}/SubmitMove"
#: headers grpc sets itself on the way out (passing them on would duplicate them)
_OWN_HEADERS = frozenset({"user-agent", "grpc-timeout", "grpc-accept-encoding", "te",
                          "content-type", "grpc-encoding"})


def _metadata(context: grpc.aio.ServicerContext) -> tuple[tuple[str, Any], ...]:
    return tuple((k, v) for k, v in (context.invocation_metadata() or ())
                 if k not in _OWN_HEADERS and not k.startswith(":"))


def _timeout(context: grpc.aio.ServicerContext) -> float | None:
    left = context.time_remaining()
    return left if left is not None and left < 1e6 else None


def _is_answer(raw: bytes) -> bool:
    try:
        return referee_pb2.ClientMessage.FromString(raw).WhichOneof("msg") == "submit"
    except Exception:  # noqa: BLE001 - not ours to judge: the referee answers it
        return False


class DelayProxy:
    """``start()`` listens on 127.0.0.1 (a free port: :attr:`address`) and forwards to
    ``upstream``; ``stop()`` closes both."""

    def __init__(self, upstream: str, delay_ms: int):
        self.upstream, self.delay_s = upstream, delay_ms / 1000
        self.address = ""
        self._server: grpc.aio.Server | None = None
        self._channel: grpc.aio.Channel | None = None

    async def start(self) -> str:
        self._channel = grpc.aio.insecure_channel(
            self.upstream, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)])
        self._server = grpc.aio.server(
            options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)])
        self._server.add_generic_rpc_handlers((_Handler(self),))
        port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        self.address = f"127.0.0.1:{port}"
        return self.address

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(grace=None)
        if self._channel is not None:
            await self._channel.close(grace=None)

    # ---------------------------------------------------------------- the four call shapes
    async def unary_unary(self, method: str, request: bytes,
                          context: grpc.aio.ServicerContext) -> bytes:
        assert self._channel is not None
        if method == SUBMIT_MOVE:
            await asyncio.sleep(self.delay_s)
        try:
            unary: Any = self._channel.unary_unary(method)  # bytes in, bytes out: no (de)serialiser
            return await unary(
                request, metadata=_metadata(context), timeout=_timeout(context))
        except grpc.aio.AioRpcError as err:
            await _relay(err, context)
            raise  # not reached: abort raises

    async def unary_stream(self, method: str, request: bytes,
                           context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        assert self._channel is not None
        open_call: Any = self._channel.unary_stream(method)
        call = open_call(
            request, metadata=_metadata(context), timeout=_timeout(context))
        try:
            async for reply in call:
                yield reply
        except grpc.aio.AioRpcError as err:
            await _relay(err, context)

    async def stream_unary(self, method: str, requests: AsyncIterator[bytes],
                           context: grpc.aio.ServicerContext) -> bytes:
        assert self._channel is not None
        try:
            upload: Any = self._channel.stream_unary(method)
            return await upload(
                requests, metadata=_metadata(context), timeout=_timeout(context))
        except grpc.aio.AioRpcError as err:
            await _relay(err, context)
            raise  # not reached: abort raises

    async def stream_stream(self, method: str, requests: AsyncIterator[bytes],
                            context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        assert self._channel is not None
        open_stream: Any = self._channel.stream_stream(method)
        call = open_stream(
            metadata=_metadata(context), timeout=_timeout(context))
        held = method == PLAY

        async def pump() -> None:
            try:
                async for raw in requests:
                    if held and _is_answer(raw):
                        await asyncio.sleep(self.delay_s)
                    await call.write(raw)
                await call.done_writing()
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass  # the upstream call ended: its status reaches the bot below

        writer = asyncio.create_task(pump())
        try:
            async for reply in call:
                yield reply
        except grpc.aio.AioRpcError as err:
            await _relay(err, context)
        finally:
            writer.cancel()
            call.cancel()


async def _relay(err: grpc.aio.AioRpcError, context: grpc.aio.ServicerContext) -> None:
    """End the bot's call with the referee's status, details and trailing metadata."""
    trailing = tuple(err.trailing_metadata() or ())
    await context.abort(err.code(), err.details() or "", trailing)


class _Handler(grpc.GenericRpcHandler):
    """Every method of the Referee service, each forwarded by the shape its descriptor says."""

    def __init__(self, proxy: DelayProxy):
        self.proxy = proxy
        self.shapes = {f"/{SERVICE.full_name}/{m.name}": (m.client_streaming, m.server_streaming)
                       for m in SERVICE.methods}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        method = handler_call_details.method
        shape = self.shapes.get(method)
        if shape is None:
            return None  # UNIMPLEMENTED, as the referee would answer
        # partials of the coroutine (generator) methods: grpc.aio tells a handler to await
        # from a plain function (run in a thread) by inspecting it, which a lambda would hide
        p = self.proxy
        if shape == (False, False):
            return grpc.unary_unary_rpc_method_handler(partial(p.unary_unary, method))
        if shape == (False, True):
            return grpc.unary_stream_rpc_method_handler(partial(p.unary_stream, method))
        if shape == (True, False):
            return grpc.stream_unary_rpc_method_handler(partial(p.stream_unary, method))
        return grpc.stream_stream_rpc_method_handler(partial(p.stream_stream, method))
