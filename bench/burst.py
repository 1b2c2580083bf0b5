"""Burst phase of ``make bench`` (issue 31 item 8): many matches created at once, then every
seat of every match played at once by ONE client process over a few channels.

``grpc.burst300``: ``matches`` (default 300) four-seat Batavia matches are created together
with the admin token (concurrent CreateMatch calls); then one process opens ``channels``
(default 32) channels and plays all ``matches x seats`` Play streams (1,200), seat k of the
burst on channel k mod ``channels``, each answering its Decisions with a random legal move.
Unlike the load phase, no match is replaced and none is cut off: the phase ends when every
match has ended, or when none has moved for ``stall_s`` seconds, or at ``limit_s``.

Reported: ``finished`` and ``unfinished`` (matches that never reached their GameOver; must be
0: ``bench.run`` fails loudly otherwise), the streams that ended with an error and how, the
moves per second over the whole burst, and, for an unfinished match, where it stood (its last
state version, whose turn, whether that seat's stream was still open).
"""
from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class _Seat:
    match: str
    seat: int
    token: str
    over: bool = False
    open: bool = False
    last_version: int = -1
    error: str = ""
    welcome_s: float = -1.0  # from the stream's start to its Welcome
    welcome_at: float = 0.0  # when (time.monotonic)


@dataclass
class _Match:
    id: str
    seats: list[_Seat] = field(default_factory=list)
    version: int = -1  # highest state version any of its seats saw
    to_act: int = -1  # the seat of that Decision
    over: bool = False
    moved_at: float = 0.0


