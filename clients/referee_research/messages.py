"""The messages a referee would send a bot, built from a forward-model state: a seat's Decision
(its view and every legal move) and a public event. The duels hand them to the SDK bots, and the
search's prior-guided rollouts hand them to the prior bot (:mod:`.heuristics`).

A Decision is assembled by :class:`DecisionEncoder` from encodings: the game's encoded View
(``Game.view_bytes``, where the game encodes it without building the message) parsed straight
into the envelope, and each legal move's encoding, made
once per move and kept, merged in one call; the bot's answer maps back to the engine move through
the same table. :func:`built_decision_message` builds the same message field by field (copying
the View message and converting each move), the slower way the rollouts used first; the tests
compare the two."""
from __future__ import annotations

import json
from typing import Any

from referee.core.contract import Event, Game
from referee.sim import Simulation
from referee.v1 import referee_pb2

#: Moves whose encodings an encoder keeps, per game (far more than any game's distinct moves
#: in a search; beyond it, moves are encoded each time).
MOVE_CACHE = 1 << 16


class DecisionEncoder:
    """Builds one game's Decision messages from forward-model states, and maps a bot's answer
    back to the engine move, each move encoded once."""

    __slots__ = ("_encoded_views", "_fragments", "_moves", "game", "name")

    def __init__(self, game: Game):
        self.game = game
        self.name = game.spec.name
        #: engine move -> its encoding as a Decision's ``legal_moves`` entry
        self._fragments: dict[Any, bytes] = {}
        #: the encoding of the envelope Move -> engine move
        self._moves: dict[bytes, Any] = {}
        #: the game encodes its View without building the message (``Game.view_bytes``
        #: overridden): parse that, else copy the message in (no encoding round trip)
        self._encoded_views = type(game).view_bytes is not Game.view_bytes

    def _fragment(self, move: Any) -> bytes:
        enc = self._fragments.get(move)
        if enc is None:
            wrapped = referee_pb2.Move()
            getattr(wrapped, self.name).CopyFrom(self.game.move_to_proto(move))
            enc = referee_pb2.Decision(legal_moves=[wrapped]).SerializeToString()
            if len(self._fragments) < MOVE_CACHE:
                self._fragments[move] = enc
                self._moves[wrapped.SerializeToString(deterministic=True)] = move
        return enc

    def decision(self, sim: Simulation, seat: int, kind: str, moves: list[Any], version: int,
                 prompt: str = "") -> referee_pb2.Decision:
        """The Decision the referee would push to ``seat``: its view and every legal move."""
        message = referee_pb2.Decision(match_id="duel", state_version=version, seat=seat,
                                       kind=kind, prompt=prompt)
        if self._encoded_views:
            getattr(message.view, self.name).MergeFromString(self.game.view_bytes(sim.state,
                                                                                  seat))
        else:
            getattr(message.view, self.name).CopyFrom(self.game.view(sim.state, seat))
        message.MergeFromString(b"".join([self._fragment(m) for m in moves]))
        return message

    def move(self, answer: referee_pb2.Move) -> Any:
        """The engine move of a bot's answer (one of a Decision's ``legal_moves``)."""
        move = self._moves.get(answer.SerializeToString(deterministic=True), _MISSING)
        if move is _MISSING:
            return self.game.move_from_proto(getattr(answer, self.name))
        return move


_MISSING = object()
_ENCODERS: dict[str, DecisionEncoder] = {}


def encoder(game: Game) -> DecisionEncoder:
    """The (shared) encoder of ``game``."""
    enc = _ENCODERS.get(game.spec.name)
    if enc is None or enc.game is not game:
        enc = _ENCODERS[game.spec.name] = DecisionEncoder(game)
    return enc


def decision_message(sim: Simulation, seat: int, kind: str, moves: list[Any], version: int,
                     prompt: str = "") -> referee_pb2.Decision:
    """The Decision the referee would push to ``seat``: its view and every legal move."""
    return encoder(sim.game).decision(sim, seat, kind, moves, version, prompt)


def built_decision_message(sim: Simulation, seat: int, kind: str, moves: list[Any],
                           version: int, prompt: str = "") -> referee_pb2.Decision:
    """:func:`decision_message` built field by field: the View message copied in, each move
    converted (the first rollouts' way, kept to check the encoder against)."""
    name = sim.game.spec.name
    message = referee_pb2.Decision(match_id="duel", state_version=version, seat=seat, kind=kind,
                                   prompt=prompt)
    getattr(message.view, name).CopyFrom(sim.view(seat))
    for m in moves:
        getattr(message.legal_moves.add(), name).CopyFrom(sim.move_to_proto(m))
    return message


def event_message(event: Event, version: int) -> referee_pb2.MatchEvent:
    """A public event as the referee sends it (``Join.events``)."""
    return referee_pb2.MatchEvent(
        state_version=version, seat=event.seat, kind=event.kind, text=event.text,
        data_json=json.dumps(event.data, separators=(",", ":")) if event.data else "{}")


__all__ = ["DecisionEncoder", "built_decision_message", "decision_message", "encoder",
           "event_message"]
