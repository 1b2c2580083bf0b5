"""Building, starting and stopping the referee gRPC server."""
from __future__ import annotations

import asyncio
import math
import os
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee.core import registry
from referee.server.base import metrics, shard
from referee.server.base.auth import RateLimiter, new_token, proxy_peers
from referee.server.config import ServerConfig
from referee.server.front.forward import Forwarder, routed
from referee.server.front.service import (
    SERVICE_NAME,
    RefereeService,
    generic_handler,
    registered_handlers,
)
from referee.server.house import HouseBots, house_name
from referee.server.leagues.league import MAX_STANDINGS
from referee.server.startup import (
    StartupError,
    bind_failure,
    check_config,
    check_port,
    make_private,
)
from referee.server.store.opening import is_store_error, open_store
from referee.server.store.sqlite import Store
from referee.v1 import referee_pb2

if TYPE_CHECKING:
    from referee.web import WebServer

log = structlog.get_logger("referee.server")

#: The gRPC receive limit: PublishStandings' 4 MiB document and some room
MAX_REQUEST_BYTES = MAX_STANDINGS + 64 * 1024


def resolve_admin_token(config: ServerConfig, data_dir: Path) -> str:
    """--admin-token, else $REFEREE_ADMIN_TOKEN, else <data-dir>/admin.token (created 0600)."""
    if config.admin_token:
        return config.admin_token
    env = os.environ.get("REFEREE_ADMIN_TOKEN")
    if env:
        return env
    path = data_dir / "admin.token"
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if token:
            log.info("admin_token", source="file", path=str(path.resolve()))
            return token
    token = new_token()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)
    log.info("admin_token", source="generated", path=str(path.resolve()))
    return token


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def server_options(cfg: ServerConfig) -> list[tuple[str, int]]:
    """grpc core channel arguments for the referee's server."""
    opts = [
        # PublishStandings (4 MiB) and UploadBot's chunks (1 MiB) need more than the other
        # calls: the service refuses any other request over max_message_bytes itself
        ("grpc.max_receive_message_length", max(int(cfg.max_message_bytes), MAX_REQUEST_BYTES)),
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
        ("grpc.so_reuseport", 0),
        # soft = hard: beyond the limit every new call is refused, none at random below it
        ("grpc.server.max_pending_requests", int(cfg.max_pending_calls)),
        ("grpc.server.max_pending_requests_hard_limit", int(cfg.max_pending_calls)),
        # whole seconds (gRPC's unit), at least one
        ("grpc.server_max_unrequested_time_in_server", max(1, math.ceil(cfg.max_call_wait_s))),
    ]
    if cfg.max_connection_idle_s > 0:
        opts.append(("grpc.max_connection_idle_ms", _ms(cfg.max_connection_idle_s)))
    if cfg.max_connection_age_s > 0:
        opts.append(("grpc.max_connection_age_ms", _ms(cfg.max_connection_age_s)))
    if cfg.keepalive_time_s > 0:
        opts += [
            ("grpc.keepalive_time_ms", _ms(cfg.keepalive_time_s)),
            ("grpc.keepalive_timeout_ms", _ms(cfg.keepalive_timeout_s)),
        ]
    return opts


