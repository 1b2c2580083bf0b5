"""A move's stored JSON text is cached by the identity of its dict (``store._move_text``): it is
always the text of that dict, never of another dict that held the same id before."""
from __future__ import annotations

import json

from referee.server.store import sqlite as store


def test_each_dict_gets_its_own_text_even_when_ids_are_reused():
    store._MOVE_TEXT.clear()
    for n in range(3 * store._MOVE_TEXT_LIMIT):  # the cache is cleared on the way
        move = {"bid": {"amount": n}}  # a fresh dict, freed after: CPython reuses its id
        assert store._move_text(move) == json.dumps(move, separators=(",", ":"))


def test_a_shared_dict_is_encoded_once():
    move = {"drawCards": {}}
    first = store._move_text(move)
    assert store._move_text(move) is first
