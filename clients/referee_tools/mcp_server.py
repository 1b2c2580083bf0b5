"""``referee-bot mcp``: a Model Context Protocol server that seats a language-model agent.

An MCP client (a chat application, an agent framework) starts it over stdio or reaches it over
streamable HTTP on 127.0.0.1, and gets tools to find its matches (the ones it is seated in, and
the referee's lobby: open seeks, challenges, invitations), read its seat as text or as JSON,
submit moves and wait for its turn, and resources with each game's rules summary and rulings.
It is a client of the referee's protocol like any bot (``DescribeSeat``, ``SubmitMove``,
``GetView``, ``Session``, ``ListGames``, ``GetGameRules``, ``RegisterBot``, and the lobby's
``EnterLobby``, ``ListSeeks``, ``OpenSeek``, ``Challenge``, ``JoinSeek``, ``CancelSeek``,
``GetSeek``), so any referee or cluster serves it; it imports nothing of the referee but the
generated protocol code.

Secrets stay in this process: the bot token (``$REFEREE_BOT_TOKEN`` or ``--bot-token-file``),
the admin token that ``register_bot`` needs (``$REFEREE_ADMIN_TOKEN`` or
``--admin-token-file``), a seat token given for one match (``$REFEREE_TOKEN`` or
``--token-file``), every seat token an assignment or a filled seek carries, and the anonymous
lobby token. No tool result or resource carries one; what a seat sees is what the referee sends
that seat.

Every refusal (a move the referee does not accept, an unknown match or move id, a referee that
cannot be reached) comes back as a tool result ``{"ok": false, "reason": ..., "message": ...}``
the model can act on, never as a transport error.

In the lobby (docs/bot/lobby.md) the agent is its bot when it has a bot token (given, or made
by ``register_bot``): a filled seek's seat comes as an Assignment on the bot's Session, which
this server accepts at once since the agent asked for the match. Without one it is an anonymous
lobby player: ``EnterLobby``'s token is kept here, and the seat tokens of a filled seek are read
with ``GetSeek`` (a long poll per open seek, in the background). Either way the seat appears in
``list_matches`` / ``wait_for_match`` and is played with the same tools as any other. An
invitation secret is shown only for a private seek (the agent asked for one to pass on). When
this server stops it withdraws the seeks still open: nobody would play their matches.
"""
from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import json_format
from referee_client.bot import clean_note
from referee_client.connection import TlsConfig, aio_channel, bearer, reason_of
from referee_client.llm import render_moves

from referee.v1 import referee_pb2, referee_pb2_grpc

log = logging.getLogger("referee_tools.mcp")

#: the longest wait_for_turn waits (seconds): a tool call must come back while the client's
#: own request timeout runs
WAIT_LIMIT_S = 120.0
#: assignments the server holds at once (its Session's capacity) unless --capacity
CAPACITY = 4
#: a lobby seek's clock when the agent names none: 15 minutes and 10 s a move (a model's
#: answers take seconds)
DEFAULT_PRESET = "rapid"
#: how long one GetSeek waits for a change (the referee caps it at 30 s)
SEEK_WAIT_MS = 25_000
INSTRUCTIONS = """\
You hold seats in board-game matches refereed by a server that checks every move.
list_matches shows your matches (accept_match one that is offered); wait_for_turn waits until
you are to move; get_seat shows your view and every legal move with a short id; submit_move
plays one by its id, with a short note of your reasoning. A refusal comes back with a reason
and the rule: read it and choose again. To find a game: list_seeks shows the open seeks and the
bots you may challenge; join_seek, open_seek or challenge one, then wait_for_match. Read the
resources referee://games/<game>/rules and referee://games/<game>/rulings for the rules."""


def refusal(reason: str, message: str, **more: Any) -> dict[str, Any]:
    """A tool result saying no: the reason (machine-readable) and what to do."""
    return {"ok": False, "reason": reason, "message": message, **more}


def _rpc_refusal(err: grpc.aio.AioRpcError, what: str) -> dict[str, Any]:
    return refusal(reason_of(err) or err.code().name, f"{what}: {err.details() or ''}",
                   status=err.code().name)


@dataclass
class Seat:
    """A seat this server plays (the token never leaves this object)."""

    match_id: str
    seat: int
    token: str
    game: str = ""
    status: str = "accepted"  # "offered" (an assignment not yet accepted), "accepted"
    seat_count: int = 0
    seat_names: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    move_ms: int = 0
    seen: int = 0  # the last state version shown: events after it are new
    event: str = ""  # the tournament or league event the match belongs to ("" for none)
    seek_id: str = ""  # the lobby seek it came from ("" for none)
    over: bool = False  # seen over (a result) by a tool

    def public(self) -> dict[str, Any]:
        out = {"match_id": self.match_id, "game": self.game, "seat": self.seat,
               "status": self.status, "seat_count": self.seat_count,
               "seat_names": self.seat_names, "options": self.options,
               "move_ms": self.move_ms, "event": self.event, "over": self.over}
        if self.seek_id:
            out["seek_id"] = self.seek_id
        return out


