"""``referee serve --workers N``: N referee processes behind nginx, supervised.

The supervisor (this module, run by ``referee serve`` when N >= 2) starts N workers, each a
``referee serve --shard wK`` on the same data directory and store, listening on the Unix socket
``<data-dir>/cluster/wK.sock``, and one nginx (Debian's ``nginx-light``) on the public address
with the configuration it writes to ``<data-dir>/cluster/nginx.conf``:

* a call carrying ``authorization: Bearer wK.…`` (a seat or bot token of worker K) goes to
  worker K; the bot and league calls (RegisterBot, UploadBot, the league RPCs) to the home
  worker ``w1``; any other call (the admin's, the unauthenticated) to any worker, round robin;
  a worker hands a call naming another shard's match on to the worker that holds it
  (``forward.py``): each worker runs with ``--advertise unix:<its socket>``, so the match's
  lease in the store names its holder;
* while nothing listens on worker K's socket, its calls go to the other workers (``backup``),
  which take over any of its matches whose lease is free (``MatchRegistry.adopt``);
* nginx sets ``x-referee-client`` to the client's address, replacing any a client sent, and the
  workers trust it only on their Unix sockets (``auth.client_address``): rate limits key on the
  real client.

A worker or nginx that dies is started again (a worker with its shard: it resumes its matches
from the store before it listens, so its seats get UNAVAILABLE from nginx meanwhile, never an
unknown token). SIGTERM or SIGINT stops nginx, then the workers, and returns. Logs: ``wK.log``
and ``nginx.log`` in the cluster folder. Children get SIGTERM if the supervisor itself dies
(PR_SET_PDEATHSIG), and nginx runs in a process group of its own that is swept after it dies, so
no process outlives the cluster.

SIGHUP (or ``referee restart --rolling``, which sends it) restarts the workers one at a time,
``w1`` first: each gets SIGTERM and drains (``RefereeServer.drain``: no new match, stream or
move, what was acknowledged committed, each match's lease released behind its last commit,
its streams ended with UNAVAILABLE), is started again, resumes the matches of its shard no
other worker took over meanwhile, and must answer SERVING on the gRPC health check over its
socket before the next one is stopped. nginx keeps running throughout; the bots of the worker
being restarted get UNAVAILABLE / DRAINING, call again, and reach another worker, which takes
their match over at once. The supervisor's pid is in ``supervisor.pid`` and the number of rolling
restarts done in ``rolled``, both in the cluster folder.
"""
from __future__ import annotations

import base64
import contextlib
import ctypes
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import grpc
import structlog

from referee.server.base import errors, shard
from referee.server.startup import (
    UNIX_PATH_MAX,
    StartupError,
    check_data_dir,
    check_port,
    check_tls,
)

log = structlog.get_logger("referee.cluster")

#: the calls that go to the home worker: it keeps the bots, their sessions and the leagues
HOME_CALLS = ("RegisterBot", "UploadBot", "GetBotArchive", "SetBotStatus", "OpenLeague",
              "GetLeague", "SetLeagueState", "CreateInvite", "ListLeagueBots", "PublishStandings",
              "ListLeagueChallenges",
              # the lobby (issue 33) lives beside the bot sessions it seats; a worker reached
              # anyway hands these on too (front.forward.ROUTED)
              "EnterLobby", "OpenSeek", "Challenge", "ListSeeks", "JoinSeek", "CancelSeek",
              "GetSeek")
INSTALL_HINT = ("the cluster needs nginx with HTTP/2 and gRPC (Debian: `apt-get install "
                "nginx-light`; `make setup` installs it as root)")
READY_S = 120.0  # a worker resumes every match of its shard before it listens
_PR_SET_PDEATHSIG = 1


