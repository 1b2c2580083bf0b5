"""The messages a referee would send a bot, built from a forward-model state: a seat's Decision
(its view and every legal move) and a public event. The duels hand them to the SDK bots, and the
search's prior-guided rollouts hand them to the prior bot (:mod:`.heuristics`)."""
from __future__ import annotations

import json
from typing import Any

from referee.core.contract import Event
from referee.sim import Simulation
from referee.v1 import referee_pb2


def decision_message(sim: Simulation, seat: int, kind: str, moves: list[Any], version: int,
                     prompt: str = "") -> referee_pb2.Decision:
    """The Decision the referee would push to ``seat``: its view and every legal move."""
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


__all__ = ["decision_message", "event_message"]
