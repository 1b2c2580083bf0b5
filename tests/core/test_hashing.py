"""The state hash's fast path (referee/core/hashing.py): ``digest`` writes the same canonical JSON
as ``reference_digest`` (``canonical`` with sorted keys), so every record's hashes stay what they
were; only the walk is quicker. Checked on arbitrary nested values of every kind ``canonical``
takes, and on the states of random games of every game that hashes through it."""
from __future__ import annotations

import dataclasses
import enum
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.core import hashing, registry
from referee.core.rng import SingleStream, Streams
from tests.contract.test_game_contract import random_games


class Colour(enum.Enum):
    RED = "red"
    BLUE = (1, 2)


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 10


class Word(enum.StrEnum):
    A = "a"
    B = "b"


@dataclasses.dataclass
class Leaf:
    z: int
    a: list
    memo: object = dataclasses.field(default=None, metadata={"hash": False})


@dataclasses.dataclass
class Formed:
    """A dataclass with ``hash_form``: hashed as that, not as its fields."""

    x: int
    y: list

    def hash_form(self) -> tuple:
        return ("f", self.x, self.y)


@dataclasses.dataclass(slots=True)
class Slotted:
    b: object
    a: object


class Count(int):
    """An int subclass that is no enum: written as its number."""


class Pair(tuple):
    """A tuple subclass: a list in JSON, its items walked one by one."""


atoms = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.text(max_size=6),
                  st.sampled_from(list(Colour) + list(Level) + list(Word)),
                  st.integers(0, 99).map(Count))


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    keys = st.one_of(st.text(max_size=3), st.integers(-20, 20), st.booleans(),
                     st.sampled_from(list(Level)))
    return st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=4).map(tuple),
        st.lists(children, max_size=3).map(Pair),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
        st.dictionaries(keys, children, max_size=4),
        st.frozensets(st.integers(-50, 50), max_size=5),
        st.sets(st.text(max_size=2), max_size=4),
        st.builds(Leaf, st.integers(), st.lists(children, max_size=3), children),
        st.builds(Formed, st.integers(), st.lists(children, max_size=3)),
        st.builds(Slotted, children, children),
        st.integers(0, 2**32).map(SingleStream),
    )


values = st.recursive(atoms, _extend, max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_fast_digest_writes_the_canonical_text(value):
    assert hashing.digest(value) == hashing.reference_digest(value)


def test_the_cases_where_a_shortcut_would_differ():
    """Each case a quicker walk could get wrong, against ``canonical``'s text: int keys sort as
    text (10 before 9), True as the key "True", a later key that writes as an earlier one wins,
    an IntEnum or an int subclass as its number, a field marked ``hash: False`` is left out, a set is sorted."""
    cases = [
        {9: "a", 10: "b"},
        {True: 1, "x": 2},
        {1: "int", "1": "str"},
        [Level.HIGH, Word.B, Colour.BLUE, Count(5)],
        Leaf(1, [2], memo=object()),
        Formed(3, [Leaf(4, [])]),
        {"b": {7, 3, 5}, "a": Pair((1, Slotted(2, 3)))},
        Streams(11),
    ]
    for value in cases:
        assert hashing.digest(value) == hashing.reference_digest(value), value
    assert list(hashing.native({9: "a", 10: "b"})) == ["10", "9"]


def test_what_canonical_refuses_the_fast_path_refuses():
    for bad in (1.5, object(), [1, 2.0], {"a": {"b": 0.1}}):
        with pytest.raises(TypeError):
            hashing.reference_digest(bad)
        with pytest.raises(TypeError):
            hashing.digest(bad)


#: the games whose ``hash_state`` is the canonical JSON hash (Batavia writes its own, checked by
#: tests/batavia/test_speed_paths.py checks it covers every field)
CANONICAL_HASH_GAMES = ("goa", "santa_maria")


@pytest.mark.parametrize("name", CANONICAL_HASH_GAMES)
def test_every_state_of_random_games_hashes_as_before(name):
    """At every step of random games (every seat count, the game's option sets), the game's
    hash is the reference text's: the golden records' hashes cannot move."""
    checked = 0
    for game, state in itertools.islice(random_games(name, 6, 4321), 0, None, 7):
        assert game.hash_state(state) == hashing.reference_digest(state)
        checked += 1
    assert checked > 50
    assert name in registry.games()