def find_nginx(given: str | None = None) -> str:
    """The nginx binary (``given``, else on PATH or in /usr/sbin), or StartupError saying how to
    install it."""
    if given:
        path: str | None = given if os.access(given, os.X_OK) else None
    else:
        path = shutil.which("nginx") or next(
            (p for p in ("/usr/sbin/nginx", "/sbin/nginx") if os.access(p, os.X_OK)), None)
    if path is None:
        where = f" at {given}" if given else ""
        raise StartupError(f"nginx not found{where}: {INSTALL_HINT}")
    proc = subprocess.run([path, "-V"], capture_output=True, text=True, check=False)
    info = proc.stderr + proc.stdout
    if "--with-http_v2_module" not in info or "--without-http_grpc_module" in info:
        raise StartupError(f"{path} lacks HTTP/2 or gRPC proxying: {INSTALL_HINT}")
    return path


def metrics_address(listen: str, shards: list[str], s: str) -> str:
    """Worker ``s``'s --metrics-listen: the cluster's HOST:PORT with PORT + its rank (1, 2, ...);
    PORT 0 gives each a free port of its own."""
    host, _, port = listen.rpartition(":")
    base = int(port)
    return f"{host}:{base + shards.index(s) + 1 if base else 0}"


@dataclass
class ClusterConfig:
    workers: int
    host: str
    port: int
    data_dir: str
    worker_args: list[str]  # the flags every worker gets (durability, rate, components, ...)
    admin_token: str
    port_file: str | None = None
    unix_socket: str | None = None
    http_port: int | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    log_level: str = "info"
    # the home worker's alone (--house-bots, --house-capacity): one set of house bots, beside
    # the bot sessions and the lobby, which live there
    home_args: tuple[str, ...] = ()
    proxy_workers: int = 1
    nginx: str | None = None  # the nginx binary (None: found on PATH or in /usr/sbin)
    lease_owner: str = ""  # the workers' names in the store's leases get their shard appended
    # --metrics-listen HOST:PORT: worker K (1, 2, ...) serves its metrics on PORT+K, one scrape
    # target per worker (docs/organizer/metrics.md says why not the multiprocess mode)
    metrics_listen: str = ""
    # --rate / --burst: nginx holds them for the calls it spreads over the workers (see
    # spread_limit); 0 = no limit
    rate: float = 0.0
    burst: float = 1.0
    # a worker's --drain: the supervisor waits this long (and a margin) for a worker to stop
    drain_s: float = 5.0
    shards: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.shards = [f"w{k}" for k in range(1, self.workers + 1)]

    @property
    def dir(self) -> Path:
        return Path(self.data_dir).absolute() / "cluster"

    def socket(self, s: str) -> Path:
        return self.dir / f"{s}.sock"


def _q(value: str | Path) -> str:
    """A value quoted for nginx's configuration syntax."""
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: what nginx answers a call over the limit: the workers' refusal (RESOURCE_EXHAUSTED, its
#: reason trailer and rich status), as a gRPC trailers-only response
LIMITED = "rate limit exceeded; slow down"


def spread_limit(rate: float, burst: float) -> tuple[str, str]:
    """The rate limit of the calls nginx spreads over the workers, round robin: the admin's
    and the unauthenticated ones (a seat's or bot's call goes to the worker of its token's
    shard, whose own limit holds it). Each worker keeps buckets of its own, so a client
    spreading a burst over N workers would get N times the limit; nginx's limit_req, keyed by
    the client's address in one zone that all its processes share, holds it for the cluster
    as a whole; in front of several hosts (``referee proxy-config --rate``) likewise. Each
    referee behind it keys its own limits on the client address nginx writes in
    ``x-referee-client`` only when it trusts the proxy (``--trusted-proxy``). Returns the http-level and the location-level directives ("" when off)."""
    if rate <= 0:
        return "", ""
    status = errors.exhausted(LIMITED).trailing_metadata()
    details = next(v for k, v in status if k == "grpc-status-details-bin")
    assert isinstance(details, bytes)
    # nginx takes whole requests per minute; with nodelay it lets burst + 1 through at once
    http = f"""    map $referee_shard $referee_spread_client {{
        referee_any $binary_remote_addr;
        default "";
    }}
    limit_req_zone $referee_spread_client zone=referee_spread:10m rate={max(1, round(rate * 60))}r/m;
    limit_req_status 429;
"""
    where = f"""            limit_req zone=referee_spread burst={max(0, round(burst) - 1)} nodelay;
            error_page 429 = @referee_limited;
        }}
        location @referee_limited {{
            default_type application/grpc;
            add_header grpc-status {grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]} always;
            add_header grpc-message {_q(LIMITED)} always;
            add_header grpc-status-details-bin {base64.b64encode(details).decode()} always;
            add_header {errors.REASON_KEY} RESOURCE_EXHAUSTED always;
            return 204;
"""
    return http, where


