"""The declarations a game's text view is made of (``referee.core.text`` walks a game's
messages with them; docs/ARCHITECTURE.md, *The game contract*). Apart from ``text`` so that
``contract.Game`` can name ``TextTable`` without importing the walker."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def words(name: str) -> str:
    """A field or enum name as words: ``extra_action_cards`` -> "extra action cards"."""
    return name.lower().replace("_", " ")


#: Says a value (a field's value: a scalar, a message, or a repeated field's whole list) in
#: words, given the message that holds it; "" leaves the field out of the text.
Show = Callable[[Any, Any], str]


@dataclass(frozen=True, slots=True)
class Field:
    """How one field of a game's message reads.

    ``label``: the rulebook's name for it (None: the field's own name, underscores as spaces;
    "": the value alone). ``show``: the value in words, else the generic rendering (numbers as
    they are, enums by the table's words, messages by their own declarations). ``hide_zero``:
    a 0 says nothing worth the characters (a count that is usually 0). ``skip``: said by another
    field or the heading (the reason goes in ``why``, so a skip is never a silent omission).
    ``block``: a repeated message, one line per element under the label."""

    label: str | None = None
    show: Show | None = None
    hide_zero: bool = False
    skip: bool = False
    block: bool = False
    why: str = ""


@dataclass(frozen=True, slots=True)
class Kind:
    """One Move kind in words: ``text`` a one-line template over the kind's fields
    (``"bid {amount} bills"``, each field said as the table says it) or a function of the kind's
    message and the view the decision came with (None when not at hand; it names a card or tile
    by what the seat sees of it); ``rule`` the rulebook passage that allows it, cited as RULINGS.md and the refusal
    messages cite it (game, edition, section)."""

    text: str | Callable[[Any, Any], str]
    rule: str = ""


@dataclass(frozen=True, slots=True)
class TextTable:
    """A game's text declarations. Keys are the game's own message and enum names (``"View"``,
    ``"PlayerPublic"``, ``"Company"``), so a table reads like the game's ``.proto``."""

    #: per message, per field: how it reads (fields render in this order, undeclared ones after)
    fields: Mapping[str, Mapping[str, Field]] = field(default_factory=dict)
    #: per message: the whole message as one phrase (a cost, a cell), instead of its fields
    phrases: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)
    #: per enum, per value name: its word (undeclared values: the name in lower case)
    enums: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: per Move kind (the field of the game's Move oneof)
    moves: Mapping[str, Kind] = field(default_factory=dict)
    #: the view's first line (who is looking, whose turn, where the game stands)
    heading: Callable[[Any], str] | None = None


_EMPTY = TextTable()
