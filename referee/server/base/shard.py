"""Shards: which worker of a cluster (``referee serve --workers N``) owns a match or a token.

A worker started with ``--shard S`` makes match ids ``S-<hex>`` and seat and bot tokens
``S.<hex>``; the proxy in front of the cluster routes every call carrying ``authorization:
Bearer S.…`` to worker S (to another while S is down), and a worker hands a call naming a match
it does not hold to the worker whose lease holds it (``referee.server.front.forward``): the shard
says where a match was made and is resumed, the lease where it is played now. Without a shard (one plain referee) ids and tokens are what they
always were: 16 and 64 hex digits. Shard names are ``w1``, ``w2``, …: short, and made of
characters that can appear in neither hex part, so parsing is unambiguous.
"""
from __future__ import annotations

import re
import secrets

from referee.server.base.auth import new_token

SHARD_RE = re.compile(r"w[1-9][0-9]{0,2}")
#: the shard that keeps what is not sharded (bots, their sessions, leagues): worker 1
HOME = "w1"


def check(shard: str) -> str:
    if not SHARD_RE.fullmatch(shard):
        raise ValueError(f"a shard is w1 … w999, not {shard!r}")
    return shard


def match_id(shard: str | None) -> str:
    """A fresh match id of this shard (no shard: 16 hex digits, as a plain referee makes)."""
    return f"{shard}-{secrets.token_hex(8)}" if shard else secrets.token_hex(8)


def token(shard: str | None) -> str:
    """A fresh seat or bot token of this shard (256 random bits either way)."""
    return f"{shard}.{new_token()}" if shard else new_token()


def of_match(match_id: str) -> str | None:
    """The shard a match id names, or None (a plain referee's id, or not an id at all)."""
    head, sep, _ = match_id.partition("-")
    return head if sep and SHARD_RE.fullmatch(head) else None


def of_token(tok: str) -> str | None:
    """The shard a token names, or None."""
    head, sep, _ = tok.partition(".")
    return head if sep and SHARD_RE.fullmatch(head) else None
