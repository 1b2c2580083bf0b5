"""A starting point for a Python bot: copy it, then make ``choose`` smarter.

Try it against the reference bots on a private local referee (one line):

    referee-bot play --game goa --me "python examples/bots/mybot.py" --vs greedy-goa --vs random

``referee-bot play`` (or a tournament) appends ``--address A --match M`` and puts the seat token
in ``$REFEREE_TOKEN`` (a command line is readable by every process of the machine).
"""
from __future__ import annotations

import argparse
import os
import random

from referee_client import Bot, run_bot


class MyBot(Bot):
    name = "my-bot"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)

    def choose(self, decision):
        # decision.view holds what this seat may see (decision.view.goa, .batavia, ...);
        # the answer must be one of decision.legal_moves.
        return self.rng.choice(decision.legal_moves)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--address", default=os.environ.get("REFEREE_ADDRESS", "127.0.0.1:50051"))
    p.add_argument("--match", default=os.environ.get("REFEREE_MATCH"))
    p.add_argument("--token", default=os.environ.get("REFEREE_TOKEN"))
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    if not (args.match and args.token):
        p.error("give --match and --token (or $REFEREE_MATCH and $REFEREE_TOKEN)")
    game_over = run_bot(MyBot(args.seed), args.address, args.match, args.token)
    print(game_over.summary)


if __name__ == "__main__":
    main()
