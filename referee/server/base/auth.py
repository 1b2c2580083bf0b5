"""Tokens and per-peer rate limits."""
from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import secrets
import time
from collections.abc import Iterable
from typing import Any, Protocol

import grpc

#: a call's metadata: grpc.aio's Metadata, or the (key, value) pairs of a forwarded call
Metadata = Iterable[tuple[str, str | bytes]]
#: a call's context as a grpc.aio handler gets it (the handlers take raw request bytes)
Context = grpc.aio.ServicerContext[Any, Any]


class CallContext(Protocol):
    """What the checks here read of a call: its peer and its metadata (a grpc.aio
    ServicerContext has both)."""

    def peer(self) -> str: ...

    def invocation_metadata(self) -> Metadata | None: ...


def new_token() -> str:
    """256 random bits as hex: safe on any command line (a urlsafe token may begin with "-",
    which bot argument parsers take for an option)."""
    return secrets.token_hex(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def bearer(metadata: Metadata | None) -> str | None:
    """The token of an ``authorization: Bearer <token>`` metadata entry, if any."""
    for key, value in metadata or ():
        if key == "authorization":
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            scheme, _, tok = value.strip().partition(" ")
            if scheme.lower() == "bearer" and tok.strip():
                return tok.strip()
            return None
    return None


def peer_address(peer: str | None) -> str:
    """The address part of a gRPC peer string, without the port: ``ipv4:10.0.0.7:51234`` ->
    ``ipv4:10.0.0.7``, ``ipv6:[::1]:51234`` -> ``ipv6:[::1]``. Limits keyed by it hold for all
    the connections of one host, not per connection (each has its own port)."""
    if not peer:
        return "?"
    if peer.startswith(("ipv4:", "ipv6:")):
        host, sep, port = peer.rpartition(":")
        if sep and port.isdigit() and host not in ("ipv4", "ipv6"):
            return host
    return peer


#: the header a cluster's proxy sets to its client's address, overwriting any a client sent
CLIENT_HEADER = "x-referee-client"


def trusted_peer(peer: str | None, trust_proxy: bool, proxies: frozenset[str]) -> bool:
    """Whether a call from ``peer`` may name its client in CLIENT_HEADER: on a cluster worker
    (``trust_proxy``) a call over a Unix socket (only the proxy and the other workers reach a
    worker's socket, in its 0700 cluster folder); on a host of several, a call from one of the
    addresses given with ``--trusted-proxy`` (``proxies``, as :func:`peer_address` writes them:
    the proxy's and the other referees' hosts)."""
    if not peer:
        return False
    if trust_proxy and peer.startswith("unix:"):
        return True
    return bool(proxies) and peer_address(peer) in proxies


def proxy_peers(hosts: Iterable[str]) -> frozenset[str]:
    """``--trusted-proxy`` addresses (``10.0.0.7``, ``::1``) as gRPC peers name them."""
    return frozenset(f"ipv6:[{h.strip('[]')}]" if ":" in h else f"ipv4:{h}" for h in hosts)


@functools.lru_cache(maxsize=4096)
def client_key(address: str) -> str:
    """The one key of a client's address whichever transport saw it, so that a budget keyed by
    it is one budget over gRPC and the web (issue 31, item 3: registration's): gRPC's peer
    ``ipv4:10.0.0.7:51234`` or ``ipv4:10.0.0.7``, a trusted proxy's CLIENT_HEADER (nginx's
    ``$remote_addr``, or the ``ipv4:…`` another referee hands on), the web's ``10.0.0.7``: all
    ``10.0.0.7``; ``ipv6:[::1]:5`` and ``::1``: ``::1``; an IPv4-mapped IPv6 address (a
    dual-stack socket's) its IPv4 form. What is no IP address (a Unix socket's peer, ``?``)
    stays as it is, cut to 80 characters. Cached: a token-less call asks it each time."""
    text = address
    if text.startswith(("ipv4:", "ipv6:")):
        text = peer_address(text)[5:]
    try:
        ip = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return address[:80]
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return str(mapped or ip)


def client_address(context: CallContext, trust_proxy: bool, proxies: frozenset[str] = frozenset()) -> str:
    """Whom a call comes from, as the rate limits key it (:func:`client_key`, the same key as
    the web's for the same address): the peer's address, or, for a call from a trusted proxy
    (:func:`trusted_peer`), the address the proxy wrote in CLIENT_HEADER. A header on any other
    connection is ignored: a client could forge it."""
    peer = context.peer()
    if trusted_peer(peer, trust_proxy, proxies):
        for key, value in context.invocation_metadata() or ():
            if key == CLIENT_HEADER:
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                return client_key(value[:64])
    return client_key(peer_address(peer))


class RateLimiter:
    """Token buckets keyed by peer or token: ``rate`` requests per second, bursts of ``burst``.
    ``rate <= 0`` disables limiting. ``trust_proxy``: see ``client_address``."""

    __slots__ = ("_buckets", "_last_sweep", "burst", "proxies", "rate", "trust_proxy")

    def __init__(self, rate: float, burst: float, trust_proxy: bool = False,
                 proxies: frozenset[str] = frozenset()):
        self.rate = rate
        self.burst = max(burst, 1.0)
        self.trust_proxy = trust_proxy
        self.proxies = proxies
        self._buckets: dict[str, list[float]] = {}
        self._last_sweep = time.monotonic()

    def client(self, context: CallContext) -> str:
        """The key of a call's client (``client_address``)."""
        return client_address(context, self.trust_proxy, self.proxies)

    def allow(self, key: str, cost: float = 1.0) -> bool:
        if self.rate <= 0:
            return True
        now = time.monotonic()
        b = self._buckets.get(key)
        if b is None:
            b = self._buckets[key] = [self.burst, now]
            if now - self._last_sweep > 60.0:
                self._sweep(now)
        else:
            tokens = b[0] + (now - b[1]) * self.rate
            b[0] = min(self.burst, tokens)
            b[1] = now
        if b[0] >= cost:
            b[0] -= cost
            return True
        return False

    def _sweep(self, now: float) -> None:
        self._last_sweep = now
        idle = self.burst / self.rate + 1.0
        for key in [k for k, b in self._buckets.items() if now - b[1] > idle]:
            del self._buckets[key]