def nginx_conf(cfg: ClusterConfig) -> str:
    """The proxy's whole configuration."""
    host = cfg.host if ":" not in cfg.host or cfg.host.startswith("[") else f"[{cfg.host}]"
    listens = [f"{host}:{cfg.port}"]
    if cfg.unix_socket:
        listens.append(f"unix:{Path(cfg.unix_socket).absolute()}")
    return proxy_conf(
        f"`referee serve --workers {cfg.workers}`; rewritten at every start", cfg.dir,
        # a worker's calls go to it, and to the others (``backup``) only while nothing listens
        # on its socket (it is restarting): they take its matches over, whose leases it
        # released as it drained. max_fails=0: tried first on every call, never marked down
        upstreams={s: [f"unix:{cfg.socket(s)} max_fails=0",
                       *(f"unix:{cfg.socket(o)} backup" for o in cfg.shards if o != s)]
                   for s in cfg.shards},
        anyone=[f"unix:{cfg.socket(s)} max_fails=1 fail_timeout=1s" for s in cfg.shards],
        listens=listens, tls_cert=cfg.tls_cert, tls_key=cfg.tls_key,
        proxy_workers=cfg.proxy_workers, limit=spread_limit(cfg.rate, cfg.burst))


def hosts_conf(hosts: dict[str, str], listen: str, folder: Path, *, tls_cert: str | None = None,
               tls_key: str | None = None, proxy_workers: int = 1, fail_s: int = 2,
               rate: float = 0.0, burst: float = 1.0) -> str:
    """The proxy of several hosts (``referee proxy-config``): ``hosts`` maps each shard to its
    referee's address. A shard's calls go to its host, and to the others (``backup``) while
    that one is down; the others take its matches over through the store's leases. nginx moves
    a call on to the next server only when it could not pass it on (``error timeout``: a gRPC
    call is a POST, which nginx never sends twice once a server may have received it)."""
    names = list(hosts)
    upstreams = {s: [f"{hosts[s]} max_fails=1 fail_timeout={fail_s}s",
                     *(f"{hosts[o]} backup" for o in names if o != s)] for s in names}
    return proxy_conf(
        "`referee proxy-config " + " ".join(f"--shard {s}={a}" for s, a in hosts.items())
        + f" --listen {listen}`", folder, upstreams=upstreams,
        anyone=[f"{hosts[s]} max_fails=1 fail_timeout={fail_s}s" for s in names],
        listens=[listen], tls_cert=tls_cert, tls_key=tls_key, proxy_workers=proxy_workers,
        extra=(f"    # a host that does not answer within {fail_s} s is down: the next one "
               "gets the call\n"
               f"    grpc_connect_timeout {fail_s}s;\n"
               "    grpc_next_upstream error timeout;\n"),
        limit=spread_limit(rate, burst))


