"""A bot that plays any game through a chat model: any server that speaks the OpenAI-compatible
chat-completions API (llama.cpp's ``llama-server``, vLLM, Ollama, hosted services).

For each decision the bot reads its seat in words through the referee's ``DescribeSeat`` (the
view, the decision's prompt, every legal move with a short stable id and its rule, the public
events since its last decision), fills a prompt template with it and asks the model for a move
id. The answer is parsed tolerantly (``MOVE: abc123``, a bare id, an id in backticks or bold);
an answer that names no legal id, a malformed reply, an HTTP error or a reply that does not
come within the move clock is asked again with what went wrong, at most ``reasks`` more times.
Then the bot leaves the decision to the referee's time policy (:class:`~.bot.LeaveToTimePolicy`:
an incident in the log, a timeout in the record), as the SDK does after refused moves.

The model's short reasoning goes in the move's note (``Submit.note``, at most 512 bytes),
after a first line that counts what the answer cost: ``llm tokens=N asks=K reasks=R illegal=I``
(:func:`usage_line`, read back by :func:`parse_usage_line`). The note is in the match record,
so whoever reads records (the tournament runner's report) gets tokens per move, illegal
answers and re-asks with no channel of its own; the same totals are in :attr:`ChatModelBot.usage`
for the match.

HTTP goes through httpx (the ``llm`` extra, ``pip install 'boardgame-referee[llm]'``),
imported only by this module: the SDK itself still needs grpcio and protobuf only. The API key
comes from the environment or a file, never the command line (:mod:`.tokens`).
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import string
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from referee.v1 import referee_pb2, referee_pb2_grpc

from .bot import Bot, BotError, LeaveToTimePolicy, Refusal, clean_note
from .connection import TlsConfig, aio_channel, bearer
from .logs import get_logger

log = get_logger("referee_client.llm")

#: Answers asked again after the first one that names no legal move (so 1 + REASKS asks).
REASKS = 2
#: Seconds kept back from the move clock for the referee to receive the move.
MARGIN_S = 0.5
#: The longest a request may take when the decision has no deadline.
NO_DEADLINE_TIMEOUT_S = 60.0
#: The first line of the note: what the answer cost (see :func:`usage_line`).
USAGE_PREFIX = "llm "

DEFAULT_TEMPLATE = """\
You are playing the board game $game, seat $seat, against other players. A referee enforces
the rules; you only choose among the legal moves listed below, by their id.

YOUR VIEW (everything you may see):
$view

PUBLIC EVENTS SINCE YOUR LAST DECISION:
$events

DECISION: $prompt
LEGAL MOVES (id: kind: what it does [rule]):
$moves
$feedback
Answer with exactly two lines:
MOVE: <one id from the list>
REASON: <one short sentence>
"""


def load_template(path: str | Path | None) -> string.Template:
    """The prompt template: the file at ``path`` (``string.Template`` syntax: ``$view``,
    ``$prompt``, ``$moves``, ``$events``, ``$feedback``, ``$game``, ``$seat``, ``$kind``,
    ``$result``), or :data:`DEFAULT_TEMPLATE`."""
    text = DEFAULT_TEMPLATE if path is None else Path(path).read_text(encoding="utf-8")
    template = string.Template(text)
    if not template.is_valid():
        raise ValueError(f"{path}: not a valid string.Template (a lone '$'? write '$$')")
    unknown = set(template.get_identifiers()) - set(TEMPLATE_FIELDS)
    if unknown:
        raise ValueError(f"{path}: unknown fields {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(TEMPLATE_FIELDS)})")
    return template


TEMPLATE_FIELDS = ("view", "prompt", "moves", "events", "feedback", "game", "seat", "kind",
                   "result")


def render_moves(moves) -> str:
    """The legal moves, one a line: ``id: kind: text [rule]``."""
    return "\n".join(f"{m.id}: {m.kind}: {m.text}" + (f" [{m.rule}]" if m.rule else "")
                     for m in moves)


_MOVE_LINE = re.compile(r"\bmove\s*(?:id)?\s*[:=]\s*[`*'\"\[(]*([^\s`*'\"\[\]()]+)", re.I)
_REASON_LINE = re.compile(r"\breason\s*[:=]\s*(.+)", re.I)


def parse_answer(text: str, ids: set[str]) -> tuple[str | None, str]:
    """The move id a model's answer names, and its reason (the ``REASON:`` line, else the rest
    of the answer). Tolerant of formatting and case: ``MOVE: abc123``, ``**Move:** `abc123```,
    a bare id, an id anywhere in the text when it is the only legal id there. ``None`` when it
    names no legal id or several. Whatever the ids look like (the games choose them)."""
    reason_m = _REASON_LINE.search(text)
    reason = reason_m.group(1).strip() if reason_m else ""
    lowered = {i.lower(): i for i in ids}
    m = _MOVE_LINE.search(text)
    if m:
        said = m.group(1).lower().rstrip(".,;:!")
        if said in lowered:
            return lowered[said], reason or _rest(text, m.group(0))
    low = text.lower()
    named = {i for key, i in lowered.items()
             if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", low)}
    if len(named) == 1:
        one = named.pop()
        return one, reason or _rest(text, one)
    return None, reason


def _rest(text: str, used: str) -> str:
    return " ".join(text.replace(used, " ").split())


def usage_line(tokens: int, asks: int, reasks: int, illegal: int) -> str:
    """The note's first line: tokens the answer cost, the model's asks, how many of them were
    asked again, and its answers that named no legal move (since the last note: a decision left
    to the time policy carries none, so its cost goes with the next)."""
    return f"{USAGE_PREFIX}tokens={tokens} asks={asks} reasks={reasks} illegal={illegal}"


_USAGE_RE = re.compile(r"^llm tokens=(\d+) asks=(\d+) reasks=(\d+) illegal=(\d+)$")


def parse_usage_line(note: str) -> tuple[int, int, int, int] | None:
    """``(tokens, asks, reasks, illegal)`` from a note :func:`usage_line` began; else None."""
    m = _USAGE_RE.match(note.split("\n", 1)[0])
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))) if m else None


class ChatError(Exception):
    """The chat server did not give an answer (HTTP error, timeout, malformed reply)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind  # "timeout", "http", "malformed", "unreachable"


