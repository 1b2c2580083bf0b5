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


def test_cloned_state_keeps_interned_moves():
    import copy

    game = registry.get("santa_maria")
    m = Match.create(game, {}, 2, seed=3)
    d = m.decision()
    clone = copy.deepcopy(m.state)
    assert game.decision(clone).moves[0] is d.moves[0]


def test_view_describes_pending_decisions():
    """A bot plays from the view: the tile to place and the exchange options are in Pending."""
    from referee.games.santa_maria import moves as mv
    from referee.games.santa_maria import rules as R

    from .helpers import B, X, new_state, play, set_colony, to_turn_of

    game = registry.get("santa_maria")
    s = new_state(2, 2)
    to_turn_of(s, 0)
    s.players[0].res = [2, 1, 0, 0, 0]
    play(s, mv.expand(6, (2, 1, 0, 0, 0)))
    v = game.view(s, 0)
    assert v.pending.kind == "santa_maria.place_tile" and v.pending.slot == 6
    assert len(v.pending.tile) == 3 and not v.display[6].present
    to_turn_of(s, 0)
    set_colony(s, 0, {(1, 1): B("forest", X(({"wood": 1}, {"coins": 3}), ({"gem": 1}, {"points": 1})))})
    s.players[0].blue = [1]
    s.players[0].res = [1, 0, 0, 0, 0]
    play(s, mv.use_die(mv.BLUE, 1, mv.ROW, 1, -1))
    v = game.view(s, 0)
    assert v.pending.kind == "santa_maria.exchange" and (v.pending.row, v.pending.col) == (1, 1)
    assert [o.gain.coins for o in v.pending.options] == [3, 0]
    assert v.players[0].colony[0].content.effects[0].kind == 2  # EXCHANGE
    assert R.decision(s).kind == v.pending.kind
