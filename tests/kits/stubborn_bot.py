"""A bot that breaks two rules of the conformance checklist on purpose, to show the kit catches
them: it never answers a decision again after the referee refuses its move (so the time policy
plays for it), and it does not exit after GameOver. It does rejoin after a broken stream.

    REFEREE_TOKEN=T python stubborn_bot.py --address A --match M
"""
from __future__ import annotations

import argparse
import os
import random
import time

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc


def play(address: str, match: str, token: str) -> None:
    while True:
        try:
            with grpc.insecure_channel(address) as channel:
                requests: list[pb.ClientMessage] = [pb.ClientMessage(join=pb.Join(match_id=match))]
                call = referee_pb2_grpc.RefereeStub(channel).Play(
                    _feed(requests), metadata=(("authorization", f"Bearer {token}"),)
                )
                for msg in call:
                    if msg.WhichOneof("msg") == "decision":
                        d = msg.decision
                        requests.append(pb.ClientMessage(submit=pb.Submit(
                            state_version=d.state_version, move=random.choice(d.legal_moves))))
                    elif msg.WhichOneof("msg") == "game_over":
                        time.sleep(600)  # wrong: a bot should exit on GameOver
        except grpc.RpcError:
            time.sleep(0.2)


def _feed(queue: list):
    while True:
        while queue:
            yield queue.pop(0)
        time.sleep(0.005)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--address")
    p.add_argument("--match")
    p.add_argument("--token", default=os.environ.get("REFEREE_TOKEN"))
    a = p.parse_args()
    play(a.address, a.match, a.token)