@dataclass(slots=True)
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int


class ChatClient:
    """POST /chat/completions on an OpenAI-compatible server (``base_url`` ends before it,
    e.g. ``http://127.0.0.1:8080/v1``)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 temperature: float | None = None, max_tokens: int = 256):
        import httpx

        # httpx logs every request at INFO: one line a move is noise beside the bot's own
        logging.getLogger("httpx").setLevel(logging.WARNING)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.temperature, self.max_tokens = model, temperature, max_tokens
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        # trust_env off: no proxy or .netrc of the environment sees the key or the game
        self._http = httpx.AsyncClient(headers=headers, trust_env=False)

    async def ask(self, messages: list[dict[str, str]], timeout_s: float) -> Reply:
        import httpx

        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "max_tokens": self.max_tokens}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        try:
            resp = await self._http.post(self.url, json=body, timeout=max(timeout_s, 0.05))
        except httpx.TimeoutException:
            raise ChatError("timeout", f"no answer within {timeout_s:.1f}s") from None
        except httpx.HTTPError as exc:
            raise ChatError("unreachable", f"{type(exc).__name__}: {exc}") from None
        if resp.status_code != 200:
            raise ChatError("http", f"HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = resp.json()
            text = data["choices"][0]["message"]["content"]
            if not isinstance(text, str):
                raise TypeError("content is not a string")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError("malformed", f"not a chat completion ({exc}): "
                            f"{resp.text[:200]!r}") from None
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        return Reply(text, _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))

    async def close(self) -> None:
        await self._http.aclose()


def _int(x: Any) -> int:
    return x if isinstance(x, int) and x >= 0 else 0


@dataclass(slots=True)
class Usage:
    """What a match cost (:attr:`ChatModelBot.usage`)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    asks: int = 0  # requests sent
    decisions: int = 0
    moves: int = 0  # decisions answered with a legal id
    illegal: int = 0  # answers that named no legal move
    failed_asks: int = 0  # requests with no usable reply (timeout, HTTP error, malformed)
    reasks: int = 0  # asks after the first of a decision
    refused: int = 0  # moves the referee refused
    left_to_time_policy: int = 0
    incidents: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "asks": self.asks,
                "decisions": self.decisions, "moves": self.moves, "illegal": self.illegal,
                "failed_asks": self.failed_asks, "reasks": self.reasks, "refused": self.refused,
                "left_to_time_policy": self.left_to_time_policy}


