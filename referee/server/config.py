"""A referee's configuration (``referee serve``'s flags): what the start-up checks
(``referee.server.startup``) and the server's assembly (``referee.server.app``) both read."""
from __future__ import annotations

from dataclasses import dataclass, field

from referee.core.components import ComponentSheet
from referee.server.base.clock import DEFAULT_JOIN_MS
from referee.server.leagues.archive import Limits
from referee.server.play.lobby import LobbyLimits

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024
DEFAULT_MAX_PENDING_CALLS = 20_000
#: How long a call may wait to be started (see ServerConfig.max_call_wait_s)
DEFAULT_MAX_CALL_WAIT_S = 3600.0


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    port_file: str | None = None
    unix_socket: str | None = None  # also listen on this Unix domain socket (sandboxed bots)
    data_dir: str = "./data"
    admin_token: str | None = None
    components: dict[tuple[str, str], ComponentSheet] = field(default_factory=dict)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    durability: str = "normal"
    # the store: "" is <data-dir>/referee.sqlite3; postgresql://... (referee.server.store.sqlite's
    # store_url: never with a password from a command line)
    store_url: str = ""
    # leases (several referees on one store): this referee's name in the leases table (""
    # = <host>:<data dir>, the same across its restarts) and how long a lease lasts unrenewed
    lease_owner: str = ""
    lease_ttl_s: float = 5.0
    # SIGTERM drains first (RefereeService.drain): at most this long waiting for the moves
    # being committed before the streams end and the leases are released
    drain_s: float = 5.0
    rate: float = 2000.0  # requests (or stream messages) per second per token / peer
    burst: float = 4000.0
    tls_cert: str | None = None
    tls_key: str | None = None
    keep_finished_s: float = 300.0  # seconds a finished match stays in memory
    # Connections: a connection with no call for max_connection_idle_s is closed (GOAWAY; a
    # gRPC client reconnects by itself when it next calls), so a peer that only opens
    # connections cannot hold them; 0 keeps them. max_connection_age_s (0: no limit) closes
    # any connection that old once its calls are done. Keepalive pings (every keepalive_time_s,
    # answered within keepalive_timeout_s) find peers that vanished mid-stream.
    max_connection_idle_s: float = 300.0
    max_connection_age_s: float = 0.0
    keepalive_time_s: float = 60.0
    keepalive_timeout_s: float = 20.0
    # Calls that arrived but have not started yet (gRPC core's pending-request queue). Its
    # defaults (1,000, refusing at random up to a hard 3,000) failed ~27% of 4,000 Play streams
    # opened at once with "Internal error from Core" and nothing in the log.
    max_pending_calls: int = DEFAULT_MAX_PENDING_CALLS
    # How long an arrived call may wait for the server to start it. grpc.aio takes new calls
    # one at a time, each a few event-loop turns, so while the loop is busy with moves a burst
    # of Play streams waits in gRPC core's queue; core's own limit (30 s) then dropped the
    # streams still waiting, which the referee never saw, and their matches stalled for good
    # with the referee idle (issue 31 item 8: 300 matches x 4 seats at once). The queue is
    # bounded by max_pending_calls; a call is dropped for waiting only after this long.
    max_call_wait_s: float = DEFAULT_MAX_CALL_WAIT_S
    http_port: int | None = None  # the web viewer (referee.web) on this port; None = off
    session_ack_s: float = 30.0  # an unacknowledged bot assignment goes to another session
    # how long a match's first decision waits for every seat to join before its clock starts
    # anyway, for a time policy with join_ms = 0 (0 here: it does not wait)
    join_ms: int = DEFAULT_JOIN_MS
    # hosted bots' uploads (UploadBot): bytes received and unpacked, files, path length
    upload_limits: Limits = field(default_factory=Limits)
    # a worker of `referee serve --workers N` (referee.server.cluster): its shard, and every
    # shard's gRPC address (its Unix socket), to hand calls for other shards' matches on
    shard: str | None = None
    peers: dict[str, str] = field(default_factory=dict)
    web_host: str | None = None  # the web viewer's address when not `host` (a cluster's)
    # one of several hosts on a shared store (docs/organizer/many-hosts.md): the address the
    # other referees reach this one at, written in its leases; "" = not a host of several
    advertise: str = ""
    # addresses whose calls may name their client in auth.CLIENT_HEADER (--trusted-proxy)
    trusted_proxies: tuple[str, ...] = ()
    # the lobby (issue 33, docs/bot/lobby.md): how long seeks live, the caps on open seeks and
    # how fast they may be opened
    lobby: LobbyLimits = field(default_factory=LobbyLimits)
    # the SDK reference bots the referee runs as house bots in the lobby (referee.server.house;
    # () = none), each playing this many matches at once
    house_bots: tuple[str, ...] = ()
    house_capacity: int = 8
    # Prometheus metrics (referee.server.base.metrics) on a listen address of their own,
    # HOST:PORT; "" = not served there (the web port's /metrics still is, to the admin token)
    metrics_listen: str = ""
    # OpenTelemetry's gRPC instrumentation on the server (the `otel` extra); off by default
    otel: bool = False
