"""A test bot on the raw protocol that submits a stale move before its first two real moves
(the referee rejects them with STALE_STATE), printing "move rejected" for each rejection as
the Python SDK does. Usage: sloppy_bot.py ADDRESS MATCH TOKEN."""
from __future__ import annotations

import queue
import sys

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc


def main(address: str, match: str, token: str) -> int:
    outbox: queue.Queue = queue.Queue()
    outbox.put(pb.ClientMessage(join=pb.Join(match_id=match)))

    def requests():
        while (msg := outbox.get()) is not None:
            yield msg

    sloppy = 2
    with grpc.insecure_channel(address) as channel:
        stream = pb_grpc.RefereeStub(channel).Play(
            requests(), metadata=(("authorization", f"Bearer {token}"),))
        for msg in stream:
            kind = msg.WhichOneof("msg")
            if kind == "decision":
                d = msg.decision
                if sloppy > 0:
                    sloppy -= 1
                    outbox.put(pb.ClientMessage(submit=pb.Submit(
                        state_version=d.state_version + 1000, move=d.legal_moves[0])))
                outbox.put(pb.ClientMessage(submit=pb.Submit(
                    state_version=d.state_version, move=d.legal_moves[0])))
            elif kind == "move_result" and not msg.move_result.accepted:
                print(f"move rejected: {pb.Reason.Name(msg.move_result.reason)}",
                      file=sys.stderr, flush=True)
            elif kind == "game_over":
                outbox.put(None)
                return 0
    return 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
