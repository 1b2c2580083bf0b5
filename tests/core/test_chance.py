"""Keyed chance (referee/core/rng.py; docs/ARCHITECTURE.md, "Fair chance"): each chance event
draws from a stream that depends on the seed and the event's key only, so what one seat's play
changes cannot shift another event's draws; records of format /1 keep their single stream."""
from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from referee.core import registry
from referee.core.hashing import canonical
from referee.core.match import (
    LEGACY_RECORD_FORMAT,
    RECORD_FORMAT,
    TIMEOUT_STREAM_SALT,
    Match,
    ReplayError,
    match_chance,
    replay,
)
from referee.core.rng import Rng, SingleStream, Streams

V1_RECORDS = sorted((Path(__file__).parents[1] / "contract" / "records_v1").glob("*.json"))


def draws(rng: Rng, k: int = 8) -> list[int]:
    return [rng.below(1000) for _ in range(k)]


def test_a_stream_depends_on_the_seed_and_its_key_only():
    a, b = Streams(7), Streams(7)
    first = draws(a.stream("die", 3))
    # b draws other events first, in another order: the ("die", 3) stream is the same
    draws(b.stream("die", 4))
    draws(b.next_stream("reshuffle"))
    assert draws(b.stream("die", 3)) == first
    assert draws(a.stream("die", 3)) == first  # asking again gives the same draws
    assert draws(a.stream("die", 4)) != first
    assert draws(a.stream("die", "3")) != first  # keys are typed
    assert draws(Streams(8).stream("die", 3)) != first
    assert draws(Streams(7, "timeout").stream("die", 3)) != first  # domains are apart


def test_a_repeatable_event_counts_its_occurrences():
    a, b = Streams(3), Streams(3)
    firsts = [draws(a.next_stream("reshuffle")) for _ in range(3)]
    assert len({tuple(x) for x in firsts}) == 3
    draws(b.next_stream("other"))
    assert draws(b.next_stream("reshuffle")) == firsts[0]
    assert draws(b.stream("reshuffle", 1)) == firsts[1]  # the n-th occurrence is (*key, n)
    assert a.counts == {("reshuffle",): 3}


def test_streams_hash_their_root_and_counts_and_copy_apart():
    s = Streams(5)
    before = canonical(s)
    c = copy.deepcopy(s)
    c.next_stream("x")
    assert canonical(s) == before != canonical(c)
    assert s.counts == {} and c.counts == {("x",): 1}
    assert s.hash_key() != c.hash_key()
    assert "<hidden>" in repr(s) and str(s.state) not in repr(s)
    assert Streams.from_root(s.state, c.counts) == c


def test_the_legacy_source_is_one_running_stream_that_hashes_as_before():
    legacy = SingleStream(42)
    assert legacy.stream("a") is legacy and legacy.next_stream("b") is legacy
    plain = Rng(42)
    assert [legacy.stream(k).below(99) for k in "abc"] == [plain.below(99) for _ in "abc"]
    assert canonical(legacy) == {"rng": legacy.state} == canonical(Rng(legacy.state))
    items, same = list(range(20)), list(range(20))
    SingleStream(9).shuffle_cards(items)
    Rng(9).shuffle(same)
    assert items == same  # /1 reshuffled piles with the plain shuffle
    assert isinstance(match_chance(1, LEGACY_RECORD_FORMAT), SingleStream)
    assert isinstance(match_chance(1), Streams)
    with pytest.raises(ValueError, match="unknown record format"):
        match_chance(1, "referee-record/9")


def test_shuffle_cards_orders_shared_cards_alike_whatever_else_is_in_the_pile():
    for seed in range(50):
        full, part = list(range(40)), [c for c in range(40) if c % 3]
        Rng(seed).shuffle_cards(full)
        Rng(seed).shuffle_cards(part)
        assert [c for c in full if c % 3] == part
    # copies of a value are told apart by their number: 3 of company 0 against 2
    a, b = [0, 0, 0, 1, 1, 2], [0, 0, 1, 1, 2]
    Rng(4).shuffle_cards(a)
    Rng(4).shuffle_cards(b)
    assert sorted(a) == [0, 0, 0, 1, 1, 2] and sorted(b) == [0, 0, 1, 1, 2]


def test_shuffle_cards_is_uniform():
    seen = Counter()
    for seed in range(12_000):
        pile = [0, 1, 2]
        Rng(seed).shuffle_cards(pile)
        seen[tuple(pile)] += 1
    assert len(seen) == 6
    assert all(1800 < n < 2200 for n in seen.values()), seen  # 2000 each expected


@pytest.mark.parametrize("path", V1_RECORDS, ids=[p.name for p in V1_RECORDS])
def test_records_of_format_1_still_verify(path):
    """Copies of golden records written before keyed chance: they replay on the single-stream
    path, every state hash and the result as recorded."""
    record = json.loads(path.read_text())
    assert record["format"] == LEGACY_RECORD_FORMAT
    m = replay(registry.get(record["game"]), record)
    assert m.over and m.record_format == LEGACY_RECORD_FORMAT
    assert m.record()["format"] == LEGACY_RECORD_FORMAT
    # the same moves under the current format are another game: caught at once
    with pytest.raises(ReplayError):
        replay(registry.get(record["game"]), {**record, "format": RECORD_FORMAT})


def test_unknown_record_formats_are_refused():
    record = json.loads(V1_RECORDS[0].read_text())
    with pytest.raises(ReplayError, match="not a referee-record/2 or referee-record/1 record"):
        replay(registry.get(record["game"]), {**record, "format": "referee-record/3"})


def test_random_legal_timeouts_of_format_1_draw_from_the_old_stream():
    game = registry.get("batavia")
    m = Match.create(game, {}, 3, 11, record_format=LEGACY_RECORD_FORMAT)
    old = Rng(11).fork(TIMEOUT_STREAM_SALT)
    for _ in range(6):
        d = m.decision()
        assert d is not None
        want = d.moves[old.below(len(d.moves))]
        assert m.timeout_move("RANDOM_LEGAL") == want
        m.submit(d.seat, want, m.version, timeout=True, policy="RANDOM_LEGAL")


def test_random_legal_timeouts_are_keyed_by_seat_and_number():
    """A /2 match draws a seat's k-th RANDOM_LEGAL timeout from its own stream: another seat's
    timeouts do not move it."""
    game = registry.get("santa_maria")
    m = Match.create(game, {}, 2, 5)
    streams = Streams(5, "timeout")
    counts = [0, 0]
    for _ in range(12):
        d = m.decision()
        assert d is not None
        want = d.moves[streams.stream("RANDOM_LEGAL", d.seat, counts[d.seat]).below(len(d.moves))]
        assert m.timeout_move("RANDOM_LEGAL") == want
        m.submit(d.seat, want, m.version, timeout=True, policy="RANDOM_LEGAL")
        counts[d.seat] += 1
    assert m.timeout_streams is not None and m.timeout_rng is None