async def play_burst(address: str, admin_token: str, *, matches: int = 300, seats: int = 4,
                     channels: int = 32, game: str = "batavia", limit_s: float = 600.0,
                     stall_s: float = 60.0, seed: int = 1, combine: bool = True,
                     time_policy: Any = None, progress=None) -> dict[str, Any]:
    """Create ``matches`` matches at once, play all their seats at once over ``channels``
    channels of this process, and report what ended (see the module's docstring).
    ``progress(done, total)`` is called about once a second."""
    import grpc

    from referee.v1 import referee_pb2 as pb
    from referee.v1 import referee_pb2_grpc

    opts = [("grpc.max_receive_message_length", 32 * 1024 * 1024)]
    chans = [grpc.aio.insecure_channel(address, options=opts) for _ in range(channels)]
    stubs = [referee_pb2_grpc.RefereeStub(c) for c in chans]
    admin = (("authorization", f"Bearer {admin_token}"),)
    rng = random.Random(seed)
    clock = time.monotonic
    moves = 0
    outcomes: Counter[str] = Counter()
    try:
        t0 = clock()
        req = pb.CreateMatchRequest(game=game, seats=seats)
        if time_policy is not None:
            req.time_policy.CopyFrom(time_policy)
        created = await asyncio.gather(*(stubs[i % channels].CreateMatch(req, metadata=admin)
                                         for i in range(matches)))
        create_s = clock() - t0
        table = [_Match(c.match_id, moved_at=clock()) for c in created]
        for m, c in zip(table, created, strict=True):
            m.seats = [_Seat(m.id, s, c.seats[s].token) for s in range(seats)]
        all_seats = [s for m in table for s in m.seats]
        by_id = {m.id: m for m in table}

        async def play_seat(k: int, st: _Seat) -> None:
            nonlocal moves
            m = by_id[st.match]
            call = stubs[k % channels].Play(metadata=(("authorization", f"Bearer {st.token}"),))
            st.open = True
            opened = clock()

            async def answer(d) -> None:
                st.last_version = d.state_version
                if d.state_version > m.version:
                    m.version, m.to_act = d.state_version, d.seat
                move = d.legal_moves[rng.randrange(len(d.legal_moves))]
                await call.write(pb.ClientMessage(submit=pb.Submit(
                    state_version=d.state_version, move=move)))

            try:
                await call.write(pb.ClientMessage(join=pb.Join(match_id=st.match,
                                                               combine_decision=combine)))
                while True:
                    msg = await call.read()
                    if msg is grpc.aio.EOF:
                        st.error = "EOF before GameOver"
                        return
                    which = msg.WhichOneof("msg")
                    if which == "welcome":
                        st.welcome_at = clock()
                        st.welcome_s = st.welcome_at - opened
                    elif which == "decision":
                        await answer(msg.decision)
                    elif which == "move_result":
                        r = msg.move_result
                        if r.accepted:
                            moves += 1
                            m.moved_at = clock()
                            if r.HasField("next"):
                                await answer(r.next)
                    elif which == "game_over":
                        st.over = m.over = True
                        m.moved_at = clock()
                        return
            except grpc.aio.AioRpcError as err:
                st.error = err.code().name
            except asyncio.CancelledError:
                st.error = st.error or "cut at the end of the phase"
                raise
            finally:
                st.open = False
                outcomes[st.error or "game_over"] += 1
                call.cancel()

        tasks = [asyncio.ensure_future(play_seat(k, st)) for k, st in enumerate(all_seats)]
        started = clock()
        probe_done: list[float] = []

        async def probe() -> None:
            """Once the burst's streams are on their way, one unary call on a fresh channel:
            when it is answered (not held back until the streams before it have started)."""
            await asyncio.sleep(0.5)
            async with grpc.aio.insecure_channel(address) as ch:
                await referee_pb2_grpc.RefereeStub(ch).ListGames(pb.ListGamesRequest())
            probe_done.append(clock())

        probing = asyncio.ensure_future(probe())
        while True:
            await asyncio.sleep(0.5)
            now = clock()
            done = sum(m.over for m in table)
            if progress is not None:
                progress(done, matches)
            if done == matches or all(t.done() for t in tasks):
                break
            last = max(m.moved_at for m in table if not m.over)
            if now - started > limit_s or now - last > stall_s:
                break
        wall = clock() - started
        stuck = [m for m in table if not m.over]
        # where the unfinished ones stood (at most 10), before their streams are cut: the
        # last Decision seen (version, seat), whether that seat's stream is open, how its
        # seats' streams ended
        where = [{"match": m.id, "version": m.version, "to_act": m.to_act,
                  "to_act_open": m.to_act >= 0 and m.seats[m.to_act].open,
                  "idle_s": round(clock() - m.moved_at, 1),
                  "errors": [s.error for s in m.seats if s.error]} for m in stuck[:10]]
        for t in [*tasks, probing]:
            t.cancel()
        await asyncio.gather(*tasks, probing, return_exceptions=True)
    finally:
        for c in chans:
            await c.close()
    return {
        "matches": matches,
        "seats": seats,
        "channels": channels,
        "create_seconds": round(create_s, 2),
        "finished": matches - len(stuck),
        "unfinished": len(stuck),
        "moves": moves,
        "moves_per_s": round(moves / wall, 1) if wall else 0.0,
        "wall_seconds": round(wall, 1),
        "streams": dict(outcomes),
        # how long the slowest stream waited for its Welcome (its call accepted and joined)
        "welcome_s_max": round(max((s.welcome_s for s in all_seats), default=0.0), 1),
        "never_welcomed": sum(s.welcome_s < 0 for s in all_seats),
        # the unary call made 0.5 s into the burst: how long it took, and how many of the
        # burst's streams were still waiting for their Welcome when it was answered (an
        # answer held back until the streams queued before it have started: about none)
        "probe_s": round(probe_done[0] - started - 0.5, 2) if probe_done else None,
        "waiting_at_probe": sum(not s.welcome_at or s.welcome_at > probe_done[0]
                                for s in all_seats) if probe_done else None,
        "stuck": where,
    }


def measure_burst(*, matches: int = 300, seats: int = 4, channels: int = 32,
                  limit_s: float = 600.0, stall_s: float = 60.0,
                  extra_args: tuple[str, ...] = (), progress=None) -> dict[str, Any]:
    """``play_burst`` against a fresh ``referee serve`` process (its default settings, plus
    ``extra_args``); the referee's CPU seconds over the burst too."""
    from bench.grpc_phases import RefereeServer

    with tempfile.TemporaryDirectory(prefix="referee-burst-") as tmp:
        server = RefereeServer(Path(tmp), extra_args=extra_args)
        server.start()
        try:
            cpu0 = server.cpu_seconds()
            out = asyncio.run(play_burst(server.address, server.admin_token, matches=matches,
                                         seats=seats, channels=channels, limit_s=limit_s,
                                         stall_s=stall_s, progress=progress))
            out["server_cpu_s"] = round(server.cpu_seconds() - cpu0, 1)
        finally:
            server.stop()
    return out


if __name__ == "__main__":  # python -m bench.burst [MATCHES [CHANNELS]]: this phase alone
    import json
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    ch = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    print(json.dumps(measure_burst(matches=n, channels=ch), indent=2))
