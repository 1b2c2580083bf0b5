"""The SDK's Play loop joins with Join.combine_decision by default (issue 22, item 3): when the
seat acts again after its own move, the next Decision comes inside that move's MoveResult.
Bots see no difference: the same decisions reach ``choose`` and ``on_move_result`` gets the
MoveResult without ``next``; the match plays out move for move as without it."""
from __future__ import annotations

import asyncio
import json

from referee_client import AdminClient, play
from referee_client.bots import RandomBot


class Watching(RandomBot):
    """A random bot that notes every decision it is asked and every MoveResult it is given."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.asked: list[int] = []
        self.results: list = []

    def choose(self, decision):
        self.asked.append(decision.state_version)
        return super().choose(decision)

    def on_move_result(self, result):
        self.results.append(result)


def _match(server, combine: bool):
    with AdminClient(server.address, server.admin_token) as admin:
        created = admin.create_match("batavia", 3, seed=44)
    tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
    bots = [Watching(i) for i in range(3)]
    kw = {} if combine else {"combine_decision": False}  # on: the default

    async def main():
        return await asyncio.gather(*(
            play(bot, server.address, created.match_id, token, **kw)
            for bot, token in zip(bots, tokens, strict=True)))

    outcomes = asyncio.run(asyncio.wait_for(main(), timeout=120))
    with AdminClient(server.address, server.admin_token) as admin:
        record = json.loads(admin.record(created.match_id).record_json)
    return bots, [s for _, s in outcomes], record


def test_combined_decisions_change_nothing_a_bot_sees(referee_server):
    combined_bots, combined_stats, combined_record = _match(referee_server, True)
    plain_bots, plain_stats, plain_record = _match(referee_server, False)
    # the same match, move for move, and each bot asked the same decisions
    assert [m["move"] for m in combined_record["moves"]] == [
        m["move"] for m in plain_record["moves"]]
    assert [b.asked for b in combined_bots] == [b.asked for b in plain_bots]
    assert all(not r.HasField("next") for b in combined_bots for r in b.results)
    assert [len(b.results) for b in combined_bots] == [len(b.results) for b in plain_bots]
    # the default asked for it, and the referee combined about half of the moves
    assert sum(s.combined for s in combined_stats) > len(combined_record["moves"]) // 4
    assert sum(s.combined for s in plain_stats) == 0
    assert [s.decisions for s in combined_stats] == [s.decisions for s in plain_stats]
