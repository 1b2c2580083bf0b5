"""Compact observation planes a game declares for learners (issue 36, item 1).

The research environments (``referee_research.envs``) can observe a seat through the generic
encoding of its View message (every field of the wire view flattened: 3,000 to 69,000 floats,
costly to build). A game that declares :class:`ObservationPlanes` gives them instead a compact
vector of *feature planes*: named slices, each with a one-line meaning, written straight from
the engine's state. The docs site lists each game's planes from the declaration.

The contract an implementation keeps (``tests/research/test_planes.py`` holds every game to it):

- **A function of the seat's view alone.** ``encode(state, seat, out)`` reads only what
  ``Game.view(state, seat)`` shows that seat: redrawing what the seat may not see leaves the
  vector unchanged (the leak test the View encoding has), and two states with equal views give
  equal vectors.
- **Fixed layout.** ``planes.width`` floats for every state, seat count and option of the game;
  the planes tile ``[0, width)`` in order, and each has a name unique in the game.
- **Cheap.** Written into ``out`` (zeroed by the caller, ``width`` long: a numpy float32 array in
  the environments; games do not import numpy), with no protobuf message built.

Nothing here names a game; a game returns its declaration from ``Game.observation_planes()``.
"""
from __future__ import annotations

import abc
from collections.abc import Iterator, MutableSequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FeaturePlane:
    """One named slice ``[start, start + width)`` of the vector."""

    name: str
    start: int
    width: int
    #: one line: what each slot holds and its scale (e.g. "coins / 30, one slot per seat")
    meaning: str

    @property
    def stop(self) -> int:
        return self.start + self.width


class PlaneLayout:
    """The planes of a game, laid out in the order they are added."""

    def __init__(self) -> None:
        self._planes: list[FeaturePlane] = []
        self._by_name: dict[str, FeaturePlane] = {}
        self.width = 0

    def add(self, name: str, width: int, meaning: str) -> int:
        """Appends a plane; its first slot (an encoder keeps it to write there)."""
        if name in self._by_name:
            raise ValueError(f"plane {name!r} declared twice")
        if width <= 0:
            raise ValueError(f"plane {name!r}: width must be positive, not {width}")
        if not meaning.strip():
            raise ValueError(f"plane {name!r}: say what its slots mean")
        plane = FeaturePlane(name, self.width, width, meaning)
        self._planes.append(plane)
        self._by_name[name] = plane
        self.width += width
        return plane.start

    def __iter__(self) -> Iterator[FeaturePlane]:
        return iter(self._planes)

    def __len__(self) -> int:
        return len(self._planes)

    def __getitem__(self, name: str) -> FeaturePlane:
        return self._by_name[name]


class ObservationPlanes(abc.ABC):
    """A game's compact observation (see the module docstring)."""

    #: the declared planes; ``planes.width`` is the vector's length
    planes: PlaneLayout

    @abc.abstractmethod
    def encode(self, state: Any, seat: int, out: MutableSequence[float]) -> None:
        """Writes ``seat``'s features of ``state`` into ``out`` (zeroed, ``planes.width``
        long), reading only what ``seat`` may see."""
