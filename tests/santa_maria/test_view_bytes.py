"""The encoded View from cached fragments (``view.build_view_bytes``, the referee's and the
search rollouts' path) parses to exactly the View built field by field, and no change of a seat's
holdings or of the board is served from a stale fragment."""
from __future__ import annotations

import dataclasses
import random

from referee.games.santa_maria import rules as R
from referee.games.santa_maria.game import SantaMariaGame
from referee.games.santa_maria.state import Player
from tests.contract.encoded_views import check_a_random_game, check_no_stale_fragment

from .helpers import new_state
from .hooks import OPTION_SETS

GAME = SantaMariaGame()


def test_the_encoded_view_parses_to_the_built_one():
    """Random games at every seat count and option set, every seat and a spectator at every
    decision and at the end."""
    checked = 0
    for g in range(10):
        state = new_state(1 + g % 4, seed=700 + g, **OPTION_SETS[g % len(OPTION_SETS)])
        checked += check_a_random_game(GAME, state, random.Random(g))
    assert checked > 3000


def _mutations(state: R.State):
    """(what, change) pairs: one change to each field of a player and of the board the View
    shows, each valid for the View."""
    p = state.players[0]
    cell = next(c for c in range(len(p.grid)) if p.grid[c])
    empty = next(c for c in range(len(p.grid)) if not p.grid[c])
    yield "board", lambda: setattr(p, "board", p.board + "x")
    yield "grid", lambda: p.grid.__setitem__(empty, p.grid[cell])
    yield "printed", lambda: setattr(p, "printed", p.printed ^ (1 << cell))
    yield "die_on", lambda: p.die_on.__setitem__(cell, p.die_on[cell] + 1)
    yield "coins_on", lambda: p.coins_on.__setitem__(cell, p.coins_on[cell] + 1)
    for name in ("coins", "points", "religion", "conq", "blue_unlocked", "blue_used",
                 "white_used", "activations", "monks_left", "retreat", "scholars"):
        yield name, lambda name=name: setattr(p, name, getattr(p, name) + 1)
    yield "res", lambda: p.res.__setitem__(0, p.res[0] + 1)
    yield "blue", lambda: p.blue.append(3)
    yield "port", lambda: p.port[0].append(0)
    yield "own_scholar", lambda: setattr(p, "own_scholar", p.own_scholar + "x")
    yield "display", lambda: state.display.__setitem__(0, -1)
    yield "ship_slots", lambda: state.ship_slots.__setitem__(0, -1)
    yield "monks", lambda: state.monks[0].append(1)
    tiles = state.monk_tiles  # the first two are Scholars
    yield "monk_tiles", lambda: tiles.__setitem__(slice(0, 2), [tiles[1], tiles[0]])
    yield "retreat_occ", lambda: state.retreat_occ.__setitem__(0, state.retreat_occ[0] + 1)
    yield "boards_left", lambda: state.boards_left.append(len(state.rules.boards_a) - 1)
    yield "lots", lambda: state.lots.reverse()
    yield "lot_taken", lambda: state.lot_taken.__setitem__(0, not state.lot_taken[0])


def test_no_change_is_served_from_a_stale_fragment():
    """Each change to a seat's holdings or the board, made after the View was encoded (its
    fragments cached), shows in the next encoding as in the View built anew."""
    base = new_state(2, seed=11, setup="advanced")  # its draft lots stay in the View
    rnd = random.Random(3)
    for _ in range(10):  # into the first year
        d = R.decision(base)
        R.apply(base, d.seat, rnd.choice(d.moves))
    assert R.decision(base) is not None
    covered = check_no_stale_fragment(GAME, base, _mutations)
    shown = {f.name for f in dataclasses.fields(Player)} - {"occ", "bld", "blocked",
                                                            "conq_stamp"}
    assert shown <= covered
