"""run_bot/play in-process against a real referee: a network drop mid-match (every connection
cut by the proxy) is survived by reconnecting, and a bot that answers with a move that is not
legal is covered by the SDK's fallback instead of stalling the match."""
from __future__ import annotations

import asyncio

from referee_client import AdminClient, Backoff, Bot, play
from referee_client.bots import RandomBot

from referee.v1 import batavia_pb2, referee_pb2


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


def test_play_survives_a_network_drop_and_covers_illegal_answers(referee_server, tcp_proxy):
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
    assert stats[0].fallbacks >= 1
    assert all(s.rejected == 0 for s in stats)  # the fallback is legal, nothing is rejected


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


def test_a_move_the_referee_rejects_is_answered_again(referee_server, monkeypatch):
    """If the referee rejects a submission as illegal (here: the SDK's own legality check is
    switched off so a bogus move reaches it), the decision stays pending and is not pushed
    again; the SDK answers once more with the first legal move instead of stalling."""
    import referee_client.bot as sdk

    monkeypatch.setattr(sdk, "_is_legal", lambda move, legal: True)
    with AdminClient(referee_server.address, referee_server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=12)
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
    bots: list[Bot] = [SometimesWrongBot(0), RandomBot(1), RandomBot(2)]

    async def main():
        return await asyncio.gather(*(
            play(bot, referee_server.address, created.match_id, token)
            for bot, token in zip(bots, tokens, strict=True)
        ))

    outcomes = asyncio.run(asyncio.wait_for(main(), timeout=120))
    wrong = outcomes[0][1]
    assert outcomes[0][0].seats
    assert wrong.rejected >= 1 and wrong.fallbacks == wrong.rejected
