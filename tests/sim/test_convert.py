"""What a bot received, as the forward model's input (referee.sim.convert): the referee's
MatchEvents turn back into exactly the core Events the game's ``apply`` returned (the sampler's
``history``), and a Decision's view, its envelope or the envelope's bytes into the game's View
message."""
from __future__ import annotations

import random

import pytest

from referee.core import registry
from referee.server.base.wire import GameWire, match_event
from referee.sim import Simulation
from referee.sim.convert import event_from_proto, events_from_proto, game_view
from referee.v1 import referee_pb2 as pb


@pytest.mark.parametrize("name", sorted(registry.games()))
def test_match_events_come_back_as_the_games_events(name):
    sim = Simulation.new(name, registry.get(name).spec.max_seats, 3)
    rnd = random.Random(3)
    sent, events = [], []
    version = 0
    while not sim.over and version < 300:
        version += 1
        played = sim.apply(sim.legal_moves()[rnd.randrange(len(sim.legal_moves()))])
        events += played
        sent += [match_event(e, version, False) for e in played]  # as the referee sends them
    assert events, "random play makes public events"
    assert events_from_proto(sent) == events
    assert event_from_proto(pb.MatchEvent(kind="x.y", seat=-1, text="t")).data == {}


def test_a_decisions_view_is_the_games_view_message():
    game = registry.get("goa")
    sim = Simulation.new(game, 3, 4)
    wire = GameWire(game)
    envelope = wire.view(sim.state, 1)
    decision = pb.Decision(seat=1, view=envelope)
    want = sim.view(1)
    assert game_view("goa", decision) == want
    assert game_view(game, envelope) == want
    assert game_view(game, envelope.SerializeToString()) == want
    with pytest.raises(ValueError, match="not 'batavia'"):
        game_view("batavia", decision)
