"""The referee's Prometheus metrics (issue 37 item 1): one registry of this process's series,
what the rooms count into it, and the two ways out (a listen address of its own,
``--metrics-listen``, and the web port's ``/metrics`` behind the admin token).

The series are counted always (a counter's ``inc`` or a histogram's ``observe`` costs well under
a microsecond, next to a move's hundreds: docs/organizer/metrics.md has the figure) and exposed
only when asked. Gauges of what the referee holds (matches by state, streams, sessions, the
store's queue) are read at scrape time by a collector (``Holdings``), so they cost the move path
nothing. Every label set is bounded: a game's name, a refusal's reason (the protocol's Reason
enum), a store kind, an outcome; never a match id, a token or a bot's name."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

#: This process's series (not prometheus_client's global registry: a test or a tool that uses
#: that one gets none of ours, and ours carry no process or platform series twice)
REGISTRY = CollectorRegistry(auto_describe=True)

#: Latency buckets, seconds: a move is applied and committed in 0.1-5 ms normally; a store that
#: struggles shows in the upper ones
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                   5.0)

MOVES = Counter("referee_moves", "Moves committed (a bot's or the time policy's)",
                ["game"], registry=REGISTRY)
REFUSALS = Counter("referee_refusals", "Moves refused, by the protocol's Reason name",
                   ["reason"], registry=REGISTRY)
MOVE_SECONDS = Histogram(
    "referee_move_seconds",
    "A move from its arrival under the match's lock to its acknowledgement (apply and commit)",
    ["game"], buckets=LATENCY_BUCKETS, registry=REGISTRY)
COMMIT_SECONDS = Histogram(
    "referee_commit_seconds", "A move's store commit, queued to committed (group commit)",
    ["store"], buckets=LATENCY_BUCKETS, registry=REGISTRY)
CLOCK_EXPIRIES = Counter(
    "referee_clock_expiries",
    "Decisions whose time ran out: the time policy moved (move) or the seat forfeited (forfeit)",
    ["game", "outcome"], registry=REGISTRY)
STORE_ERRORS = Counter(
    "referee_store_errors",
    "Commits that failed: the store away (outage; refused, sent again) or a failure (the match "
    "is taken offline)", ["store", "kind"], registry=REGISTRY)
MATCHES_CREATED = Counter("referee_matches_created", "Matches created", ["game"],
                          registry=REGISTRY)
MATCHES_FINISHED = Counter("referee_matches_finished", "Matches finished and committed",
                           ["game"], registry=REGISTRY)
UPLOADS = Counter("referee_uploads", "Hosted bots' uploads (UploadBot): accepted, or the refusal's reason",
                  ["outcome"], registry=REGISTRY)
SMOKE_CHECKS = Counter("referee_smoke_checks", "Uploaded bots' smoke checks, by outcome",
                       ["outcome"], registry=REGISTRY)
WEB_REQUESTS = Counter("referee_web_requests", "The web viewer's responses, by status class",
                       ["status"], registry=REGISTRY)

#: A game's gauges at scrape time: {(game, state): count}, streams, sessions, store queue
Reading = Callable[[], dict[str, Any]]


class Holdings(Collector):
    """The gauges of what a referee holds, read when Prometheus scrapes (not per move):
    ``read`` returns ``matches`` ({(game, state): n}), ``streams`` ({kind: n}), ``sessions``
    (n) and ``store_queue`` (n)."""

    def __init__(self, read: Reading):
        self.read = read

    def describe(self) -> Iterable[Any]:
        return []  # the families depend on the reading; nothing to check at registration

    def collect(self) -> Iterator[GaugeMetricFamily]:
        held = self.read()
        m = GaugeMetricFamily("referee_matches", "Matches held in memory, by game and state",
                              labels=["game", "state"])
        for (game, state), n in sorted(held.get("matches", {}).items()):
            m.add_metric([game, state], n)
        yield m
        s = GaugeMetricFamily("referee_streams", "Open streams, by kind (play, watch)",
                              labels=["kind"])
        for kind, n in sorted(held.get("streams", {}).items()):
            s.add_metric([kind], n)
        yield s
        yield GaugeMetricFamily("referee_sessions", "Connected bot sessions (Session streams)",
                                value=held.get("sessions", 0))
        yield GaugeMetricFamily("referee_store_queue_depth",
                                "Store writes queued, not yet committed",
                                value=held.get("store_queue", 0))


_holdings: list[Holdings] = []
_lock = threading.Lock()


def watch(read: Reading) -> Holdings:
    """Register a referee's gauges (one per RefereeServer; ``unwatch`` at its stop). A second
    server in the same process (tests) replaces the first's: the gauges are one process's."""
    with _lock:
        for h in _holdings:
            REGISTRY.unregister(h)
        _holdings.clear()
        h = Holdings(read)
        REGISTRY.register(h)
        _holdings.append(h)
        return h


def unwatch(h: Holdings) -> None:
    with _lock:
        if h in _holdings:
            REGISTRY.unregister(h)
            _holdings.remove(h)


def exposition() -> tuple[bytes, str]:
    """The text exposition of every series, and its content type (the web port's /metrics)."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9464`` for IPv6) of --metrics-listen; ValueError otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--metrics-listen {value!r}: expected HOST:PORT, e.g. 127.0.0.1:9464")
    return host.strip("[]"), int(port)


def serve(value: str) -> tuple[Any, int]:
    """Serve the registry on ``HOST:PORT`` (a thread of prometheus_client's); returns the
    server (``shutdown()`` stops it) and the port bound (0 asks for a free one)."""
    host, port = parse_listen(value)
    server, _thread = start_http_server(port, addr=host, registry=REGISTRY)
    return server, server.server_port


def names() -> set[str]:
    """Every sample name this process exports (the dashboard test checks its PromQL against
    them): counters' ``_total``, histograms' ``_bucket``/``_sum``/``_count`` and the gauges."""
    out = {"referee_matches", "referee_streams", "referee_sessions", "referee_store_queue_depth"}
    for metric in (MOVES, REFUSALS, MOVE_SECONDS, COMMIT_SECONDS, CLOCK_EXPIRIES, STORE_ERRORS,
                   MATCHES_CREATED, MATCHES_FINISHED, UPLOADS, SMOKE_CHECKS, WEB_REQUESTS):
        name = metric._name  # prometheus_client keeps the base name there
        if isinstance(metric, Histogram):
            out |= {f"{name}_bucket", f"{name}_sum", f"{name}_count", f"{name}_created"}
        else:
            out |= {f"{name}_total", f"{name}_created"}
    return out
