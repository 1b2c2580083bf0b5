"""The SPRT early stop, on deterministic simulated outcomes."""
from __future__ import annotations

from referee_tournament.config import EarlyStop, parse
from referee_tournament.formats import schedule
from referee_tournament.runner import EarlyStopper
from referee_tournament.sequential import Sprt, head_to_head


def test_stops_early_on_a_clearly_separated_pair():
    sprt = Sprt(EarlyStop(alpha=0.05, beta=0.05, delta=0.25, min_matches=6))
    # A wins 9 of every 10 (deterministic pattern)
    outcomes = [0.0 if i % 10 == 9 else 1.0 for i in range(200)]
    n = sprt.first_stop(outcomes)
    assert n is not None and n <= 15
    assert sprt.decide(outcomes[:n]).verdict == "a"
    # and symmetrically for B
    flipped = [1.0 - o for o in outcomes]
    assert sprt.decide(flipped[: sprt.first_stop(flipped)]).verdict == "b"


def test_never_stops_on_equal_entrants():
    sprt = Sprt(EarlyStop(min_matches=6))
    alternating = [1.0, 0.0] * 500
    assert sprt.first_stop(alternating) is None
    with_draws = [1.0, 0.5, 0.0, 0.5] * 250
    assert sprt.first_stop(with_draws) is None
    # a 55/45 edge is not "clearly separated" at delta 0.25 within 200 matches
    slight = [1.0 if (i * 11) % 20 < 11 else 0.0 for i in range(200)]
    assert sprt.first_stop(slight) is None


def test_respects_min_matches():
    sprt = Sprt(EarlyStop(min_matches=30))
    assert sprt.first_stop([1.0] * 29) is None
    assert sprt.first_stop([1.0] * 40) == 30


def test_head_to_head_with_repeated_entrants():
    assert head_to_head(("a", "a", "b"), [1, 3, 2], "a", "b") == 0.5
    assert head_to_head(("a", "a", "b"), [1, 2, 3], "a", "b") == 1.0
    assert head_to_head(("a", "b", "b"), [3, 1, 2], "a", "b") == 0.0
    assert head_to_head(("a", "b"), [1, 1], "a", "b") == 0.5
    assert head_to_head(("a", "c"), [1, 2], "a", "b") is None


def _cfg(delta=0.25):
    return parse({
        "game": {"name": "batavia", "seats": 3},
        "entrants": [{"name": n, "command": "bot {address} {match} {token}"}
                     for n in ("weak", "strong")],
        "format": {"rounds": 20, "early_stop": {"delta": delta, "min_matches": 6}},
    })


def test_runner_stopper_skips_the_rest_of_a_separated_pair_on_whole_groups_only():
    cfg = _cfg()
    specs = schedule(cfg)
    stopper = EarlyStopper(cfg, specs)
    skipped: list[int] = []
    played = 0
    for s in specs:
        if stopper.is_stopped(s):
            continue
        # strong always finishes first, weak after
        ranks = [1 if n == "strong" else 2 for n in s.seating]
        played += 1
        skipped = stopper.add(s.index, ranks) or skipped
        if skipped:
            # stops only when a whole duplicate-seed group is in
            group = [x.index for x in specs if x.group == s.group]
            assert all(i in stopper.resolved for i in group)
            break
    assert stopper.stopped["weak|strong"]["better"] == "strong"
    assert played < len(specs) // 4
    assert len(skipped) == len(specs) - played


def test_runner_stopper_does_not_stop_equal_entrants():
    cfg = _cfg()
    specs = schedule(cfg)
    stopper = EarlyStopper(cfg, specs)
    for s in specs:
        # seat 0 always wins: each entrant wins exactly when it holds seat 0
        ranks = [1] + [2] * (len(s.seating) - 1)
        assert stopper.add(s.index, ranks) == []
    assert not stopper.stopped
