"""Santa Maria through the project's match loop: registry, records, replay verification."""
import random

from referee.core import registry
from referee.core.match import Match, replay


def test_registered_and_replayable():
    game = registry.get("santa_maria")
    assert game.spec.min_seats == 1 and game.spec.max_seats == 4
    for n, options in ((1, {}), (3, {"setup": "advanced", "shared_blue_dice": True})):
        m = Match.create(game, options, n, seed=1234 + n)
        rnd = random.Random(n)
        while (d := m.decision()) is not None:
            m.submit(d.seat, d.moves[rnd.randrange(len(d.moves))], m.version)
        record = m.record()
        again = replay(game, record)
        assert again.moves[-1].state_hash == m.moves[-1].state_hash
        assert record["result"]["scores"] == m.result().scores


def test_default_move_is_listed():
    game = registry.get("santa_maria")
    m = Match.create(game, {"setup": "advanced"}, 2, seed=5)
    while (d := m.decision()) is not None:
        mv = game.default_move(m.state, d)
        assert mv in d.moves
        m.submit(d.seat, mv)
    assert m.result() is not None


def test_views_serialise_for_every_seat_and_spectator():
    game = registry.get("santa_maria")
    m = Match.create(game, {}, 4, seed=9)
    rnd = random.Random(9)
    k = 0
    while (d := m.decision()) is not None:
        if k % 25 == 0:
            for s in (None, 0, 1, 2, 3):
                assert game.view(m.state, s).SerializeToString(deterministic=True)
        m.submit(d.seat, d.moves[rnd.randrange(len(d.moves))])
        k += 1
    final = game.view(m.state, None)
    assert len(final.final) == 4 and final.current_seat == -1
