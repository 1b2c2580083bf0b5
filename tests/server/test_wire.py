"""The referee sends each Decision as bytes assembled from encodings (the game's ``view_bytes``
and each legal move's cached encoding) instead of building the message: those bytes must parse
to exactly the message built field by field, for every game, at every kind of state."""
from __future__ import annotations

import random

import pytest

from referee.core import registry
from referee.core.match import Match
from referee.server.base.wire import GameWire, server_decision
from referee.v1 import referee_pb2 as pb


def _by_fields(wire: GameWire, m: Match, d, deadline: int) -> pb.Decision:
    dp = pb.Decision(match_id="m", state_version=m.version, seat=d.seat, kind=d.kind,
                     prompt=d.prompt, deadline_unix_ms=deadline)
    getattr(dp.view, wire.field).CopyFrom(wire.game.view(m.state, d.seat))
    dp.legal_moves.extend(wire.move(x) for x in d.moves)
    return dp


@pytest.mark.parametrize("name", sorted(registry.games()))
def test_assembled_decisions_equal_field_by_field_ones(name):
    game = registry.get(name)
    wire = GameWire(game)
    spec = game.spec
    checked = 0
    for seed in range(6):
        seats = spec.min_seats + seed % (spec.max_seats - spec.min_seats + 1)
        m = Match.create(game, {}, seats, seed)
        rnd = random.Random(seed)
        step = 0
        while (d := m.decision()) is not None:
            if step % 7 == 0:
                deadline = rnd.choice([0, 1_795_000_000_123])
                head = pb.Decision(match_id="m", state_version=m.version, seat=d.seat,
                                   kind=d.kind, prompt=d.prompt, deadline_unix_ms=deadline)
                body = wire.decision_body(head, m.state, d.seat, d.moves)
                expected = _by_fields(wire, m, d, deadline)
                assert pb.Decision.FromString(body) == expected
                # the view bytes alone, and a spectator's, parse to the game's view
                assert type(game.view(m.state, None)).FromString(
                    game.view_bytes(m.state, None)) == game.view(m.state, None)
                sm = pb.ServerMessage.FromString(server_decision(body))
                assert sm.WhichOneof("msg") == "decision" and sm.decision == expected
                checked += 1
            m.submit(d.seat, d.moves[rnd.randrange(len(d.moves))])
            step += 1
    assert checked > 30


@pytest.mark.parametrize("name", sorted(registry.games()))
def test_assembled_spectator_updates_equal_field_by_field_ones(name):
    """Spectators' updates are assembled once per state version from the encoded public view
    (GameWire.spectator_update): they parse to the WatchMessage built field by field."""
    game = registry.get(name)
    wire = GameWire(game)
    m = Match.create(game, {}, game.spec.min_seats, 3)
    rnd = random.Random(3)
    for _ in range(40):
        d = m.decision()
        if d is None:
            break
        expected = pb.WatchMessage(update=pb.SpectatorUpdate(
            state_version=m.version, view=wire.view(m.state, None), current_seat=d.seat,
            decision_kind=d.kind))
        data = wire.spectator_update(m.version, game.view_bytes(m.state, None), d.seat, d.kind)
        assert pb.WatchMessage.FromString(data) == expected
        m.submit(d.seat, d.moves[rnd.randrange(len(d.moves))])
    over = pb.WatchMessage(update=pb.SpectatorUpdate(
        state_version=m.version, view=wire.view(m.state, None), current_seat=-1))
    data = wire.spectator_update(m.version, game.view_bytes(m.state, None), -1, "")
    assert pb.WatchMessage.FromString(data) == over
