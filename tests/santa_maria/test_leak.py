"""Hidden information (DESIGN.md, 'Hidden information'): re-randomise everything seat s cannot
see — the face-down development and ship piles, the Scholars/Bishops left in the box, the ships
in other seats' ports (placed face down, 'Transport maritime'), the RNG — and view(s) stays
byte-identical. A control checks that the view does show what s may see."""
import copy
import random

from referee.core.rng import Rng

from .helpers import GAME, R, new_state


def rerandomise(state: R.State, seat: int | None, rnd: random.Random) -> R.State:
    other = copy.deepcopy(state)
    other.cache = None
    rnd.shuffle(other.pile_d)
    rnd.shuffle(other.pile_t)
    rnd.shuffle(other.set_aside)
    other.rng = Rng(rnd.getrandbits(64))
    pool = other.ship_pile
    rnd.shuffle(pool)
    for s, p in enumerate(other.players):
        if s == seat:
            continue
        for dock in p.port:
            for i in range(len(dock)):
                if pool:
                    j = rnd.randrange(len(pool))
                    dock[i], pool[j] = pool[j], dock[i]
    return other


def _views(state, seat):
    return GAME.view(state, seat).SerializeToString(deterministic=True)


def test_views_ignore_what_a_seat_cannot_see():
    rnd = random.Random(3)
    checked = 0
    for n, options in ((2, {}), (3, {"setup": "advanced"}), (4, {"shared_blue_dice": True}), (1, {})):
        state = new_state(n, 11 + n, **options)
        play = random.Random(n)
        step = 0
        while (d := R.decision(state)) is not None:
            if step % 13 == 0 and state.phase != R.OVER:
                for seat in list(range(n)) + [None]:
                    before = _views(state, seat)
                    for _ in range(2):
                        assert _views(rerandomise(state, seat, rnd), seat) == before
                        checked += 1
            # prefer long games with ships, so ports fill up
            weights = [0.05 if type(m).__name__ == "Retreat" else 1.0 for m in d.moves]
            R.apply(state, d.seat, play.choices(d.moves, weights)[0])
            step += 1
    assert checked > 100


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
