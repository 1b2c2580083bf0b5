"""Every kit tells the truth about a refused move and carries a clean note (issue 20), checked
on the wire against a scripted fake referee that refuses every answer: each kit sends its move
as it is, is asked again at most REASKS times (the same bound as the Python SDK), logs each
refusal with the referee's reason and the rule's message, then stops answering and leaves the
decision to the time policy. The starters attach a note naming the decision's kind; the fake
makes that kind long and full of control characters, so the note on the wire shows each kit's
cleaning (control characters dropped, at most 512 bytes of UTF-8, cut between characters)."""
from __future__ import annotations

import asyncio

import pytest
from referee_client import NOTE_LIMIT, REASKS, clean_note
from referee_tournament.play import refusal_line

from referee.v1 import referee_pb2
from tests.client.fake_referee import (
    PASS,
    RULE,
    FakeReferee,
    legal_only,
    refuse_all,
    run_bot_against,
)

from .toolchains import KITS

#: a decision kind the starters echo in their note: a bell, an escape sequence, a C1 control,
#: then 300 two-byte characters (the note must be cut at 512 bytes, between two of them)
KIND = "batavia.auction\x07\x1b[1m\u0085" + "é" * 300


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_sends_its_move_as_it_is_and_asks_again_a_bounded_number_of_times(kit):
    argv = KITS[kit]()
    fake = FakeReferee(refuse_all, kind=KIND, quiet_s=3.0)
    code, out = asyncio.run(run_bot_against(argv, fake))
    text = out.decode(errors="replace")
    assert code == 0, text
    assert len(fake.submits) == 1 + REASKS, text  # then it stopped answering
    assert fake.quiet.is_set(), text
    assert {s.state_version for s in fake.submits} == {7}
    assert refusal_line(out) == f"move rejected: ILLEGAL_MOVE: {RULE}", text
    assert text.count("move rejected") == 1 + REASKS, text
    assert "stopped answering after" in text, text
    if kit != "python":  # the reference bot `random` attaches no note
        for s in fake.submits:
            assert s.note == clean_note(KIND), s.note
            assert len(s.note.encode()) == NOTE_LIMIT  # 512 bytes, none of a broken character


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_plays_a_substitute_only_with_the_fallback_option_and_reports_it(kit):
    """`--fallback first_legal`: after the last refused answer the kit plays the decision's
    first legal move once (an incident in its log), and then leaves the decision alone."""
    argv = [*KITS[kit](), "--fallback", "first_legal"]
    fake = FakeReferee(refuse_all, quiet_s=3.0)
    code, out = asyncio.run(run_bot_against(argv, fake))
    text = out.decode(errors="replace")
    assert code == 0, text
    assert len(fake.submits) == 2 + REASKS, text
    assert fake.submits[-1].move == PASS, text  # the first legal move
    assert text.count("playing the first legal move instead") == 1, text


def _internal_once():
    """A judge whose referee fails on the first answer (INTERNAL, nothing played), then takes
    a legal one."""
    seen = [0]

    def judge(submit: referee_pb2.Submit) -> referee_pb2.MoveResult:
        seen[0] += 1
        if seen[0] == 1:
            return referee_pb2.MoveResult(accepted=False, reason=referee_pb2.INTERNAL,
                                          message="internal error")
        return legal_only(submit)
    return judge


@pytest.mark.parametrize("kit", list(KITS))
def test_kit_answers_again_after_an_internal_refusal(kit):
    """issue 31 item 3: a move the referee failed on (reason INTERNAL, the move not played) is
    answered again by every kit, as by the Python SDK, instead of left to the time policy."""
    argv = KITS[kit]()
    fake = FakeReferee(_internal_once(), quiet_s=5.0)
    code, out = asyncio.run(run_bot_against(argv, fake))
    text = out.decode(errors="replace")
    assert code == 0, text
    assert len(fake.submits) == 2, text
    assert not fake.quiet.is_set(), text
