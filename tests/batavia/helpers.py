"""Builders for Batavia test states."""
from __future__ import annotations

from referee.core.rng import Streams
from referee.games.batavia import GAME
from referee.games.batavia import rules as R
from referee.games.batavia.moves import PASS_BID

EN, DK, FR, NL, SE = range(5)
TEA, COTTON, PORCELAIN, SILK, GINGER, NUTMEG, PEPPER = range(7)


def tile(company: int, good: int) -> int:
    return company * R.N_GOODS + good


def new_state(n: int = 4, seed: int = 1, **options) -> R.State:
    opts = GAME.spec.parse_options(options)
    return GAME.setup(opts, n, Streams(seed), GAME.default_components(opts))


def all_pass(state: R.State) -> None:
    """Finish the current auction with everyone passing."""
    while state.phase == R.AUCTION:
        R.apply(state, state.current, PASS_BID)


def action_state(n: int = 4, seed: int = 1, *, turn_of: int = 0, **options) -> R.State:
    """A state in the actions phase with ``turn_of`` to play first, empty tables and empty hands."""
    s = new_state(n, seed, **options)
    all_pass(s)
    s.first_player = turn_of
    s.current = turn_of
    s.turns_taken = 0
    s.hands = [[0] * 5 for _ in range(n)]
    s.face_up = [[0] * 5 for _ in range(n)]
    return s


def set_track(state: R.State, layout: dict[int, int], revealed: int | None = None) -> None:
    """Empty every space, then put tiles on the given spaces (space -> tile)."""
    state.track = [-1] * 35
    for space, t in layout.items():
        state.track[space - 1] = t
    state.revealed = 35 if revealed is None else revealed


def kinds(decision) -> list[str]:
    return [type(m).__name__ for m in decision.moves]
