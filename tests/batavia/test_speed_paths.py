"""The fast paths (cached-fragment view, direct state digest) agree with the plain ones."""
from __future__ import annotations

import copy
import dataclasses
import random

from referee.games.batavia import GAME
from referee.games.batavia import rules as R
from referee.games.batavia.view import build_view, build_view_direct

from .helpers import new_state


def random_states(games=30):
    for g in range(games):
        s = new_state(3 + g % 3, seed=900 + g, setup=("face_down", "face_up")[g % 2])
        rnd = random.Random(g)
        while (d := R.decision(s)) is not None:
            yield s
            R.apply(s, d.seat, rnd.choice(d.moves))
        yield s


def test_fragment_view_equals_direct_build():
    checked = 0
    for s in random_states():
        for seat in [None, *range(s.n)]:
            a = build_view(s, seat).SerializeToString(deterministic=True)
            b = build_view_direct(s, seat).SerializeToString(deterministic=True)
            assert a == b
            checked += 1
    assert checked > 5000


def _mutated(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, dict):
        return {**value, "extra": 1}
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            return [_mutated(value[0]), *value[1:]]
        if value and isinstance(value[0], dict):
            return [{**value[0], "x": 1}, *value[1:]]
        return [*value, 1]
    raise TypeError(type(value))


def test_state_digest_covers_every_field():
    """Changing any field of the state (but the sheet-derived rules) changes the digest."""
    s = new_state(4, seed=5)
    R.final_scoring(copy.deepcopy(s), "x")  # exercise; s itself stays live
    s.final = [{"total": 0}] * 4
    base = GAME.hash_state(s)
    names = [f.name for f in dataclasses.fields(R.State) if f.name != "rules"]
    for name in names:
        t = copy.deepcopy(s)
        if name == "rng":
            t.rng.state += 1
        else:
            setattr(t, name, _mutated(getattr(t, name)))
        assert GAME.hash_state(t) != base, f"field {name} is not covered by the state digest"
