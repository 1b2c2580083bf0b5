"""A bot's receipts: what the referee acknowledged to it, to check the published record against
(issue 31 item 7; docs/bot/protocol.md, *Receipts*).

Each accepted ``MoveResult`` carries ``state_hash``, the hash of the match state after the move
as the record stores it, and the ``Welcome`` carries ``seed_commitment``, the referee's
commitment to the seed made before the first move. :func:`play` keeps both in
:attr:`PlayStats.receipts`; once the match is over, :func:`check_record` (or ``referee replay
verify --receipts FILE`` with :meth:`Receipts.save`'s file) says whether the record agrees:
a record whose moves were edited no longer replays to the hashes the bot was given, and a seed
changed after the match started no longer hashes to the commitment.

The SDK imports nothing of the referee (only the generated protocol), so the check is written
here again beside ``referee.core.provenance.check_receipts``; the commitment's encoding is
``referee-seed/1:<salt hex>:<seed decimal>`` hashed with SHA-256."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def seed_commitment(salt: str, seed: int | str) -> str:
    """The commitment a Welcome carries, from the salt and seed a finished record reveals."""
    return hashlib.sha256(f"referee-seed/1:{salt}:{int(seed)}".encode("ascii")).hexdigest()


@dataclass(slots=True)
class Receipts:
    """The Welcome's seed commitment and the state hash of every move the referee accepted
    from this seat, by the state version the move led to."""

    match_id: str = ""
    seat: int = -1
    seed_commitment: str = ""
    state_hashes: dict[int, str] = field(default_factory=dict)

    def welcome(self, match_id: str, seat: int, commitment: str) -> None:
        self.match_id, self.seat = match_id, seat
        if commitment:
            self.seed_commitment = commitment

    def accepted(self, state_version: int, state_hash: str) -> None:
        if state_hash:  # a referee from before receipts sends none
            self.state_hashes[state_version] = state_hash

    def to_json(self) -> dict[str, Any]:
        return {"match_id": self.match_id, "seat": self.seat,
                "seed_commitment": self.seed_commitment,
                "state_hashes": {str(v): h for v, h in sorted(self.state_hashes.items())}}

    def save(self, path: str | Path) -> None:
        """Write the receipts as JSON (for ``referee replay verify --receipts FILE``)."""
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


def check_record(record: Mapping[str, Any], receipts: Receipts) -> list[str]:
    """One line per disagreement between a finished record (its JSON as a dict) and a bot's
    receipts; [] when they agree: the same match, the commitment the Welcome carried, salt and
    seed hashing to it, and at every acknowledged state version the hash the bot was given.
    (The record's own replay, ``referee replay verify``, checks its hashes follow from its
    moves.)"""
    problems: list[str] = []
    if receipts.match_id and receipts.match_id != record.get("match_id"):
        other = record.get("match_id")
        return [f"the receipts are of match {receipts.match_id}, the record of {other}"]
    if receipts.seed_commitment:
        if record.get("seed_commitment") != receipts.seed_commitment:
            problems.append("the record's seed commitment is not the one the Welcome carried")
        else:
            try:
                revealed = seed_commitment(str(record.get("seed_salt")), str(record.get("seed")))
            except (TypeError, ValueError, UnicodeEncodeError):
                revealed = ""
            if revealed != receipts.seed_commitment:
                problems.append("the record's salt and seed do not hash to the commitment")
    after: dict[int, Any] = {}
    for entry in record.get("moves") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("version_before"), int):
            after[entry["version_before"] + 1] = entry.get("state_hash")
    for version, want in sorted(receipts.state_hashes.items()):
        got = after.get(version)
        if got is None:
            problems.append(f"version {version}: the record has no move to it")
        elif got != want:
            problems.append(f"version {version}: the record's state hash is not the receipt's")
    return problems
