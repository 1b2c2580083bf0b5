"""Challenges to the league's entrants taken in ("play the champion", issue 33 item 2).

A league whose file says ``challenges = true`` lets people (and other bots) challenge its
entrants in the referee's lobby. Those matches are no league matches: the league did not create
them. The runner finds the finished ones (``ListLeagueChallenges``: the lobby names the league
in the record's ``lobby.league``), reads each record (``GetRecord``), checks the referee's
Ed25519 signature over it (``GetSigningKey``; the same check as ``referee replay verify``) and
takes it in once (:meth:`.store.LeagueStore.take_challenge`: the row and its rating changes in
one transaction, keyed by the match id, so a restarted runner never takes it in twice).

What a challenge counts for (docs/organizer/league.md, "Challenges"):

* always: a row of the standings' ``challenges`` section (each entrant's results against its
  challengers), apart from the league's own matches;
* only with ``rate_challenges = true``, and only when the challenger asked for a rated match
  (the record's ``lobby.rated``): the ratings. Each seat bound to one of this league's bots
  is rated as that bot; every other seat (a person, or a bot of no league or another one) is
  rated as one pool entry, :data:`POOL` (the lobby's identities are anonymous and short-lived,
  and a seat's name is whatever its holder typed, so nothing finer can be trusted). The pool is
  shown in the ``challenges`` section, never among the entrants.

A record that does not verify, is not finished, or names another league is taken in unrated
with the reason, so it is looked at once and shown, not asked for at every poll.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..ladder import Rating, rate
from .store import LeagueStore, key_of

#: The rating key of every challenger who is not one of the league's bots. A bot's name
#: cannot start with "~" (the referee's BOT_NAME_RE), so no entrant is ever this key.
POOL = "~challengers"
ALGORITHM = "ed25519"


def is_pool(key: str) -> bool:
    return key.startswith("~")


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a record's signature covers (the referee's ``signing.canonical``, written in
    the record schema's ``signature`` description): the record without ``signature``, JSON
    with sorted keys, no whitespace, ASCII only."""
    doc = {k: v for k, v in record.items() if k != "signature"}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("utf-8")


def signature_problem(record: dict[str, Any], public_raw: bytes) -> str | None:
    """None when ``record`` carries the referee's signature over all of it, else why not."""
    sig = record.get("signature")
    if not isinstance(sig, dict):
        return "the record has no signature"
    if sig.get("algorithm") != ALGORITHM:
        return "the record's signature is not Ed25519"
    if sig.get("key_id") != hashlib.sha256(public_raw).hexdigest()[:16]:
        return "the record is signed by another key than the referee's"
    try:
        value = base64.b64decode(str(sig.get("value")), validate=True)
        Ed25519PublicKey.from_public_bytes(public_raw).verify(value, canonical(record))
    except (binascii.Error, ValueError, TypeError):
        return "the record's signature cannot be read"
    except InvalidSignature:
        return "the record's signature does not match it (changed after it was signed)"
    return None


@dataclass
class Challenge:
    """A finished challenge as the league takes it in: ``seating`` by seat (entrants' rating
    keys, :data:`POOL` for the others), whether it may be rated, and why not."""
    match_id: str
    game: str
    seating: list[str]
    result: dict[str, Any]
    rateable: bool
    problem: str = ""


def read(match_id: str, record: dict[str, Any], league: str, entrants: set[str],
         public_raw: bytes) -> Challenge:
    """A challenge from its record: who sat where, and whether it may move the ratings."""
    game = str(record.get("game") or "")
    seats = int(record.get("seats") or 0)
    bots = list(record.get("seat_bots") or [""] * seats)
    versions = list(record.get("seat_bot_versions") or [0] * seats)
    seating = [key_of(b, int(v)) if b in entrants else POOL
               for b, v in zip(bots, versions + [0] * (len(bots) - len(versions)),
                               strict=False)]
    got = record.get("result")
    res: dict[str, Any] | None = got if isinstance(got, dict) else None
    result: dict[str, Any] = {"match_id": match_id}
    problem = signature_problem(record, public_raw)
    got = record.get("lobby")
    lobby: dict[str, Any] = got if isinstance(got, dict) else {}
    if problem is None and (record.get("match_id") != match_id or lobby.get("league") != league):
        problem = f"the record is not a challenge of league {league!r}"
    if problem is None and (res is None or len(seating) != seats):
        problem = "the record has no result"
    if problem is None and POOL not in seating:
        problem = "no challenger: every seat is the league's"
    if problem is None and all(k == POOL for k in seating):
        problem = "no entrant of the league sat in it"
    if res is not None:
        result["scores"] = [int(x) for x in res.get("scores", [])]
        result["ranks"] = [int(x) for x in res.get("ranks", [])]
    # the challenger chose: a match opened as unrated is never rated
    rateable = problem is None and lobby.get("rated") is True
    return Challenge(match_id, game, seating, result, rateable, problem or "")


def take_in(store: LeagueStore, model: Any, ratings: dict[str, Rating], ch: Challenge,
            finished_ms: int, *, rated: bool, record_path: str | None = None) -> list[Rating]:
    """Commit ``ch`` once, rated when the league says so (``rated``) and the challenge may be;
    returns the ratings it changed ([] also when it was taken in already). ``ratings`` is
    updated only after the commit."""
    changed: list[Rating] = []
    if rated and ch.rateable:
        trial = {k: replace(ratings[k]) if k in ratings else _new(model, k)
                 for k in ch.seating}
        changed = rate(model, trial, ch.seating, ch.result["ranks"])
    result = dict(ch.result, record_path=record_path)
    if not store.take_challenge(ch.match_id, ch.game, ch.seating, finished_ms, result,
                                changed, ch.problem):
        return []
    for r in changed:
        ratings[r.name] = r
    return changed


def _new(model: Any, key: str) -> Rating:
    r = model.rating(name=key)
    return Rating(key, r.mu, r.sigma)
