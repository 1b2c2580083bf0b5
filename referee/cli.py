"""The `referee` command: run the server, verify game records, list the hosted games."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee import sheet_cli

#: gRPC core's experiments the referee's processes turn off (``GRPC_EXPERIMENTS``, which gRPC
#: reads once, when it is imported): its EventEngine listener and endpoints. With them, four
#: EventEngine threads poll the sockets and hand every read to the event loop: 5.0-5.3 context
#: switches and 0.36-0.39 ms of CPU per move on the bench's move phase; without them (the poller
#: the loop drives itself) 0.8 switches and 0.33 ms, and a cluster's workers rise less with
#: their number (docs/benchmarks.md, "Wake-ups"). An operator's own ``GRPC_EXPERIMENTS`` wins.
GRPC_EXPERIMENTS = "-event_engine_listener,-event_engine_for_all_other_endpoints"


def tune_grpc() -> bool:
    """Import gRPC with :data:`GRPC_EXPERIMENTS` in the environment, unless the environment
    has its own setting (an operator's ``GRPC_EXPERIMENTS`` wins, ``""`` for gRPC's defaults).
    The variable is taken out again once read, so the processes this one starts (a bot, a
    sandbox) inherit nothing; a cluster's workers are ``referee`` commands and set it
    themselves. False if gRPC was imported already (it keeps what it read then)."""
    if "grpc" in sys.modules:
        return False
    if "GRPC_EXPERIMENTS" in os.environ:
        return True
    os.environ["GRPC_EXPERIMENTS"] = GRPC_EXPERIMENTS
    try:
        import grpc  # noqa: F401 - gRPC reads its experiments when it is imported
    finally:
        del os.environ["GRPC_EXPERIMENTS"]
    return True


DURABILITY_HELP = (
    "SQLite durability. 'normal' (default): WAL with synchronous=NORMAL; every acknowledged "
    "move survives a crash or kill of the referee process, but the last few commits may be lost "
    "if the machine loses power or the OS crashes. 'full': synchronous=FULL; every group commit "
    "is fsynced before its moves are acknowledged (survives power loss), costing one fsync per "
    "batch of moves (moves arriving together from concurrent matches share one commit)."
)


def _port_arg(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, not {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535)")
    return port


def _ms_arg(text: str) -> int:
    try:
        ms = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected milliseconds, not {text!r}") from None
    if not 0 <= ms < 2**32:
        raise argparse.ArgumentTypeError(f"{ms} is not a number of milliseconds "
                                         "(0 to 4294967295)")
    return ms


def _workers_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of workers: {text!r}") from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError(f"--workers is 1 to 256, not {value}")
    return value


def _shard_arg(text: str) -> str:
    from referee.server.base import shard
    try:
        return shard.check(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _peers_arg(text: str) -> dict[str, str]:
    """``w1=unix:/path/w1.sock,w2=...``: every shard's address."""
    peers = {}
    for part in text.split(","):
        name, sep, address = part.partition("=")
        if not sep or not address:
            raise argparse.ArgumentTypeError(f"a peer is SHARD=ADDRESS, not {part!r}")
        peers[_shard_arg(name)] = address
    return peers


def _address_arg(text: str) -> str:
    """``HOST:PORT`` (``[V6]:PORT`` for an IPv6 address): where a referee or the proxy is
    reached."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or host in ("[]",) or (":" in host and not host.startswith("[")):
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (IPv6: [ADDRESS]:PORT), "
                                         f"not {text!r}")
    try:
        number = _port_arg(port)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    if number == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a fixed port is needed here, not 0")
    return text


def _advertise_arg(text: str) -> str:
    """``--advertise``: ``HOST:PORT``, or ``unix:/ABSOLUTE/PATH`` (what ``--workers`` gives each
    of its workers: the socket the others hand its matches' calls to)."""
    if text.startswith("unix:"):
        if not text[5:].startswith("/"):
            raise argparse.ArgumentTypeError(f"{text!r}: unix: needs an absolute path")
        return text
    return _address_arg(text)


def _ip_arg(text: str) -> str:
    """An IP address (``--trusted-proxy``): the peer address a proxy's calls come from."""
    import ipaddress
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an IP address such as 10.0.0.7 or ::1, "
                                         f"not {text!r}") from None


def _host_arg(text: str) -> tuple[str, str]:
    """``wK=HOST:PORT``: a shard and the address of the referee that runs it."""
    name, sep, address = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected SHARD=HOST:PORT (e.g. w1=10.0.0.1:50051), "
                                         f"not {text!r}")
    return _shard_arg(name), _address_arg(address)


#: flags a cluster's supervisor sets for each worker itself; the others are passed on as given
_CLUSTER_OWN = {"host", "port", "port_file", "unix_socket", "data_dir", "admin_token",
                "admin_token_file", "http_port", "tls_cert", "tls_key", "log_level",
                "log_format", "workers", "shard", "peers", "web_host", "command", "func", "nginx",
                "proxy_workers", "lease_owner", "advertise", "house_bots", "house_capacity",
                "metrics_listen"}


