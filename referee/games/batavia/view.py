"""What each seat sees. Written for the view, not filtered from a dump: a seat gets its own hand;
of others only what the table shows (hand sizes, bills, laid cards, tiles). Never the draw pile's
order, face-down stall tiles or the RNG.

Speed: building protobuf messages field by field costs microseconds per message, and a view has
about fifty. Every part is therefore encoded once and cached as bytes, keyed by exactly what it
shows: the row of stalls (built on a miss from single stalls' encodings), each player's public
holdings, the counting houses, each company count (discards, the cards played this turn, the
viewer's hand) and the pending decision's part (its step's ``view_key``); only the scalars, which
change with nearly every move, are encoded each time. The view is the concatenation. Concatenated encodings of the same message type merge (repeated fields
append, scalars take the last value), so the result is exactly the message built field by field —
``test_fragment_view_equals_direct_build`` and tests/batavia/test_view_bytes.py check this
against :func:`build_view_direct`, and that no change is served from a stale fragment.

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


def _stall(space: int, tile: int, revealed: int) -> pb.Stall:
    if tile < 0:
        return pb.Stall(space=space, state=pb.TAKEN)
    if space <= revealed:
        return pb.Stall(
            space=space, state=pb.FACE_UP, company=tile // N_GOODS + 1, good=tile % N_GOODS + 1  # type: ignore[arg-type]
        )
    return pb.Stall(space=space, state=pb.FACE_DOWN)


def _player_key(state: State, s: int, seals: tuple[int, ...], over: bool) -> tuple:
    """What :func:`_player` shows of seat ``s`` (``seals``: the companies whose seal it holds,
    1-based)."""
    return (
        s,
        state.merchant[s],
        sum(state.hands[s]),
        state.bills[s],
        state.final[s]["total"] if over else state.gold[s],
        tuple(state.face_up[s]),
        seals,
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
        tiles=[_TILES[t] for t in tiles],
        crates_left=crates,
        has_arrival_tile=arrival,
        in_auction=in_auction,
    )


#: each stall tile as a kept tile shows it
_TILES = [stall_tile(t) for t in range(N_COMPANIES * N_GOODS)]


def _seals(state: State) -> list[tuple[int, ...]]:
    """Per seat, the companies (1-based) whose seal it holds (``seal_holder``, once per
    company for all seats)."""
    out: list[list[int]] = [[] for _ in range(state.n)]
    for c in range(N_COMPANIES):
        holder = seal_holder(state, c)
        if holder >= 0:
            out[holder].append(c + 1)
    return [tuple(x) for x in out]


def _houses(state: State) -> list[pb.CountingHouse]:
    return [
        pb.CountingHouse(
            good=g + 1,  # type: ignore[arg-type]
            crate_owner=[state.crate_owner[c * N_GOODS + g] for c in range(N_COMPANIES)],
        )
        for g in range(N_GOODS)
    ]


def _scalars(state: State, seat: int | None) -> pb.View:
    """The view's own fields, which change with nearly every move: everything but stalls,
    players, counting houses, company counts and the pending decision's part."""
    over = state.phase == OVER
    total = face_up_total(state)
    return pb.View(
        seat=-1 if seat is None else seat,
        seat_count=state.n,
        phase=state.phase,  # type: ignore[arg-type]
        round=state.round,
        first_player=state.first_player,
        current_seat=state.current if not over else -1,
        draw_pile_size=len(state.draw_pile),
        cannon=min(total, state.rules.cannon_max),
        face_up_total=total,
        pirate_threshold=pirate_threshold(state),
        arrival_holder=state.arrival_holder,
        final_round=state.arrival_holder >= 0 and not over,
    )


def build_view(state: State, seat: int | None) -> pb.View:
    return pb.View.FromString(build_view_bytes(state, seat))


