"""Early stopping for two-entrant matchups: Wald's sequential probability ratio test (SPRT).

A match between entrants A and B (any number of seats each) is scored head to head: every
(seat of A, seat of B) pair is compared by finishing rank (better rank = win, equal = half), and
the match is a win for A if A takes more than half of those comparisons, a loss if less, a draw
otherwise. Draws carry no information here and are ignored.

With W wins and L losses for A, the test weighs

* H0: P(A beats B) = 1/2   against   H1a: P(A beats B) = 1/2 + delta, and symmetrically
* H0 against H1b: P(B beats A) = 1/2 + delta,

with log-likelihood ratios ``LLR_a = W ln(2p1) + L ln(2(1-p1))`` (p1 = 1/2 + delta) and
``LLR_b`` the same with W and L swapped. The pair is *separated* (its remaining matches are
skipped) as soon as ``max(LLR_a, LLR_b) >= ln((1-beta)/alpha)`` after at least ``min_matches``
decisive matches. Accepting H0 (both LLRs below ``ln(beta/(1-alpha))``) does not stop the pair:
equal entrants play their full schedule. The test is evaluated only on whole duplicate-seed
groups (every seating of a seed finished), so seat and card luck still cancel. Type-I error per
pair is about alpha (two one-sided tests, each at most alpha) and the expected number of matches
for a well separated pair is a small fraction of a fixed-size test's.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .config import EarlyStop


def head_to_head(seating: Sequence[str], ranks: Sequence[int], a: str, b: str) -> float | None:
    """A's head-to-head result in one match: 1 win, 0 loss, 0.5 draw (None if either is absent)."""
    sa = [ranks[i] for i, n in enumerate(seating) if n == a]
    sb = [ranks[i] for i, n in enumerate(seating) if n == b]
    if not sa or not sb:
        return None
    points = sum(1.0 if x < y else 0.5 if x == y else 0.0 for x in sa for y in sb)
    share = points / (len(sa) * len(sb))
    return 1.0 if share > 0.5 else 0.0 if share < 0.5 else 0.5


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: str | None  # "a" (A better), "b" (B better) or None (go on)
    wins: int
    losses: int
    draws: int
    llr_a: float
    llr_b: float
    upper: float
    lower: float

    @property
    def stop(self) -> bool:
        return self.verdict is not None


class Sprt:
    def __init__(self, cfg: EarlyStop | None = None):
        self.cfg = cfg or EarlyStop()
        p1 = 0.5 + self.cfg.delta
        self._win = math.log(2 * p1)
        self._loss = math.log(2 * (1 - p1))
        self.upper = math.log((1 - self.cfg.beta) / self.cfg.alpha)
        self.lower = math.log(self.cfg.beta / (1 - self.cfg.alpha))

    def decide(self, outcomes: Iterable[float]) -> Decision:
        """Outcomes from A's side (1, 0, 0.5) in order; the verdict after all of them."""
        outs = list(outcomes)
        wins = sum(1 for o in outs if o == 1.0)
        losses = sum(1 for o in outs if o == 0.0)
        draws = sum(1 for o in outs if o == 0.5)
        return self.decide_counts(wins, losses, draws)

    def decide_counts(self, wins: int, losses: int, draws: int = 0) -> Decision:
        llr_a = wins * self._win + losses * self._loss
        llr_b = losses * self._win + wins * self._loss
        verdict = None
        if wins + losses >= self.cfg.min_matches:
            if llr_a >= self.upper:
                verdict = "a"
            elif llr_b >= self.upper:
                verdict = "b"
        return Decision(verdict, wins, losses, draws, llr_a, llr_b, self.upper, self.lower)

    def first_stop(self, outcomes: Sequence[float], step: int = 1) -> int | None:
        """Number of outcomes after which the test stops (checked every ``step``), or None."""
        wins = losses = draws = 0
        for i, o in enumerate(outcomes, 1):
            wins += o == 1.0
            losses += o == 0.0
            draws += o == 0.5
            if i % step == 0 and self.decide_counts(wins, losses, draws).stop:
                return i
        return None
