"""What a bot received, as the forward model's input (docs/research/forward-model.md): the
referee's ``MatchEvent`` messages as core ``Event``s (the sampler's ``history``), a Decision's
view as the game's View message, and a whole bot's knowledge (its Welcome, its last Decision,
the events so far) as a sampled :class:`Simulation`."""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from google.protobuf.message import Message

from referee.core import registry
from referee.core.contract import Event, Game
from referee.core.rng import Rng
from referee.v1 import referee_pb2 as pb

from .model import Simulation


def event_from_proto(event: pb.MatchEvent) -> Event:
    """A MatchEvent (``Join.events``) as the core ``Event`` the game's ``apply`` returned: its
    kind, seat, text and ``data_json`` decoded (``{}`` when empty)."""
    data: Any = json.loads(event.data_json) if event.data_json else {}
    return Event(kind=event.kind, seat=event.seat, text=event.text,
                 data=data if isinstance(data, dict) else {"value": data})


def events_from_proto(events: Iterable[pb.MatchEvent]) -> list[Event]:
    """MatchEvents, oldest first, as a sampler's ``history``."""
    return [event_from_proto(e) for e in events]


def game_view(game: Game | str, view: pb.Decision | pb.View | bytes) -> Message:
    """The game's own View message from what a bot got: a Decision (its ``view``), the
    ``referee.v1.View`` envelope, or that envelope's bytes. ValueError if the view is not of
    this game."""
    g = registry.get(game) if isinstance(game, str) else game
    if isinstance(view, pb.Decision):
        view = view.view
    elif isinstance(view, bytes | bytearray):
        envelope = pb.View()
        envelope.ParseFromString(bytes(view))
        view = envelope
    if view.WhichOneof("game") != g.spec.name:
        raise ValueError(f"the view is for {view.WhichOneof('game')!r}, not {g.spec.name!r}")
    return getattr(view, g.spec.name)


def from_decision(welcome: pb.Welcome, decision: pb.Decision, rng: Rng | int,
                  events: Iterable[pb.MatchEvent] = ()) -> Simulation:
    """A full state drawn from what one bot knows: its match's Welcome (game, seat count,
    options), its pending Decision (its seat and view) and the MatchEvents it was sent so far
    (``Join.events``), hidden parts drawn with ``rng`` by the game's sampler."""
    g = registry.get(welcome.game)
    return Simulation.from_views(
        g, {decision.seat: game_view(g, decision)}, welcome.seat_count, rng,
        history=events_from_proto(events), options=dict(welcome.options))
