"""The referee.v1.Referee servicer (grpc.aio): the gRPC front. It authenticates each call,
rate-limits it, checks its request and hands it to the room that does the work: the registry of
the matches this referee plays (``play.registry``), the bot sessions, the leagues. Knows no game
by name: games come from referee.core.registry and are driven through the Game contract."""
from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import grpc
import structlog
from google.protobuf import json_format
from google.protobuf.message import Message

from referee.core import provenance, registry, text
from referee.core.components import ComponentSheet
from referee.core.contract import Game
from referee.core.provenance import new_salt
from referee.server.base import errors, metrics, shard, signing
from referee.server.base.auth import (
    CLIENT_HEADER,
    Context,
    RateLimiter,
    bearer,
    same_hash,
    token_hash,
)
from referee.server.base.clock import DEFAULT_JOIN_MS
from referee.server.base.embargo import REASON as EMBARGOED
from referee.server.base.embargo import Embargo
from referee.server.base.errors import RefereeError, clip
from referee.server.base.shard import HOME
from referee.server.base.wire import check_text, opt_str, refusal
from referee.server.front.forward import FORWARDED_HEADER, SERVICE_NAME, Forwarder, remote_error
from referee.server.leagues.archive import Limits
from referee.server.leagues.league import MAX_STANDINGS, Leagues
from referee.server.play.create import MatchPlan, fingerprint, new_match, plan_match, request_id
from referee.server.play.lobby import Identity, Lobby, LobbyLimits
from referee.server.play.registry import MatchRegistry, league_fields
from referee.server.play.runtime import MatchRuntime
from referee.server.play.sessions import BotSessions
from referee.server.play.streams import CLOSE, Stream, drain
from referee.server.store.sqlite import MatchRow, Store, store_outage, unavailable
from referee.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.server")

#: ListLeagueChallenges answers at most this many matches a call (the runner asks again from
#: the last one's time)
CHALLENGES_PAGE = 500
#: After a Play stream's last message (the GameOver), how long the referee waits for the client
#: to end its side (half-close, or cancel) before it ends the stream itself. A stream the
#: server ends first is closed with trailers and then RST_STREAM(NO_ERROR) (RFC 9113, 8.1),
#: which a proxy may pass on as an abort that loses the GameOver still in its buffers (HAProxy
#: 2.6 does); a stream both sides closed ends with the trailers alone. The SDK and the kits end
#: their side when they read GameOver; a client that does not gets the stream's end this much
#: later (docs/bot/protocol.md, step 5).
CLOSE_WAIT_S = 2.0
#: a parsed request (handlers get raw bytes, parsed as their method's request message)
M = TypeVar("M", bound=Message)
#: what a handler answers: a message, or one serialised once for many streams (``_ser``)
Reply = Message | bytes


