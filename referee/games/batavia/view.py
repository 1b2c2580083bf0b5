"""What each seat sees. Written for the view, not filtered from a dump: a seat gets its own hand;
of others only what the table shows (hand sizes, bills, laid cards, tiles). Never the draw pile's
order, face-down stall tiles or the RNG.

Speed: building protobuf messages field by field costs microseconds per message, and a view has
about fifty. The parts that repeat from move to move (a stall space, a player's public holdings, a
counting house) are therefore encoded once and cached as bytes; the view is the concatenation of
those encodings parsed once. Concatenated encodings of the same message type merge (repeated fields
append, scalars take the last value), so the result is exactly the message built field by field —
``test_fragment_view_equals_direct_build`` checks this against :func:`build_view_direct`.

protoc's stubs type enum fields as their enum class; the enum numbers this module writes as ints
carry ``type: ignore[arg-type]``.
"""
from __future__ import annotations

from referee.v1 import batavia_pb2 as pb

from .rules import (
    AUCTION,
    N_COMPANIES,
    N_GOODS,
    OVER,
    STEPS,
    State,
    face_up_total,
    pirate_threshold,
    seal_holder,
)
from .view_parts import counts, stall_tile

# Fragments repeat within a match (a player's holdings change only when they act), rarely
# across matches: a few thousand entries keep the hits, and cap the memory at a few MB.
_CACHE_LIMIT = 8_192
_stall_cache: dict[tuple, bytes] = {}
_player_cache: dict[tuple, bytes] = {}
_house_cache: dict[tuple, bytes] = {}


def _stall(space: int, tile: int, revealed: int) -> pb.Stall:
    if tile < 0:
        return pb.Stall(space=space, state=pb.TAKEN)
    if space <= revealed:
        return pb.Stall(
            space=space, state=pb.FACE_UP, company=tile // N_GOODS + 1, good=tile % N_GOODS + 1  # type: ignore[arg-type]
        )
    return pb.Stall(space=space, state=pb.FACE_DOWN)


def _player_key(state: State, s: int, holders: list[int], over: bool) -> tuple:
    return (
        s,
        state.merchant[s],
        sum(state.hands[s]),
        state.bills[s],
        state.final[s]["total"] if over else state.gold[s],
        tuple(state.face_up[s]),
        tuple(c + 1 for c in range(N_COMPANIES) if holders[c] == s),
        tuple(state.tiles[s]),
        state.crates_left[s],
        state.arrival_holder == s,
        state.phase == AUCTION and state.in_auction[s],
    )


def _player(key: tuple) -> pb.PlayerPublic:
    s, space, hand, bills, gold, face_up, seals, tiles, crates, arrival, in_auction = key
    return pb.PlayerPublic(
        seat=s,
        merchant_space=space,
        hand_size=hand,
        bills=bills,
        gold=gold,
        face_up=counts(face_up),
        seals=seals,
        tiles=[stall_tile(t) for t in tiles],
        crates_left=crates,
        has_arrival_tile=arrival,
        in_auction=in_auction,
    )


def _houses(state: State) -> list[pb.CountingHouse]:
    return [
        pb.CountingHouse(
            good=g + 1,  # type: ignore[arg-type]
            crate_owner=[state.crate_owner[c * N_GOODS + g] for c in range(N_COMPANIES)],
        )
        for g in range(N_GOODS)
    ]


def _scalars(state: State, seat: int | None) -> pb.View:
    """Everything but stalls, players and counting houses."""
    over = state.phase == OVER
    total = face_up_total(state)
    view = pb.View(
        seat=-1 if seat is None else seat,
        seat_count=state.n,
        phase=state.phase,  # type: ignore[arg-type]
        round=state.round,
        first_player=state.first_player,
        current_seat=state.current if not over else -1,
        draw_pile_size=len(state.draw_pile),
        discards=counts(state.discards),
        cannon=min(total, state.rules.cannon_max),
        face_up_total=total,
        pirate_threshold=pirate_threshold(state),
        played_this_turn=counts(state.played),
        arrival_holder=state.arrival_holder,
        final_round=state.arrival_holder >= 0 and not over,
    )
    if not over:
        STEPS[state.phase].pending_view(state, view)
    if seat is not None:
        view.my_hand.CopyFrom(counts(state.hands[seat]))
    return view


def build_view(state: State, seat: int | None) -> pb.View:
    return pb.View.FromString(build_view_bytes(state, seat))


def build_view_bytes(state: State, seat: int | None) -> bytes:
    """The encoded view: cached fragments concatenated (see the module docstring)."""
    over = state.phase == OVER
    holders = [seal_holder(state, c) for c in range(N_COMPANIES)]
    parts: list[bytes] = []
    # the whole row of stalls changes only when a tile is taken or revealed: one cache entry
    tkey = (tuple(state.track), state.revealed)
    frag = _stall_cache.get(tkey)
    if frag is None:
        frag = pb.View(
            stalls=[_stall(sp, t, state.revealed) for sp, t in enumerate(state.track, start=1)]
        ).SerializeToString()
        if len(_stall_cache) > _CACHE_LIMIT:
            _stall_cache.clear()
        _stall_cache[tkey] = frag
    parts.append(frag)
    for s in range(state.n):
        key = _player_key(state, s, holders, over)
        frag = _player_cache.get(key)
        if frag is None:
            frag = pb.View(players=[_player(key)]).SerializeToString()
            if len(_player_cache) > _CACHE_LIMIT:
                _player_cache.clear()
            _player_cache[key] = frag
        parts.append(frag)
    hkey = tuple(state.crate_owner)
    frag = _house_cache.get(hkey)
    if frag is None:
        frag = pb.View(counting_houses=_houses(state)).SerializeToString()
        if len(_house_cache) > _CACHE_LIMIT:
            _house_cache.clear()
        _house_cache[hkey] = frag
    parts.append(frag)
    parts.append(_scalars(state, seat).SerializeToString())
    return b"".join(parts)


def build_view_direct(state: State, seat: int | None) -> pb.View:
    """The same view built field by field (the reference for the fragment build)."""
    over = state.phase == OVER
    holders = [seal_holder(state, c) for c in range(N_COMPANIES)]
    view = pb.View(
        stalls=[_stall(sp, t, state.revealed) for sp, t in enumerate(state.track, start=1)],
        players=[_player(_player_key(state, s, holders, over)) for s in range(state.n)],
        counting_houses=_houses(state),
    )
    view.MergeFrom(_scalars(state, seat))
    return view