@dataclass
class MySeek:
    """A lobby seek the agent opened, challenged with or joined (its token stays here)."""

    seek_id: str
    token: str  # the lobby identity holding its seat: the bot's token or the lobby token
    as_bot: bool  # seated as the bot: the seat comes as an Assignment on its Session
    game: str
    state: str = "open"  # open, filled, cancelled, expired, gone
    match_id: str = ""
    challenged: str = ""
    task: asyncio.Task | None = None

    def public(self) -> dict[str, Any]:
        return {"seek_id": self.seek_id, "game": self.game, "state": self.state,
                "match_id": self.match_id, "challenged": self.challenged}


def _seek_state(seek: referee_pb2.Seek) -> str:
    return referee_pb2.SeekState.Name(seek.state).removeprefix("SEEK_").lower()


def public_seek(seek: referee_pb2.Seek) -> dict[str, Any]:
    """A seek as the lobby shows everyone (no token, no secret), trimmed for a model."""
    out = json_format.MessageToDict(seek, preserving_proto_field_name=True)
    out["state"] = _seek_state(seek)
    # every seat with its number (protobuf's JSON leaves out seat 0 and empty names)
    out["seat_list"] = [{"seat": s.seat, "name": s.name, "bot": s.bot} for s in seek.seat_list]
    out.pop("created_unix_ms", None)
    if seek.expires_unix_ms:
        out["expires_in_s"] = max(0, round(seek.expires_unix_ms / 1000 - time.time()))
        out.pop("expires_unix_ms", None)
    return out


