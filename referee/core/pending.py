"""The one shape of a pending decision (docs/ARCHITECTURE.md, "Games").

A game's rules often need a choice before play can go on: a step of a turn, a payment made sack
by sack, an offer the seat may decline, the decision of a phase. Each kind is a small object named
after its rule, and every game's kinds share :class:`Pending`, so the engine, the view and the
state hash ask any of them the same four questions and never switch on its type:

* ``decision(state)``: its legal moves, as the :class:`~referee.core.contract.Decision` the seat
  is sent (seat, kind, every legal move, prompt); None when nothing is left to choose, and the
  object then ends by itself;
* ``play(state, move)``: its effect, for one of those moves (already checked to be listed);
* ``hash_form()``: what the state hash uses for it, a ``(tag, field, ...)`` tuple
  (:func:`referee.core.hashing.canonical` reads it), so the class layout is not part of any
  record;
* ``pending_view(state, view)``: what the seat's View shows about it, written into ``view`` (the
  game's message for the pending decision); by default nothing beyond the Decision itself.

Where a game keeps these objects is its own: Goa a stack (the top one is pending; with the stack
empty, the phase's own object), Santa Maria a queue (the front one), Batavia one per phase (the
phase's).
"""
from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol, TypeVar

from google.protobuf.message import Message

from .contract import Decision, Event

S_contra = TypeVar("S_contra", contravariant=True)  # the game's state
M = TypeVar("M", bound=Hashable)  # the game's move
V_contra = TypeVar("V_contra", bound=Message, contravariant=True)  # where its view is written


class Pending(Protocol[S_contra, M, V_contra]):
    """A decision some seat owes before play goes on (see the module docstring)."""

    __slots__ = ()

    def decision(self, state: S_contra) -> Decision[M] | None:
        """Its legal moves: the seat, the kind of choice, every legal move and a prompt; None
        when there is nothing left to choose (the object then ends by itself)."""
        ...

    def play(self, state: S_contra, move: M) -> list[Event]:
        """Its effect: apply ``move``, one of the moves ``decision`` listed."""
        ...

    def hash_form(self) -> tuple[Any, ...]:
        """The ``(tag, field, ...)`` tuple the state hash uses for it."""
        ...

    def pending_view(self, state: S_contra, view: V_contra) -> None:
        """Write into ``view`` what the seat's View shows about this decision; by default
        nothing beyond the Decision itself."""
        del state, view
