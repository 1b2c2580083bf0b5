"""Helpers for the Goa tests: set-up, driving a game with a policy, finding moves."""
from __future__ import annotations

import random

from referee.core.rng import Streams
from referee.games.goa import GAME
from referee.games.goa.catalog import Rules
from referee.games.goa.rules import settle
from referee.games.goa.state import State


def new_game(n: int = 4, seed: int = 1, **options):
    opts = GAME.spec.parse_options(options)
    return GAME.setup(opts, n, Streams(seed), GAME.default_components(opts))


def rules_of(edition: str = "2012") -> Rules:
    return GAME.rules_for(GAME.default_components({"edition": edition}))


def refresh(state: State) -> None:
    """After editing a state by hand: recompute the pending decision."""
    settle(state)


def play(state, seat, move):
    d = GAME.decision(state)
    assert d is not None
    assert d.seat == seat, f"seat {d.seat} to act ({d.kind}), not {seat}"
    assert move in d.moves, f"{move!r} not among {d.moves!r} ({d.kind})"
    return GAME.apply(state, seat, move)


def random_until(state, stop, rnd: random.Random | None = None, limit: int = 100_000):
    """Play random legal moves until ``stop(state, decision)`` is true (or the game ends)."""
    rnd = rnd or random.Random(0)
    for _ in range(limit):
        d = GAME.decision(state)
        if d is None or stop(state, d):
            return d
        GAME.apply(state, d.seat, rnd.choice(d.moves))
    raise AssertionError("did not stop")


def card_ids(rules: Rules, effect: int | None = None, colonists: int | None = None, symbol=None):
    return [c.id for c in rules.cards
            if (effect is None or c.effect == effect)
            and (colonists is None or c.colonists == colonists)
            and (symbol is None or rules.symbols[c.symbol] == symbol)]


def tile_ids(rules: Rules, type_: int, phase: str | None = None, **attrs):
    out = []
    for t in rules.tiles:
        if t.type != type_ or (phase and t.phase != phase):
            continue
        if all(getattr(t, k) == v for k, v in attrs.items()):
            out.append(t.id)
    return out


def stack_deck(state, cards_in_draw_order):
    """Put these cards on top of the Expedition deck, drawn in the given order."""
    rest = [c for c in state.deck + state.discard if c not in cards_in_draw_order]
    for hand in state.hands:
        for c in hand:
            assert c not in cards_in_draw_order
    state.discard = []
    state.deck = rest + list(reversed(cards_in_draw_order))


def only(d, cls):
    found = [m for m in d.moves if isinstance(m, cls)]
    assert len(found) == 1, found
    return found[0]


__all__ = [
    "GAME",
    "card_ids",
    "new_game",
    "only",
    "play",
    "random_until",
    "refresh",
    "rules_of",
    "stack_deck",
    "tile_ids",
]