class Agent:
    """The referee side of the MCP server: the seats, the bot's Session, the calls."""

    def __init__(self, address: str, *, tls: TlsConfig | None = None,
                 bot_token: str | None = None, admin_token: str | None = None,
                 capacity: int = CAPACITY, lobby_name: str = "agent"):
        self.address, self.tls = address, tls
        self._bot_token, self._admin_token = bot_token, admin_token
        self.capacity, self.lobby_name = capacity, lobby_name
        self.bot_name = ""
        self.seats: dict[str, Seat] = {}
        self.seeks: dict[str, MySeek] = {}
        self.notices: list[str] = []
        self._lobby_token: str | None = None  # the anonymous lobby identity, once asked for
        self._lobby_matches: dict[str, str] = {}  # match -> seek, of the bot's lobby seats
        self._channel: grpc.aio.Channel | None = None
        self._session_task: asyncio.Task | None = None
        self._session_call: Any = None
        self._changed = asyncio.Event()  # set (and replaced) whenever a seat comes

    def _seated(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # ---- connection and Session

    @property
    def stub(self) -> referee_pb2_grpc.RefereeStub:
        if self._channel is None:  # made on the serving event loop, at the first call
            self._channel = aio_channel(self.address, tls=self.tls)
        return referee_pb2_grpc.RefereeStub(self._channel)

    def add_seat(self, match_id: str, token: str) -> None:
        """A seat given for one match (``--match`` with its token)."""
        self.seats[match_id] = Seat(match_id, -1, token)

    async def start(self) -> None:
        """Open the bot's Session (once a bot token is known) and learn the given seats."""
        for s in self.seats.values():
            if s.seat < 0:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self._learn(s)
        if self._bot_token and self._session_task is None:
            self._session_task = asyncio.create_task(self._session())

    async def _learn(self, s: Seat) -> None:
        text = await self._describe(s, 0)
        got = await self.stub.GetView(referee_pb2.GetViewRequest(match_id=s.match_id),
                                      metadata=bearer(s.token), timeout=10)
        s.seat, s.game = text.seat, got.view.WhichOneof("game") or ""

    async def _session(self) -> None:
        """Keep the bot's Session open: every Assignment becomes an offered seat."""
        delay = 0.2
        while True:
            try:
                call = self.stub.Session(metadata=bearer(self._bot_token or ""))
                self._session_call = call
                await call.write(referee_pb2.SessionClientMessage(hello=referee_pb2.SessionHello(
                    capacity=self.capacity, agent="referee-bot mcp")))
                while True:
                    msg = await call.read()
                    if msg is grpc.aio.EOF:
                        break
                    which = msg.WhichOneof("msg")
                    if which == "welcome":
                        self.bot_name, delay = msg.welcome.bot_name, 0.2
                    elif which == "assignment":
                        self._offered(msg.assignment)
                    elif which == "notice":
                        n = msg.notice
                        self.notices.append(f"{n.reason}: {n.message}")
            except grpc.aio.AioRpcError as err:
                if err.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                  grpc.StatusCode.PERMISSION_DENIED):
                    self.notices.append(f"session refused: {reason_of(err)}: {err.details()}")
                    self._session_call = None
                    return
                log.warning("session lost (%s); reconnecting", err.code().name)
            self._session_call = None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _offered(self, a: referee_pb2.Assignment) -> None:
        known = self.seats.get(a.match_id)
        if known is not None and known.status == "accepted":
            # sent again after a reconnect: it stays ours
            asyncio.get_running_loop().create_task(self._ack(a.match_id, a.seat))
            return
        seek = self._lobby_matches.get(a.match_id, "")
        self.seats[a.match_id] = Seat(
            a.match_id, a.seat, a.seat_token, a.game, "offered", a.seat_count,
            list(a.seat_names), dict(a.options), a.time_policy.move_ms, event=a.event,
            seek_id=seek)
        if seek:  # a seek the agent filled: it asked for this match, so it is accepted
            self.seats[a.match_id].status = "accepted"
            asyncio.get_running_loop().create_task(self._ack(a.match_id, a.seat))
        self._seated()

    async def _ack(self, match_id: str, seat: int, accept: bool = True) -> None:
        if self._session_call is not None:
            await self._session_call.write(referee_pb2.SessionClientMessage(
                ack=referee_pb2.AssignmentAck(match_id=match_id, seat=seat, accept=accept)))

    async def close(self) -> None:
        for seek in self.seeks.values():
            if seek.task is not None:
                seek.task.cancel()
            if seek.state == "open" and self._channel is not None:
                # nobody will play a seek's match once its agent is gone: withdraw it
                with contextlib.suppress(grpc.aio.AioRpcError, TimeoutError):
                    await self.stub.CancelSeek(referee_pb2.CancelSeekRequest(
                        seek_id=seek.seek_id), metadata=bearer(seek.token), timeout=2)
        if self._session_task is not None:
            self._session_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._session_task
        if self._channel is not None:
            await self._channel.close(grace=None)

    # ---- the tools' work

    async def register_bot(self, name: str) -> dict[str, Any]:
        if not self._admin_token:
            return refusal("NO_ADMIN_TOKEN", "registering a bot needs the referee's admin "
                           "token, and this server was started without one "
                           "($REFEREE_ADMIN_TOKEN or --admin-token-file); ask its operator, or "
                           "use the bot token it was given")
        try:
            got = await self.stub.RegisterBot(referee_pb2.RegisterBotRequest(name=name),
                                              metadata=bearer(self._admin_token), timeout=10)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the referee refused to register the bot")
        self._bot_token, self.bot_name = got.bot_token, name
        if self._session_task is not None:
            self._session_task.cancel()
            self._session_task = None
        await self.start()
        return {"ok": True, "bot": name,
                "message": "registered; its token is kept inside this server. Matches that "
                           "seat this bot appear in list_matches."}

    async def list_matches(self) -> dict[str, Any]:
        await self.start()
        out: dict[str, Any] = {"ok": True, "bot": self.bot_name or None,
                               "matches": [s.public() for s in self.seats.values()]}
        if self.seeks:
            out["seeks"] = [k.public() for k in self.seeks.values()]
        if self.notices:
            out["notices"] = self.notices[-5:]
        closed = [k.seek_id for k in self.seeks.values() if k.state in ("expired", "gone")]
        if not self.seats and closed and not any(k.state == "open" for k in self.seeks.values()):
            out["message"] = (f"no match: your seek {closed[-1]} expired before every seat was "
                              "taken; open_seek again, join_seek one of list_seeks, or "
                              "challenge a bot")
        elif not self.seats:
            waiting = any(k.state == "open" for k in self.seeks.values())
            out["message"] = (
                "no match yet: your open seek's match shows here once every seat is taken "
                "(call wait_for_match)" if waiting else
                "no match yet: matches that seat this bot are offered here as the referee "
                "assigns them (call wait_for_match), or find one in the lobby (list_seeks)"
                if self._bot_token else
                "no seat yet: find a match in the lobby (list_seeks, then join_seek, open_seek "
                "or challenge), or call register_bot")
        return out

    def _live(self) -> bool:
        return any(s.status == "offered" or not s.over for s in self.seats.values())

    async def wait_for_match(self, timeout_s: float) -> dict[str, Any]:
        """Waits while the agent holds no seat in a match it has not seen over."""
        await self.start()
        end = time.monotonic() + _bounded(timeout_s)
        open_seeks = {k.seek_id for k in self.seeks.values() if k.state == "open"}
        while not self._live() and (left := end - time.monotonic()) > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
            if any(self.seeks[k].state not in ("open", "filled") for k in open_seeks):
                break  # a seek it waited for closed without a match: say so now
        return await self.list_matches()

    def _seat(self, match_id: str) -> Seat | dict[str, Any]:
        s = self.seats.get(match_id)
        if s is None:
            return refusal("NOT_SEATED", f"you hold no seat in match {match_id[:64]!r}; "
                           "list_matches shows yours", matches=sorted(self.seats))
        if s.status == "offered":
            return refusal("NOT_ACCEPTED", f"match {match_id} is offered to you: call "
                           "accept_match first")
        return s

    async def accept_match(self, match_id: str) -> dict[str, Any]:
        s = self.seats.get(match_id)
        if s is None:
            return refusal("NOT_SEATED", f"no match {match_id[:64]!r} is offered to you; "
                           "list_matches shows yours", matches=sorted(self.seats))
        if s.status == "offered":
            await self._ack(s.match_id, s.seat)
            s.status = "accepted"
        return {"ok": True, "match": s.public(),
                "message": "accepted: wait_for_turn, then get_seat and submit_move"}

    async def _describe(self, s: Seat, since: int | None = None) -> referee_pb2.SeatText:
        return await self.stub.DescribeSeat(
            referee_pb2.DescribeSeatRequest(match_id=s.match_id,
                                            since_version=s.seen if since is None else since),
            metadata=bearer(s.token), timeout=10)

    async def get_seat(self, match_id: str, fmt: str = "text") -> dict[str, Any]:
        s = self._seat(match_id)
        if isinstance(s, dict):
            return s
        if fmt not in ("text", "json"):
            return refusal("MALFORMED", f"format is 'text' or 'json', not {fmt[:20]!r}")
        try:
            text = await self._describe(s)
            view = (await self.stub.GetView(referee_pb2.GetViewRequest(match_id=match_id),
                                            metadata=bearer(s.token), timeout=10)
                    if fmt == "json" else None)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the referee did not describe the seat")
        s.seat = text.seat
        s.seen = max(s.seen, text.state_version)
        s.over = s.over or bool(text.result)
        out: dict[str, Any] = {"ok": True, "match_id": match_id, "seat": text.seat,
                               "state_version": text.state_version,
                               "your_turn": bool(text.moves), "over": bool(text.result)}
        if fmt == "text":
            out["text"] = render_seat(s, text)
        else:
            out["seat_text"] = json_format.MessageToDict(text, preserving_proto_field_name=True)
            assert view is not None
            out["view"] = json_format.MessageToDict(view, preserving_proto_field_name=True)
        return out

    async def wait_for_turn(self, match_id: str, timeout_s: float) -> dict[str, Any]:
        s = self._seat(match_id)
        if isinstance(s, dict):
            return s
        end = time.monotonic() + _bounded(timeout_s)
        delay = 0.05
        while True:
            try:
                text = await self._describe(s)
            except grpc.aio.AioRpcError as err:
                return _rpc_refusal(err, "the referee did not describe the seat")
            if text.moves or text.result or time.monotonic() >= end:
                break
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.5)
        s.seen = max(s.seen, text.state_version)
        s.over = s.over or bool(text.result)
        return {"ok": True, "match_id": match_id, "your_turn": bool(text.moves),
                "over": bool(text.result), "state_version": text.state_version,
                "text": render_seat(s, text) if (text.moves or text.result) else
                "not your turn yet: call wait_for_turn again"}

    async def submit_move(self, match_id: str, move_id: str | None, move: dict | None,
                          note: str) -> dict[str, Any]:
        s = self._seat(match_id)
        if isinstance(s, dict):
            return s
        if (move_id is None) == (move is None):
            return refusal("MALFORMED", "give exactly one of move_id (an id from get_seat) "
                           "or move (the move as JSON, as get_seat's json format shows it)")
        try:
            text = await self._describe(s)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the referee did not describe the seat")
        if text.result:
            s.over = True
            return refusal("MATCH_OVER", f"the match is over: {text.result}")
        if not text.moves:
            return refusal("NOT_YOUR_TURN", "you are not to move now: call wait_for_turn")
        rule = ""
        if move_id is not None:
            found = next((m for m in text.moves if m.id == move_id.strip().lower()), None)
            if found is None:
                return refusal("UNKNOWN_MOVE_ID", f"{move_id[:20]!r} is not the id of a legal "
                               "move now; choose one of these", legal=render_moves(text.moves))
            wire, rule = found.move, found.rule
        else:
            wire = referee_pb2.Move()
            try:
                json_format.ParseDict(move or {}, wire)
            except (json_format.ParseError, TypeError, ValueError) as exc:
                return refusal("MALFORMED", f"not a referee.v1.Move: {str(exc)[:200]}")
        try:
            result = await self.stub.SubmitMove(referee_pb2.SubmitMoveRequest(
                match_id=match_id, state_version=text.state_version, move=wire,
                note=clean_note(note)), metadata=bearer(s.token), timeout=10)
        except grpc.aio.AioRpcError as err:
            # the referee's reason and message (which names the rule), and the moves it takes
            return {**_rpc_refusal(err, "the referee refused the move"), "rule": rule,
                    "legal": render_moves(text.moves)}
        if not result.accepted:
            return refusal(referee_pb2.Reason.Name(result.reason), result.message,
                           rule=rule, legal=render_moves(text.moves))
        s.seen = max(s.seen, result.state_version)
        return {"ok": True, "accepted": True, "state_version": result.state_version,
                "message": "played: call wait_for_turn for your next decision"}

    # ---- the lobby (docs/bot/lobby.md)

    async def _identity(self, fresh: bool = False) -> tuple[str, bool]:
        """Who the agent is in the lobby: its bot (token) when it has one, else an anonymous
        lobby player whose token EnterLobby gives once and this process keeps."""
        if self._bot_token:
            await self.start()  # the bot's seats come as Assignments on its Session
            return self._bot_token, True
        if self._lobby_token is None or fresh:
            got = await self.stub.EnterLobby(
                referee_pb2.EnterLobbyRequest(name=self.lobby_name), timeout=10)
            self._lobby_token = got.lobby_token
        return self._lobby_token, False

    async def _lobby_call(self, method: str, request: Any) -> tuple[Any, str, bool]:
        """A lobby call as the agent; a lobby token the referee no longer knows (a restart,
        a week gone) is replaced once."""
        token, as_bot = await self._identity()
        try:
            got = await getattr(self.stub, method)(request, metadata=bearer(token), timeout=30)
        except grpc.aio.AioRpcError as err:
            if as_bot or err.code() != grpc.StatusCode.UNAUTHENTICATED:
                raise
            token, as_bot = await self._identity(fresh=True)
            got = await getattr(self.stub, method)(request, metadata=bearer(token), timeout=30)
        return got, token, as_bot

    async def list_seeks(self, game: str) -> dict[str, Any]:
        try:
            got = await self.stub.ListSeeks(referee_pb2.ListSeeksRequest(game=game), timeout=10)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the referee did not list its lobby")
        bots = [json_format.MessageToDict(b, preserving_proto_field_name=True,
                                          always_print_fields_with_no_presence=True)
                for b in got.bots]
        out: dict[str, Any] = {"ok": True, "seeks": [public_seek(k) for k in got.seeks],
                               "bots": bots}
        if self.seeks:
            out["mine"] = [k.public() for k in self.seeks.values()]
        out["message"] = ("join_seek a seek by its seek_id, challenge a bot by its name, or "
                          "open_seek one of your own")
        return out

    @staticmethod
    def _clock(preset: str, time_policy: dict[str, Any] | None
               ) -> tuple[str, referee_pb2.TimePolicy] | dict[str, Any]:
        policy = referee_pb2.TimePolicy()
        if time_policy is not None:
            if preset:
                return refusal("MALFORMED", "give a preset or a time_policy, not both")
            try:
                json_format.ParseDict(time_policy, policy)
            except (json_format.ParseError, TypeError, ValueError) as exc:
                return refusal("MALFORMED", f"not a referee.v1.TimePolicy: {str(exc)[:200]}")
            return "", policy
        return preset or DEFAULT_PRESET, policy

    @staticmethod
    def _options(options: dict[str, Any] | None) -> dict[str, str] | None:
        """A game's options as the wire takes them (strings); None when not an object."""
        if options is None:
            return {}
        if not isinstance(options, dict):
            return None
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in options.items()}

    def _seek_terms(self, options: dict[str, Any] | None, preset: str,
                    time_policy: dict[str, Any] | None) -> Any:
        """(options, clock) of an open_seek or a challenge, or the refusal of either."""
        clock = self._clock(preset, time_policy)
        opts = self._options(options)
        if isinstance(clock, dict):
            return clock
        if opts is None:
            return refusal("MALFORMED", "options is an object of option names to values")
        return opts, clock

    async def open_seek(self, game: str, seats: int, options: dict[str, Any] | None,
                        preset: str, time_policy: dict[str, Any] | None, rated: bool,
                        private: bool, bots_may_join: bool, name: str) -> dict[str, Any]:
        checked = self._seek_terms(options, preset, time_policy)
        if isinstance(checked, dict):
            return checked
        opts, clock = checked
        req = referee_pb2.OpenSeekRequest(
            game=game, seats=max(0, int(seats)), options=opts, preset=clock[0],
            time_policy=clock[1], rated=rated, private=private, bots_may_join=bots_may_join,
            name=name)
        try:
            got, token, as_bot = await self._lobby_call("OpenSeek", req)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the lobby refused the seek")
        return self._took(got, token, as_bot, invitation=got.invitation if private else "")

    async def challenge(self, bot: str, game: str, seats: int, options: dict[str, Any] | None,
                        preset: str, time_policy: dict[str, Any] | None, rated: bool,
                        name: str) -> dict[str, Any]:
        checked = self._seek_terms(options, preset, time_policy)
        if isinstance(checked, dict):
            return checked
        opts, clock = checked
        req = referee_pb2.ChallengeRequest(
            bot=bot, game=game, seats=max(0, int(seats)), options=opts, preset=clock[0],
            time_policy=clock[1], rated=rated, name=name)
        try:
            got, token, as_bot = await self._lobby_call("Challenge", req)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the lobby refused the challenge")
        # a challenge is a private seek: its invitation is how a friend takes a third seat
        return self._took(got, token, as_bot, invitation=got.invitation)

    async def join_seek(self, seek_id: str, invitation: str, name: str) -> dict[str, Any]:
        if bool(seek_id) == bool(invitation):
            return refusal("MALFORMED", "give exactly one of seek_id (from list_seeks) or "
                           "invitation (a secret someone gave you)")
        req = referee_pb2.JoinSeekRequest(seek_id=seek_id, invitation=invitation, name=name)
        try:
            got, token, as_bot = await self._lobby_call("JoinSeek", req)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the lobby refused to seat you")
        return self._took(got, token, as_bot)

    async def cancel_seek(self, seek_id: str) -> dict[str, Any]:
        mine = self.seeks.get(seek_id)
        token = mine.token if mine is not None else None
        try:
            if token is None:
                got, _, _ = await self._lobby_call(
                    "CancelSeek", referee_pb2.CancelSeekRequest(seek_id=seek_id))
            else:
                got = await self.stub.CancelSeek(
                    referee_pb2.CancelSeekRequest(seek_id=seek_id), metadata=bearer(token),
                    timeout=10)
        except grpc.aio.AioRpcError as err:
            return _rpc_refusal(err, "the lobby did not cancel the seek")
        if mine is not None:
            mine.state = _seek_state(got)
            if mine.task is not None:
                mine.task.cancel()
        return {"ok": True, "seek": public_seek(got), "message": "cancelled"}

    def _took(self, got: referee_pb2.SeekReply, token: str, as_bot: bool,
              invitation: str = "") -> dict[str, Any]:
        """A seek the agent holds a seat in: kept (and watched until it fills), its seat
        listed at once when it filled already."""
        seek = got.seek
        mine = MySeek(seek.seek_id, token, as_bot, seek.game, challenged=seek.challenged)
        self.seeks[seek.seek_id] = mine
        self._update(mine, got)
        if mine.state == "open":
            mine.task = asyncio.get_running_loop().create_task(self._watch(mine))
        out: dict[str, Any] = {"ok": True, "seek": public_seek(seek)}
        if invitation:
            out["invitation"] = invitation
            out["invitation_note"] = ("a single-use secret for one more seat: give it only to "
                                      "whom you invite (they join_seek with it)")
        out["message"] = (
            f"the match has started ({mine.match_id}): wait_for_match, then wait_for_turn"
            if mine.state == "filled" else
            "waiting for its other seats: wait_for_match returns once its match starts")
        return out

    def _update(self, mine: MySeek, got: referee_pb2.SeekReply) -> None:
        seek = got.seek
        mine.state = _seek_state(seek)
        if seek.state != referee_pb2.SEEK_FILLED or mine.match_id:
            return
        mine.match_id = seek.match_id
        if mine.as_bot:
            # the seat comes (or came) as an Assignment: accept it, the agent asked for it
            self._lobby_matches[seek.match_id] = seek.seek_id
            known = self.seats.get(seek.match_id)
            if known is not None:
                known.seek_id = seek.seek_id
                if known.status == "offered":
                    known.status = "accepted"
                    asyncio.get_running_loop().create_task(self._ack(known.match_id,
                                                                     known.seat))
            return
        names = [s.name for s in sorted(seek.seat_list, key=lambda s: s.seat)]
        for st in got.seat_tokens[:1]:  # one seat per match (open_seek takes one)
            self.seats[seek.match_id] = Seat(
                seek.match_id, st.seat, st.token, seek.game, "accepted", seek.seats, names,
                dict(seek.options), seek.time_policy.move_ms, seek_id=seek.seek_id)
        self._seated()

    async def _watch(self, mine: MySeek) -> None:
        """Wait for an open seek to fill (GetSeek's long poll) and take its seat."""
        delay = 0.5
        while mine.state == "open":
            try:
                got = await self.stub.GetSeek(referee_pb2.GetSeekRequest(
                    seek_id=mine.seek_id, wait_ms=SEEK_WAIT_MS), metadata=bearer(mine.token),
                    timeout=SEEK_WAIT_MS / 1000 + 10)
            except grpc.aio.AioRpcError as err:
                if err.code() == grpc.StatusCode.NOT_FOUND:
                    mine.state = "gone"  # expired and forgotten, or the referee restarted
                    self._seated()
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
                continue
            delay = 0.5
            self._update(mine, got)
        self._seated()

    async def games(self) -> list[referee_pb2.GameSpec]:
        got = await self.stub.ListGames(referee_pb2.ListGamesRequest(), timeout=10)
        return list(got.games)

    async def game_rules(self, game: str) -> referee_pb2.GameRules | None:
        """The game's rules as the referee plays them (GetGameRules); None from a referee
        that predates the call (UNIMPLEMENTED). Unknown games raise ValueError."""
        try:
            return await self.stub.GetGameRules(referee_pb2.GetGameRulesRequest(game=game),
                                                timeout=10)
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.UNIMPLEMENTED:
                return None
            if err.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                raise ValueError(f"no game {game[:40]!r} on this referee") from None
            raise


