"""run_bot/play in-process against a real referee: a network drop mid-match (every connection
cut by the proxy) is survived by reconnecting, and a bot that answers with a move that is not
legal has it refused by the referee (counted in the record) and is asked again, instead of the
SDK silently playing a substitute (issue 20)."""
from __future__ import annotations

import asyncio
import json

from referee_client import REASKS, AdminClient, Backoff, Bot, play
from referee_client.bots import RandomBot
from referee_client.unary import time_policy_proto

from referee.v1 import batavia_pb2, goa_pb2, referee_pb2


class SometimesWrongBot(RandomBot):
    """Answers every 10th decision with a move that is never legal (a bid of 10 000)."""

    name = "sometimes-wrong"

    def __init__(self, seed: int, on_fifth_call=None):
        super().__init__(seed)
        self.calls = 0
        self.on_fifth_call = on_fifth_call

    def choose(self, decision):
        self.calls += 1
        if self.calls == 5 and self.on_fifth_call:
            self.on_fifth_call()  # mid-match, for sure
        if self.calls % 10 == 0:
            return referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=10_000)))
        return super().choose(decision)


def test_play_survives_a_network_drop_and_asks_again_after_a_refused_move(referee_server,
                                                                         tcp_proxy):
    tcp_proxy.target_port = referee_server.port
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=21)
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
    drops = []
    bots: list[Bot] = [
        SometimesWrongBot(0, on_fifth_call=lambda: drops.append(tcp_proxy.drop_all())),
        RandomBot(1),
        RandomBot(2),
    ]

    async def main():
        return await asyncio.gather(*(
            play(bot, tcp_proxy.address, created.match_id, token,
                 backoff=Backoff(initial=0.05, maximum=0.5, give_up_after=30))
            for bot, token in zip(bots, tokens, strict=True)
        ))

    outcomes = asyncio.run(asyncio.wait_for(main(), timeout=120))
    assert drops, "the drop never happened"
    games_over = [g for g, _ in outcomes]
    stats = [s for _, s in outcomes]
    assert all(g.match_id == created.match_id for g in games_over)
    assert games_over[0].seats == games_over[1].seats
    assert sum(s.reconnects for s in stats) >= 1, stats
    assert stats[0].refused >= 1 and stats[0].fallbacks == 0  # sent as it was, refused
    assert stats[0].gave_up == 0  # asked again, its next answer was legal
    assert all(s.refused == 0 for s in stats[1:])
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        record = json.loads(admin.record(created.match_id).record_json)
    assert record["rejected_moves"][0] >= 1


def test_joining_a_finished_archived_match_returns_instead_of_retrying(referee_server):
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=2)
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]

    async def all_seats():
        return await asyncio.gather(*(
            play(RandomBot(i), referee_server.address, created.match_id, t)
            for i, t in enumerate(tokens)
        ))

    first = asyncio.run(asyncio.wait_for(all_seats(), timeout=120))
    assert first[0][0].seats  # a real result
    referee_server.stop()
    referee_server.start()  # the finished match is now archived
    late, stats = asyncio.run(asyncio.wait_for(
        play(RandomBot(9), referee_server.address, created.match_id, tokens[0],
             backoff=Backoff(give_up_after=10)), timeout=60))
    assert late.match_id == created.match_id
    assert late.summary == "match already over"
    assert stats.reconnects == 0


def test_a_bot_refused_every_time_leaves_the_decision_to_the_time_policy(referee_server):
    """A bot whose every answer to its first decision is illegal: the referee refuses each with
    its reason, the SDK asks again REASKS times and then stops answering; the time policy
    plays that decision (a timeout in the record) and the record counts the refused moves."""

    class WrongFirst(RandomBot):
        name = "wrong-first"

        def __init__(self, seed):
            super().__init__(seed)
            self.refusals = []

        def choose(self, decision):
            self.note("a bid I cannot pay")  # a note does not break the move
            if len(self.refusals) <= REASKS and not getattr(self, "past", False):
                return referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(
                    amount=999)))
            return super().choose(decision)

        def on_refused(self, refusal):
            self.refusals.append(refusal)
            self.past = refusal.final

    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=12, time_policy=time_policy_proto(
            {"move_ms": 400, "on_expiry": "random_legal"}))
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
    wrong = WrongFirst(0)
    bots: list[Bot] = [wrong, RandomBot(1), RandomBot(2)]

    async def main():
        return await asyncio.gather(*(
            play(bot, referee_server.address, created.match_id, token)
            for bot, token in zip(bots, tokens, strict=True)
        ))

    outcomes = asyncio.run(asyncio.wait_for(main(), timeout=120))
    over, stats = outcomes[0]
    assert over.seats
    assert (stats.refused, stats.gave_up, stats.fallbacks) == (1 + REASKS, 1, 0)
    assert [r.final for r in wrong.refusals] == [False] * REASKS + [True]
    assert {r.reason for r in wrong.refusals} <= {"ILLEGAL_MOVE", "MALFORMED"}
    assert all(r.message for r in wrong.refusals)
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        record = json.loads(admin.record(created.match_id).record_json)
    assert record["rejected_moves"] == [1 + REASKS, 0, 0]
    first = next(m for m in record["moves"] if m["seat"] == 0)
    assert first.get("timeout")


class GoaInBatavia(RandomBot):
    """Answers its first decision with a Goa move (a bot of another game), then legally."""

    name = "goa-in-batavia"

    def __init__(self, seed: int):
        super().__init__(seed)
        self.refusals: list = []

    def choose(self, decision):
        if not self.refusals:
            return referee_pb2.Move(goa=goa_pb2.Move())
        return super().choose(decision)

    def on_refused(self, refusal) -> None:
        self.refusals.append(refusal)


def test_a_move_of_another_game_is_refused_wrong_game_through_the_sdk(referee_server):
    """issue 31 item 4: a Goa move sent by an SDK bot to a Batavia match comes back as a
    refusal WRONG_GAME (not MALFORMED); the bot is asked again and the match ends."""
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=4)
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
    bots: list[Bot] = [GoaInBatavia(0), RandomBot(1), RandomBot(2)]

    async def main():
        return await asyncio.gather(*(
            play(bot, referee_server.address, created.match_id, token)
            for bot, token in zip(bots, tokens, strict=True)))

    asyncio.run(asyncio.wait_for(main(), timeout=120))
    refusals = bots[0].refusals  # type: ignore[attr-defined]
    assert [(r.reason, r.attempt) for r in refusals] == [("WRONG_GAME", 1)]
    assert "not goa" in refusals[0].message
