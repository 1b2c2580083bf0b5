"""The dice rolls of Santa Maria, each keyed by what it is (docs/ARCHITECTURE.md, "Fair chance";
RULINGS.md, "Same luck"): the white dice of year Y draw from the stream ("white", Y), a seat's
blue die number i in year Y from ("blue", Y, seat, i), whoever rolled before it and whenever."""
from __future__ import annotations

from .catalog import DIE_FACES
from .state import State


def roll_white(state: State, year: int = 1) -> list[int]:
    """The white dice of ``year`` (Mise en place / Fin de l'année: 3 per player, sorted)."""
    rng = state.rng.stream("white", year)
    return sorted(rng.randint(1, DIE_FACES) for _ in range(state.rules.white_per_player * state.n))


def blue_face(state: State, year: int, seat: int, die: int) -> int:
    """The face of ``seat``'s blue die number ``die`` (from 0) rolled in ``year``."""
    return state.rng.stream("blue", year, seat, die).randint(1, DIE_FACES)


def roll_blue(state: State, year: int = 1) -> None:
    """Every seat rolls its unlocked blue dice for ``year``, into its own supply or (shared
    variant) into the common pool, kept sorted."""
    if state.shared:
        state.shared_blue = sorted(blue_face(state, year, s, i) for s, p in enumerate(state.players)
                                   for i in range(p.blue_unlocked))
    else:
        for s, p in enumerate(state.players):
            p.blue = [blue_face(state, year, s, i) for i in range(p.blue_unlocked)]