def _bounded(timeout_s: float) -> float:
    return max(0.0, min(float(timeout_s), WAIT_LIMIT_S))


def render_seat(s: Seat, text: referee_pb2.SeatText) -> str:
    """The seat's text for a model: who and where, the view, the new events, the decision."""
    head = f"Match {s.match_id} ({s.game or 'game'}), you are seat {text.seat}"
    if s.seat_count:
        head += f" of {s.seat_count}"
    parts = [head + f"; state version {text.state_version}.", "YOUR VIEW:", text.view.rstrip()]
    if text.events:
        parts += ["EVENTS SINCE YOU LAST LOOKED:", text.events.rstrip()]
    if text.result:
        parts += ["THE MATCH IS OVER:", text.result]
    elif text.moves:
        parts.append(f"YOUR DECISION ({text.decision_kind}): {text.prompt}")
        if text.deadline_unix_ms:
            left = text.deadline_unix_ms / 1000 - time.time()
            parts.append(f"Time left: {max(left, 0):.1f} s (then the referee's time policy "
                         "plays for you).")
        parts += ["LEGAL MOVES (id: kind: what it does [rule]):", render_moves(text.moves)]
    else:
        parts.append("Not your turn.")
    return "\n".join(parts)


def rules_summary(spec: referee_pb2.GameSpec, rules_version: str = "",
                  engine_version: str = "") -> str:
    """A game's rules summary from what ListGames (or GetGameRules) says of it."""
    lines = [f"# {spec.title or spec.name}", "",
             f"Rulebook: {spec.rulebook}" if spec.rulebook else "",
             (f"The referee plays rulings {rules_version} (a finished record's rules_version) "
              f"with engine {engine_version or 'unknown'}.") if rules_version else "",
             f"Seats: {spec.min_seats} to {spec.max_seats}.", "", "## Options"]
    for o in spec.options:
        choices = f" (one of {', '.join(o.choices)})" if o.choices else ""
        lines.append(f"- `{o.name}` ({o.type}, default {o.default_value or '-'}){choices}: "
                     f"{o.description}")
    if spec.components:
        lines += ["", "## Component sheets"]
        lines += [f"- {c.name}" + (f" (variant {c.variant})" if c.variant else "")
                  for c in spec.components]
    lines += ["", ("Every decision lists every legal move with the rule that allows it "
                   "(get_seat); the referee checks every move, so a move it refuses names the "
                   "rule."),
              (f"The rulings on points the rulebook leaves open: referee://games/{spec.name}"
               "/rulings.")]
    return "\n".join(line for line in lines if line is not None)