def _worker_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The flags of ``serve`` given other than by default, as each worker gets them."""
    serve = next(a for a in parser._subparsers._group_actions  # type: ignore[union-attr]
                 if isinstance(a, argparse._SubParsersAction)).choices["serve"]
    out: list[str] = []
    for action in serve._actions:
        if not action.option_strings or action.dest in _CLUSTER_OWN:
            continue
        value = getattr(args, action.dest, None)
        if value == action.default or value is None:
            continue
        flag = action.option_strings[-1]
        if action.dest == "components":
            for game, path in value:
                out += [flag, f"{game}={Path(path).absolute()}"]
        else:
            out += [flag, str(value)]
    return out


def _components_arg(text: str) -> tuple[str, str]:
    game, sep, path = text.partition("=")
    if not sep or not game or not path:
        raise argparse.ArgumentTypeError(f"expected GAME=FILE, not {text!r}")
    return game, path


class UsageError(Exception):
    """A flag whose value cannot be used: `referee COMMAND: <message>` on stderr, exit code 2."""


def _load_components(pairs: Sequence[tuple[str, str]]) -> dict:
    from referee.core import registry

    sheets = {}
    for game_name, path in pairs:
        try:
            game = registry.get(game_name)
        except KeyError as exc:
            raise UsageError(f"--components {game_name}=...: {exc.args[0]}") from None
        try:
            sheet = game.load_components(path)
        except (ValueError, OSError) as exc:
            raise UsageError(f"--components {game_name}={path}: {exc}") from None
        sheets[(game.spec.name, game.sheet_variant_of(sheet))] = sheet
    return sheets


def build_parser() -> argparse.ArgumentParser:
    from referee.server.house import DEFAULT_HOUSE_BOTS

    p = argparse.ArgumentParser(
        prog="referee",
        description="A gRPC rules-referee for bot competitions on euro board games.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `referee COMMAND --help` for the options of a command.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    s = sub.add_parser(
        "serve",
        help="run the referee gRPC server",
        description=(
            "Run the referee gRPC server (service referee.v1.Referee, plus gRPC health checking "
            "and server reflection). Matches are stored in <data-dir>/referee.sqlite3 (SQLite, "
            "WAL); unfinished matches are resumed on start and bots reconnect with their seat "
            "tokens. Finished matches also write <data-dir>/records/<match_id>.json. "
            "Logs go to stderr (see --log-format). A setting that cannot work (a port in use, "
            "a missing TLS file, an unusable --data-dir or --unix path) is reported in one "
            "line before anything is created, with exit code 2."
        ),
    )
    s.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; use 0.0.0.0 "
                        "with care, preferably with TLS)")
    s.add_argument("--port", type=_port_arg, default=50051,
                   help="TCP port (default 50051; 0 picks a free port, see --port-file)")
    s.add_argument("--port-file", metavar="PATH",
                   help="write the bound port to PATH once the server is ready to serve")
    s.add_argument("--unix", metavar="PATH", dest="unix_socket",
                   help="also listen on the Unix domain socket PATH (clients use the address "
                        "unix:PATH); sandboxed bots reach the referee this way, without network")
    s.add_argument("--data-dir", default="./data",
                   help="directory for the SQLite store, records and admin.token (default ./data)")
    tok = s.add_mutually_exclusive_group()
    tok.add_argument("--admin-token-file", metavar="PATH",
                     help="read the admin token for CreateMatch from PATH (keep it mode 0600); "
                          "else $REFEREE_ADMIN_TOKEN, else generated and written to "
                          "<data-dir>/admin.token, mode 0600")
    tok.add_argument("--admin-token", metavar="T",
                     help="the admin token itself: unsafe on a shared machine (any user sees it "
                          "in `ps`), prefer --admin-token-file")
    s.add_argument("--components", metavar="GAME=FILE", type=_components_arg, action="append",
                   default=[],
                   help="use an organizer's verified component sheet for GAME (repeatable): it "
                        "replaces the default sheet of its own variant (e.g. Goa's edition, "
                        "named inside the sheet); ListGames reports its name, hash and "
                        "provenance counts")
    s.add_argument("--max-message-bytes", type=int, default=64 * 1024, metavar="N",
                   help="largest inbound message accepted (default 65536); larger ones get "
                        "RESOURCE_EXHAUSTED")
    s.add_argument("--durability", choices=("normal", "full"), default="normal",
                   help=DURABILITY_HELP)
    s.add_argument("--store", default="", metavar="URL",
                   help="where matches, bots and leagues are kept: by default the embedded "
                        "SQLite store <data-dir>/referee.sqlite3; postgresql://HOST/DB?... a "
                        "PostgreSQL database that referees on several machines share (docs: "
                        "organizer/postgresql.md). Never with a password: any user sees a "
                        "command line; use $PGPASSWORD, a PGPASSFILE, --store-file or "
                        "$REFEREE_STORE_URL")
    s.add_argument("--store-file", default="", metavar="PATH",
                   help="read the store URL (which may hold a password) from this file")
    s.add_argument("--lease-owner", default="", metavar="NAME",
                   help="this referee's name in the store's leases (default HOST:DATA-DIR, "
                        "the same across restarts): referees sharing one store need distinct "
                        "names")
    s.add_argument("--lease-ttl", type=float, default=5.0, metavar="SECONDS",
                   help="how long a match's lease lasts unrenewed (default 5): after a crash, "
                        "another referee on the store takes the match over this much later")
    s.add_argument("--drain", type=float, default=5.0, metavar="SECONDS",
                   help="on SIGTERM the referee drains before it stops: it refuses new matches, "
                        "streams and moves (UNAVAILABLE, reason DRAINING; clients call again), "
                        "waits at most this long for the moves being committed, ends every "
                        "stream and releases its matches' leases (default 5)")
    s.add_argument("--rate", type=float, default=2000.0, metavar="PER_SECOND",
                   help="per-token (or per-peer without a token) rate limit in requests or "
                        "stream messages per second (default 2000; 0 disables)")
    s.add_argument("--burst", type=float, default=4000.0, metavar="N",
                   help="token-bucket burst size for --rate (default 4000)")
    s.add_argument("--keep-finished", type=float, default=300.0, metavar="SECONDS",
                   help="how long a finished match stays in memory (default 300): until then "
                        "a reconnecting seat gets its GameOver and a spectator its final view; "
                        "afterwards GetRecord serves it from the store and its seats get "
                        "MATCH_OVER, so memory does not grow with the matches played")
    s.add_argument("--join-ms", type=_ms_arg, default=30_000, metavar="MS",
                   help="how long a match's first decision waits for every seat to join "
                        "before its clock starts anyway, for a time policy whose join_ms is 0 "
                        "(default 30000; 0: the clock starts when the match is created)")
    lo = s.add_argument_group("the lobby: seeks and challenges without the admin token "
                              "(docs/bot/lobby.md)")
    lo.add_argument("--house-bots", nargs="?", const=",".join(DEFAULT_HOUSE_BOTS), default="",
                    metavar="BOT,BOT",
                    help="run the SDK's reference bots as house bots that accept challenges "
                         "(house-NAME), child processes connected through Sessions; with no "
                         f"list: {', '.join(DEFAULT_HOUSE_BOTS)} (default: none)")
    lo.add_argument("--house-capacity", type=int, default=8, metavar="N",
                    help="matches each house bot plays at once (default 8)")
    lo.add_argument("--seek-ttl", type=float, default=600.0, metavar="SECONDS",
                    help="an open seek expires after this long (default 600)")
    lo.add_argument("--seeks-per-client", type=int, default=3, metavar="N",
                    help="open seeks one player (lobby token or bot) may hold (default 3)")
    lo.add_argument("--seeks-per-address", type=int, default=10, metavar="N",
                    help="open seeks of one client address (default 10)")
    lo.add_argument("--max-seeks", type=int, default=1000, metavar="N",
                    help="open seeks on this referee (default 1000)")
    lo.add_argument("--seek-rate", type=float, default=0.2, metavar="PER_S",
                    help="seeks and challenges one address may open per second, in bursts of "
                         "5 (default 0.2); more are refused with RESOURCE_EXHAUSTED")
    up = s.add_argument_group("hosted league bots' uploads (UploadBot)")
    up.add_argument("--upload-max-bytes", type=int, default=16 * 1024 * 1024, metavar="N",
                    help="largest archive received (default 16 MiB)")
    up.add_argument("--upload-max-unpacked", type=int, default=64 * 1024 * 1024, metavar="N",
                    help="largest total of its files once unpacked, counted while unpacking "
                         "(default 64 MiB)")
    up.add_argument("--upload-max-files", type=int, default=1000, metavar="N",
                    help="most files and folders in an archive (default 1000)")
    up.add_argument("--upload-max-path", type=int, default=200, metavar="N",
                    help="longest path in an archive, in characters (default 200)")
    up.add_argument("--upload-versions-per-day", type=int, default=5, metavar="N",
                    help="most versions one bot may upload in any 24 hours (default 5; 0: no "
                         "limit); more are refused with RESOURCE_EXHAUSTED, reason UPLOAD_QUOTA")
    up.add_argument("--upload-max-stored-bytes", type=int, default=50 * 1024 * 1024,
                    metavar="N",
                    help="most bytes of stored archives one bot may keep, after pruning "
                         "(default 50 MiB; 0: no limit); an upload past it is refused "
                         "(UPLOAD_QUOTA)")
    up.add_argument("--upload-keep-versions", type=int, default=5, metavar="N",
                    help="versions of a bot whose archives are kept: older ones are pruned, "
                         "except the current ready one, pending ones and any a running match "
                         "plays (default 5; 0: keep all)")
    s.add_argument("--max-connection-idle", type=float, default=300.0, metavar="SECONDS",
                   help="close a connection that has had no call for this long (default 300; "
                        "0 never): a peer that only opens connections cannot hold them, and a "
                        "gRPC client simply reconnects on its next call")
    s.add_argument("--max-connection-age", type=float, default=0.0, metavar="SECONDS",
                   help="ask clients to reconnect once a connection is this old (default 0: no "
                        "limit); calls in progress, such as a Play stream, are not cut")
    s.add_argument("--keepalive-time", type=float, default=60.0, metavar="SECONDS",
                   help="ping a connection after this long without traffic, to find peers "
                        "that vanished mid-stream (default 60; 0 disables)")
    s.add_argument("--keepalive-timeout", type=float, default=20.0, metavar="SECONDS",
                   help="close the connection when a keepalive ping is not answered within "
                        "this time (default 20)")
    s.add_argument("--max-pending-calls", type=int, default=20_000, metavar="N",
                   help="calls that may wait to be started at once (default 20000; gRPC's own "
                        "1000 refused some of 4000 Play streams opened together); beyond it new "
                        "calls fail and clients retry them")
    s.add_argument("--max-call-wait", type=float, default=3600.0, metavar="SECONDS",
                   help="how long an arrived call may wait to be started (default 3600): a "
                        "burst of Play streams waits while the event loop is busy with moves "
                        "(gRPC's own 30 s dropped the latecomers of 1,200 streams opened at once "
                        "and their matches stalled)")
    s.add_argument("--http-port", type=_port_arg, default=None, metavar="PORT",
                   help="also serve the web viewer on this port (same host as gRPC, default "
                        "127.0.0.1; off by default; 0 picks a free port): the match list, live "
                        "boards and replays, public views only, no token needed")
    s.add_argument("--metrics-listen", default="", metavar="HOST:PORT",
                   help="serve Prometheus metrics on this address of their own (off by default; "
                        "PORT 0 picks a free one); with --workers N, worker K listens on PORT+K "
                        "(one scrape target each). The web port's /metrics serves them to the "
                        "admin token too (docs/organizer/metrics.md)")
    s.add_argument("--otel", action="store_true",
                   help="trace every gRPC call with OpenTelemetry's gRPC instrumentation (off by "
                        "default; needs the otel extra; the exporter is the OpenTelemetry SDK's, "
                        "configured by its OTEL_* variables: docs/organizer/metrics.md)")
    s.add_argument("--tls-cert", metavar="PEM",
                   help="serve gRPC over TLS with this PEM certificate chain (needs --tls-key)")
    s.add_argument("--tls-key", metavar="PEM",
                   help="the PEM private key (unencrypted) of --tls-cert")
    cl = s.add_argument_group("every core: a cluster of referees behind nginx "
                              "(docs/organizer/cluster.md)")
    cl.add_argument("--workers", type=_workers_arg, default=1, metavar="N",
                    help="run N referee processes (default 1: this one serves alone) on the "
                         "same --data-dir behind nginx on --host/--port, which routes each "
                         "match's calls to the process that owns it; each is restarted if it "
                         "dies; logs in <data-dir>/cluster/. Needs nginx (Debian: nginx-light)")
    cl.add_argument("--nginx", metavar="PATH", default=None,
                    help="the nginx binary the cluster runs (default: nginx on PATH, else "
                         "/usr/sbin/nginx)")
    cl.add_argument("--proxy-workers", type=int, default=1, metavar="N",
                    help="nginx worker processes (default 1)")
    cl.add_argument("--shard", type=_shard_arg, default=None, metavar="wK",
                    help="(set by --workers for each worker) serve as worker K: match ids "
                         "wK-…, tokens wK.…, resume only this shard's matches")
    cl.add_argument("--peers", type=_peers_arg, default={}, metavar="wK=ADDRESS,...",
                    help="(set by --workers) every worker's gRPC address, to hand calls for "
                         "other shards' matches to their owner; with --advertise, only w1's is "
                         "used: the home host, to which CreateMatch calls binding bots go")
    cl.add_argument("--web-host", default=None, metavar="HOST",
                    help="(set by --workers) the web viewer's address when not --host")
    mh = s.add_argument_group("many hosts: referees on several machines sharing a PostgreSQL "
                              "store behind one proxy (docs/organizer/many-hosts.md)")
    mh.add_argument("--advertise", type=_advertise_arg, default=None, metavar="HOST:PORT",
                    help="the address the other referees reach this one at (written in the "
                         "leases of its matches): with it this referee is one of several hosts "
                         "(give it --shard wK, --store, --lease-owner): it hands each call for "
                         "a match another live referee runs to that one, and takes over any "
                         "match whose lease expired (a dead host's). Not with --workers (which "
                         "gives each worker its socket, unix:PATH)")
    s.add_argument("--trusted-proxy", dest="trusted_proxies", action="append", default=[],
                   type=_ip_arg, metavar="IP", help="a host whose calls name their client: gRPC "
                   "calls in the x-referee-client header nginx writes (the proxy's address, and "
                   "the other referees' since they hand calls on), web requests (--http-port) "
                   "in X-Forwarded-For (an HTTP reverse proxy's address): rate limits and the "
                   "registration budget then key on the real client instead of the proxy. Once "
                   "per address; by default no peer is trusted, and a header from any other "
                   "peer is ignored, since a client could forge it")
    s.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info",
                   help="log level (default info; debug logs every move)")
    s.add_argument("--log-format", choices=("auto", "json", "console"), default="auto",
                   help="how log lines look on stderr: 'json' one JSON object a line (for "
                        "tools), 'console' human-readable lines, 'auto' (default) console "
                        "when stderr is a terminal and JSON otherwise (a pipe or a file)")

    r = sub.add_parser("replay", help="work with game records",
                       description="Work with game records written by the referee.")
    rsub = r.add_subparsers(dest="replay_command", metavar="ACTION", required=True)
    v = rsub.add_parser(
        "verify",
        help="check a record's signature and seed commitment, and re-simulate it",
        description=(
            "Check a game record (JSON from GetRecord or <data-dir>/records/): its Ed25519 "
            "signature over every field (against the referee's public key: --public-key, "
            "--referee, --data-dir, or the data directory the file is in), its seed commitment "
            "(the revealed salt and seed hash to what the seats' Welcome carried), a bot's "
            "receipts if given, and its replay from the seed with the game's rules (the initial "
            "state hash, every per-move state hash and the result). One line per check; "
            "`OK <n> moves ...` and exit 0 when all pass, else `FAIL <checks>` and exit 1. A "
            "record from before signed records says UNSIGNED and is checked by its replay."
        ),
    )
    v.add_argument("file", metavar="FILE", help="the record JSON file ('-' for stdin)")
    v.add_argument("--components", metavar="FILE",
                   help="the organizer's component sheet the match was played with, if it was "
                        "not the game's default")
    v.add_argument("--public-key", metavar="FILE",
                   help="the referee's public key (the PEM, raw, hex or base64 key of "
                        "/api/signing-key, or a data directory's record-signing.key)")
    v.add_argument("--referee", metavar="HOST:PORT",
                   help="fetch the public key from this referee (GetSigningKey, plain gRPC)")
    v.add_argument("--data-dir", metavar="DIR",
                   help="check the signature with this data directory's record-signing.key "
                        "(default: the data directory the record file is in, if it is)")
    v.add_argument("--require-signature", action="store_true",
                   help="fail on an unsigned record (default: an unsigned record, from a "
                        "referee before signed records, is checked by its replay alone)")
    v.add_argument("--receipts", metavar="FILE",
                   help="a bot's receipts (the SDK's Receipts JSON): check the record against "
                        "the state hashes the referee acknowledged to it")

    h = rsub.add_parser(
        "html",
        help="write a static replay page per record (works from the file alone)",
        description=(
            "Re-simulate each game record and write <out-dir>/<record name>.html: the match's "
            "board at every state version with a move scrubber, its events and final scores, "
            "public information only, with everything inlined (no server or network needed). "
            "Prints `OK <page>` or `FAIL <record>: <reason>` per record; exits 1 if any failed."
        ),
    )
    h.add_argument("files", metavar="FILE", nargs="+", help="record JSON files")
    h.add_argument("--out-dir", metavar="DIR", default=".", help="where the pages go (default .)")
    h.add_argument("--back-href", metavar="URL",
                   help="link of the page's title (e.g. ../index.html of a report)")
    h.add_argument("--components", metavar="FILE",
                   help="the organizer's component sheet the matches were played with, if not "
                        "the game's default")

    sim = sub.add_parser("sim", help="the forward model for bots in other languages",
                         description="The referee's engines as a local service (docs: "
                                     "Researchers, Forward model).")
    simsub = sim.add_subparsers(dest="sim_command", metavar="ACTION", required=True)
    ss = simsub.add_parser(
        "serve",
        help="serve the Simulator gRPC service (proto/referee/v1/sim.proto)",
        description=(
            "Serve the Simulator (referee.v1.Simulator): create a game state from a set-up, a "
            "recorded position or seats' views (the game's sampler), list its legal moves, "
            "apply, clone, roll out, read the result and the views, with the referee's own "
            "rules. No token: it holds no match, only its clients' states, under handles. "
            "Prints `simulator listening on HOST:PORT` once ready; stops on Ctrl-C or SIGTERM."
        ),
    )
    ss.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default 127.0.0.1: this machine only)")
    ss.add_argument("--port", type=_port_arg, default=50052,
                    help="TCP port (default 50052; 0 picks a free port)")
    ss.add_argument("--port-file", metavar="PATH",
                    help="write the bound port to PATH once the server is ready to serve")
    ss.add_argument("--max-handles", type=int, default=4096, metavar="N",
                    help="states held at once (default 4096); beyond it New, FromViews and "
                         "Clone answer RESOURCE_EXHAUSTED until a client releases some")
    ss.add_argument("--idle-s", type=float, default=600.0, metavar="SECONDS",
                    help="drop a state unused for this long (default 600)")
    ss.add_argument("--workers", type=int, default=4, metavar="N",
                    help="calls served at once (default 4)")

    g = sub.add_parser(
        "games",
        help="list the games this referee hosts (no server needed)",
        description="Print what ListGames would return: each game's seats, options and "
                    "component sheet with the provenance counts of its values.",
    )
    g.add_argument("--components", metavar="GAME=FILE", type=_components_arg, action="append",
                   default=[], help="show an organizer's component sheet instead of the default")
    g.add_argument("--json", action="store_true", help="print JSON instead of a table")
    px = sub.add_parser(
        "proxy-config",
        help="print the nginx configuration of referees on several hosts",
        description=(
            "Print the nginx configuration that puts referees on several hosts behind one "
            "address (docs/organizer/many-hosts.md): each referee runs `referee serve --shard wK "
            "--advertise HOST:PORT --store postgresql://...`; nginx sends every call of a seat "
            "or bot token wK.… to host wK, bot and league calls to w1, anything else to any "
            "host, and a down host's calls to the others, which take its matches over. Run it "
            "as `nginx -c FILE` (Debian: nginx-light). Creates --dir (nginx's pid, log and "
            "temporary files) if missing; writes nothing else."
        ),
    )
    px.add_argument("--shard", dest="hosts", type=_host_arg, action="append", default=[],
                    metavar="wK=HOST:PORT", required=True,
                    help="a referee: its shard and its address (its --advertise); once per "
                         "host, w1 among them (it keeps the bots and leagues)")
    px.add_argument("--listen", type=_address_arg, default="0.0.0.0:50051", metavar="HOST:PORT",
                    help="where nginx listens for bots and clients (default 0.0.0.0:50051)")
    px.add_argument("--dir", default="./referee-proxy", metavar="DIR",
                    help="nginx's pid, error log and temporary files (default ./referee-proxy)")
    px.add_argument("--down-after", type=int, default=2, metavar="SECONDS",
                    help="a host that does not accept a connection within this long is down, "
                         "and is tried again this much later (default 2)")
    px.add_argument("--proxy-workers", type=int, default=1, metavar="N",
                    help="nginx worker processes (default 1)")
    px.add_argument("--rate", type=float, default=0.0, metavar="PER_SECOND",
                    help="nginx's own limit, per client address, on the calls it spreads over "
                         "the hosts (admin and unauthenticated), so that spreading a burst over "
                         "N hosts gains nothing (default 0: none; each referee's --rate still "
                         "holds)")
    px.add_argument("--burst", type=float, default=1.0, metavar="N",
                    help="the burst size of --rate (default 1)")
    px.add_argument("--tls-cert", metavar="PEM", help="serve clients over TLS with this "
                    "certificate chain (needs --tls-key)")
    px.add_argument("--tls-key", metavar="PEM", help="the PEM private key of --tls-cert")
    rs = sub.add_parser(
        "restart",
        help="restart the workers of a running `referee serve --workers N`",
        description=(
            "With --rolling: restart the workers of the cluster serving --data-dir one at a "
            "time (w1 first) by sending SIGHUP to its supervisor (the same as `kill -HUP "
            "$(cat DATA_DIR/cluster/supervisor.pid)`), and wait until it is done. Each worker "
            "drains (it refuses new matches, streams and moves with UNAVAILABLE, lets the "
            "moves being committed commit and releases its leases), is started again, resumes "
            "its matches and answers SERVING on its health check before the next one stops; "
            "nginx and the other workers keep serving (docs/organizer/cluster.md)."),
    )
    rs.add_argument("--rolling", action="store_true", required=True,
                    help="one worker at a time (the only kind of restart there is)")
    rs.add_argument("--data-dir", default="./data", metavar="DIR",
                    help="the cluster's --data-dir (default ./data, as `referee serve`)")
    rs.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                    help="give up waiting after this long (default 600; the restart goes on)")
    sheet_cli.add_parser(sub)
    for name, text in (
            ("backup", ("Copy a referee's data into a new directory DEST, safely while it "
                        "runs: the store (SQLite's online backup of <data-dir>/referee.sqlite3, "
                        "or pg_dump's custom format of a PostgreSQL store), the records of its "
                        "finished matches, the other files of the data directory (its keys, "
                        "its bots), and manifest.json (when, which store and schema version, "
                        "the SHA-256 of every file). See docs/organizer/backups.md.")),
            ("restore", ("Put the backup SRC into a new --data-dir (and, for a PostgreSQL "
                        "backup, an empty database: --store-file or $REFEREE_STORE_URL), after "
                        "checking every file against the manifest; then start `referee serve` "
                        "on it, which resumes the unfinished matches. A data directory that "
                        "already holds a store, or a database with tables, is refused."))):
        b = sub.add_parser(name, description=text, help={
            "backup": "copy a referee's store, records and keys while it runs",
            "restore": "put a backup into a new data directory (or empty database)"}[name])
        b.add_argument("path", metavar="DEST" if name == "backup" else "SRC",
                       help="the backup directory (backup: new or empty)")
        b.add_argument("--data-dir", default="./data",
                       help="the referee's data directory (default ./data)")
        b.add_argument("--store", default="", metavar="URL",
                       help="the PostgreSQL store (postgresql://...; no password here: use "
                            "$PGPASSWORD, a PGPASSFILE, --store-file or $REFEREE_STORE_URL)")
        b.add_argument("--store-file", default="", metavar="PATH",
                       help="read the store URL from PATH")
        b.add_argument("--quiet", action="store_true", help="print only the summary")
    return p


def cmd_restart(args: argparse.Namespace) -> int:
    from referee.server.cluster import request_rolling_restart
    from referee.server.startup import StartupError

    try:
        done = request_rolling_restart(args.data_dir, args.timeout)
    except StartupError as exc:
        print(f"referee restart: {exc}", file=sys.stderr)
        return 1
    print(f"rolling restart done (rolling restarts since the cluster started: {done})")
    return 0


def cmd_proxy_config(args: argparse.Namespace) -> int:
    import os

    from referee.server.base import shard
    from referee.server.cluster import hosts_conf
    from referee.server.startup import StartupError, check_tls

    hosts: dict[str, str] = {}
    for name, address in args.hosts:
        if name in hosts:
            raise UsageError(f"--shard {name} is given twice")
        if address in hosts.values():
            raise UsageError(f"--shard {name}={address}: that address is already shard "
                             f"{next(s for s, a in hosts.items() if a == address)}")
        hosts[name] = address
    if shard.HOME not in hosts:
        raise UsageError(f"no --shard {shard.HOME}=HOST:PORT: the home shard {shard.HOME} keeps "
                         "the bots and leagues, so one host must run it")
    if args.down_after < 1 or args.proxy_workers < 1:
        raise UsageError("--down-after and --proxy-workers are at least 1")
    if args.rate < 0 or args.burst < 1:
        raise UsageError("--rate is at least 0 and --burst at least 1")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together")
    try:
        check_tls(args.tls_cert, args.tls_key)
    except StartupError as exc:
        raise UsageError(str(exc)) from None
    folder = Path(args.dir).absolute()
    try:
        (folder / "tmp").mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
    except OSError as exc:
        raise UsageError(f"--dir {args.dir}: {exc}") from None
    sys.stdout.write(hosts_conf(hosts, args.listen, folder, tls_cert=args.tls_cert,
                                tls_key=args.tls_key, proxy_workers=args.proxy_workers,
                                fail_s=args.down_after, rate=args.rate, burst=args.burst))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from referee.server import ServerConfig, serve
    from referee.server.base import logs
    from referee.server.leagues.archive import Limits
    from referee.server.play.lobby import LobbyLimits
    from referee.server.startup import PRIVATE_UMASK, StartupError
    from referee.server.store.opening import StoreUrlError, store_url

    # everything the referee (and a cluster's workers and nginx, its children) writes from
    # here on is its user's alone: the explicit modes where files are made, and this for the
    # files libraries make (issue 31, item 6)
    os.umask(PRIVATE_UMASK)
    if args.admin_token_file:  # before logging is set up: a refusal is this one line
        try:
            args.admin_token = Path(args.admin_token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            print(f"referee serve: --admin-token-file: {exc}", file=sys.stderr)
            return 2
        if not args.admin_token:
            print(f"referee serve: --admin-token-file: {args.admin_token_file} is empty",
                  file=sys.stderr)
            return 2
    if not args.drain >= 0:
        print("referee serve: --drain must be 0 seconds or more", file=sys.stderr)
        return 2
    if not args.lease_ttl > 0:
        print("referee serve: --lease-ttl must be more than 0 seconds", file=sys.stderr)
        return 2
    try:
        url = store_url(args.store, args.store_file)
    except StoreUrlError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    if args.advertise and args.workers > 1:
        print("referee serve: --advertise is for one referee per host, not with --workers",
              file=sys.stderr)
        return 2
    logs.configure(args.log_level, args.log_format)
    if args.workers > 1:
        return _serve_cluster(args)
    config = ServerConfig(
        store_url=url, lease_owner=args.lease_owner, lease_ttl_s=args.lease_ttl,
        drain_s=args.drain, host=args.host, port=args.port, port_file=args.port_file, data_dir=args.data_dir,
        unix_socket=args.unix_socket,
        admin_token=args.admin_token, components=_load_components(args.components),
        max_message_bytes=args.max_message_bytes, durability=args.durability,
        rate=args.rate, burst=args.burst, tls_cert=args.tls_cert, tls_key=args.tls_key,
        keep_finished_s=args.keep_finished, max_connection_idle_s=args.max_connection_idle,
        max_connection_age_s=args.max_connection_age, keepalive_time_s=args.keepalive_time,
        keepalive_timeout_s=args.keepalive_timeout, max_pending_calls=args.max_pending_calls,
        max_call_wait_s=args.max_call_wait,
        http_port=args.http_port, join_ms=args.join_ms, shard=args.shard, peers=args.peers,
        web_host=args.web_host, advertise=args.advertise or "", metrics_listen=args.metrics_listen,
        otel=args.otel,
        trusted_proxies=tuple(args.trusted_proxies),
        house_bots=tuple(b for b in args.house_bots.split(",") if b),
        house_capacity=args.house_capacity,
        lobby=LobbyLimits(ttl_s=args.seek_ttl, per_client=args.seeks_per_client,
                          per_address=args.seeks_per_address, total=args.max_seeks,
                          open_rate=args.seek_rate),
        upload_limits=Limits(max_received=args.upload_max_bytes,
                             max_unpacked=args.upload_max_unpacked,
                             max_files=args.upload_max_files, max_path=args.upload_max_path,
                             versions_per_day=args.upload_versions_per_day,
                             max_stored_bytes=args.upload_max_stored_bytes,
                             keep_versions=args.upload_keep_versions),
    )
    try:
        asyncio.run(serve(config))
    except StartupError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


def _serve_cluster(args: argparse.Namespace) -> int:
    from referee.server import ServerConfig
    from referee.server.app import resolve_admin_token
    from referee.server.cluster import ClusterConfig, run
    from referee.server.startup import StartupError, check_data_dir, make_private

    try:
        check_data_dir(args.data_dir)
        data = Path(args.data_dir)
        make_private(data)
        admin = resolve_admin_token(ServerConfig(admin_token=args.admin_token), data)
        cfg = ClusterConfig(
            workers=args.workers, host=args.host, port=args.port, data_dir=args.data_dir,
            worker_args=_worker_args(build_parser(), args), admin_token=admin,
            port_file=args.port_file, unix_socket=args.unix_socket, http_port=args.http_port,
            tls_cert=args.tls_cert, tls_key=args.tls_key, log_level=args.log_level,
            nginx=args.nginx, proxy_workers=args.proxy_workers, lease_owner=args.lease_owner,
            rate=args.rate, burst=args.burst, metrics_listen=args.metrics_listen,
            drain_s=args.drain,
            home_args=(("--house-bots", args.house_bots, "--house-capacity",
                        str(args.house_capacity)) if args.house_bots else ()),
        )
        return run(cfg)
    except StartupError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2


def cmd_sim_serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from referee.sim.service import serve as sim_serve

    if args.max_handles < 1 or args.idle_s <= 0 or args.workers < 1:
        print("referee sim serve: --max-handles, --idle-s and --workers must be positive",
              file=sys.stderr)
        return 2
    try:
        server, port = sim_serve(args.host, args.port, max_handles=args.max_handles,
                                 idle_s=args.idle_s, workers=args.workers)
    except (OSError, RuntimeError) as exc:
        print(f"referee sim serve: {exc}", file=sys.stderr)
        return 2
    if args.port_file:
        tmp = Path(args.port_file + ".tmp")
        tmp.write_text(f"{port}\n", encoding="utf-8")
        tmp.replace(args.port_file)
    print(f"simulator listening on {args.host}:{port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    server.stop(1).wait()
    return 0


def _signing_key(args: argparse.Namespace, record_file: str) -> tuple[bytes | None, str]:
    """The public key to check a signature with, and where it came from: --public-key FILE,
    --referee HOST:PORT (GetSigningKey), --data-dir DIR, else the data directory the record
    file sits in (``<data-dir>/records/<match>.json``). (None, why) when there is none; raises
    OSError/ValueError for a key that cannot be read."""
    from referee.server.base import signing
    if args.public_key:
        with open(args.public_key, "rb") as f:
            return signing.public_key_from(f.read()), args.public_key
    if args.referee:
        return signing.fetch_public_key(args.referee), f"the referee at {args.referee}"
    data_dir = Path(args.data_dir) if args.data_dir else None
    if data_dir is None and record_file != "-":
        here = Path(record_file).resolve().parent
        if here.name == "records" and (here.parent / signing.KEY_FILE).exists():
            data_dir = here.parent
    if data_dir is None:
        return None, ("no key to check it with: pass --public-key FILE, --referee HOST:PORT "
                      "or --data-dir DIR")
    path = data_dir / signing.KEY_FILE
    with open(path, "rb") as f:
        return signing.public_key_from(f.read()), str(path)


def cmd_replay_verify(args: argparse.Namespace) -> int:
    """Every check of a record: first the verdict, ``OK <n> moves ...`` when all passed, else
    ``FAIL`` naming the failed checks; then one indented line per check (``<check>:
    OK|FAIL|MISMATCH|UNSIGNED|NONE ...``) and notes."""
    from referee.core import provenance, registry
    from referee.core.match import ReplayError, replay
    from referee.server.base import signing
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        record = json.loads(text)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        print(f"FAIL cannot read record: {exc}")
        return 1
    if not isinstance(record, dict):
        print("FAIL a record is a JSON object")
        return 1
    try:
        game = registry.get(str(record.get("game")))
    except KeyError as exc:
        print(f"FAIL {exc.args[0]}")
        return 1
    sheet = None
    if args.components:
        try:
            sheet = game.load_components(args.components)
        except (ValueError, OSError) as exc:
            print(f"FAIL --components: {exc}")
            return 1
    failed: list[str] = []
    lines: list[str] = []
    say = lines.append

    def check(name: str, problem: str | None, ok: str, word: str = "FAIL") -> None:
        if problem is None:
            say(f"{name}: OK {ok}")
        else:
            failed.append(name)
            say(f"{name}: {word} {problem}")

    # the signature: every field of the record, as the referee wrote it
    if "signature" not in record:
        # a finished record of a referee that signs carries these: without a signature, it
        # was taken off (an unfinished record, GetRecord of a running match, is not signed yet)
        signed_only = [k for k in ("seed_commitment", "engine_version", "rules_version")
                       if k in record]
        if signed_only and record.get("finished_unix_ms"):
            check("signature", f"none, but the record carries {', '.join(signed_only)}, which "
                  "a finished record has only when signed: the signature was removed", "")
        elif args.require_signature:
            check("signature", "none: the record is unsigned (--require-signature)", "")
        else:
            say("signature: UNSIGNED the record has no signature (from a referee before signed "
                "records, or a running match's); nothing says who wrote it, only its replay "
                "is checked")
    else:
        try:
            key, source = _signing_key(args, args.file)
        except (OSError, ValueError) as exc:
            key, source = None, f"cannot read the public key: {exc}"
        if key is None:
            check("signature", source, "")
        else:
            check("signature", signing.check_signature(record, key),
                  f"ed25519, key {signing.key_id(key)} ({source}): no field was changed")
    # the seed: the one the referee committed to before the first move
    commitment = provenance.check_commitment(record)
    if commitment == "absent":
        # (a signed one: its match was created by a referee before commitments, and finished
        # after; the signature says the member was not taken off)
        say("commitment: NONE the record has no seed commitment (its match was created by a "
            "referee before seed commitments)")
    else:
        check("commitment", commitment, "the salt and seed hash to the seats' commitment")
    if record.get("engine_version") not in (None, provenance.engine_version()):
        say(f"note: recorded by engine {str(record['engine_version'])[:40]}, this is "
              f"{provenance.engine_version()}")
    if record.get("rules_version") not in (None, provenance.rules_version(game)):
        say(f"note: recorded under rules {str(record['rules_version'])[:24]}…, this referee "
              f"has {provenance.rules_version(game)[:24]}… (the replay says whether they play "
              "alike)")
    # a bot's receipts: the state hashes the referee acknowledged to it
    if args.receipts:
        try:
            with open(args.receipts, encoding="utf-8") as f:
                receipts = json.load(f)
            if not isinstance(receipts, dict):
                raise ValueError("receipts are a JSON object")
            problems = provenance.check_receipts(record, receipts)
            count = len(receipts.get("state_hashes") or {})
        except (OSError, ValueError) as exc:
            problems, count = [f"cannot read the receipts: {exc}"], 0
        check("receipts", "; ".join(problems[:5]) if problems else None,
              f"{count} receipts match the record's state hashes")
    # the moves: replayed from the seed, to every recorded state hash and the result
    m = None
    try:
        m = replay(game, record, sheet)
    except ReplayError as exc:
        check("replay", str(exc), "", word="MISMATCH")
    except Exception as exc:  # noqa: BLE001 - a damaged record, not a crash
        check("replay", f"the record cannot be replayed: {type(exc).__name__}: {exc}", "",
              word="MISMATCH")
    if m is not None:
        check("replay", None, f"{len(m.moves)} moves to every recorded state hash")
    if failed or m is None:
        print(f"FAIL {', '.join(failed)}")
        print("\n".join(f"  {line}" for line in lines))
        return 1
    result = m.result()
    summary = f" ({result.summary})" if result and result.summary else ""
    print(f"OK {len(m.moves)} moves, {record.get('game')} seed {record.get('seed')}{summary}")
    print("\n".join(f"  {line}" for line in lines))
    return 0


def cmd_replay_html(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from referee.core import registry
    from referee.web.render import static_replay_from_record

    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.files:
        try:
            record = json.loads(Path(name).read_text(encoding="utf-8"))
            sheet = None
            if args.components:
                sheet = registry.get(str(record.get("game"))).load_components(args.components)
            page = static_replay_from_record(record, sheet, args.back_href)
        except Exception as exc:  # noqa: BLE001 - one bad record must not stop the others
            print(f"FAIL {name}: {type(exc).__name__}: {exc}")
            failed += 1
            continue
        dst = out / (Path(name).stem + ".html")
        tmp = dst.with_suffix(".html.tmp")
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, dst)
        print(f"OK {dst}")
    return 1 if failed else 0


def game_table(g: Any) -> Any:
    """``referee games``' table of one game's options (a ``GameInfo``): readable at 80
    columns (tests/test_tables_80.py), the names whole, the descriptions folded."""
    from rich.table import Table

    t = Table(title=f"{g.title} — `{g.name}`, {g.min_seats}-{g.max_seats} seats",
              title_justify="left", show_lines=False)
    # the option's name is what a user types: whole; the description takes what is left
    t.add_column("option", no_wrap=True)
    t.add_column("type", no_wrap=True)
    t.add_column("default", overflow="fold", max_width=12)
    t.add_column("values", overflow="fold", max_width=16)
    t.add_column("description", overflow="fold", ratio=1)
    for o in g.options:
        values = ", ".join(o.choices) if o.type == "enum" else (
            f"{o.min}..{o.max}" if o.type == "int" and (o.min or o.max) else "")
        t.add_row(o.name, o.type, o.default_value, values, o.description)
    return t


def cmd_games(args: argparse.Namespace) -> int:
    from google.protobuf import json_format

    from referee.server.front.service import list_games

    resp = list_games(_load_components(args.components))
    if args.json:
        print(json_format.MessageToJson(resp, preserving_proto_field_name=True))
        return 0
    from rich.console import Console

    console = Console()
    for g in resp.games:
        t = game_table(g)
        console.print(t)
        for c in g.components:
            counts = ", ".join(f"{k} {v}" for k, v in c.provenance_counts.items())
            console.print(f"  components: [bold]{c.name}[/] sha256 {c.sha256[:16]}…  ({counts})")
        if g.rulebook:
            console.print(f"  rulebook: {g.rulebook}")
        console.print()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    tune_grpc()  # first: nothing has imported grpc yet
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except UsageError as exc:
        print(f"referee {args.command}: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        return cmd_serve(args)
    if args.command == "replay":
        if args.replay_command == "html":
            return cmd_replay_html(args)
        return cmd_replay_verify(args)
    if args.command == "games":
        return cmd_games(args)
    if args.command == "sim":
        return cmd_sim_serve(args)
    if args.command == "sheet":
        return sheet_cli.cmd_sheet(args)
    if args.command == "proxy-config":
        return cmd_proxy_config(args)
    if args.command == "restart":
        return cmd_restart(args)
    if args.command in ("backup", "restore"):
        return cmd_backup(args)
    return 2


def cmd_backup(args: argparse.Namespace) -> int:
    """``referee backup DEST`` / ``referee restore SRC``: progress on stderr, the summary on
    stdout, a clear one-line error and exit code 1 when it cannot be done."""
    from referee.server.store import backup as bk
    from referee.server.store.opening import StoreUrlError, store_url

    def progress(text: str) -> None:
        if not args.quiet:
            print(f"referee {args.command}: {text}", file=sys.stderr, flush=True)

    try:
        url = store_url(args.store, args.store_file)
        if args.command == "backup":
            summary = bk.backup(args.data_dir, args.path, url, progress)
            print(f"backed up into {args.path}: {summary.line()}")
        else:
            summary = bk.restore(args.path, args.data_dir, url, progress)
            print(f"restored into {args.data_dir}: {summary.line()}")
    except (bk.BackupError, StoreUrlError) as exc:
        print(f"referee {args.command}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
