"""A check the games' cached-fragment views share (``tests/<game>/test_view_bytes.py``)."""
from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from referee.core.contract import Game


def check_a_random_game(game: Game, state: Any, rnd: random.Random) -> int:
    """Play ``state`` to its end with random moves; at every decision and at the end, for every
    seat and a spectator, ``game.view_bytes`` must parse to exactly ``game.view``. Returns the
    number of views checked."""
    checked = 0
    message = game.view_message
    while True:
        d = game.decision(state)
        for seat in [None, *range(game.seat_count(state))]:
            assert message.FromString(game.view_bytes(state, seat)) == game.view(state, seat), \
                (seat, d)
            checked += 1
        if d is None:
            return checked
        game.apply(state, d.seat, rnd.choice(d.moves))


def check_no_stale_fragment(game: Game, base: Any,
                            mutations: Callable[[Any], Iterable[tuple[str, Callable[[], Any]]]]
                            ) -> set[str]:
    """For each change ``mutations(state)`` names (what, change), made to a copy of ``base``
    after seat 0's View was encoded (its fragments cached): the change must show in the View,
    and the next encoding must parse to the View built anew. Returns the names checked."""
    message = game.view_message
    covered = set()
    for what, _change in mutations(base):
        state = game.clone(base)
        game.view_bytes(state, 0)
        change = dict(mutations(state))[what]
        before = game.view(state, 0)
        change()
        assert game.view(state, 0) != before, f"{what}: the change does not show in the View"
        assert message.FromString(game.view_bytes(state, 0)) == game.view(state, 0), \
            f"{what}: a stale fragment"
        covered.add(what)
    return covered