class RefereeService:
    def __init__(
        self,
        store: Store,
        data_dir: Path,
        admin_token: str,
        components: dict[tuple[str, str], ComponentSheet] | None = None,
        limiter: RateLimiter | None = None,
        keep_finished_s: float = 300.0,
        session_ack_s: float = 30.0,
        join_ms: int = DEFAULT_JOIN_MS,
        max_message_bytes: int = 64 * 1024,
        upload_limits: Limits | None = None,
        shard: str | None = None,
        roaming: bool = False,
        lobby: LobbyLimits | None = None,
        house_bots: tuple[str, ...] = (),
    ):
        self.store = store
        # a cluster worker's (front.forward.Forwarder), set by app.RefereeServer: the web
        # viewer watches the matches of other workers through it
        self.forwarder: Forwarder | None = None
        # ListGames' answer and the sheets and games it was built for (list_games)
        self._games: tuple[Any, pb.ListGamesResponse] | None = None
        # set by ``drain`` (SIGTERM): new matches, streams and moves are refused with
        # UNAVAILABLE / DRAINING, so that the proxy and the clients call again elsewhere or later
        self.draining = False
        # unary calls being served (``_guard_unary``): ``drain`` answers the lobby's long polls
        # and lets them all end, within its bound, so the stop after it cancels none (a client
        # would see CANCELLED where a draining referee answers UNAVAILABLE, which clients call
        # again on)
        self.unary_calls = 0
        self.unary_idle = asyncio.Event()
        self.unary_idle.set()
        self.data_dir = Path(data_dir)
        self.admin_hash = token_hash(admin_token)
        self.limiter = limiter or RateLimiter(0, 1)
        # the key finished records are signed with (made on the first start, 0600), one for
        # every referee on the store (signing.check_shared; docs/organizer/records.md)
        self.signer = signing.load_signer(self.data_dir)
        self.signing_key = pb.SigningKey(algorithm=signing.ALGORITHM,
                                         public_key=self.signer.public_raw,
                                         key_id=self.signer.key_id)
        # persistent bot sessions (RegisterBot, Session, CreateMatch.seat_bots)
        # (on several hosts every bot token names the home shard, whichever host registered
        # it: the proxy sends every bot's Session to one host, the home one while it is up)
        self.sessions = BotSessions(store, self.data_dir, self.limiter, session_ack_s,
                                    HOME if roaming else shard)
        signing.check_shared(self.signer, store)  # after the bot-seats.key check, like it
        # the matches this referee plays (play/registry.py)
        self.registry = MatchRegistry(
            store, self.data_dir / "records", self.sessions, sign=self.signer.sign,
            components=components, keep_finished_s=keep_finished_s, join_ms=join_ms,
            shard=shard, roaming=roaming)
        # leagues: their bots' details and versions, invites, standings (leagues.py)
        self.leagues = Leagues(store, self.data_dir, self.sessions, self.limiter, upload_limits)
        # seeks and challenges without the admin token (issue 33; play/lobby.py)
        self.lobby = Lobby(self.sessions, self._plan, self._lobby_match, lobby,
                           league_leave=self.leagues.challenge_leave,
                           is_live=self._lobby_live, house=house_bots)
        # the largest request body taken, but for PublishStandings and UploadBot's chunks (the
        # gRPC limit is raised for those two; see app.server_options)
        self.max_message_bytes = max_message_bytes
        self.close_wait_s = CLOSE_WAIT_S

    # ------------------------------------------------------------------ the registry's, read
    # (the web viewer reads these names on the service: referee.web.reader.ServerView)
    @property
    def matches(self) -> dict[str, MatchRuntime]:
        return self.registry.matches

    @property
    def unavailable(self) -> dict[str, str]:
        return self.registry.unavailable

    @property
    def records_dir(self) -> Path:
        return self.registry.records_dir

    def sheet_for(self, game: Game, options: dict[str, Any]) -> ComponentSheet:
        return self.registry.sheet_for(game, options)

    def embargo(self, match_id: str) -> Embargo | None:
        """The embargo on the hidden information of ``match_id`` (registry.embargo)."""
        return self.registry.embargo(match_id)

    # ------------------------------------------------------------------ checks
    def _limit(self, context: Context, token_h: str | None) -> None:
        # Per known token (a seat or the admin), else per peer address: rotating made-up
        # tokens or opening more connections (each has its own port) buys no fresh bucket.
        key = token_h if token_h in self.registry.tokens or token_h == self.admin_hash else None
        if not self.limiter.allow(key or self.limiter.client(context)):
            raise errors.exhausted("rate limit exceeded; slow down")

    def parse(self, message_type: type[M], data: bytes, rpc: str, context: Context) -> M:
        """A request body (handlers get raw bytes) as ``message_type``; bytes that are not one
        are MALFORMED: one warning line (no traceback), charged to the peer's rate limit so a
        flood of them cannot flood the log."""
        if len(data) > (MAX_STANDINGS + 1024 if message_type is pb.PublishStandingsRequest
                        else self.max_message_bytes):
            self._limit(context, None)
            raise errors.exhausted(f"{rpc}: a request body of {len(data)} bytes is more than "
                                   "this referee takes")
        try:
            return message_type.FromString(data)
        except Exception:  # noqa: BLE001 - DecodeError, or a recursion/UTF-8 error of the parser
            self._limit(context, None)
            log.warning("malformed_request", rpc=rpc, peer=context.peer(), size=len(data))
            raise errors.malformed(errors.not_a(message_type)) from None

    def _admin(self, context: Context) -> bool:
        token = bearer(context.invocation_metadata())
        h = token_hash(token) if token else None
        self._limit(context, h)
        if h is None:
            raise errors.unauthenticated("this call needs the admin token (authorization: Bearer)")
        return same_hash(h, self.admin_hash)

    def _seat(self, context: Context, match_id: str) -> tuple[MatchRuntime, int]:
        token = bearer(context.invocation_metadata())
        h = token_hash(token) if token else None
        self._limit(context, h)
        if h is None:
            raise errors.unauthenticated("this call needs a seat token (authorization: Bearer)")
        return self._seat_of(h, match_id)

    def _seat_of(self, h: str, match_id: str) -> tuple[MatchRuntime, int]:
        """The match and seat of the token whose hash is ``h`` (rate limit already charged)."""
        reg = self.registry
        entry = reg.tokens.get(h)
        if entry is None and reg.adopt(match_id, h):
            entry = reg.tokens.get(h)
        if entry is None:
            reg.raise_if_gone(match_id)
            raise errors.unauthenticated("unknown token")
        rt = reg.matches.get(match_id)
        if rt is None:
            raise errors.not_found(f"no match {clip(match_id)}")
        mid, seat = entry
        if mid != match_id or not same_hash(rt.token_hashes[seat], h):
            raise errors.permission_denied("this token belongs to another match")
        rt.mark_joined(seat)  # its bot has shown up (AbandonSeat unless_joined)
        return rt, seat

    def _runtime(self, match_id: str) -> MatchRuntime:
        reg = self.registry
        rt = reg.matches.get(match_id)
        if rt is None and reg.adopt(match_id):
            rt = reg.matches.get(match_id)
        if rt is None:
            reg.raise_if_gone(match_id)
            raise errors.not_found(f"no match {clip(match_id)}")
        return rt

    def _holds_admin(self, context: Context) -> bool:
        """Whether the call carries the admin token (no rate limit charged, nothing raised)."""
        token = bearer(context.invocation_metadata())
        return token is not None and same_hash(token_hash(token), self.admin_hash)

    def _raise_if_embargoed(self, match_id: str) -> None:
        emb = self.registry.embargo(match_id)
        if emb is not None:
            raise errors.precondition(EMBARGOED, emb.message())

    def _refuse_if_draining(self) -> None:
        if self.draining:
            raise errors.draining()

    def track_unary(self, fn: Callable[[Any, Context], Awaitable[Any]]
                    ) -> Callable[[Any, Context], Awaitable[Any]]:
        """``fn`` (a unary handler, served here or handed to another referee by
        front.forward.routed), counted in ``unary_calls`` while it runs, for ``drain``."""
        async def counted(data: Any, context: Context) -> Any:
            self.unary_calls += 1
            self.unary_idle.clear()
            try:
                return await fn(data, context)
            finally:
                self.unary_calls -= 1
                if not self.unary_calls:
                    self.unary_idle.set()

        return counted

    async def drain(self, bound_s: float) -> tuple[int, int]:
        """Stop taking work and let what was acknowledged be committed, before a clean stop
        (SIGTERM; a rolling restart, docs/organizer/cluster.md): from now on CreateMatch, Play,
        Watch, Session, SubmitMove and a move on an open Play stream are refused with
        UNAVAILABLE / DRAINING; each held match's lock is taken, waiting (at most ``bound_s``
        in all) for the move being committed, whose answer is queued when it is released, and
        kept, so no move of this process commits after it; then every stream ends with
        UNAVAILABLE / DRAINING after what it has queued (its bots reconnect and join again
        wherever the match is held next). Each quiesced match's lease is released as soon as
        its lock is taken, behind its queued writes (``Store.release_lease``), and the streams
        end once those releases are committed: the bots' next calls find the match free, and
        another referee (a cluster's next worker) takes it at once instead of after this one's
        stop. The stop that follows releases the rest (``Store.close``). Returns (matches
        quiesced, matches still committing at the bound)."""
        self.draining = True
        self.registry.draining = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + bound_s
        self.lobby.answer_polls()  # GetSeek long polls answer now
        if self.unary_calls:  # begun before: let them end first (a CreateMatch adds a match)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.unary_idle.wait(), bound_s)
        quiet = late = 0
        released: list[asyncio.Future] = []
        store = self.registry.store
        for rt in list(self.registry.matches.values()):
            try:
                await asyncio.wait_for(rt.lock.acquire(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                late += 1  # its commit is still queued; Store.close flushes it
                continue
            quiet += 1
            rt.cancel_timer()  # no time-out move either: the next holder plays it
            if store.owner and rt.game_over is None:
                released.append(store.release_lease(rt.id))
        if released:
            done, _ = await asyncio.wait(released, timeout=max(0.1, deadline - loop.time()))
            failed = sum(1 for f in done if f.exception() is not None)
            if failed or len(done) < len(released):  # Store.close releases them again
                log.warning("drain_release_failed", matches=len(released) - len(done) + failed)
        err = errors.draining()
        for rt in self.registry.matches.values():
            for stream in [*(st for lst in rt.streams.by_seat.values() for st in lst),
                           *rt.streams.watchers]:
                stream.queue.put_nowait(err)  # after the answers already queued
        self.sessions.end_every(err)
        log.info("drained", matches=quiet, still_committing=late)
        return quiet, late

    async def shutdown(self) -> None:
        self.sessions.close()
        self.registry.shutdown()

    def _lobby_live(self, match_id: str) -> bool:
        rt = self.registry.matches.get(match_id)
        return rt is not None and rt.game_over is None

    def _who(self, context: Context) -> Identity:
        """A lobby call's caller (play/lobby.py), its calls rate-limited per identity once
        known, else per address."""
        token = bearer(context.invocation_metadata())
        address = self.limiter.client(context)
        if token is None:
            self._limit(context, None)
        who = self.lobby.identity(token, address)
        if not self.limiter.allow(who.key):
            raise errors.exhausted("rate limit exceeded; slow down")
        return who

    # ================================================================== RPCs
    async def ListGames(self, request: pb.ListGamesRequest, context: Context) -> pb.ListGamesResponse:
        return self.list_games()

    def list_games(self) -> pb.ListGamesResponse:
        """ListGames' answer, built once per set of games and component sheets (the
        organizer's, by game, variant and digest) and served as the same message after that
        (issue 37 item 5: it was rebuilt on every call, the sheets' options walked each time).
        Neither changes while the referee runs, except a game registered after start (tests,
        plugins), which the key also holds."""
        components = self.registry.components
        key = (tuple(sorted((k, sheet.sha256) for k, sheet in components.items())),
               tuple((name, id(game)) for name, game in registry.games().items()))
        cached = self._games
        if cached is None or cached[0] != key:
            cached = self._games = (key, list_games(components))
        return cached[1]

    async def GetGameRules(self, request: pb.GetGameRulesRequest,
                           context: Context) -> pb.GameRules:
        """A hosted game's spec (as ListGames, from the same cached message), its rulings and
        the versions records carry. Public; nothing in it is secret."""
        if not request.game:
            raise errors.malformed("GetGameRules needs a game (a name from ListGames)")
        spec = next((g for g in self.list_games().games if g.name == request.game), None)
        if spec is None:
            hosted = ", ".join(g.name for g in self.list_games().games)
            raise errors.not_found(f"unknown game {clip(request.game)}; this referee hosts "
                                   f"{hosted}")
        game = registry.get(spec.name)
        return pb.GameRules(spec=spec, rulings_markdown=provenance.rulings_text(game),
                            rules_version=provenance.rules_version(game),
                            engine_version=provenance.engine_version())

    async def CreateMatch(self, request: pb.CreateMatchRequest, context: Context) -> pb.CreateMatchResponse:
        self._refuse_if_draining()
        if not self._admin(context):
            raise errors.permission_denied("creating a match needs the admin token")
        rid = request_id(request)
        if rid and (done := self._created(request, rid)) is not None:
            return done  # a retry: the first call's reply
        match_id, tokens = await self._create_match(request, rid)
        return _created_reply(match_id, tokens)

    def _plan(self, request: pb.CreateMatchRequest) -> MatchPlan:
        """CreateMatch's checks of ``request`` (the lobby checks a seek with them)."""
        reg = self.registry
        return plan_match(request, reg.sheet_for, self.sessions.check_seat_bots, reg.join_ms)

    async def _lobby_match(self, request: pb.CreateMatchRequest,
                           extra: dict[str, object]) -> tuple[str, list[str]]:
        """A filled seek's match (play/lobby.py), created as CreateMatch creates one."""
        return await self._create_match(request, "", extra)

    async def _create_match(self, request: pb.CreateMatchRequest, rid: str,
                            extra: dict[str, object] | None = None) -> tuple[str, list[str]]:
        """Create ``request``'s match (checked here): its id and seat tokens. ``extra``: fields
        its record adds (a lobby match's)."""
        reg = self.registry
        plan = self._plan(request)
        versions = self.leagues.check_match(request.league, plan.bots,
                                            request.seat_bot_versions)
        # a hosted bot's seat gets no Assignment: the league runner plays it with the seat token
        remote = [b if b and not self.leagues.hosted(b) else "" for b in plan.bots]
        match = new_match(plan)
        match_id = reg.new_match_id()
        # with a request_id every seat token is derived (sessions.seat_token), so that a retry
        # reaching any referee on the store can give the same reply (only hashes are stored)
        tokens = [self.sessions.seat_token(match_id, s) for s in range(plan.seats)] if rid \
            else self.sessions.seat_tokens(match_id, remote,
                                           [shard.token(reg.shard) for _ in range(plan.seats)])
        hashes = [token_hash(t) for t in tokens]
        metrics.MATCHES_CREATED.labels(match.game.spec.name).inc()
        rt = reg.new_runtime(
            match_id, match, names=plan.names, policy=plan.policy, token_hashes=hashes,
            seed_salt=new_salt(),  # the Welcome's seed commitment; revealed by the record
        )
        extra = {**({"event": plan.event} if plan.event else {}), **(extra or {})}
        rt.league_fields = league_fields(request.league, plan.bots, versions)
        rt.league_fields.update(extra)
        rt.unlisted = request.unlisted
        game = plan.game.spec.name
        bound = self.sessions.bind(match_id, remote, game=game, names=plan.names,
                                   policy=plan.policy, event=plan.event,
                                   options={k: opt_str(v) for k, v in plan.options.items()})
        stored = self.store.insert_match(
            MatchRow(
                id=match_id, game=game, options=plan.options, seats=plan.seats, seed=plan.seed,
                components_name=plan.sheet.name, components_sha256=plan.sheet.sha256,
                time_policy=json_format.MessageToDict(plan.policy,
                                                      preserving_proto_field_name=True),
                token_hashes=hashes, names=plan.names, status="running",
                created_ms=rt.created_ms, finished_ms=None, forfeited=None, result=None,
                reveal_policy=plan.reveal_policy, record_format=match.record_format,
                league=request.league, unlisted=request.unlisted, seat_bots=plan.bots,
                seat_versions=versions,
                start=match.start, seed_salt=rt.seed_salt, extra=extra,
            ),
            (self.admin_hash, rid, fingerprint(request)) if rid else None,
        )
        try:
            await stored
        except Exception:
            self.sessions.cancel(bound)
            # the same request_id committed meanwhile by another referee on the store (or a
            # concurrent call here): the match that won is the answer
            if rid and (done := self._created(request, rid)) is not None:
                return done.match_id, [t.token for t in done.seats]
            raise
        if bound is not None:
            await bound.stored
        reg.register(rt)
        rt.issue_decision()
        self.sessions.activate(bound)
        log.info("match_created", match_id=match_id, game=game, seats=plan.seats,
                 options=plan.options)
        return match_id, tokens

    def _created(self, request: pb.CreateMatchRequest,
                 rid: str) -> pb.CreateMatchResponse | None:
        """The reply to the CreateMatch with ``rid`` this admin already made, from the store
        (whichever referee on it made the match), or None; ALREADY_EXISTS /
        REQUEST_ID_REUSED when that call's request was another."""
        found = self.store.created_by(self.admin_hash, rid)
        if found is None:
            return None
        digest, match_id, seats = found
        if digest != fingerprint(request):
            raise errors.request_id_reused(
                f"request_id {clip(rid)} was used for a different CreateMatch request "
                f"(match {match_id}); use a fresh request_id for a new match")
        log.info("match_create_repeated", match_id=match_id)
        return _created_reply(match_id, [self.sessions.seat_token(match_id, s)
                                         for s in range(seats)])

    async def Play(self, request_iterator: AsyncIterator[bytes],
                   context: Context) -> AsyncGenerator[Reply, None]:
        """Frames arrive as raw bytes (see generic_handler). A first frame that is not a Join
        ends the stream with INVALID_ARGUMENT/MALFORMED; after the Join every frame gets an
        answer on the stream, a malformed one a MoveResult with reason MALFORMED. Registered
        without _guard_stream, whose work it does itself, and draining its queue inline (as
        ``streams.drain`` does): each message sent passes through one async generator, not
        three."""
        stream: Stream | None = None
        rt: MatchRuntime | None = None
        reader: asyncio.Task | None = None
        try:
            try:
                data = await request_iterator.__anext__()
            except StopAsyncIteration:
                return
            # after the Join is read: a refusal racing the client's first write would reach
            # it as a local INTERNAL error
            self._refuse_if_draining()
            limit = self.max_message_bytes
            if len(data) > limit:
                raise frame_too_big("Play", len(data))
            first = self.parse(pb.ClientMessage, data, "Play", context)
            if first.WhichOneof("msg") != "join":
                raise errors.malformed("send Join first on a Play stream")
            rt, seat = self._seat(context, first.join.match_id)
            stream = Stream(seat, events=first.join.events,
                            combine=first.join.combine_decision)
            rt.attach(stream)
            rt.log.info("seat_joined", seat=seat, peer=self.limiter.client(context))
            reader = asyncio.ensure_future(self._play_reader(request_iterator, context, rt, stream,
                                                             limit))
            queue = stream.queue
            get, get_nowait, qsize = queue.get, queue.get_nowait, queue.qsize
            while True:
                item = get_nowait() if qsize() else await get()
                if item is CLOSE:
                    if not reader.done():  # the client's side is still open: see CLOSE_WAIT_S
                        await asyncio.wait((reader,), timeout=self.close_wait_s)
                    return
                if item.__class__ is RefereeError:
                    raise item
                yield item
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:  # noqa: BLE001 - turned into a status by _abort
            if reader is not None:
                reader.cancel()  # before the abort, which its read would see
            await _abort(context, "Play", exc)
        finally:
            if reader is not None:
                reader.cancel()
            if rt is not None and stream is not None:
                rt.detach(stream)
                rt.log.info("seat_left", seat=stream.seat)

    async def _play_reader(self, request_iterator: AsyncIterator[bytes], context: Context,
                           rt: MatchRuntime, stream: Stream, limit: int) -> None:
        """The frames of a Play stream after its Join, each answered on the stream; a frame
        over ``limit`` bytes ends it (checked here rather than by a wrapping generator, which
        cost every frame of the move path a step through one more async generator)."""
        token = bearer(context.invocation_metadata())
        key = token_hash(token) if token else self.limiter.client(context)  # a known seat's
        seat = stream.seat
        assert seat is not None  # a Play stream's
        allow = self.limiter.allow
        parse = pb.ClientMessage.FromString
        play = rt.play
        lock = rt.lock
        malformed = 0
        try:
            async for data in request_iterator:
                if lock.locked():
                    # a move still being committed is answered first (rt.play holds the lock
                    # until its answer is out): every frame's answer in the frames' order
                    async with lock:
                        pass
                if len(data) > limit:
                    raise frame_too_big("Play", len(data))
                if not allow(key):
                    stream.put(_rate_exceeded_on_stream())
                    return
                msg: pb.ClientMessage | None
                try:
                    msg = parse(data)
                except Exception:  # noqa: BLE001 - any parser error: the frame is not a message
                    msg = None
                if msg is None:
                    malformed += 1
                    # the first one per stream at warning; the rest would only repeat it
                    (log.warning if malformed == 1 else log.debug)(
                        "malformed_frame", rpc="Play", match_id=rt.id, seat=seat,
                        size=len(data), count=malformed)
                    stream.put(_refused(rt, "MALFORMED", errors.not_a(pb.ClientMessage)))
                    continue
                which = msg.WhichOneof("msg")
                if which == "submit":
                    sub = msg.submit
                    if self.draining:  # not played: the bot sends it again where it rejoins
                        stream.put(errors.draining())
                        return
                    try:
                        # no await on the commit: its callback answers the move (a stream cut
                        # meanwhile, a bot or a proxy gone, cannot leave a played move without
                        # its next decision)
                        res = await play(seat, sub.move, sub.state_version, sub.request_id,
                                         stream, sub.note)
                        if res is not None:
                            stream.put(pb.ServerMessage(move_result=res))
                    except RefereeError as exc:
                        stream.put(_refused(rt, exc.reason, exc.message, sub.request_id))
                    except Exception as exc:
                        if store_outage(exc):
                            away = unavailable(_store_kind(exc))
                            stream.put(_refused(rt, away.reason, away.message, sub.request_id))
                            continue
                        rt.log.exception("internal_error", rpc="Play", seat=seat, error=repr(exc))
                        stream.put(_refused(rt, "INTERNAL", "internal error",
                                            sub.request_id))
                elif which == "join":
                    if msg.join.match_id != rt.id:
                        stream.put(_refused(rt, "MALFORMED", "this stream is joined to "
                                            f"match {rt.id}"))
                    elif rt.game_over is None and rt.decision and rt.decision.seat == seat:
                        stream.put(rt.decision_bytes)  # a re-Join asks for the decision again
                else:
                    stream.put(_refused(rt, "MALFORMED", "empty client message"))
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError:
            return  # the call is gone; the writer side ends with it
        except RefereeError as exc:  # a frame over the size limit: the stream ends with it
            stream.put(exc)
        except Exception as exc:
            # Never leave a stream that pushes Decisions but no longer reads: end it.
            rt.log.exception("play_reader_error", seat=seat, error=repr(exc))
            stream.put(errors.RefereeError(grpc.StatusCode.INTERNAL, "INTERNAL", "internal error"))
        # The client half-closed: keep pushing until the match ends or the client cancels.

    async def SubmitMove(self, request: pb.SubmitMoveRequest, context: Context) -> pb.MoveResult:
        self._refuse_if_draining()
        rt, seat = self._seat(context, request.match_id)
        return await _submit(rt, seat, request)

    async def GetView(self, request: pb.GetViewRequest, context: Context) -> pb.GetViewResponse:
        rt, seat = self._seat(context, request.match_id)
        return _view_reply(rt, seat)

    # ------------------------------------------------------------------ the web's seat calls
    # The browser's play page (referee.web.play) plays a seat through these: the same checks,
    # rate limits and calls as GetView and SubmitMove, with the token the page sent in its
    # Authorization header and the client the web saw; in a cluster, handed to the referee
    # that holds the match as the gRPC calls are (forward.py).
    async def seat_view(self, match_id: str, token: str, client: str) -> pb.GetViewResponse:
        request = pb.GetViewRequest(match_id=match_id)
        away = await self._seat_forward("GetView", request, token, client)
        if away is not None:
            return pb.GetViewResponse.FromString(away)
        rt, seat = self._web_seat(match_id, token, client)
        return _view_reply(rt, seat)

    async def seat_move(self, request: pb.SubmitMoveRequest, token: str,
                        client: str) -> pb.MoveResult:
        # as SubmitMove: refused while draining (issue 33), else the move would wait on the
        # match's lock, which the drain holds until the process stops, and the page with it
        self._refuse_if_draining()
        away = await self._seat_forward("SubmitMove", request, token, client)
        if away is not None:
            return pb.MoveResult.FromString(away)
        rt, seat = self._web_seat(request.match_id, token, client)
        return await _submit(rt, seat, request)

    def _web_seat(self, match_id: str, token: str, client: str) -> tuple[MatchRuntime, int]:
        h = token_hash(token)
        known = h in self.registry.tokens
        if not self.limiter.allow(h if known else client):
            raise errors.exhausted("rate limit exceeded; slow down")
        return self._seat_of(h, match_id)

    async def _seat_forward(self, rpc: str, request: Message, token: str,
                            client: str) -> bytes | None:
        """The call's answer from the referee holding the match, or None to serve it here."""
        fwd = self.forwarder
        if fwd is None:
            return None
        address = fwd.address_of(request.match_id)  # type: ignore[attr-defined]
        if address is None:
            return None
        call: Any = fwd.channel(address).unary_unary(f"/{SERVICE_NAME}/{rpc}")
        metadata = (("authorization", f"Bearer {token}"), (FORWARDED_HEADER, "1"),
                    (CLIENT_HEADER, client))
        try:
            answer: bytes = await call(request.SerializeToString(), metadata=metadata,
                                       timeout=30.0)
        except grpc.aio.AioRpcError as exc:
            raise remote_error(exc) from None
        return answer

    async def GetLegalMoves(self, request: pb.GetLegalMovesRequest, context: Context) -> pb.Decision:
        rt, seat = self._seat(context, request.match_id)
        dp = rt.decision_for(seat)
        if dp is not None:
            return dp
        return pb.Decision(match_id=rt.id, state_version=rt.match.version, seat=seat)

    async def DescribeSeat(self, request: pb.DescribeSeatRequest,
                           context: Context) -> pb.SeatText:
        """The seat's view and decision in words (core.text, the game's text table), from
        exactly what GetView and GetLegalMoves would send that seat, and the public events
        after ``since_version`` (what every event stream was sent). Runs only when asked: the
        move path keeps nothing for it until a first call (``MatchRuntime.events_since``)."""
        rt, seat = self._seat(context, request.match_id)
        game = rt.game
        out = pb.SeatText(match_id=rt.id, seat=seat, state_version=rt.match.version,
                          view=text.describe_view(rt.view_for(seat), game))
        dp = rt.decision_for(seat)
        if dp is not None:
            described = text.describe_decision(dp, game)
            out.decision_kind = described.kind
            out.prompt = described.prompt
            out.deadline_unix_ms = dp.deadline_unix_ms
            for m in described.moves:
                out.moves.add(id=m.id, kind=m.kind, text=m.text, rule=m.rule).move.MergeFrom(m.move)  # type: ignore[arg-type]
        # after the view: a move committed while the events were gathered is left for the
        # next call, so the events never run ahead of the view they come with
        events = await rt.events_since(request.since_version)
        out.events = text.describe_events(
            [e for e in events if e.state_version <= out.state_version])
        if rt.game_over is not None:
            out.result = text.describe_result(rt.game_over)
        return out

    async def Watch(self, request: pb.WatchRequest,
                    context: Context) -> AsyncGenerator[Reply, None]:
        stream: Stream | None = None
        rt: MatchRuntime | None = None
        try:
            self._refuse_if_draining()
            self._limit(context, None)
            rt = self._runtime(request.match_id)
            if rt.game_over is not None:  # its final view may show a same-seed match's set-up
                self._raise_if_embargoed(rt.id)
            stream = Stream(None)
            rt.watch(stream)
            async with contextlib.aclosing(drain(stream.queue)) as items:
                async for item in items:
                    yield item
        finally:
            if rt is not None and stream is not None:
                rt.detach(stream)

    async def GetRecord(self, request: pb.GetRecordRequest, context: Context) -> pb.GetRecordResponse:
        rt = self.registry.matches.get(request.match_id)
        if rt is None or rt.game_over is not None:
            # over: the record file written at the final commit is the record
            self._limit(context, None)
            if rt is not None or (
                request.match_id and self.store.match_status(request.match_id) == "finished"
            ):
                if not self._holds_admin(context):  # the runner reads results with it
                    self._raise_if_embargoed(request.match_id)
                # the id is one the store issued, so it is safe in a path
                path = self.records_dir / f"{request.match_id}.json"
                try:
                    text = path.read_text(encoding="utf-8")
                except OSError:
                    # finished by a referee on another host: the store may keep it
                    stored = self.store.load_record(request.match_id)
                    if stored is None:
                        raise errors.not_found(f"no record file for {request.match_id}") from None
                    text = stored
                return pb.GetRecordResponse(record_json=text, complete=True)
            raise errors.not_found(f"no match {clip(request.match_id)}")
        if not self._admin(context):
            raise errors.permission_denied("the record of a running match needs the admin token")
        return pb.GetRecordResponse(
            record_json=json.dumps(rt.record(), sort_keys=True), complete=False
        )

    async def GetSigningKey(self, request: pb.GetSigningKeyRequest, context: Context) -> pb.SigningKey:
        """The public key finished records are signed with (no token: it is public)."""
        self._limit(context, None)
        return self.signing_key

    async def AbandonSeat(self, request: pb.AbandonSeatRequest, context: Context) -> pb.AbandonSeatResponse:
        if not self._admin(context):
            raise errors.permission_denied("abandoning a seat needs the admin token")
        rt = self._runtime(request.match_id)
        if not 0 <= request.seat < rt.match.seat_count:
            raise errors.malformed(f"no seat {request.seat} in a {rt.match.seat_count}-seat match")
        abandoned, forfeited = await rt.abandon(
            request.seat,
            check_text(request.reason[:200], "reason", max_len=200) or "abandoned by the host",
            request.unless_joined
        )
        return pb.AbandonSeatResponse(abandoned=abandoned, forfeited=forfeited)

    async def Echo(self, request_iterator: AsyncIterator[bytes],
                   context: Context) -> AsyncGenerator[pb.EchoMessage, None]:
        parse = self.parse
        async for data in request_iterator:
            yield parse(pb.EchoMessage, data, "Echo", context)

    async def RegisterBot(self, request: pb.RegisterBotRequest, context: Context) -> pb.RegisterBotResponse:
        if request.league:
            # an entrant needs no token (the league's registration mode decides)
            admin = self._holds_admin(context)
            if not admin:
                self._limit(context, None)
            return await self.leagues.register(request, admin=admin, peer=self.limiter.client(context))
        if not self._admin(context):
            raise errors.permission_denied("registering a bot needs the admin token")
        return await self.sessions.register(request.name)

    def Session(self, request_iterator: AsyncIterator[bytes],
                context: Context) -> AsyncGenerator[Reply, None]:
        """A bot's session (sessions.py): its raw frames, each parsed there (refused while
        draining: its first frame gets UNAVAILABLE / DRAINING)."""
        return self.sessions.Session(request_iterator, context)

    # ------------------------------------------------------------------ lobby (play/lobby.py)
    async def EnterLobby(self, request: pb.EnterLobbyRequest, context: Context) -> pb.LobbyPass:
        self._limit(context, None)
        return self.lobby.enter(request.name, self.limiter.client(context))

    async def OpenSeek(self, request: pb.OpenSeekRequest, context: Context) -> pb.SeekReply:
        return await self.lobby.open_seek(self._who(context), request)

    async def Challenge(self, request: pb.ChallengeRequest, context: Context) -> pb.SeekReply:
        return await self.lobby.challenge(self._who(context), request)

    async def ListSeeks(self, request: pb.ListSeeksRequest, context: Context) -> pb.ListSeeksResponse:
        self._limit(context, None)
        return self.lobby.listing(request.game)

    async def JoinSeek(self, request: pb.JoinSeekRequest, context: Context) -> pb.SeekReply:
        return await self.lobby.join(self._who(context), request)

    async def CancelSeek(self, request: pb.CancelSeekRequest, context: Context) -> pb.Seek:
        return await self.lobby.cancel(self._who(context), request)

    async def GetSeek(self, request: pb.GetSeekRequest, context: Context) -> pb.SeekReply:
        who = self._who(context) if bearer(context.invocation_metadata()) else None
        if who is None:
            self._limit(context, None)
        return await self.lobby.get(who, request)

    # ------------------------------------------------------------------ leagues (leagues.py)
    def _need_admin(self, context: Context, what: str) -> None:
        if not self._admin(context):
            raise errors.permission_denied(f"{what} needs the admin token")

    async def OpenLeague(self, request: pb.OpenLeagueRequest, context: Context) -> pb.League:
        self._need_admin(context, "opening a league")
        return await self.leagues.open_league(request)

    async def GetLeague(self, request: pb.GetLeagueRequest, context: Context) -> pb.League:
        self._limit(context, None)
        return self.leagues.league(request.name).league

    async def SetLeagueState(self, request: pb.SetLeagueStateRequest, context: Context) -> pb.League:
        self._need_admin(context, "changing a league's state")
        return await self.leagues.set_state(request)

    async def CreateInvite(self, request: pb.CreateInviteRequest,
                           context: Context) -> pb.CreateInviteResponse:
        self._need_admin(context, "creating an invite")
        return await self.leagues.create_invite(request)

    async def ListLeagueBots(self, request: pb.ListLeagueBotsRequest,
                             context: Context) -> pb.ListLeagueBotsResponse:
        self._need_admin(context, "listing a league's bots")
        return self.leagues.list_bots(request)

    async def SetBotStatus(self, request: pb.SetBotStatusRequest, context: Context) -> pb.LeagueBot:
        self._need_admin(context, "changing a bot's status")
        return await self.leagues.set_status(request)

    async def ListLeagueChallenges(self, request: pb.ListLeagueChallengesRequest,
                                   context: Context) -> pb.ListLeagueChallengesResponse:
        """The finished lobby challenges a league's leave allowed (issue 33): its runner takes
        them in apart from its own matches, rated when its organizer says so."""
        self._need_admin(context, "listing a league's challenges")
        self.leagues.league(request.league)  # NOT_FOUND for a league this referee lacks
        if request.finished_after_unix_ms < 0:
            raise errors.malformed("finished_after_unix_ms is a time (Unix ms), not negative")
        limit = min(request.limit or CHALLENGES_PAGE, CHALLENGES_PAGE)
        out = pb.ListLeagueChallengesResponse()
        for mid, finished, extra in self.store.finished_lobby_matches(
                request.finished_after_unix_ms):
            lobby = extra.get("lobby")
            if isinstance(lobby, dict) and lobby.get("league") == request.league:
                out.challenges.add(match_id=mid, finished_unix_ms=finished)
                if len(out.challenges) >= limit:
                    break
        return out

    async def PublishStandings(self, request: pb.PublishStandingsRequest,
                               context: Context) -> pb.PublishStandingsResponse:
        self._need_admin(context, "publishing standings")
        return await self.leagues.publish(request)

    async def GetBotArchive(self, request: pb.GetBotArchiveRequest,
                            context: Context) -> AsyncGenerator[Reply, None]:
        self._need_admin(context, "reading a bot's archive")
        async with contextlib.aclosing(self.leagues.archive(request)) as chunks:
            async for chunk in chunks:
                yield chunk

    async def UploadBot(self, request_iterator: AsyncIterator[bytes],
                        context: Context) -> pb.BotVersion:
        return await self.leagues.upload(request_iterator, context)


# ---------------------------------------------------------------------- wiring

def _created_reply(match_id: str, tokens: list[str]) -> pb.CreateMatchResponse:
    return pb.CreateMatchResponse(
        match_id=match_id, seats=[pb.SeatToken(seat=s, token=t) for s, t in enumerate(tokens)])


def _rate_exceeded_on_stream() -> RefereeError:
    return errors.exhausted("rate limit exceeded on this stream; slow down")


def list_games(
    components: dict[tuple[str, str], ComponentSheet] | None = None,
) -> pb.ListGamesResponse:
    """ListGames from the registry; ``components`` (by game and sheet variant) replaces a game's
    default sheet for that variant."""
    components = components or {}
    out = pb.ListGamesResponse()
    for _name, game in sorted(registry.games().items()):
        spec = game.spec
        gs = pb.GameSpec(
            name=spec.name, title=spec.title, min_seats=spec.min_seats,
            max_seats=spec.max_seats, rulebook=spec.rulebook,
        )
        for o in spec.options:
            gs.options.append(
                pb.OptionSpec(
                    name=o.name, type=o.kind, default_value=opt_str(o.default),
                    choices=list(o.choices), min=o.min or 0, max=o.max or 0,
                    description=o.description,
                )
            )
        for variant, default in game.component_sheets().items():
            sheet = components.get((spec.name, variant))
            gs.components.append(
                pb.ComponentSheetInfo(
                    name=(sheet or default).name,
                    sha256=(sheet or default).sha256,
                    provenance_counts=(sheet or default).provenance_counts,
                    variant=variant,
                    organizer=sheet is not None,
                )
            )
        out.games.append(gs)
    return out


def _view_reply(rt: MatchRuntime, seat: int) -> pb.GetViewResponse:
    """GetView's answer: the seat's view, its pending decision, the game over."""
    resp = pb.GetViewResponse(state_version=rt.match.version, view=rt.view_for(seat))
    dp = rt.decision_for(seat)
    if dp is not None:
        resp.decision.CopyFrom(dp)
    if rt.game_over is not None:
        resp.game_over.CopyFrom(rt.game_over)
    return resp


async def _submit(rt: MatchRuntime, seat: int, request: pb.SubmitMoveRequest) -> pb.MoveResult:
    """SubmitMove's answer: the accepted MoveResult, or the refusal raised with its reason."""
    # as in Play: a cut call does not stop the move (rt.submit waits for it, shielded)
    result = await rt.submit(seat, request.move, request.state_version, request.request_id,
                             None, request.note)
    if not result.accepted:
        raise errors.precondition(pb.Reason.Name(result.reason), result.message)
    return result


def _refused(rt: MatchRuntime, reason: str, message: str,
             request_id: str = "") -> pb.ServerMessage:
    """A refusal on a Play stream, at the match's current version."""
    return pb.ServerMessage(
        move_result=refusal(reason, message, rt.match.version, request_id))


def _internal_md() -> tuple[tuple[str, str | bytes], ...]:
    return errors.RefereeError(grpc.StatusCode.INTERNAL, "INTERNAL", "internal error") \
        .trailing_metadata()


def _store_kind(exc: BaseException) -> str:
    """Which store an error of its being away came from, for the refusal's message."""
    return "sqlite" if isinstance(exc, sqlite3.Error) else "postgresql"


def _ser(message: Reply) -> bytes:
    # Broadcast messages are serialised once and queued as bytes to every stream.
    return message if isinstance(message, bytes) else message.SerializeToString()


async def _abort(context: Context, rpc: str, exc: Exception) -> NoReturn:
    """The one way a handler's exception becomes a status: a RefereeError with its reason,
    anything else INTERNAL (logged with its traceback: that one is a bug)."""
    if isinstance(exc, RefereeError):
        await context.abort(exc.code, exc.message, exc.trailing_metadata())
    if store_outage(exc):  # the store is away (logged once by the store): retry, not a bug
        away = unavailable(_store_kind(exc))
        await context.abort(away.code, away.message, away.trailing_metadata())
    log.exception("internal_error", rpc=rpc, error=repr(exc))  # noqa: LOG004 - called in except
    await context.abort(grpc.StatusCode.INTERNAL, "internal error", _internal_md())


def _guard_unary(service: RefereeService, rpc: str,
                 fn: Callable[[Any, Context], Awaitable[Reply]],
                 request_type: type[Message]) -> Callable[[bytes, Context], Awaitable[Reply]]:
    """A unary handler taking the raw request bytes: parsed here, so a body that is not a
    ``request_type`` is answered INVALID_ARGUMENT/MALFORMED like any other bad input."""
    parse = service.parse

    async def handler(data: bytes, context: Context) -> Reply:
        try:
            return await fn(parse(request_type, data, rpc, context), context)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:  # noqa: BLE001 - turned into a status by _abort
            await _abort(context, rpc, exc)

    return service.track_unary(handler)


def _guard_stream(service: RefereeService, rpc: str,
                  fn: Callable[[Any, Context], AsyncGenerator[Reply, None]],
                  request_type: type[Message] | None = None,
                  ) -> Callable[[Any, Context], AsyncGenerator[Reply, None]]:
    """The same for a server-streaming handler (an async generator). With ``request_type`` the
    single request is parsed here (Watch); without, ``fn`` gets the raw request frames and
    parses them itself (Echo, Session), each capped at --max-message-bytes here. (Play guards
    itself, on its move path.)"""
    parse = service.parse

    async def handler(request: Any, context: Context) -> AsyncGenerator[Reply, None]:
        try:
            if request_type is not None:
                request = parse(request_type, request, rpc, context)
            else:
                request = _capped_frames(request, service.max_message_bytes, rpc)
            async with contextlib.aclosing(fn(request, context)) as items:
                async for item in items:
                    yield item
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:  # noqa: BLE001 - turned into a status by _abort
            await _abort(context, rpc, exc)

    return handler


async def _capped_frames(frames: AsyncIterator[bytes], limit: int,
                         rpc: str) -> AsyncIterator[bytes]:
    """A stream's raw frames, each at most ``limit`` bytes (the gRPC limit is higher for
    UploadBot and PublishStandings): a bigger one ends the stream, RESOURCE_EXHAUSTED."""
    async for data in frames:
        if len(data) > limit:
            raise frame_too_big(rpc, len(data))
        yield data


def frame_too_big(rpc: str, size: int) -> RefereeError:
    """A stream's frame over --max-message-bytes: it ends the stream, RESOURCE_EXHAUSTED."""
    return errors.exhausted(f"{rpc}: a frame of {size} bytes is more than this referee takes")


def _guard_client_stream(service: RefereeService, rpc: str,
                         fn: Callable[[AsyncIterator[bytes], Context], Awaitable[Reply]],
                         ) -> Callable[[AsyncIterator[bytes], Context], Awaitable[Reply]]:
    """The same for a client-streaming handler (UploadBot): ``fn`` gets the raw frames."""

    async def handler(request_iterator: AsyncIterator[bytes], context: Context) -> Reply:
        try:
            return await fn(request_iterator, context)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:  # noqa: BLE001 - turned into a status by _abort
            await _abort(context, rpc, exc)

    return handler


def generic_handler(service: RefereeService) -> grpc.GenericRpcHandler:
    """The Referee service's method handlers, one per method of referee.proto's descriptor (a
    method the .proto gains and the servicer lacks fails the start, not a call with
    UNIMPLEMENTED: tests/server/test_handler_parity.py). Built here (not with the generated
    add_RefereeServicer_to_server) so that responses may be pre-serialised bytes, and with no
    request deserializer: handlers get the raw bytes and parse them inside their guard, so a
    malformed body is a MALFORMED answer instead of an UNKNOWN status and a logged traceback."""
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for method in REFEREE.methods:
        name = method.name
        fn = getattr(service, name)
        request_type = getattr(pb, method.input_type.name)
        if name == "Play":  # it guards itself, on its move path
            handlers[name] = grpc.stream_stream_rpc_method_handler(fn, None, _ser)
        elif method.client_streaming and method.server_streaming:
            # Echo, Session: the raw request frames, each parsed by the handler
            handlers[name] = grpc.stream_stream_rpc_method_handler(
                _guard_stream(service, name, fn), None, _ser)
        elif method.client_streaming:  # UploadBot: the raw frames
            handlers[name] = grpc.stream_unary_rpc_method_handler(
                _guard_client_stream(service, name, fn), None, _ser)
        elif method.server_streaming:  # Watch, GetBotArchive: one request, parsed here
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                _guard_stream(service, name, fn, request_type), None, _ser)
        else:
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                _guard_unary(service, name, fn, request_type), None, _ser)
    return grpc.method_handlers_generic_handler(SERVICE_NAME, handlers)


