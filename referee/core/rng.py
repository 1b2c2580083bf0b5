"""A small deterministic RNG whose whole state is one integer, so it lives in the game state,
hashes cheaply and replays identically on every platform (splitmix64); and the keyed chance
sources a game state holds (``Streams``, and ``SingleStream`` for old records)."""
from __future__ import annotations

import hashlib
from collections.abc import MutableSequence
from typing import Any, Protocol, TypeVar

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
T = TypeVar("T")


def _mix(z: int) -> int:
    """The splitmix64 output function: a bijection of 64-bit integers."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class Rng:
    __slots__ = ("state",)

    def __init__(self, seed: int):
        self.state = seed & _MASK

    def next64(self) -> int:
        self.state = z = (self.state + _GAMMA) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in [0, n) without modulo bias."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next64()
            if x < limit:
                return x % n

    def randint(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi], like a die."""
        return lo + self.below(hi - lo + 1)

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def shuffle_cards(self, items: MutableSequence[int]) -> None:
        """Shuffle a pile of int-coded cards so that where each card lands depends only on this
        stream and the card itself (the k-th copy of a value, counted in the pile's order before
        the shuffle, is a card of its own), not on which other cards are in the pile: two piles
        shuffled from the same stream order the cards they share alike. For piles whose content
        depends on play (discards reshuffled). Sorts by a per-card priority, the splitmix64 mix
        of one draw and the card, distinct for distinct cards: uniform, like ``shuffle``."""
        base = self.next64()
        copies: dict[int, int] = {}
        ranked = []
        for x in items:
            k = copies.get(x, 0)
            copies[x] = k + 1
            ranked.append((_mix((base + (((x & 0xFFFFFFFF) << 32) | k) * _GAMMA) & _MASK), x))
        ranked.sort()
        items[:] = [x for _, x in ranked]

    def fork(self, salt: int) -> Rng:
        """An independent stream derived from this one's state and a salt (does not advance it)."""
        child = Rng(self.state ^ ((salt * _GAMMA) & _MASK))
        child.next64()
        return child

    def __repr__(self) -> str:  # never print the state by accident in logs
        return "Rng(<hidden>)"


# ---------------------------------------------------------------------------- keyed chance
# docs/ARCHITECTURE.md, "Fair chance". A game never draws from one running stream: each chance
# event (a deck shuffled at set-up, the die of round 3, seat 2's second blue die in year 4, ...)
# asks the state's chance source for the stream of its *key*, a short tuple naming what it is.

Key = int | str


def _blake64(data: bytes, key: int, person: bytes) -> int:
    h = hashlib.blake2b(data, digest_size=8, key=key.to_bytes(8, "little"), person=person)
    return int.from_bytes(h.digest(), "little")


class Chance(Protocol):
    """Where a game state's chance comes from (its ``rng`` field): ``stream(*key)`` is the stream
    of one chance event, ``next_stream(*key)`` that of the next occurrence of an event that can
    happen again (a pile reshuffled), ``hash_key()`` what a state hash covers."""

    @property
    def state(self) -> int: ...

    def stream(self, *key: Key) -> Rng: ...

    def next_stream(self, *key: Key) -> Rng: ...

    def hash_key(self) -> Any: ...


class Streams:
    """Keyed chance (record format ``referee-record/2``): the stream of ``key`` is a splitmix64
    seeded with a keyed BLAKE2b of the key, under a root (``state``) derived from the match seed
    and a domain ("game", or "timeout" for the time policy). A stream is a pure function of
    (seed, domain, key): it does not depend on what was drawn before or by whom, so two matches
    with the same seed give each event the same draws whatever the seats chose. The only thing
    that changes during play is ``counts``, how often each repeatable event (``next_stream``) has
    happened. A sampler redraws every future event at once by giving a state a fresh root
    (``Streams.from_root(root, counts)``)."""

    __slots__ = ("counts", "state")

    def __init__(self, seed: int, domain: str = "game"):
        self.state = _blake64(domain.encode(), seed & _MASK, b"referee-root")
        self.counts: dict[tuple[Key, ...], int] = {}

    @classmethod
    def from_root(cls, root: int, counts: dict[tuple[Key, ...], int] | None = None) -> Streams:
        out = cls.__new__(cls)
        out.state = root & _MASK
        out.counts = dict(counts or {})
        return out

    def stream(self, *key: Key) -> Rng:
        """The stream of the chance event ``key`` (ints and strings; ``repr`` of the tuple is
        what is hashed, so ``("die", 3)`` and ``("die", "3")`` differ). Asking twice for one key
        gives the same draws: an event that can happen again uses ``next_stream``."""
        return Rng(_blake64(repr(key).encode(), self.state, b"referee-stream"))

    def next_stream(self, *key: Key) -> Rng:
        """The stream of the next occurrence of ``key``: ``stream(*key, n)`` for its n-th time
        (from 0), so the 2nd reshuffle of a pile draws alike in every match of the seed."""
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        return self.stream(*key, n)

    def hash_key(self) -> Any:
        return (self.state, sorted((repr(k), n) for k, n in self.counts.items()))

    def hash_form(self) -> Any:
        return {"streams": self.state, "counts": [[list(k), n] for k, n in sorted(
            self.counts.items(), key=lambda kv: repr(kv[0]))]}

    def __deepcopy__(self, memo: dict[int, Any]) -> Streams:
        return Streams.from_root(self.state, self.counts)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Streams) and other.state == self.state
                and other.counts == self.counts)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:  # never print the root by accident in logs
        return "Streams(<hidden>)"


class SingleStream(Rng):
    """The chance of record format ``referee-record/1``, kept so old records replay: one running
    stream for the whole match, every event drawing from it in turn whatever its key (so one
    seat's choices shifted every later draw). Hashes as the plain ``Rng`` it was."""

    __slots__ = ()

    def stream(self, *key: Key) -> Rng:
        return self

    def next_stream(self, *key: Key) -> Rng:
        return self

    def shuffle_cards(self, items: MutableSequence[int]) -> None:
        self.shuffle(items)  # /1 shuffled every pile alike

    def hash_key(self) -> Any:
        return self.state

    def __repr__(self) -> str:
        return "SingleStream(<hidden>)"