class ChatModelBot(Bot):
    """Plays the seat of ``seat_token`` at ``address`` by asking ``chat`` (see the module)."""

    name = "llm"

    def __init__(self, chat: ChatClient, address: str, seat_token: str, *,
                 template: string.Template | None = None, reasks: int = REASKS,
                 tls: TlsConfig | None = None, system: str | None = None):
        self.chat, self.address, self.tls = chat, address, tls
        self._metadata = bearer(seat_token)
        self.template = template or string.Template(DEFAULT_TEMPLATE)
        self.reasks, self.system = reasks, system
        self.usage = Usage()
        self.game = self.match_id = ""
        self._channel: Any = None
        self._since = 0  # events already shown
        self._refusal: Refusal | None = None
        self._unreported = [0, 0, 0, 0]  # tokens, asks, reasks, illegal since the last note

    def on_welcome(self, welcome: referee_pb2.Welcome) -> None:
        self.game, self.match_id = welcome.game, welcome.match_id

    def on_refused(self, refusal: Refusal) -> None:
        self.usage.refused += 1
        self._refusal = refusal  # told to the model when choose is asked again

    async def _describe(self) -> referee_pb2.SeatText:
        if self._channel is None:
            self._channel = aio_channel(self.address, tls=self.tls)
        stub = referee_pb2_grpc.RefereeStub(self._channel)
        return await stub.DescribeSeat(
            referee_pb2.DescribeSeatRequest(match_id=self.match_id, since_version=self._since),
            metadata=self._metadata, timeout=10)

    # async: Bot.choose may be (its docstring); the SDK awaits it
    async def choose(self, decision: referee_pb2.Decision) -> referee_pb2.Move:  # type: ignore[override]
        self.usage.decisions += 1
        try:
            seat = await self._describe()
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.UNIMPLEMENTED:
                raise BotError("this referee has no DescribeSeat (the text views, issue 34): "
                               "the chat-model bot needs a newer referee") from None
            raise LeaveToTimePolicy(f"DescribeSeat failed: {err.code().name}: "
                                    f"{err.details()}") from None
        if seat.state_version != decision.state_version or not seat.moves:
            # the decision moved on while we asked (another re-push is on its way)
            raise LeaveToTimePolicy("the seat's text is of another decision")
        self._since = seat.state_version
        by_id = {m.id: m for m in seat.moves}
        feedback = ""
        if self._refusal is not None:
            feedback = (f"\nYOUR LAST ANSWER WAS REFUSED by the referee: {self._refusal.reason}: "
                        f"{self._refusal.message}. Choose again.\n")
            self._refusal = None
        deadline = decision.deadline_unix_ms / 1000 if decision.deadline_unix_ms else None
        fields = {"view": seat.view, "prompt": seat.prompt, "moves": render_moves(seat.moves),
                  "events": seat.events or "(none)", "game": self.game, "seat": seat.seat,
                  "kind": seat.decision_kind, "result": seat.result}
        failures: list[str] = []
        for attempt in range(1 + self.reasks):
            timeout = (deadline - time.time() - MARGIN_S if deadline is not None
                       else NO_DEADLINE_TIMEOUT_S)
            if timeout <= 0:
                failures.append("the move clock ran out")
                break
            if attempt:
                self.usage.reasks += 1
                self._unreported[2] += 1
            prompt = self.template.safe_substitute(fields, feedback=feedback)
            messages = ([{"role": "system", "content": self.system}] if self.system else [])
            messages.append({"role": "user", "content": prompt})
            self.usage.asks += 1
            self._unreported[1] += 1
            try:
                reply = await self.chat.ask(messages, timeout)
            except ChatError as exc:
                self.usage.failed_asks += 1
                failures.append(f"{exc.kind}: {exc}")
                log.warning("no usable answer from the model", kind=exc.kind, error=str(exc),
                            attempt=attempt + 1, state_version=decision.state_version)
                feedback = ("\nYOUR LAST ANSWER COULD NOT BE READ. Answer with exactly the two "
                            "lines asked for.\n")
                continue
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            self._unreported[0] += reply.prompt_tokens + reply.completion_tokens
            chosen, reason = parse_answer(reply.text, set(by_id))
            if chosen is not None:
                self.usage.moves += 1
                self.note(clean_note(usage_line(*self._unreported) + "\n" + reason))
                self._unreported = [0, 0, 0, 0]
                return by_id[chosen].move
            self.usage.illegal += 1
            self._unreported[3] += 1
            said = " ".join(reply.text.split())[:80]
            failures.append(f"named no legal id: {said!r}")
            feedback = (f"\nYOUR LAST ANSWER ({said!r}) DID NOT NAME ONE OF THE LEGAL MOVE IDS. "
                        "Answer with one id from the list.\n")
        self.usage.left_to_time_policy += 1
        self.usage.incidents.append(f"v{decision.state_version}: " + "; ".join(failures))
        raise LeaveToTimePolicy(f"no legal answer from the model after {len(failures)} "
                                f"tries: {'; '.join(failures)}")

    def on_game_over(self, game_over: referee_pb2.GameOver) -> None:
        log.info("tokens used in the match", match=game_over.match_id,
                 **self.usage.as_dict())
        if self._channel is not None:  # a session's bots end one by one: let each go
            channel, self._channel = self._channel, None
            asyncio.get_running_loop().create_task(channel.close(grace=None))

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close(grace=None)
        await self.chat.close()


def usage_json(usage: Usage, match_id: str) -> str:
    """One JSON line of a match's usage (``referee-bot llm --usage-file``)."""
    return json.dumps({"match_id": match_id, **usage.as_dict()})


__all__ = ["DEFAULT_TEMPLATE", "REASKS", "ChatClient", "ChatError", "ChatModelBot", "Usage",
           "load_template", "parse_answer", "parse_usage_line", "usage_line"]
