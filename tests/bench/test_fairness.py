"""Duplicate seeds give every seat the same luck (bench/fairness.py, docs/fair-chance.md): in
pairs of matches with the same seed where only seat 0 plays differently, the chance events of
the other seats and the shared ones draw alike. Deterministic (fixed seeds, no time measured)."""
from __future__ import annotations

import pytest

from bench import fairness
from referee.core import registry
from referee.core.match import LEGACY_RECORD_FORMAT, RECORD_FORMAT

VARIANTS = list(fairness.variants(registry.games()))
PAIRS, FIRST_SEED = 6, 1  # seeds at which record /1's single stream shows in every game


def test_every_game_and_edition_is_measured():
    labels = {v.label for v in VARIANTS}
    assert set(registry.games()) <= labels and "goa_2004" in labels
    flat = fairness.flat({"fairness": {v.label: {"shared_chance": 1.0} for v in VARIANTS}})
    assert "fairness.santa_maria.shared_chance" in flat and "fairness.goa.shared_chance" in flat


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.label for v in VARIANTS])
def test_duplicate_seeds_share_the_chance_of_the_other_seats(variant):
    r = fairness.measure(variant, PAIRS, RECORD_FORMAT, FIRST_SEED)
    assert r["events_compared"] > 20
    # every kind of event the game draws is classified as shared or as one seat's own
    assert set(r["kinds"]) <= fairness.KNOWN_KINDS
    assert r["shared_chance"] >= 0.95, r
    # keyed streams promise more: every event that happens in both matches draws alike
    assert r["events_identical"] == r["events_compared"], r


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.label for v in VARIANTS])
def test_one_running_stream_did_not(variant):
    """The measure tells the two apart: with record /1's single stream (the referee before keyed
    chance, kept for old records), seat 0's play shifts the later draws of everyone, so the test
    above fails on it (Batavia draws little during play: only its reshuffles drift)."""
    r = fairness.measure(variant, PAIRS, LEGACY_RECORD_FORMAT, FIRST_SEED)
    assert r["events_identical"] < r["events_compared"], r


def test_seat_0_own_events_are_left_out():
    assert not fairness.counted(("blue", 2, 0, 1))
    assert fairness.counted(("blue", 2, 1, 0)) and fairness.counted(("white", 2))
