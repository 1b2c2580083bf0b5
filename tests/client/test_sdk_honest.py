"""The SDK tells the truth (issue 20, item 1) and carries a bot's note (item 2), checked on the
wire against a scripted fake referee: what ``play`` sends for each decision, what it does with a
refused move, and how a note is cleaned before it leaves."""
from __future__ import annotations

import asyncio
import time

import pytest
from referee_client import NOTE_LIMIT, REASKS, Bot, PlayStats, Refusal, clean_note, play

from referee.v1 import referee_pb2

from .fake_referee import (
    BID,
    BID_999,
    PASS,
    RULE,
    FakeReferee,
    legal_only,
    refuse_all,
    serving,
    store_away,
)


def run_against(fake: FakeReferee, bot: Bot, **kwargs) -> PlayStats:
    async def main() -> PlayStats:
        async with serving(fake) as address:
            _, stats = await asyncio.wait_for(play(bot, address, "m1", "token", **kwargs), 30)
            return stats

    return asyncio.run(main())


class Stubborn(Bot):
    """Answers a bid of 999 every time, and remembers every refusal it is told of."""

    def __init__(self):
        self.refusals: list[Refusal] = []
        self.asked = 0

    def choose(self, decision):
        self.asked += 1
        self.note(f"try {self.asked}")
        return BID_999

    def on_refused(self, refusal: Refusal) -> None:
        self.refusals.append(refusal)


def test_an_illegal_answer_is_sent_as_it_is_and_the_bot_asked_again_a_bounded_number_of_times():
    fake = FakeReferee(legal_only)
    bot = Stubborn()
    stats = run_against(fake, bot)
    # sent unchanged (no substitute), 1 + REASKS times, then the decision left to the referee
    assert [s.move for s in fake.submits] == [BID_999] * (1 + REASKS)
    assert fake.quiet.is_set()
    assert bot.asked == 1 + REASKS
    assert (stats.refused, stats.gave_up, stats.fallbacks) == (1 + REASKS, 1, 0)
    assert [(r.attempt, r.final, r.reason) for r in bot.refusals] == [
        (n, n == 1 + REASKS, "ILLEGAL_MOVE") for n in range(1, 2 + REASKS)]
    assert bot.refusals[0].message == RULE
    assert bot.refusals[0].move == BID_999 and bot.refusals[0].kind == "batavia.auction"
    assert [s.note for s in fake.submits] == [f"try {n}" for n in range(1, 2 + REASKS)]


def test_a_bot_that_learns_from_the_refusal_gets_its_second_answer_accepted():
    class Learner(Stubborn):
        def choose(self, decision):
            super().choose(decision)
            return BID_999 if not self.refusals else decision.legal_moves[1]

    fake = FakeReferee(legal_only)
    stats = run_against(fake, Learner())
    assert [s.move for s in fake.submits] == [BID_999, BID]
    assert (stats.refused, stats.gave_up, stats.submitted) == (1, 0, 2)


def test_the_fallback_is_an_explicit_option_and_reported():
    fake = FakeReferee(legal_only)
    stats = run_against(fake, Stubborn(), fallback="first_legal")
    assert [s.move for s in fake.submits] == [PASS]
    assert (stats.fallbacks, stats.refused) == (1, 0)
    with pytest.raises(ValueError, match="first_legal"):
        run_against(FakeReferee(legal_only), Stubborn(), fallback="random")


def test_with_the_fallback_a_move_the_referee_still_refuses_is_replaced_at_the_end():
    fake = FakeReferee(lambda s: referee_pb2.MoveResult(
        accepted=s.move == PASS and len(fake.submits) > 1 + REASKS,
        reason=referee_pb2.ILLEGAL_MOVE, message="no"))
    class Passer(Bot):
        def choose(self, decision):
            return decision.legal_moves[0]

    stats = run_against(fake, Passer(), fallback="first_legal")
    assert [s.move for s in fake.submits] == [PASS] * (2 + REASKS)
    assert (stats.refused, stats.fallbacks) == (1 + REASKS, 1)


