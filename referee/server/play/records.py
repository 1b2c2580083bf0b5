"""A match's record as the server keeps it (docs/ARCHITECTURE.md, *Records and replay*): the
record document of a live match, its stored form (one row per move), the GameOver its seats are
sent, and a running match rebuilt from its stored move log after a restart."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from referee.core.components import ComponentSheet
from referee.core.contract import Game
from referee.core.match import Match, MoveEntry, replay
from referee.core.provenance import engine_version, rules_version, seed_commitment
from referee.server.store.sqlite import MatchRow, MoveRow
from referee.v1 import referee_pb2 as pb


def record(match: Match, match_id: str, names: list[str], policy: pb.TimePolicy,
           created_ms: int, finished_ms: int | None, rejected: list[int],
           abandoned: dict[int, str], seed_salt: str = "") -> dict[str, Any]:
    """The record document (format ``match.record_format``) of ``match``, finished or not, with
    the seats the host abandoned (AbandonSeat) and its reason for each, and where it comes
    from (``referee.core.provenance``): the engine's version, the game's rules version (its
    RULINGS.md digest; the component sheet's digest is ``components.sha256``), and the seed's
    salt and commitment (a match created before commitments has neither). The server signs
    the finished record (``signing.RecordSigner.sign``)."""
    extra: dict[str, Any] = {"engine_version": engine_version(),
                             "rules_version": rules_version(match.game)}
    if seed_salt:
        extra["seed_salt"] = seed_salt
        extra["seed_commitment"] = seed_commitment(seed_salt, match.seed)
    return match.record(
        **extra,
        match_id=match_id,
        seat_names=list(names),
        time_policy=json_format.MessageToDict(
            policy, preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True,
        ),
        created_unix_ms=created_ms,
        finished_unix_ms=finished_ms,
        rejected_moves=list(rejected),
        abandoned=[{"seat": s, "reason": r} for s, r in sorted(abandoned.items())],
    )


def move_row(entry: MoveEntry) -> MoveRow:
    """A committed move as the store keeps it."""
    return MoveRow(
        entry.n, entry.seat, entry.version_before, entry.move, entry.state_hash,
        entry.elapsed_ms, entry.timeout, entry.policy, entry.note,
    )


def record_path(records_dir: Path, match_id: str) -> Path:
    return (records_dir / f"{match_id}.json").resolve()


def game_over(match: Match, match_id: str, names: list[str],
              path: Path | None) -> pb.GameOver:
    """The GameOver of a finished match: each seat's score, rank and details, the winners."""
    result = match.result()
    go = pb.GameOver(match_id=match_id, record_path=str(path or ""))
    if result is None:
        return go
    forfeited = match.forfeited
    for s in range(match.seat_count):
        go.seats.append(
            pb.SeatResult(
                seat=s,
                name=names[s],
                score=int(result.scores[s]),
                rank=int(result.ranks[s]),
                details_json=json.dumps(result.details[s]) if s < len(result.details) else "",
                forfeited=forfeited == s,
            )
        )
    go.winners.extend(result.winners)
    go.summary = result.summary
    return go


def replay_log(game: Game, row: MatchRow, moves: list, sheet: ComponentSheet) -> Match:
    """A running match rebuilt from its stored move log by core's ``replay`` (which checks every
    state hash), then given back what a record does not replay: each move's elapsed time and
    timeout flags (the clocks are restored from them), each bot's note, and the position of the time policy's
    RANDOM_LEGAL stream of a ``/1`` match, which live play advanced once per such timeout. (One
    draw each: the stream's ``below(n)`` draws again only for a value among the top n of 2**64,
    odds under 1e-16 for any move list, and then only later timeout choices would differ, never
    the log. A ``/2`` match keys each timeout's stream by seat and number: nothing to restore.)
    The row says which format the match was created in (stores from before ``/2``: ``/1``)."""
    doc = {
        "format": row.record_format, "game": row.game, "options": row.options, "seats": row.seats,
        "seed": row.seed, "components": {"sha256": row.components_sha256},
        "moves": [{"n": mv.n, "seat": mv.seat, "version_before": mv.version_before,
                   "move": mv.move, "state_hash": mv.state_hash} for mv in moves],
    }
    if row.start is not None:  # it started at a position of another record
        doc["start"] = row.start
    return _replayed(game, doc, sheet, moves)


def rewind(match: Match) -> Match:
    """``match`` as it stood before its last move, replayed from its own log without that move
    (checking every state hash, as ``replay_log``): what a move the store could not commit
    leaves. A rare path (the store was away), so the per-move path keeps no copy of a state to
    go back to."""
    moves = match.moves[:-1]
    doc: dict[str, Any] = {
        "format": match.record_format, "game": match.game.spec.name, "options": match.options,
        "seats": match.seat_count, "seed": match.seed,
        "components": {"sha256": match.components.sha256},
        "moves": [{"n": mv.n, "seat": mv.seat, "version_before": mv.version_before,
                   "move": mv.move, "state_hash": mv.state_hash} for mv in moves],
    }
    if match.start is not None:
        doc["start"] = match.start
    return _replayed(match.game, doc, match.components, moves)


def _replayed(game: Game, doc: dict[str, Any], sheet: ComponentSheet, moves: list) -> Match:
    """``replay`` of ``doc``, given back what a record does not replay (see ``replay_log``)."""
    m = replay(game, doc, sheet)
    for entry, mv in zip(m.moves, moves, strict=True):
        entry.elapsed_ms, entry.timeout, entry.policy = mv.elapsed_ms, mv.timeout, mv.policy
        entry.note = mv.note
        if mv.timeout and mv.policy == "RANDOM_LEGAL" and m.timeout_rng is not None:
            m.timeout_rng.next64()
    return m