def proxy_conf(written_by: str, folder: Path, *, upstreams: dict[str, list[str]],
               anyone: list[str], listens: list[str], tls_cert: str | None, tls_key: str | None,
               proxy_workers: int, extra: str = "",
               limit: tuple[str, str] = ("", "")) -> str:
    """An nginx configuration routing by the shard in ``authorization``: ``upstreams`` maps
    each shard to its ``server`` lines, ``anyone`` the servers of the calls any referee may
    take; pid, log and temporary files in ``folder``."""
    d = folder
    user = ""
    if os.geteuid() == 0:  # nginx would drop its workers to nobody, who cannot reach the sockets
        import pwd
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n"
    routes = "\n".join(f'        "~^[Bb]earer\\s+{s}\\." referee_{s};' for s in upstreams)
    blocks = "\n".join(
        f"    upstream referee_{s} {{\n"
        + "".join(f"        server {line};\n" for line in lines)
        + "        keepalive 64;\n    }"
        for s, lines in upstreams.items())
    servers = "".join(f"        server {line};\n" for line in anyone)
    tls = ""
    ssl = ""
    if tls_cert and tls_key:
        ssl = " ssl"
        tls = (f"        ssl_certificate {_q(Path(tls_cert).absolute())};\n"
               f"        ssl_certificate_key {_q(Path(tls_key).absolute())};\n")
    listen = "".join(f"        listen {a}{'' if a.startswith('unix:') else ssl} http2;\n"
                     for a in listens)
    home = "|".join(HOME_CALLS)
    limit_http, limit_here = limit
    return f"""# written by {written_by}
{user}daemon off;
master_process on;
worker_processes {proxy_workers};
pid {d / "nginx.pid"};
error_log {d / "nginx.log"} warn;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    client_body_temp_path {d / "tmp"};
    proxy_temp_path {d / "tmp"};
    fastcgi_temp_path {d / "tmp"};
    uwsgi_temp_path {d / "tmp"};
    scgi_temp_path {d / "tmp"};
    # the referees enforce the message limits; streams (Play, Watch, Session) may be quiet long
    client_max_body_size 0;
    client_body_timeout 1d;
    grpc_read_timeout 1d;
    grpc_send_timeout 1d;
    keepalive_timeout 1d;
    keepalive_requests 100000000;
    http2_max_concurrent_streams 100000;
{extra}    # the client's address for the referees' rate limits; a client's own header is replaced
    grpc_set_header x-referee-client $remote_addr;
    # only a referee says a call was handed on by another (referee.server.front.forward)
    grpc_set_header x-referee-forwarded "";
    map $http_authorization $referee_shard {{
        default referee_any;
{routes}
    }}
{limit_http}{blocks}
    upstream referee_any {{
{servers}        keepalive 64;
    }}
    server {{
{listen}{tls}        location ~ ^/referee\\.v1\\.Referee/({home})$ {{
            grpc_pass grpc://referee_{shard.HOME};
        }}
        location / {{
            grpc_pass grpc://$referee_shard;
{limit_here}        }}
    }}
}}
"""