def test_an_answer_that_is_not_a_move_reaches_the_referee_as_an_empty_move():
    class Broken(Bot):
        def choose(self, decision):
            return None

    fake = FakeReferee(lambda s: referee_pb2.MoveResult(
        accepted=False, reason=referee_pb2.MALFORMED, message="the move is empty"))
    stats = run_against(fake, Broken())
    assert [s.move for s in fake.submits] == [referee_pb2.Move()] * (1 + REASKS)
    assert stats.refused == 1 + REASKS


def test_strict_stops_at_the_first_refusal():
    from referee_client import BotError

    with pytest.raises(BotError, match="ILLEGAL_MOVE: Batavia, Auction: a bid above your gold"):
        run_against(FakeReferee(legal_only), Stubborn(), strict=True)


def test_a_note_goes_on_the_wire_cleaned():
    class Talker(Bot):
        def choose(self, decision):
            self.note("bid\x00 low\x1b[31m:\tcheap\nround 2 " + "é" * 400)
            return decision.legal_moves[1]

    fake = FakeReferee(legal_only)
    stats = run_against(fake, Talker())
    note = fake.submits[0].note
    assert note.startswith("bid low[31m:\tcheap\nround 2 é")
    assert len(note.encode()) <= NOTE_LIMIT and NOTE_LIMIT - len(note.encode()) < 2
    assert note == clean_note(note) and stats.notes == 1


def test_no_note_is_an_empty_note():
    class Quiet(Bot):
        def choose(self, decision):
            return decision.legal_moves[0]

    fake = FakeReferee(legal_only)
    run_against(fake, Quiet())
    assert fake.submits[0].note == ""


@pytest.mark.parametrize(("text", "want"), [
    ("plain", "plain"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),
    ("bell\x07 del\x7f nul\x00 c1\x85", "bell del nul c1"),
    ("lone \ud800 surrogate", "lone  surrogate"),
    ("x" * 600, "x" * NOTE_LIMIT),
    ("€" * 200, "€" * (NOTE_LIMIT // 3)),  # 3 bytes each: cut at a character boundary
])
def test_clean_note(text, want):
    assert clean_note(text) == want
    assert len(clean_note(text).encode()) <= NOTE_LIMIT


def test_the_fallback_substitutes_once_per_decision():
    class Passer(Bot):
        def choose(self, decision):
            return decision.legal_moves[0]

    fake = FakeReferee(refuse_all)
    stats = run_against(fake, Passer(), fallback="first_legal")
    assert [s.move for s in fake.submits] == [PASS] * (2 + REASKS)  # then it is left alone
    assert (stats.refused, stats.fallbacks, stats.gave_up) == (2 + REASKS, 1, 1)


class Once(Bot):
    """Bids 3 with a note; counts how often it is asked."""

    def __init__(self):
        self.asked = 0
        self.refusals: list[Refusal] = []

    def choose(self, decision):
        self.asked += 1
        self.note("thinking")
        return BID

    def on_refused(self, refusal: Refusal) -> None:
        self.refusals.append(refusal)


def test_a_store_unavailable_refusal_sends_the_same_move_again_after_a_backoff():
    """issue 31 item 2: STORE_UNAVAILABLE (the referee's database is away, nothing played) is
    not the bot's fault: the SDK sends the same move again (same state_version, move and note)
    after a short delay, without asking the bot again, until the referee takes it."""
    fake = FakeReferee(store_away(2), quiet_s=5)
    bot = Once()
    stats = run_against(fake, bot)
    assert [(s.state_version, s.move, s.note) for s in fake.submits] == [(7, BID, "thinking")] * 3
    assert len({s.request_id for s in fake.submits}) == 3
    assert (bot.asked, bot.refusals, stats.store_resends, stats.refused) == (1, [], 2, 0)
    assert not fake.quiet.is_set()  # accepted, not left to the time policy


def test_store_unavailable_resends_stop_at_the_move_clock():
    """issue 31 item 2: the resends are bounded by the decision's move clock: a decision whose
    deadline has passed is left to the referee's time policy after the first refusal."""
    fake = FakeReferee(store_away(100), deadline_unix_ms=int(time.time() * 1000) + 50)
    bot = Once()
    stats = run_against(fake, bot)
    assert [s.move for s in fake.submits] == [BID]
    assert fake.quiet.is_set()
    assert (bot.asked, stats.store_resends, stats.refused) == (1, 0, 0)