def build_view_bytes(state: State, seat: int | None) -> bytes:
    """The encoded view: cached fragments concatenated (see the module docstring). Every part
    is keyed by exactly what it shows, so a change to any of it is a new key, never a stale
    fragment (tests/batavia/test_view_bytes.py)."""
    over = state.phase == OVER
    seals = _seals(state)
    # the whole row of stalls changes only when a tile is taken or revealed: one entry, built
    # on a miss from the fragments of single stalls
    key: tuple = (state.revealed, *state.track)
    frag = _rows.get(key)
    if frag is None:
        frag = _put(_rows, key, _stall_row(state.track, state.revealed))
    parts = [frag]
    for s in range(state.n):
        key = _player_key(state, s, seals[s], over)
        frag = _players.get(key)
        if frag is None:
            frag = _put(_players, key, pb.View(players=[_player(key)]).SerializeToString())
        parts.append(frag)
    key = tuple(state.crate_owner)
    frag = _houses_cache.get(key)
    if frag is None:
        frag = _put(_houses_cache, key, pb.View(counting_houses=_houses(state)).SerializeToString())
    parts.append(frag)
    # the scalars change with nearly every move: built each time, not cached
    parts.append(_scalars(state, seat).SerializeToString())
    parts.append(_counts_fragment(_DISCARDS, state.discards))
    parts.append(_counts_fragment(_PLAYED, state.played))
    if seat is not None:
        parts.append(_counts_fragment(_MY_HAND, state.hands[seat]))
    if not over:
        step = STEPS[state.phase]
        key = (state.phase, *step.view_key(state))
        frag = _pending.get(key)
        if frag is None:
            view = pb.View()
            step.pending_view(state, view)
            frag = _put(_pending, key, view.SerializeToString())
        parts.append(frag)
    return b"".join(parts)


# Each kind of fragment has its cache: a kind that changes often (a seat's holdings) does not
# push out one that repeats (a company count, the row of stalls).
_rows: dict[tuple, bytes] = {}
_players: dict[tuple, bytes] = {}
_houses_cache: dict[tuple, bytes] = {}
_counts: dict[tuple, bytes] = {}
_pending: dict[tuple, bytes] = {}
# one stall's fragment by (space, tile, face up): at most 35 x 36 x 2 entries, never cleared
_single_stalls: dict[tuple[int, int, bool], bytes] = {}
_DISCARDS, _PLAYED, _MY_HAND = "discards", "played_this_turn", "my_hand"


def _put(cache: dict[tuple, bytes], key: tuple, frag: bytes) -> bytes:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = frag
    return frag


def _stall_row(track: list[int], revealed: int) -> bytes:
    out = []
    for space, tile in enumerate(track, start=1):
        skey = (space, tile, tile >= 0 and space <= revealed)
        frag = _single_stalls.get(skey)
        if frag is None:
            frag = _single_stalls[skey] = pb.View(
                stalls=[_stall(space, tile, revealed)]).SerializeToString()
        out.append(frag)
    return b"".join(out)


def _counts_fragment(field: str, values: list[int]) -> bytes:
    """``field`` (a CompanyCounts of the View) set to ``values``, encoded."""
    key = (field, *values)
    frag = _counts.get(key)
    if frag is None:
        view = pb.View()
        getattr(view, field).CopyFrom(counts(values))
        frag = _put(_counts, key, view.SerializeToString())
    return frag


def build_view_direct(state: State, seat: int | None) -> pb.View:
    """The same view built field by field (the reference for the fragment build)."""
    over = state.phase == OVER
    holders = [seal_holder(state, c) for c in range(N_COMPANIES)]
    view = pb.View(
        stalls=[_stall(sp, t, state.revealed) for sp, t in enumerate(state.track, start=1)],
        players=[_player(_player_key(
            state, s, tuple(c + 1 for c in range(N_COMPANIES) if holders[c] == s), over))
            for s in range(state.n)],
        counting_houses=_houses(state),
    )
    view.MergeFrom(_scalars(state, seat))
    view.discards.CopyFrom(counts(state.discards))
    view.played_this_turn.CopyFrom(counts(state.played))
    if not over:
        STEPS[state.phase].pending_view(state, view)
    if seat is not None:
        view.my_hand.CopyFrom(counts(state.hands[seat]))
    return view