class RefereeServer:
    def __init__(self, config: ServerConfig):
        self.config = config
        self.port: int | None = None
        self.server: grpc.aio.Server | None = None
        self.store: Store | None = None
        self.service: RefereeService | None = None
        self.health: health.aio.HealthServicer | None = None
        self.web: WebServer | None = None  # with --http-port
        self.http_port: int | None = None
        self.forwarder: Forwarder | None = None  # a cluster worker's (referee.server.front.forward)
        self.house: HouseBots | None = None  # with --house-bots (referee.server.house)
        self.holdings: metrics.Holdings | None = None  # this referee's gauges, read at scrape
        self.metrics_server: Any = None  # with --metrics-listen
        self.metrics_port: int | None = None

    async def start(self) -> int:
        """Start serving and return the gRPC port. A configuration that cannot work raises
        StartupError (see referee.server.startup) before anything is created; a failure later
        in the start stops what was started and raises too."""
        check_config(self.config)
        try:
            return await self._start()
        except BaseException as exc:
            await self._abort()
            if is_store_error(exc):
                if self.config.store_url:
                    raise StartupError(f"--store: the PostgreSQL store cannot be used: "
                                       f"{str(exc).strip()}") from None
                raise StartupError(f"--data-dir {self.config.data_dir}: its store "
                                   f"referee.sqlite3 cannot be used: {exc}") from None
            if isinstance(exc, OSError):  # a file the checks found usable is not (any more)
                raise StartupError(f"cannot start: {exc}") from None
            raise

    async def _start(self) -> int:
        cfg = self.config
        data_dir = Path(cfg.data_dir)
        make_private(data_dir)  # 0700, files in it 0600 (issue 31, item 6)
        admin = resolve_admin_token(cfg, data_dir)
        # Import every game now: the first CreateMatch must not stall the event loop (and every
        # stream on it) for the imports, and a game that fails to import shows at start-up.
        hosted = sorted(registry.games())
        self.store = open_store(cfg.store_url, data_dir, cfg.durability)
        self.store.start()
        self.service = RefereeService(
            self.store, data_dir, admin, cfg.components,
            RateLimiter(cfg.rate, cfg.burst, trust_proxy=cfg.shard is not None,
                        proxies=proxy_peers(cfg.trusted_proxies)),
            keep_finished_s=cfg.keep_finished_s, session_ack_s=cfg.session_ack_s, join_ms=cfg.join_ms,
            max_message_bytes=cfg.max_message_bytes, upload_limits=cfg.upload_limits,
            shard=cfg.shard, roaming=bool(cfg.advertise), lobby=cfg.lobby,
            house_bots=tuple(house_name(b) for b in cfg.house_bots),
        )
        owner = cfg.lease_owner or f"{socket.gethostname()}:{data_dir.resolve()}"
        ttl_ms = max(1, int(cfg.lease_ttl_s * 1000))
        held = self.service.registry
        self.store.enable_leases(owner, ttl_ms, held.drop, cfg.advertise)
        resumed = held.resume_all()
        # renewed three times a lease's life: one late round does not lose a match
        held.spawn(held.keep_leases(cfg.lease_ttl_s / 3))
        limit = int(cfg.max_message_bytes)
        self.server = grpc.aio.server(options=server_options(cfg),
                                      interceptors=otel_interceptors() if cfg.otel else None)
        handler = generic_handler(self.service)
        if cfg.shard is not None or cfg.advertise:
            self.forwarder = Forwarder(cfg.shard or "", cfg.peers,
                                       held=held if cfg.advertise else None,
                                       proxies=proxy_peers(cfg.trusted_proxies))
            self.service.forwarder = self.forwarder  # the web viewer watches other workers
            handler = routed(handler, self.forwarder, self.service.track_unary)
            if cfg.advertise and shard.HOME in cfg.peers and cfg.shard != shard.HOME:
                held.spawn(self.forwarder.hand_back_sessions(
                    self.service.sessions, max(1.0, cfg.lease_ttl_s)))
            if cfg.advertise:
                # a match bound to a bot but created on another host (the home host was
                # unreachable) reaches the bot's session here, on whichever host it is
                matches = held.matches
                held.spawn(self.service.sessions.pull_every(
                    max(0.5, cfg.lease_ttl_s / 3), lambda m: m in matches))
        # registered methods, not one generic handler: one queue of calls not yet started per
        # method, so a burst of Play streams holds no other call back (registered_handlers)
        self.server.add_registered_method_handlers(SERVICE_NAME, registered_handlers(handler))
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        names = (
            SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        )
        # The Referee service is registered by hand; make its descriptor known to reflection.
        assert referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name == SERVICE_NAME
        reflection.enable_server_reflection(names, self.server)
        self.port = self._bind(self.server)
        if cfg.unix_socket:
            _bind_unix(self.server, cfg.unix_socket)
        await self.server.start()
        if cfg.unix_socket:
            # any local process may connect (as over 127.0.0.1); tokens still decide what it
            # may do. A sandboxed bot runs under its own uid and needs write access to connect.
            os.chmod(cfg.unix_socket, 0o666)
        for name in (SERVICE_NAME, ""):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info(
            "serving", host=cfg.host, port=self.port, data_dir=str(data_dir.resolve()),
            store=self.store.describe(), shard=cfg.shard, advertise=cfg.advertise or None,
            unix_socket=cfg.unix_socket, resumed=resumed, games=hosted, durability=cfg.durability,
            tls=bool(cfg.tls_cert),
            max_message_bytes=limit, max_connection_idle_s=cfg.max_connection_idle_s,
            max_connection_age_s=cfg.max_connection_age_s, max_pending_calls=cfg.max_pending_calls,
            max_call_wait_s=cfg.max_call_wait_s,
        )
        self.holdings = metrics.watch(self._holdings)
        if cfg.metrics_listen:
            try:
                self.metrics_server, self.metrics_port = metrics.serve(cfg.metrics_listen)
            except ValueError as exc:
                raise StartupError(str(exc)) from None
            except OSError as exc:
                raise StartupError(f"--metrics-listen {cfg.metrics_listen}: cannot serve "
                                   f"there: {exc.strerror or exc}") from None
            log.info("metrics", listen=cfg.metrics_listen, port=self.metrics_port)
        if cfg.http_port is not None:
            from referee.web import WebServer  # only with --http-port: no cost otherwise

            web_host = cfg.web_host or cfg.host
            self.web = WebServer(self.service, web_host, cfg.http_port, cfg.trusted_proxies)
            try:
                self.http_port = await self.web.start()
            except OSError as exc:  # the port was taken since check_config, or uvicorn failed
                raise StartupError(bind_failure(web_host, cfg.http_port, "--http-port",
                                                exc.errno, exc.strerror or str(exc))) from None
        if cfg.house_bots:
            self.house = HouseBots(cfg.house_bots, self._house_target(), cfg.house_capacity,
                                   self._register_house_bot)
            await self.house.start()
        if cfg.port_file:
            tmp = Path(cfg.port_file + ".tmp")
            tmp.write_text(f"{self.port}\n", encoding="utf-8")
            tmp.replace(cfg.port_file)  # atomic: readers never see a half-written file
        return self.port

    def _house_target(self) -> str:
        """Where the house bots reach this referee: its Unix socket, else its TCP port (on
        the loopback when it listens on every address)."""
        cfg = self.config
        if cfg.unix_socket:
            return f"unix:{cfg.unix_socket}"
        host = "127.0.0.1" if cfg.host in ("0.0.0.0", "", "::") else cfg.host
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    async def _register_house_bot(self, name: str) -> str:
        assert self.service is not None
        return (await self.service.sessions.register(name)).bot_token

    def _bind(self, server: grpc.aio.Server) -> int:
        """Add the TCP port (TLS with --tls-cert); StartupError if gRPC cannot."""
        cfg = self.config
        address = f"{cfg.host}:{cfg.port}"
        try:
            if cfg.tls_cert and cfg.tls_key:
                creds = grpc.ssl_server_credentials(
                    [(Path(cfg.tls_key).read_bytes(), Path(cfg.tls_cert).read_bytes())]
                )
                port = server.add_secure_port(address, creds)
            else:
                port = server.add_insecure_port(address)
        except (RuntimeError, OSError):  # grpc raises RuntimeError, older versions return 0
            port = 0
        if not port:
            # check_config passed, so something changed since (or gRPC refused what the check
            # accepted): checking again names the cause when it can.
            check_port(cfg.host, cfg.port, "--port")
            what = " with --tls-cert/--tls-key" if cfg.tls_cert else ""
            raise StartupError(f"--port {cfg.port} on {cfg.host} cannot be bound{what} "
                               "(gRPC refused it; its reason is in the line above)")
        return port

    def _holdings(self) -> dict[str, Any]:
        """The gauges' reading (metrics.Holdings), on the scraping thread: copies of the
        registry's maps first (a move on the loop may change them meanwhile)."""
        out: dict[str, Any] = {"matches": {}, "streams": {"play": 0, "watch": 0}}
        service, store = self.service, self.store
        if service is None or store is None:
            return out
        matches = out["matches"]
        streams = out["streams"]
        for rt in list(service.registry.matches.values()):
            state = ("broken" if rt.broken else "finished" if rt.game_over is not None
                     else "live")
            key = (rt.game.spec.name, state)
            matches[key] = matches.get(key, 0) + 1
            streams["play"] += sum(len(s) for s in list(rt.streams.by_seat.values()))
            streams["watch"] += len(rt.streams.watchers)
        out["sessions"] = sum(len(c) for c in list(service.sessions.conns.values()))
        out["store_queue"] = store.queue_depth()
        return out

    async def _close(self, grace: float | None) -> None:
        """Stop whatever was started, in order: house bots, metrics, web viewer, matches,
        gRPC, store."""
        if self.house is not None:
            await self.house.stop()
            self.house = None
        if self.metrics_server is not None:
            self.metrics_server.shutdown()
            self.metrics_server.server_close()
            self.metrics_server = None
        if self.holdings is not None:
            metrics.unwatch(self.holdings)
            self.holdings = None
        if self.web is not None:
            await self.web.stop()
        if self.service is not None:
            await self.service.shutdown()
        if self.server is not None:
            await self.server.stop(grace)
        if self.forwarder is not None:
            await self.forwarder.close()
        if self.store is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.store.close)

    async def _abort(self) -> None:
        """Undo a start that failed part way, quietly: no server was serving."""
        await self._close(None)
        self.web = self.service = self.server = self.store = self.forwarder = None

    async def drain(self) -> None:
        """Before a clean stop (SIGTERM): NOT_SERVING on the health check first (a proxy or
        load balancer stops sending), then the service's drain (front/service.py): no new
        match, stream or move, the moves being committed committed and answered, every stream
        ended with UNAVAILABLE / DRAINING. ``stop`` then releases the leases."""
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
        if self.service is not None:
            await self.service.drain(self.config.drain_s)

    async def stop(self, grace: float | None = 1.0) -> None:
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
        await self._close(grace)
        log.info("stopped", port=self.port)

    async def wait(self) -> None:
        assert self.server is not None
        await self.server.wait_for_termination()


