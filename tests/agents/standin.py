"""A stand-in for an OpenAI-compatible chat-completions server, on 127.0.0.1 (ephemeral port),
for the chat-model bot's and the MCP server's tests: nothing reaches beyond this machine.

It answers from a script, one behaviour per request, then ``default`` for the rest:

* ``correct``: ``MOVE: <id>`` with a legal id read from the prompt's move list (seeded choice),
  a REASON line, and a usage block;
* ``wrong``: an id that is not among the legal moves (``MOVE: zzzzzz``);
* ``malformed``: HTTP 200 whose body is not a chat completion;
* ``late``: a correct answer, sent only after ``late_s`` seconds (past the move clock);
* ``silent``: no answer at all (the request hangs until the server stops).
"""
from __future__ import annotations

import asyncio
import random
import threading
from collections import deque

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route


def legal_ids(prompt: str) -> list[str]:
    """The ids of the move list of the chat-model bot's default template (and of the MCP
    server's text): the lines "id: kind: text [rule]" after the LEGAL MOVES header, up to the
    first empty line."""
    ids = []
    for line in prompt.partition("LEGAL MOVES")[2].splitlines()[1:]:
        if not line.strip():
            break
        ids.append(line.split(": ", 1)[0])
    return ids


class StandIn:
    def __init__(self, script=(), default: str = "correct", seed: int = 0, late_s: float = 5.0):
        self.script: deque[str] = deque(script)
        self.default, self.late_s = default, late_s
        self.rng = random.Random(seed)
        self.requests: list[dict] = []  # the bodies received
        self.served: list[str] = []  # the behaviour of each request
        self.keys: list[str] = []  # the authorization headers received
        self._stop = asyncio.Event()
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0,
                                                    log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> StandIn:
        self._thread.start()
        while not self.server.started:
            threading.Event().wait(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.server.should_exit = True
        self.server.force_exit = True
        self._thread.join(10)

    async def _chat(self, request: Request):
        body = await request.json()
        self.requests.append(body)
        self.keys.append(request.headers.get("authorization", ""))
        what = self.script.popleft() if self.script else self.default
        self.served.append(what)
        prompt = body["messages"][-1]["content"]
        ids = legal_ids(prompt)
        if what == "malformed":
            return PlainTextResponse("<html>bad gateway</html>")
        if what == "silent":
            await asyncio.sleep(3600)
        if what == "late":
            await asyncio.sleep(self.late_s)
        move = "zzzzzz" if what == "wrong" or not ids else self.rng.choice(ids)
        text = f"MOVE: {move}\nREASON: stand-in's {what} answer"
        return JSONResponse({
            "id": "chatcmpl-standin", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 12,
                      "total_tokens": len(prompt) // 4 + 12},
        })
