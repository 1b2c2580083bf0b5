"""Santa Maria's tracks: the conquistador track (gold symbols, the order of arrival that the end
of the year scores) and the blue dice the religion track unlocks."""
from __future__ import annotations

from .dice import blue_face
from .payments import gain
from .state import State


def conquistador_step(state: State, seat: int) -> None:
    """Conquistador: +1 on the track (stacked on top of markers already there); passing a gold
    symbol gains 1 gold; at the end of the track further conquistadors are lost."""
    p = state.players[seat]
    r = state.rules
    if p.conq >= r.conq_length:
        return
    p.conq += 1
    state.stamp += 1
    p.conq_stamp = state.stamp
    if p.conq in r.gold_symbols:
        gain(state, seat, (0, 0, 0, 0, 1, 0, 0))


def unlock_blue_die(state: State, seat: int) -> None:
    """Débloquer un dé bleu: roll it and keep it (shared variant: into the common pool). A die
    unlocked while retreating serves only from next year on (it is rolled at the year's end)."""
    p = state.players[seat]
    if p.blue_unlocked >= state.rules.blue_per_player:
        return
    p.blue_unlocked += 1
    if p.retreat >= 0:
        return
    face = blue_face(state, state.year, seat, p.blue_unlocked - 1)
    if state.shared:
        state.shared_blue.append(face)
        state.shared_blue.sort()
    else:
        p.blue.append(face)


def conquistador_order(state: State) -> list[int]:
    """Seats that moved this year, ahead first: further on the track, then lower in the stack
    (arrived first)."""
    moved = [(-p.conq, p.conq_stamp, s) for s, p in enumerate(state.players) if p.conq > 0]
    moved.sort()  # equal on both: in seat order, as a stable sort of the seats kept them
    return [s for _, _, s in moved]