def _pdeathsig() -> None:
    """In the child: get SIGTERM when the supervisor dies, whatever kills it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Child:
    """One supervised process: a worker or nginx."""

    def __init__(self, name: str, argv: list[str], log_path: Path, ready: Path | None = None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.ready = ready  # a worker writes its port file here when it serves
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.restarts = 0
        self.backoff = 0.2

    def start(self) -> None:
        if self.ready is not None:
            self.ready.unlink(missing_ok=True)
        with open(self.log_path, "ab") as out:
            # a session of its own: Ctrl-C at a terminal reaches the supervisor only, which
            # stops the children in order; nginx's group is swept after it dies
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_pdeathsig)
        self.started = time.monotonic()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def sweep(self) -> None:
        """Kill whatever is left of the child's process group (nginx's workers)."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def is_ready(self) -> bool:
        return self.ready is None or self.ready.exists()

    def tail(self, lines: int = 8) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class Cluster:
    def __init__(self, cfg: ClusterConfig, nginx: str):
        self.cfg = cfg
        self.nginx = nginx
        self.stop = threading.Event()
        self.roll = threading.Event()  # SIGHUP: a rolling restart of the workers
        self.rolled = 0
        d = cfg.dir
        peers = ",".join(f"{s}=unix:{cfg.socket(s)}" for s in cfg.shards)
        self.workers: list[Child] = []
        # each worker its own name in the store's leases, the same across its restarts: workers
        # sharing one name would release and renew each other's leases
        owner = cfg.lease_owner or f"{socket.gethostname()}:{Path(cfg.data_dir).absolute()}"
        for s in cfg.shards:
            # --advertise: a worker takes over any shard's match whose lease is free (a
            # draining worker releases each as it lets go of it; nginx sends the calls of a
            # worker that is down to the others, ``backup``) and hands the calls of a match
            # another worker took over to that one, as referees on several hosts do
            argv = [sys.executable, "-m", "referee.cli", "serve", "--shard", s, "--peers", peers,
                    "--lease-owner", f"{owner}:{s}", "--advertise", f"unix:{cfg.socket(s)}",
                    "--host", "127.0.0.1", "--port", "0", "--port-file", str(d / f"{s}.port"),
                    "--unix", str(cfg.socket(s)), "--data-dir", str(Path(cfg.data_dir).absolute()),
                    "--admin-token-file", str(d / "admin.token"), "--log-format", "json",
                    "--log-level", cfg.log_level, *cfg.worker_args]
            if cfg.metrics_listen:
                argv += ["--metrics-listen", metrics_address(cfg.metrics_listen, cfg.shards, s)]
            if s == shard.HOME and cfg.http_port is not None:  # the one web viewer
                argv += ["--web-host", cfg.host, "--http-port", str(cfg.http_port)]
            if s == shard.HOME:
                argv += list(cfg.home_args)
            self.workers.append(Child(s, argv, d / f"{s}.log", d / f"{s}.port"))
        self.proxy = Child("nginx", [nginx, "-e", str(d / "nginx.log"), "-p", str(d), "-c",
                                     str(d / "nginx.conf")], d / "nginx.log")

    # ------------------------------------------------------------------ start
    def prepare(self) -> None:
        d = self.cfg.dir
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o700)  # only this user (the proxy and the workers) reaches the sockets
        (d / "tmp").mkdir(exist_ok=True)
        for s in self.cfg.shards:
            if len(os.fsencode(str(self.cfg.socket(s)))) > UNIX_PATH_MAX:
                raise StartupError(f"--data-dir {self.cfg.data_dir}: the path of its worker "
                                   f"sockets ({self.cfg.socket(s)}) is longer than "
                                   f"{UNIX_PATH_MAX} bytes; use a shorter --data-dir")
        fd = os.open(d / "admin.token", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.cfg.admin_token + "\n")
        (d / "nginx.conf").write_text(nginx_conf(self.cfg), encoding="utf-8")
        check = subprocess.run([self.nginx, "-t", "-q", "-e", str(d / "nginx.log"), "-p",
                                str(d), "-c", str(d / "nginx.conf")],
                               capture_output=True, text=True, check=False)
        if check.returncode != 0:
            raise StartupError(f"nginx refused {d / 'nginx.conf'}: "
                               f"{(check.stderr or check.stdout).strip()}")

    def _wait_ready(self, children: Sequence[Child]) -> None:
        deadline = time.monotonic() + READY_S
        while not all(c.is_ready() for c in children):
            for c in children:
                if not c.alive():
                    raise StartupError(f"worker {c.name} exited during start-up "
                                       f"(its log, {c.log_path}):\n{c.tail()}")
            if self.stop.is_set():
                raise StartupError("stopped during start-up")
            if time.monotonic() > deadline:
                raise StartupError(f"the workers were not ready within {READY_S:.0f} s")
            time.sleep(0.05)

    def _wait_proxy(self) -> None:
        deadline = time.monotonic() + 30.0
        host = self.cfg.host.strip("[]")
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1" if host != "::" else "::1"
        while True:
            if not self.proxy.alive():
                raise StartupError(f"nginx exited during start-up ({self.proxy.log_path}):\n"
                                   f"{self.proxy.tail()}")
            try:
                with socket.create_connection((host, self.cfg.port), timeout=1.0):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise StartupError("nginx did not listen within 30 s") from None
                time.sleep(0.05)

    def start(self) -> None:
        self.prepare()
        # the home worker first: it creates or migrates the store's tables alone
        self.workers[0].start()
        self._wait_ready(self.workers[:1])
        for w in self.workers[1:]:
            w.start()
        self._wait_ready(self.workers)
        self.proxy.start()
        self._wait_proxy()
        _write_atomic(self.cfg.dir / PID_FILE, f"{os.getpid()}\n")
        _write_atomic(self.cfg.dir / ROLLED_FILE, "0\n")
        if self.cfg.port_file:
            _write_atomic(Path(self.cfg.port_file), f"{self.cfg.port}\n")
        log.info("cluster_serving", host=self.cfg.host, port=self.cfg.port,
                 workers=len(self.workers), folder=str(self.cfg.dir),
                 pids={c.name: c.pid for c in (*self.workers, self.proxy)})

    # ------------------------------------------------------------------ run
    def supervise(self) -> None:
        """Restart whatever dies until stopped."""
        while not self.stop.wait(0.1):
            if self.roll.is_set():
                self.roll.clear()
                self.rolling_restart()
            for child in (*self.workers, self.proxy):
                if child.alive() or self.stop.is_set():
                    continue
                code = child.proc.returncode if child.proc is not None else None
                if child is self.proxy:
                    child.sweep()  # its worker processes would hold the port
                quick = time.monotonic() - child.started < 5.0
                child.backoff = min(child.backoff * 2, 5.0) if quick else 0.2
                log.warning("cluster_child_died", child=child.name, code=code,
                            restart_in_s=child.backoff)
                if self.stop.wait(child.backoff):
                    break
                child.restarts += 1
                child.start()
                log.info("cluster_child_restarted", child=child.name, pid=child.pid,
                         restarts=child.restarts)

    def rolling_restart(self) -> bool:
        """Restart each worker in turn (see the module's docstring); False if stopped or a
        worker did not come back healthy (the supervisor's loop then restarts it as after a
        crash, and the next SIGHUP tries again)."""
        log.info("cluster_rolling", workers=[w.name for w in self.workers])
        for w in self.workers:
            if self.stop.is_set():
                return False
            log.info("cluster_worker_draining", child=w.name, pid=w.pid)
            if w.alive():
                assert w.proc is not None
                w.proc.terminate()  # the worker drains (referee.server.app.serve)
                try:
                    w.proc.wait(self.cfg.drain_s + 10.0)
                except subprocess.TimeoutExpired:
                    log.warning("cluster_child_killed", child=w.name)
                    w.proc.kill()
                    w.proc.wait()
            code = w.proc.returncode if w.proc is not None else None
            w.restarts += 1
            w.start()
            log.info("cluster_child_restarted", child=w.name, pid=w.pid, restarts=w.restarts,
                     rolling=True, code=code)
            try:
                self._wait_ready([w])
                self._wait_healthy(w)
            except StartupError as exc:
                log.error("cluster_rolling_failed", child=w.name, error=str(exc))
                return False
        self.rolled += 1
        _write_atomic(self.cfg.dir / ROLLED_FILE, f"{self.rolled}\n")
        log.info("cluster_rolled", rolled=self.rolled,
                 pids={w.name: w.pid for w in self.workers})
        return True

    def _wait_healthy(self, w: Child) -> None:
        """Until the worker answers SERVING on the gRPC health check over its Unix socket."""
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        deadline = time.monotonic() + READY_S
        with grpc.insecure_channel(f"unix:{self.cfg.socket(w.name)}") as ch:
            check = health_pb2_grpc.HealthStub(ch).Check  # type: ignore[attr-defined]
            while True:
                try:
                    if check(health_pb2.HealthCheckRequest(), timeout=5).status \
                            == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                if not w.alive():
                    raise StartupError(f"worker {w.name} exited during start-up "
                                       f"(its log, {w.log_path}):\n{w.tail()}")
                if self.stop.is_set() or time.monotonic() > deadline:
                    raise StartupError(f"worker {w.name} was not healthy within "
                                       f"{READY_S:.0f} s")
                time.sleep(0.1)

    def shutdown(self, grace: float = 10.0) -> None:
        """nginx first (no new calls), then the workers; SIGKILL what outlives ``grace``."""
        for group in ((self.proxy,), self.workers):
            for c in group:
                if c.alive():
                    assert c.proc is not None
                    c.proc.terminate()
            deadline = time.monotonic() + grace
            for c in group:
                if c.proc is None:
                    continue
                try:
                    c.proc.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    log.warning("cluster_child_killed", child=c.name)
                    c.proc.kill()
                    c.proc.wait()
        self.proxy.sweep()
        for path in (self.cfg.port_file, self.cfg.dir / PID_FILE):
            if path:
                with contextlib.suppress(OSError):
                    Path(path).unlink()
        log.info("cluster_stopped")


