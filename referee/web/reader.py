"""What the web viewer reads of the referee: a typed, read-only face of the servicer.

The viewer runs in the referee process and reads its live objects (the match runtimes, the
store, the leagues, the bot sessions). It may not import the servicer (the front,
``referee.server.front``; ``tests/test_layers.py``), so ``ServerView`` declares exactly what
the web reads, as read-only members typed with the real classes of the rooms below the front.
``RefereeService`` matches it by its shape: mypy checks that where the process hands the
servicer to the web (``referee.server.app``, ``WebServer(...)``), so a member renamed or
retyped in the servicer is a type error there, not a broken page at run time; and
``tests/web/test_reader.py`` checks a real servicer has every member.

Read-only means ``@property`` and ``Mapping``/``Set`` where the servicer keeps a dict or
a set: the web cannot assign them, add a match or unblock a bot through this face. The store
and the bot sessions are narrowed to the few reads the web makes of them; the leagues are the
real ``Leagues``, since the league pages drive it as the league's gRPC calls do (a web form
registers a bot, the organizer's page sets a bot's status), and so is the lobby
(``referee.server.play.lobby.Lobby``), which the lobby page drives as its gRPC calls do."""
from __future__ import annotations

from collections.abc import Mapping, Set
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from referee.core.components import ComponentSheet
from referee.core.contract import Game
from referee.server.base.auth import RateLimiter
from referee.server.base.embargo import Embargo
from referee.server.base.signing import RecordSigner
from referee.server.leagues.league import Leagues
from referee.server.play.lobby import Lobby
from referee.server.play.runtime import MatchRuntime
from referee.server.play.streams import Stream
from referee.server.store.sqlite import MatchRow, MoveRow
from referee.v1 import referee_pb2 as pb


class Watchable(Protocol):
    """A running match as the live feed (``referee.web.live``) watches it: a runtime of this
    referee (``MatchRuntime``) or, in a cluster, another worker's match watched on its owner
    (``referee.server.front.forward.RemoteMatch``)."""

    @property
    def id(self) -> str: ...

    @property
    def game(self) -> Game: ...

    def watch(self, stream: Stream) -> None: ...

    def detach(self, stream: Stream) -> None: ...


class RemoteWatcher(Protocol):
    """The one call the web makes of a cluster worker's forwarder
    (``referee.server.front.forward.Forwarder``, which the web may not import)."""

    def remote(self, match_id: str, game: str) -> Watchable | None: ...


class MatchReads(Protocol):
    """The store's reads the web makes (``referee.server.store.sqlite.Store``)."""

    @property
    def kind(self) -> str: ...

    def load_matches(self, status: str | None = None, match_id: str = "") -> list[MatchRow]: ...

    def match_status(self, match_id: str) -> str | None: ...

    def load_moves(self, match_id: str) -> list[MoveRow]: ...


class SessionReads(Protocol):
    """What the web reads of the bot sessions (``referee.server.play.sessions.BotSessions``):
    whose token a hash is, and which bots are blocked."""

    @property
    def bots(self) -> Mapping[str, str]: ...  # token hash -> bot name

    @property
    def blocked(self) -> Set[str]: ...  # bot names


@runtime_checkable
class ServerView(Protocol):
    """Everything the web viewer reads of the referee (``RefereeService`` has this shape)."""

    @property
    def matches(self) -> Mapping[str, MatchRuntime]: ...  # the live matches, by id

    @property
    def store(self) -> MatchReads: ...

    @property
    def records_dir(self) -> Path: ...  # <match id>.json: finished matches' records

    @property
    def limiter(self) -> RateLimiter: ...  # the gRPC calls' rate limits, shared

    @property
    def forwarder(self) -> RemoteWatcher | None: ...  # a cluster worker's; None otherwise

    @property
    def admin_hash(self) -> str: ...  # the admin token's hash (auth.token_hash)

    @property
    def unavailable(self) -> Mapping[str, str]: ...  # running, failed to resume: id -> why

    @property
    def sessions(self) -> SessionReads: ...

    @property
    def leagues(self) -> Leagues: ...

    @property
    def lobby(self) -> Lobby: ...  # seeks and challenges (the lobby page drives it)

    @property
    def signer(self) -> RecordSigner | None: ...  # None: this referee signs no records

    def embargo(self, match_id: str) -> Embargo | None: ...

    def sheet_for(self, game: Game, options: dict[str, Any]) -> ComponentSheet: ...

    # a seat played from the browser (referee.web.play): GetView and SubmitMove with the
    # token of the page's Authorization header, rate limited per token (or per ``client``
    # while the token is unknown), handed to the match's referee in a cluster; refusals are
    # raised as RefereeError with their reason
    async def seat_view(self, match_id: str, token: str, client: str) -> pb.GetViewResponse: ...

    async def seat_move(self, request: pb.SubmitMoveRequest, token: str,
                        client: str) -> pb.MoveResult: ...
