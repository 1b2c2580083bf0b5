"""An SDK bot whose first answer is a bid of 999 (refused by the referee), then random legal
moves: a refused-move incident for the tournament to report (issue 20).

    python wrong_first_bot.py ADDRESS MATCH TOKEN
"""
from __future__ import annotations

import sys

from referee_client import run_bot
from referee_client.bots import RandomBot

from referee.v1 import batavia_pb2, referee_pb2


class WrongFirst(RandomBot):
    name = "wrong-first"
    wrong = True

    def choose(self, decision):
        if self.wrong:
            self.wrong = False
            return referee_pb2.Move(batavia=batavia_pb2.Move(bid=batavia_pb2.Bid(amount=999)))
        return super().choose(decision)


if __name__ == "__main__":
    address, match, token = sys.argv[1:4]
    run_bot(WrongFirst(1), address, match, token)