PID_FILE = "supervisor.pid"  # in the cluster folder: where SIGHUP goes
ROLLED_FILE = "rolled"  # the rolling restarts done since the supervisor started


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # readers never see a half-written file


def request_rolling_restart(data_dir: str, timeout_s: float = 600.0) -> int:
    """``referee restart --rolling``: SIGHUP to the supervisor of the cluster in ``data_dir``,
    then wait until it has restarted every worker; the count of rolling restarts done.
    StartupError if no cluster runs there or it did not finish within ``timeout_s``."""
    d = Path(data_dir).absolute() / "cluster"
    try:
        pid = int((d / PID_FILE).read_text(encoding="utf-8"))
        before = int((d / ROLLED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise StartupError(f"--data-dir {data_dir}: no cluster runs there (`referee serve "
                           f"--workers N` writes {d / PID_FILE})") from None
    try:
        os.kill(pid, signal.SIGHUP)
    except ProcessLookupError:
        raise StartupError(f"--data-dir {data_dir}: its supervisor (pid {pid}) is not "
                           "running") from None
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(OSError, ValueError):
            done = int((d / ROLLED_FILE).read_text(encoding="utf-8"))
            if done > before:
                return done
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            raise StartupError(f"the supervisor (pid {pid}) stopped during the rolling "
                               "restart") from None
        if time.monotonic() > deadline:
            raise StartupError(f"the rolling restart did not finish within {timeout_s:.0f} s "
                               f"(see {d}/w*.log)")
        time.sleep(0.2)


def free_port(host: str) -> int:
    """A port nginx can listen on (for --port 0)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host.strip("[]"), 0))
        return s.getsockname()[1]


def run(cfg: ClusterConfig) -> int:
    """Run the cluster until SIGTERM/SIGINT; StartupError for a configuration that cannot work."""
    nginx = find_nginx(cfg.nginx)
    check_tls(cfg.tls_cert, cfg.tls_key)
    check_data_dir(cfg.data_dir)
    if cfg.port == 0:
        cfg.port = free_port(cfg.host)
    check_port(cfg.host, cfg.port, "--port")
    if cfg.http_port:
        check_port(cfg.host, cfg.http_port, "--http-port")
    cluster = Cluster(cfg, nginx)
    stopping: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)
        cluster.stop.set()

    def on_hup(signum: int, frame: FrameType | None) -> None:
        cluster.roll.set()

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    old[signal.SIGHUP] = signal.signal(signal.SIGHUP, on_hup)
    try:
        try:
            cluster.start()
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise StartupError(f"cannot start: {exc}") from None
            raise
        cluster.supervise()
    finally:
        cluster.shutdown()
        for sig, handler in old.items():
            signal.signal(sig, handler)
    return 0
