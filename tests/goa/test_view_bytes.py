"""The encoded View from cached fragments (``view.build_view_bytes``, the referee's and the
search rollouts' path) parses to exactly the View built field by field, and no change of the
grid, a seat's holdings or the colony supply is served from a stale fragment."""
from __future__ import annotations

import random

from referee.games.goa import GAME
from referee.games.goa.board import GRID_CELLS
from referee.games.goa.state import Land
from tests.contract.encoded_views import check_a_random_game, check_no_stale_fragment

from .helpers import new_game
from .hooks import OPTION_SETS


def test_the_encoded_view_parses_to_the_built_one():
    """Random games at every seat count and option set, every seat and a spectator at every
    decision and at the end."""
    checked = 0
    for g in range(len(OPTION_SETS)):
        state = new_game(2 + g % 3, seed=800 + g, **OPTION_SETS[g % len(OPTION_SETS)])
        checked += check_a_random_game(GAME, state, random.Random(g))
    assert checked > 2000


def _mutations(state):
    """(what, change) pairs: one change to each part of the grid, of a seat's holdings and of
    the colony supply that the View shows, each valid for the View."""
    tile = next(t for t in state.grid if t >= 0)
    yield "grid", lambda: state.grid.__setitem__(state.grid.index(tile), -1)
    yield "bonanza", lambda: state.bonanza.__setitem__(0, 0 if state.bonanza[0] < 0 else -1)
    free = next(c for c in GRID_CELLS if c not in state.tokens)
    yield "tokens", lambda: (state.tokens.append(free), state.token_seats.append(0))
    placed = next(k for k, c in enumerate(state.tokens) if c in GRID_CELLS)
    yield "token cell", lambda: state.tokens.__setitem__(placed, free)
    yield "token_seats", lambda: state.token_seats.__setitem__(
        placed, (state.token_seats[placed] + 1) % state.n)
    for name in ("ships", "colonists", "extra_cards", "singles_down"):
        yield name, lambda name=name: getattr(state, name).__setitem__(
            0, getattr(state, name)[0] + 1)
    yield "hands", lambda: state.hands[0].append(0)
    yield "rows", lambda: state.rows[0].__setitem__(0, state.rows[0][0] + 1)
    yield "lands", lambda: state.lands[0].append(Land(False, tile, [1, 2], [-1, 0]))
    yield "land spices", lambda: state.lands[0][0].spices.__setitem__(0, 1)
    yield "kept", lambda: state.kept[0].append(tile)
    yield "red_used", lambda: state.red_used[0].append(1)
    yield "colonies", lambda: state.colonies[0].__setitem__(0, 0 if state.colonies[0][0] < 0
                                                            else -1)
    yield "colony_supply", lambda: state.colony_supply[0].pop()


def test_no_change_is_served_from_a_stale_fragment():
    """Each change, made after the View was encoded (its fragments cached), shows in the next
    encoding as in the View built anew."""
    base = new_game(3, seed=12)
    rnd = random.Random(4)
    for _ in range(60):  # into the game: tokens placed, lands and tiles taken
        d = GAME.decision(base)
        assert d is not None
        GAME.apply(base, d.seat, rnd.choice(d.moves))
    tile = next(t for t in base.grid if t >= 0)
    base.lands[0].append(Land(False, tile, [1, 2], [-1, 0]))  # a land whose spices change
    assert len(check_no_stale_fragment(GAME, base, _mutations)) == 17
