"""The league runner's Prometheus metrics (issue 37 item 1), served with ``referee-tournament
league serve --metrics-listen HOST:PORT``: matches it ended by outcome and the seats' incidents
by kind (the kinds of ``serve.seat_incidents``). Labels are bounded: no bot, match or league
name (one runner runs one league; the scrape job names it)."""
from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, start_http_server

REGISTRY = CollectorRegistry(auto_describe=True)

#: the outcomes of a match the runner ended: rated (ranks), unrated (no ranks: an error)
LEAGUE_MATCHES = Counter("referee_league_matches", "League matches the runner ended, by outcome",
                         ["outcome"], registry=REGISTRY)
#: the incidents' kinds (serve.seat_incidents): crash, hung, timeout, refused, forfeit
LEAGUE_INCIDENTS = Counter("referee_league_incidents", "Seats' incidents in league matches",
                           ["kind"], registry=REGISTRY)
KINDS = ("crash", "hung", "timeout", "refused", "forfeit")


def ended(rated: bool, incidents: list[tuple[str, str, str]]) -> None:
    """Count a match the runner ended and its incidents (kinds outside KINDS as "other", so
    the label set stays bounded)."""
    LEAGUE_MATCHES.labels("rated" if rated else "unrated").inc()
    for _key, kind, _message in incidents:
        LEAGUE_INCIDENTS.labels(kind if kind in KINDS else "other").inc()


def serve(listen: str) -> tuple[Any, int]:
    """Serve the registry on ``HOST:PORT`` (``[::1]:PORT`` for IPv6); ValueError for another
    form. Returns the server and the port bound (0 picks a free one)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"--metrics-listen {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:9465")
    server, _thread = start_http_server(int(port), addr=host.strip("[]"), registry=REGISTRY)
    return server, server.server_port


def names() -> set[str]:
    """Every sample name the runner exports (the dashboard test compares its PromQL with them)."""
    return {f"{m}_{s}" for m in ("referee_league_matches", "referee_league_incidents")
            for s in ("total", "created")}