def rulings_text(game: str) -> str | None:
    """The game's RULINGS.md as this installation has it: the distribution that holds the
    protocol code this server speaks also holds the games' rulings as package data (read as a
    file, no game module is imported). A referee of another version may differ: the record's
    ``rulings_sha256`` says which it played by."""
    if not game.replace("_", "").isalnum():
        return None
    try:
        path = importlib.resources.files("referee.games").joinpath(game, "RULINGS.md")
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (ModuleNotFoundError, OSError):
        return None


def build(agent: Agent, host: str = "127.0.0.1") -> Any:
    """The MCPServer with the agent's tools and resources."""
    from mcp.server import MCPServer

    server = MCPServer("referee", instructions=INSTRUCTIONS)

    @server.tool()
    async def register_bot(name: str) -> dict[str, Any]:
        """Register a bot NAME on the referee (this server must hold the admin token); its bot
        token stays inside this server, and matches that seat the bot appear in list_matches."""
        return await _safe(agent.register_bot(name))

    @server.tool()
    async def list_matches() -> dict[str, Any]:
        """The matches you hold a seat in: 'offered' (accept_match it) or 'accepted'."""
        return await _safe(agent.list_matches())

    @server.tool()
    async def wait_for_match(timeout_s: float = 30.0) -> dict[str, Any]:
        """Wait (at most timeout_s, up to 120 s) until you hold a seat in some match."""
        return await _safe(agent.wait_for_match(timeout_s))

    @server.tool()
    async def list_seeks(game: str = "") -> dict[str, Any]:
        """The referee's lobby: the open public seeks (join_seek one by its seek_id) and the
        bots that accept challenges now (challenge one by its name); game "" for every game.
        Your own seeks are under 'mine'."""
        return await _safe(agent.list_seeks(game))

    @server.tool()
    async def open_seek(game: str, seats: int = 0, options: dict[str, Any] | None = None,
                        preset: str = "", time_policy: dict[str, Any] | None = None,
                        rated: bool = False, private: bool = False,
                        bots_may_join: bool = False, name: str = "") -> dict[str, Any]:
        """Open a seek in the lobby: a match of GAME (seats 0: its fewest) you sit in, waiting
        for players. The clock: preset (bullet, blitz, rapid, classical, bot, or M+S: M
        minutes and S seconds a move; default rapid) or time_policy (a referee.v1.TimePolicy
        as JSON). bots_may_join lets bots that accept challenges fill it; private hides it
        from list_seeks and returns a single-use invitation for a friend. Its match shows in
        wait_for_match / list_matches once every seat is taken."""
        return await _safe(agent.open_seek(game, seats, options, preset, time_policy, rated,
                                           private, bots_may_join, name))

    @server.tool()
    async def challenge(bot: str, game: str, seats: int = 2,
                        options: dict[str, Any] | None = None, preset: str = "",
                        time_policy: dict[str, Any] | None = None, rated: bool = False,
                        name: str = "") -> dict[str, Any]:
        """Challenge a bot by name (list_seeks shows those that accept challenges) to a match
        of GAME, you and it (seats 2; with more, bots or invited friends take the others); the
        clock as in open_seek (default rapid). When the bot accepts, the match
        starts at once: wait_for_match, then play it."""
        return await _safe(agent.challenge(bot, game, seats, options, preset, time_policy,
                                           rated, name))

    @server.tool()
    async def join_seek(seek_id: str = "", invitation: str = "",
                        name: str = "") -> dict[str, Any]:
        """Take a seat in a seek: by its seek_id (list_seeks) or by an invitation someone
        gave you. Its match shows in wait_for_match once every seat is taken."""
        return await _safe(agent.join_seek(seek_id, invitation, name))

    @server.tool()
    async def cancel_seek(seek_id: str) -> dict[str, Any]:
        """Withdraw a seek you opened while it is still open."""
        return await _safe(agent.cancel_seek(seek_id))

    @server.tool()
    async def accept_match(match_id: str) -> dict[str, Any]:
        """Accept a match offered to you (list_matches) and play its seat."""
        return await _safe(agent.accept_match(match_id))

    @server.tool()
    async def get_seat(match_id: str, format: str = "text") -> dict[str, Any]:
        """Your view and decision: format 'text' (words, every legal move with an id) or
        'json' (the referee's SeatText and your View as JSON)."""
        return await _safe(agent.get_seat(match_id, format))

    @server.tool()
    async def wait_for_turn(match_id: str, timeout_s: float = 30.0) -> dict[str, Any]:
        """Wait (at most timeout_s, up to 120 s) until you are to move or the match is over;
        returns your seat as text when it is."""
        return await _safe(agent.wait_for_turn(match_id, timeout_s))

    @server.tool()
    async def submit_move(match_id: str, move_id: str | None = None,
                          move: dict[str, Any] | None = None, note: str = "") -> dict[str, Any]:
        """Play a move: move_id (from get_seat) or move (a referee.v1.Move as JSON), with a
        short note of your reasoning (kept in the record, at most 512 bytes, never shown to
        the other players during the match). A refusal says why and names the rule."""
        return await _safe(agent.submit_move(match_id, move_id, move, note))

    @server.resource("referee://games", mime_type="application/json")
    async def games() -> str:
        """The games this referee hosts (ListGames)."""
        return json.dumps([json_format.MessageToDict(g, preserving_proto_field_name=True)
                           for g in await agent.games()])

    @server.resource("referee://games/{game}/rules", mime_type="text/markdown")
    async def rules(game: str) -> str:
        """A game's rules summary: rulebook, seats, options, component sheets."""
        got = await agent.game_rules(game)
        if got is not None:
            return rules_summary(got.spec, got.rules_version, got.engine_version)
        spec = next((g for g in await agent.games() if g.name == game), None)
        if spec is None:
            raise ValueError(f"no game {game[:40]!r} on this referee")
        return rules_summary(spec)

    @server.resource("referee://games/{game}/rulings", mime_type="text/markdown")
    async def rulings(game: str) -> str:
        """How the referee settles the points a game's rulebook leaves open (RULINGS.md), as
        the referee plays them (GetGameRules)."""
        got = await agent.game_rules(game)
        if got is not None:
            if not got.rulings_markdown:
                raise ValueError(f"the referee has no rulings for {game[:40]!r}")
            return got.rulings_markdown
        # a referee older than GetGameRules: this installation's copy, said so
        text = rulings_text(game)
        if text is None:
            raise ValueError(f"no rulings for {game[:40]!r} in this installation")
        return (f"> The referee does not serve its rulings (it predates GetGameRules); these "
                f"are this installation's, which may differ from the referee's.\n\n{text}")

    return server


async def _safe(work) -> dict[str, Any]:
    """A tool's result, whatever happens: an unexpected failure becomes a refusal."""
    try:
        return await work
    except grpc.aio.AioRpcError as err:
        return _rpc_refusal(err, "the referee refused the call")
    except Exception as exc:  # the model gets a result, never a transport error
        log.exception("tool failed")
        return refusal("INTERNAL", f"{type(exc).__name__}: {str(exc)[:200]}")


async def serve_http(server: Any, host: str, port: int, port_file: str | None,
                     announce) -> None:
    """Streamable HTTP on host:port (0: ephemeral; the port goes to ``port_file``)."""
    import uvicorn

    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                            lifespan="on")
    web = uvicorn.Server(config)
    task = asyncio.create_task(web.serve())
    while not web.started:
        if task.done():
            await task  # raises what stopped it (the port in use...)
            return
        await asyncio.sleep(0.02)
    bound = web.servers[0].sockets[0].getsockname()[1]
    if port_file:
        from pathlib import Path

        tmp = Path(port_file).with_suffix(".tmp")
        tmp.write_text(f"{bound}\n")
        tmp.replace(port_file)
    announce(f"http://{host}:{bound}/mcp")
    await task
