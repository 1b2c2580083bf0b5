"""A gRPC proxy for the unary calls of a referee that loses the replies of CreateMatch: the
call reaches the referee, which creates the match, and the caller gets UNAVAILABLE instead of
the reply (a connection cut at the worst moment). For the tests of CreateMatch's idempotency
(SDK retry, the tournament runner killed between the call and its reply)."""
from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

METHOD = "/referee.v1.Referee/CreateMatch"


class ReplyDroppingProxy:
    """Listens on 127.0.0.1 (``address``) and passes every unary call on to ``target``; the
    replies of the first ``drop`` CreateMatch calls are dropped (UNAVAILABLE) after
    ``on_drop()`` has run. ``created`` counts the CreateMatch calls the referee answered."""

    def __init__(self, target: str, drop: int = 1, on_drop: Callable[[], Any] | None = None):
        self.target = target
        self.drop = drop
        self.on_drop = on_drop
        self.created = 0
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def _start(self) -> int:
        self._channel = grpc.aio.insecure_channel(self.target)
        self._server = grpc.aio.server()
        proxy = self

        class Handler(grpc.GenericRpcHandler):
            def service(self, details):
                method = details.method

                async def unary(data: bytes, context) -> bytes:
                    md = [(k, v) for k, v in context.invocation_metadata() or ()
                          if k == "authorization"]
                    call: Any = proxy._channel.unary_unary(method)
                    try:
                        reply = await call(data, metadata=md, timeout=30)
                    except grpc.aio.AioRpcError as err:
                        await context.abort(err.code(), err.details() or "",
                                            err.trailing_metadata())
                        raise
                    if method == METHOD:
                        proxy.created += 1
                        if proxy.created <= proxy.drop:
                            if proxy.on_drop is not None:
                                proxy.on_drop()
                            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                                "the reply was lost on the way")
                    return reply

                return grpc.unary_unary_rpc_method_handler(unary)

        self._server.add_generic_rpc_handlers((Handler(),))
        port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        return port

    async def _stop(self) -> None:
        await self._server.stop(0)
        await self._channel.close()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


def stored_matches(data_dir: Path) -> list[str]:
    """The ids of the matches in a referee's SQLite store, oldest first."""
    con = sqlite3.connect(Path(data_dir) / "referee.sqlite3")
    try:
        return [r[0] for r in con.execute("SELECT id FROM matches ORDER BY created_ms")]
    finally:
        con.close()