def otel_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """--otel: OpenTelemetry's gRPC server interceptor (a span per call, to the tracer provider
    the OpenTelemetry SDK was configured with, e.g. by ``opentelemetry-instrument``); a
    StartupError naming the extra when the package is not installed."""
    try:
        from opentelemetry.instrumentation.grpc import aio_server_interceptor
    except ImportError:
        raise StartupError("--otel needs OpenTelemetry's gRPC instrumentation: "
                           "pip install 'boardgame-referee[otel]'") from None
    return [aio_server_interceptor()]


async def serve(config: ServerConfig) -> None:
    """Run until SIGINT/SIGTERM, then drain (``RefereeServer.drain``) and stop. The handlers are in place before the server starts: the port
    file it writes tells a supervisor it is up, and a SIGTERM sent at once must stop it cleanly
    (it used to kill the process when it came before the handlers)."""
    server = RefereeServer(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except NotImplementedError:  # pragma: no cover
            pass
    await server.start()
    await stop.wait()
    await server.drain()
    await server.stop(2.0)  # the grace lets the streams send what they queued, then their end


def _bind_unix(server: grpc.aio.Server, path: str) -> None:
    """Listen on the Unix domain socket ``path`` too (plain text: it never leaves the machine).
    A socket file left by a previous run is replaced: check_config has refused any other file
    there, a missing folder and a socket another process listens on."""
    sock = Path(path)
    if sock.is_socket():  # left by a previous run: nobody answers on it (check_unix_socket)
        sock.unlink()
    try:
        bound = server.add_insecure_port(f"unix:{path}")
    except RuntimeError:
        bound = 0
    if not bound:
        raise StartupError(f"--unix {path} cannot be bound (gRPC refused it; its reason is in "
                           "the line above)")
