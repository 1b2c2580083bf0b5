"""What a Santa Maria view shows: a seat sees its own ships' faces, the others' only as counts
('Transport maritime': ships lie face down in the port), and never the piles or the RNG. That no
view depends on what its seat cannot see is checked for every game in
tests/contract/test_game_contract.py, with ``hooks.rerandomise``."""
import copy

from .helpers import GAME, new_state


def _views(state, seat):
    return GAME.view(state, seat).SerializeToString(deterministic=True)


def test_control_own_ships_are_visible_to_the_owner_only():
    state = new_state(2, 4)
    state.players[0].port[1].append(state.ship_pile[0])
    mine = GAME.view(state, 0)
    theirs = GAME.view(state, 1)
    assert len(mine.players[0].port.own_ships) == 1
    assert len(theirs.players[0].port.own_ships) == 0
    assert list(theirs.players[0].port.ships_per_dock) == [0, 1, 0, 0]
    # the owner's view changes with the ship's face, the opponent's does not
    changed = copy.deepcopy(state)
    changed.players[0].port[1][0] = state.ship_pile[1]
    changed.cache = None
    if state.rules.ships[state.ship_pile[0]] != state.rules.ships[state.ship_pile[1]]:
        assert _views(changed, 0) != _views(state, 0)
    assert _views(changed, 1) == _views(state, 1)


def test_view_never_carries_rng_or_piles():
    state = new_state(3, 8)
    text = str(GAME.view(state, 0))
    assert "rng" not in text.lower()
    fields = {f.name for f in GAME.view_message.DESCRIPTOR.fields}
    assert not {"pile_d", "pile_t", "ship_pile", "set_aside", "rng"} & fields
