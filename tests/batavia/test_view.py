"""What a Batavia view shows (RULINGS 4). That no view depends on what its seat cannot see is
checked for every game in tests/contract/test_game_contract.py, with ``hooks.rerandomise``."""
from __future__ import annotations

from referee.games.batavia import GAME

from .helpers import new_state


def test_views_hide_hands_but_show_sizes():
    """RULINGS 4: own hand shown; others' hand sizes and bills are public; spectators see no hand."""
    s = new_state(4, seed=3)
    v0 = GAME.view(s, 0)
    assert list(v0.my_hand.count) == s.hands[0]
    assert [p.hand_size for p in v0.players] == [10, 10, 10, 10]
    assert [p.bills for p in v0.players] == [15] * 4
    spectator = GAME.view(s, None)
    assert not spectator.HasField("my_hand") and spectator.seat == -1
    hidden = [st for st in spectator.stalls if st.state == 2]
    assert len(hidden) == 25 and all(st.company == 0 and st.good == 0 for st in hidden)
