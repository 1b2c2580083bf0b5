"""The SDK tells the truth (issue 20, item 1) and carries a bot's note (item 2), checked on the
wire against a scripted fake referee: what ``play`` sends for each decision, what it does with a
refused move, and how a note is cleaned before it leaves."""
from __future__ import annotations

import asyncio

import grpc
import pytest
from referee_client import NOTE_LIMIT, REASKS, Bot, PlayStats, Refusal, clean_note, play

from referee.v1 import batavia_pb2, referee_pb2, referee_pb2_grpc

PASS = referee_pb2.Move(batavia=batavia_pb2.Move(pass_bid=batavia_pb2.PassBid()))
BID = referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=3)))
BID_999 = referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999)))


class FakeReferee(referee_pb2_grpc.RefereeServicer):
    """One decision (PASS or BID legal); every Submit is recorded and answered by ``judge``
    (a MoveResult), until ``settle_after`` submissions or an accepted one ends the match. A
    refused decision is never pushed again, as with the real referee."""

    def __init__(self, judge, settle_after: int = 10):
        self.submits: list[referee_pb2.Submit] = []
        self.judge, self.settle_after = judge, settle_after
        self.quiet = asyncio.Event()  # set when the bot stopped answering (after a refusal)

    async def Play(self, request_iterator, context):
        first = await anext(request_iterator)
        assert first.join.match_id == "m1"
        yield referee_pb2.ServerMessage(welcome=referee_pb2.Welcome(
            match_id="m1", game="batavia", seat=0, seat_count=2))
        yield referee_pb2.ServerMessage(decision=referee_pb2.Decision(
            state_version=7, kind="batavia.auction", legal_moves=[PASS, BID]))
        while True:
            try:
                msg = await asyncio.wait_for(anext(request_iterator), 1.0)
            except TimeoutError:  # the bot left the decision to the time policy
                self.quiet.set()
                break
            self.submits.append(msg.submit)
            result = self.judge(msg.submit)
            result.state_version, result.request_id = 7, msg.submit.request_id
            yield referee_pb2.ServerMessage(move_result=result)
            if result.accepted or len(self.submits) >= self.settle_after:
                break
        yield referee_pb2.ServerMessage(game_over=referee_pb2.GameOver(match_id="m1"))


def legal_only(submit: referee_pb2.Submit) -> referee_pb2.MoveResult:
    if submit.move in (PASS, BID):
        return referee_pb2.MoveResult(accepted=True)
    return referee_pb2.MoveResult(accepted=False, reason=referee_pb2.ILLEGAL_MOVE,
                                  message="Batavia, Auction: a bid above your gold")


def run_against(fake: FakeReferee, bot: Bot, **kwargs) -> PlayStats:
    async def main() -> PlayStats:
        server = grpc.aio.server()
        referee_pb2_grpc.add_RefereeServicer_to_server(fake, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            _, stats = await asyncio.wait_for(
                play(bot, f"127.0.0.1:{port}", "m1", "token", **kwargs), 30)
            return stats
        finally:
            await server.stop(None)

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
    assert bot.refusals[0].message == "Batavia, Auction: a bid above your gold"
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