#: The Referee service as referee.proto declares it, and its methods' names
REFEREE = pb.DESCRIPTOR.services_by_name["Referee"]
METHODS: tuple[str, ...] = tuple(REFEREE.methods_by_name)


class _Method(grpc.HandlerCallDetails):
    """A method's name as a generic handler is asked about it (no call yet)."""

    def __init__(self, name: str):
        self.method = f"/{SERVICE_NAME}/{name}"
        self.invocation_metadata = ()


def registered_handlers(handler: grpc.GenericRpcHandler) -> dict[str, grpc.RpcMethodHandler]:
    """Each Referee method's handler as ``handler`` (the generic one, or a cluster's routed
    one, which choose by the method's name alone) gives it, for
    ``grpc.aio.Server.add_registered_method_handlers``: gRPC core then queues each method's
    calls not yet started apart, and grpc.aio asks for the next call of every method at once,
    so a unary call (CreateMatch, GetRecord, ...) or a Watch is not started only after every
    Play stream of a burst that arrived before it (issue 31 item 8: a fresh call waited 60 s
    behind 2,400 streams opened at once, longer than the runner's 30 s deadlines)."""
    out = {}
    for name in METHODS:
        method_handler = handler.service(_Method(name))
        if method_handler is not None:
            out[name] = method_handler
    return out
