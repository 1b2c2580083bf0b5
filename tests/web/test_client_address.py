"""Who a web request comes from, and one registration budget per client (issue 31, item 3).

The web server believes ``X-Forwarded-For`` only from the ``--trusted-proxy`` addresses (by
default from nobody), as gRPC believes ``x-referee-client``; and an entrant's registrations
without the admin token draw on one budget per client address, whether they come over gRPC
(RegisterBot) or the web (``POST /api/leagues/<name>/register``). Every refusal here is a wrong
invite code (403 BAD_INVITE), which is checked after the budget, so each call uses it."""
from __future__ import annotations

import grpc
import httpx
import pytest

from referee.server.base.auth import client_key
from referee.server.leagues.league import REGISTER_BURST
from referee.v1 import referee_pb2 as pb
from tests.leagues.helpers import error_of, open_league, stub_for

from .conftest import WebHandle

FORWARDED = "x-forwarded-for"
CLIENT = "x-referee-client"  # what nginx writes for gRPC (auth.CLIENT_HEADER)


@pytest.fixture
def proxied(tmp_path):
    """A referee with its web viewer that trusts 127.0.0.1 as its proxy, for both transports."""
    h = WebHandle(tmp_path / "data", http_port=0, trusted_proxies=("127.0.0.1",))
    h.start()
    yield h
    h.close()


def _league(handle: WebHandle) -> None:
    """An invite-only league; its registration budget made not to refill during the test (one
    registration a minute otherwise: a slow machine could earn one back mid-test)."""
    async def run():
        async with grpc.aio.insecure_channel(handle.target) as ch:
            await open_league(stub_for(ch), registration=pb.REGISTRATION_INVITE)
    handle.call(run())
    handle.service.leagues.register_limiter.rate = 1e-9


def _web(handle: WebHandle, forwarded: str | None = None) -> tuple[int, str]:
    """One web registration with a wrong invite code: (status, reason)."""
    headers = {FORWARDED: forwarded} if forwarded is not None else {}
    r = httpx.post(handle.base + "/api/leagues/spring/register", headers=headers, timeout=60,
                   json={"name": "mallory", "invite_code": "not-a-code"})
    return r.status_code, r.json()["reason"]


def _grpc(handle: WebHandle, client: str | None = None) -> tuple[grpc.StatusCode, str | None]:
    """One RegisterBot with a wrong invite code: (code, reason)."""
    async def run():
        async with grpc.aio.insecure_channel(handle.target) as ch:
            return await error_of(stub_for(ch).RegisterBot(
                pb.RegisterBotRequest(name="mallory", league="spring", invite_code="not-a-code"),
                metadata=((CLIENT, client),) if client is not None else ()))
    return handle.call(run(), timeout=60)[:2]


BAD_INVITE_WEB = (403, "BAD_INVITE")
SPENT_WEB = (429, "RESOURCE_EXHAUSTED")
BAD_INVITE_GRPC = (grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITE")
SPENT_GRPC = (grpc.StatusCode.RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED")


@pytest.mark.parametrize("uvicorn_env", [None, "*"])
def test_forged_forwarded_for_buys_no_fresh_budget(tmp_path, monkeypatch, uvicorn_env):
    """Issue 31 item 3: without --trusted-proxy, X-Forwarded-For from a local client is
    ignored: each forged address is the same client, and the budget runs out after the burst
    (before: uvicorn believed the header from 127.0.0.1, so every forged address had a fresh
    budget and every invite code was checked). uvicorn's own handling is off, so its
    $FORWARDED_ALLOW_IPS in the referee's environment changes nothing either."""
    if uvicorn_env is not None:
        monkeypatch.setenv("FORWARDED_ALLOW_IPS", uvicorn_env)
    web = WebHandle(tmp_path / "data", http_port=0)
    web.start()
    try:
        _forge(web)
    finally:
        web.close()


def _forge(web: WebHandle) -> None:
    _league(web)
    got = [_web(web, f"203.0.113.{i}") for i in range(REGISTER_BURST)]
    assert got == [BAD_INVITE_WEB] * REGISTER_BURST
    assert _web(web, "203.0.113.250") == SPENT_WEB
    assert _web(web) == SPENT_WEB


def test_one_registration_budget_over_grpc_and_web(web):
    """Issue 31 item 3: half the burst over gRPC, half on the web, from one address: then
    both transports refuse it (before: each had a budget of its own, twice the burst)."""
    _league(web)
    half = REGISTER_BURST // 2
    assert [_grpc(web) for _ in range(half)] == [BAD_INVITE_GRPC] * half
    assert [_web(web) for _ in range(REGISTER_BURST - half)] == \
        [BAD_INVITE_WEB] * (REGISTER_BURST - half)
    assert _web(web) == SPENT_WEB
    assert _grpc(web) == SPENT_GRPC


def test_trusted_proxy_names_the_client_on_both_transports(proxied):
    """Issue 31 item 3: from a --trusted-proxy address, X-Forwarded-For (the web) and
    x-referee-client (gRPC) name the client: its budget is its own, not the proxy's, and one
    over both transports. In a chain the client is the last address the trusted proxy did not
    write itself (what a client put in front of it is its own claim)."""
    _league(proxied)
    half = REGISTER_BURST // 2
    assert [_grpc(proxied, "198.51.100.7") for _ in range(half)] == [BAD_INVITE_GRPC] * half
    assert [_web(proxied, "10.9.9.9, 198.51.100.7" if i % 2 else "198.51.100.7")
            for i in range(REGISTER_BURST - half)] == [BAD_INVITE_WEB] * (REGISTER_BURST - half)
    assert _web(proxied, "198.51.100.7") == SPENT_WEB
    assert _grpc(proxied, "198.51.100.7") == SPENT_GRPC
    # another client behind the same proxy, and the proxy's own calls, have budgets of their own
    assert _web(proxied, "198.51.100.8") == BAD_INVITE_WEB
    assert _grpc(proxied, "198.51.100.8") == BAD_INVITE_GRPC
    assert _web(proxied) == BAD_INVITE_WEB
    assert _grpc(proxied) == BAD_INVITE_GRPC


def test_client_key_is_one_key_per_address_whatever_the_transport():
    """Issue 31 item 3: the forms a client's address takes on each transport (gRPC peers with
    and without their port, a proxy's header, the web's address, IPv4 mapped into IPv6) give
    one key; what is no IP address stays as it is."""
    for form in ("ipv4:10.0.0.7:51234", "ipv4:10.0.0.7", "10.0.0.7", "::ffff:10.0.0.7",
                 "ipv6:[::ffff:10.0.0.7]:80"):
        assert client_key(form) == "10.0.0.7", form
    for form in ("ipv6:[::1]:5", "ipv6:[::1]", "::1", "[::1]", "0:0:0:0:0:0:0:1"):
        assert client_key(form) == "::1", form
    assert client_key("unix:/run/referee.sock") == "unix:/run/referee.sock"
    assert client_key("?") == "?"
