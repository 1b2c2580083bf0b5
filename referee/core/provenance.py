"""What a record says about where it comes from, checkable by anyone (issue 31 item 7;
docs/organizer/records.md): the commitment to the match's seed made when the match is created,
and the versions of the engine and of the game's rules that played it.

Pure and standard library only (core layer): the Ed25519 signature over the whole record is
the server's (``referee/server/base/signing.py``), since it needs a third-party package.

**Seed commitment.** At CreateMatch the referee draws a random salt for the match (32 bytes,
kept in the store with the match, never sent to a seat or a spectator before the match ends)
and sends every seat, in its Welcome, ``seed_commitment(salt, seed)``: the hex SHA-256 of the
ASCII bytes ``referee-seed/1:<salt as 64 lower-case hex digits>:<seed in decimal>``. The
finished record reveals the salt and the seed; anyone can then recompute the hash. The salt
makes the commitment say nothing about the seed while the match runs (a seed is a 64-bit
number: without a salt, its hash could be inverted by trying seeds)."""
from __future__ import annotations

import hashlib
import importlib.metadata
import secrets
import sys
from collections.abc import Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from .contract import Game

#: The domain prefix of the committed bytes: a different encoding would get a different prefix.
COMMITMENT_DOMAIN = "referee-seed/1"
#: The distribution whose version is the engine's version in a record.
DISTRIBUTION = "boardgame-referee"


def new_salt() -> str:
    """A fresh salt for a match's seed commitment: 32 random bytes as 64 hex digits."""
    return secrets.token_hex(32)


def seed_commitment(salt: str, seed: int | str) -> str:
    """The hex SHA-256 of ``referee-seed/1:<salt>:<seed>`` (the seed in decimal)."""
    return hashlib.sha256(f"{COMMITMENT_DOMAIN}:{salt}:{int(seed)}".encode("ascii")).hexdigest()


@lru_cache(maxsize=1)
def engine_version() -> str:
    """The referee package's version (``boardgame-referee``), or ``unknown`` when it runs from
    a source tree that was never installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@cache
def _rulings_digest(path: str) -> str:
    try:
        return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


@cache
def _rulings_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _rulings_path(game: Game) -> str | None:
    module = sys.modules.get(type(game).__module__)
    where = getattr(module, "__file__", None)
    return str(Path(where).parent / "RULINGS.md") if where else None


def rulings_text(game: Game) -> str:
    """The game's ``RULINGS.md`` as this referee plays it ("" for a game without one), the
    text whose digest is :func:`rules_version`. Read once per game."""
    path = _rulings_path(game)
    return _rulings_text(path) if path else ""


def rules_version(game: Game) -> str:
    """The version of the game's rules as this referee plays them: ``sha256:<hex>`` of the
    game's ``RULINGS.md`` (how each open point of its rulebook is settled, beside its
    ``game.py``), or "" for a game without one (a test game). Read once per game."""
    path = _rulings_path(game)
    return _rulings_digest(path) if path else ""


# ---------------------------------------------------------------------------- checks
def check_commitment(record: Mapping[str, Any]) -> str | None:
    """None when the record's ``seed_salt`` and ``seed`` hash to its ``seed_commitment``,
    else why not. (A record without a commitment: ``"absent"``; the caller says what that
    means.)"""
    want = record.get("seed_commitment")
    if want is None and record.get("seed_salt") is None:
        return "absent"
    salt = record.get("seed_salt")
    if not isinstance(want, str) or not isinstance(salt, str):
        return "the record has a seed commitment or a salt without the other"
    try:
        got = seed_commitment(salt, record.get("seed"))  # type: ignore[arg-type]
    except (TypeError, ValueError, UnicodeEncodeError):
        return "the record's seed or salt is not valid"
    if got != want:
        return (f"the salt and seed hash to {got[:16]}…, not to the commitment "
                f"{want[:16]}… the seats were sent")
    return None


def check_receipts(record: Mapping[str, Any], receipts: Mapping[str, Any]) -> list[str]:
    """What a bot's receipts (``referee_client.Receipts.to_json``: the match id, its seat,
    the Welcome's seed commitment and each accepted move's state hash by state version) say
    against a record: one line per disagreement, [] when they agree. The SDK has the same
    check (``referee_client.receipts.check_record``: the SDK imports nothing of the referee)."""
    problems: list[str] = []
    mid = receipts.get("match_id")
    if mid and mid != record.get("match_id"):
        problems.append(f"the receipts are of match {str(mid)[:40]}, the record of "
                        f"{str(record.get('match_id'))[:40]}")
        return problems
    commitment = receipts.get("seed_commitment")
    if commitment and commitment != record.get("seed_commitment"):
        problems.append("the record's seed commitment is not the one the Welcome carried")
    after = {}
    for entry in record.get("moves") or []:
        if isinstance(entry, Mapping):
            try:
                after[int(entry["version_before"]) + 1] = entry.get("state_hash")
            except (KeyError, TypeError, ValueError):
                continue
    hashes = receipts.get("state_hashes") or {}
    if not isinstance(hashes, Mapping):
        return [*problems, "the receipts' state_hashes is not an object"]
    for version, want in sorted(hashes.items(), key=lambda kv: int(kv[0])):
        got = after.get(int(version))
        if got is None:
            problems.append(f"version {version}: the record has no move to it (a receipt says "
                            "the referee accepted one)")
        elif got != want:
            problems.append(f"version {version}: the record's state hash {str(got)[:16]}… is "
                            f"not the receipt's {str(want)[:16]}…")
    return problems
