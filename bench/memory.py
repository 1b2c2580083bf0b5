"""Memory figures for `make bench`.

Engine: the heap footprint of one game state (everything ``GAME.setup`` and ``GAME.apply``
build, hidden parts and RNG included), measured with ``tracemalloc`` as the bytes a
``copy.deepcopy`` of the state allocates, sampled along random playouts (the state grows and
shrinks as a game goes; the mean and the largest sample are reported).

Referee: the resident set size (VmRSS, from /proc) of the real ``referee serve`` process of the
gRPC phases: right after start, after the move phase (every match it played is still held, for
``--keep-finished`` seconds), and the cost of one more match held in memory, from RSS before
and after creating N matches nobody plays. (CPython seldom gives freed memory back to the OS, so
RSS shows growth, not eviction; ``tests/server/test_eviction.py`` checks that finished matches
leave memory.)
"""
from __future__ import annotations

import copy
import random
import tracemalloc
from pathlib import Path
from typing import Any


def rss_kb(pid: int) -> int | None:
    """Resident set size of a process in KiB (Linux /proc), or None where unavailable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def deep_bytes(obj: Any, shared: tuple[Any, ...] = ()) -> int:
    """Bytes of heap a deep copy of ``obj`` allocates (its own footprint, shared constants such
    as small ints and interned strings aside); objects in ``shared`` are not counted."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        memo = {id(x): x for x in shared}
        before = tracemalloc.get_traced_memory()[0]
        clone = copy.deepcopy(obj, memo)
        del memo  # deepcopy's bookkeeping is not part of the state (its first table was
        after = tracemalloc.get_traced_memory()[0]  # allocated before: under 1 KB low)
        del clone
    finally:
        if started:
            tracemalloc.stop()
    return max(0, after - before)


def _fields(state: Any) -> dict[str, Any]:
    names = getattr(state, "__dataclass_fields__", None) or getattr(state, "__dict__", {})
    slots = [n for c in type(state).__mro__ for n in getattr(c, "__slots__", ())]
    return {n: getattr(state, n) for n in (*names, *slots) if hasattr(state, n)}


def shared_parts(a: Any, b: Any) -> tuple[Any, ...]:
    """Top-level parts two independently set-up states hold by the SAME object: immutable
    tables derived from the component sheet, which every match shares (not per-match memory)."""
    fb = _fields(b)
    return tuple(v for k, v in _fields(a).items() if k in fb and fb[k] is v
                 and not isinstance(v, (int, float, str, bool, type(None))))


def engine_state_bytes(game, games: int = 6, samples_per_game: int = 8) -> dict[str, Any]:
    """Mean and largest footprint of a state of ``game`` over random playouts of every seat
    count (default options and component sheet); what all matches share (see
    ``shared_parts``) is left out."""
    from referee.core.rng import Streams

    spec = game.spec
    options = spec.parse_options({})
    sheet = game.default_components(options)
    rng = random.Random(7)
    seat_counts = list(range(spec.min_seats, spec.max_seats + 1))
    sizes: list[int] = []
    for g in range(games):
        n = seat_counts[g % len(seat_counts)]
        # first pass: the game's length, so that samples spread over the whole game
        state = game.setup(options, n, Streams(g), sheet)
        picks: list[int] = []
        while (d := game.decision(state)) is not None:
            i = rng.randrange(len(d.moves))
            picks.append(i)
            game.apply(state, d.seat, d.moves[i])
        total = len(picks)
        at = {round(k * total / samples_per_game) for k in range(samples_per_game)} | {total}
        state = game.setup(options, n, Streams(g), sheet)
        shared = shared_parts(state, game.setup(options, n, Streams(g + 1000), sheet))
        for step in range(total + 1):
            if step in at:
                sizes.append(deep_bytes(state, shared))
            if step == total:
                break
            d = game.decision(state)
            game.apply(state, d.seat, d.moves[picks[step]])
    return {
        "state_kb_mean": round(sum(sizes) / len(sizes) / 1024, 1) if sizes else None,
        "state_kb_max": round(max(sizes) / 1024, 1) if sizes else None,
        "samples": len(sizes),
    }


def idle_match_cost(address: str, admin_token: str, pid: int, *, game: str, seats: int,
                    matches: int) -> dict[str, Any]:
    """RSS of the referee process ``pid`` before and after creating ``matches`` matches that
    nobody plays: what one match held in memory costs (state, cached first decision with its
    view and legal moves, tokens, runtime, store row)."""
    import time

    import grpc

    from referee.v1 import referee_pb2 as pb
    from referee.v1 import referee_pb2_grpc

    with grpc.insecure_channel(address) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        admin = (("authorization", f"Bearer {admin_token}"),)
        # one match first, so one-off costs (imports, caches) are not counted per match
        stub.CreateMatch(pb.CreateMatchRequest(game=game, seats=seats), metadata=admin)
        time.sleep(0.2)
        before = rss_kb(pid)
        for _ in range(matches):
            stub.CreateMatch(pb.CreateMatchRequest(game=game, seats=seats), metadata=admin)
        time.sleep(0.2)
        after = rss_kb(pid)
    return {
        "idle_matches": matches,
        "rss_mb_before_idle_matches": _mb(before),
        "rss_mb_with_idle_matches": _mb(after),
        "kb_per_live_match": round((after - before) / matches, 1)
        if before is not None and after is not None else None,
    }


def _mb(kb: int | None) -> float | None:
    return round(kb / 1024, 1) if kb is not None else None
