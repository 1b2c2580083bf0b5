"""Property tests over many random full games (2, 3 and 4 seats, both editions, the variants):
invariants, complete legal-move lists, termination, illegal moves rejected without change, and
views that leak nothing a seat cannot see."""
from __future__ import annotations

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core.contract import IllegalMove
from referee.core.rng import Rng
from referee.games.goa import moves
from referee.games.goa.cards import HandLimitDiscard
from referee.games.goa.catalog import TILE_MISSION
from referee.games.goa.scoring import final_scoring
from referee.games.goa.state import OVER, State, hand_limit
from tests.goa.helpers import GAME, new_game

OPTION_SETS = [
    {},
    {"edition": "2004"},
    {"quick_starter": True},
    {"bonanza": True},
    {"edition": "2004", "quick_starter": True},
    {"edition": "2004", "colony_card_timing": "before", "hand_limit": "always"},
    {"hand_limit": "always", "bonanza": True},
]

ILLEGAL_POOL = [
    moves.bid(9999), moves.PASS, moves.KEEP_LOT, moves.END_TURN, moves.DONE, moves.RECRUIT, moves.DECLINE, moves.TAXES,
    moves.PLACE_SPICE[11][4], moves.PAY_SPICE[10][0], moves.PLACE_FLAG[0], moves.PLACE_TOKEN[0],
    moves.PLAY_EXTRA, moves.PASS_EXTRA, moves.draw(7), moves.play_card(29), moves.use_tile(0), moves.QUICK_DUCATS,
    moves.CHOOSE_COLUMN[0], moves.SWAP_TAKE[0],
]


def check_invariants(state: State) -> None:
    n = state.n
    for s in range(n):
        assert state.ducats[s] >= 0
        assert state.ships[s] >= 0
        assert state.colonists[s] >= 0
        assert state.extra_cards[s] >= 0
        assert all(0 <= r <= 4 for r in state.rows[s])
        assert sum(1 for land in state.lands[s] if not land.colony) <= 4
        for land in state.lands[s]:
            for mask, spice in zip(land.takes, land.spices):
                assert spice == -1 or mask & (1 << spice)
    assert state.extra_supply >= 0
    assert state.extra_supply + sum(state.extra_cards) == state.rules.extra_cards
    if state.options.get("hand_limit") == "always" and not (
            state.stack and isinstance(state.stack[-1], HandLimitDiscard)):
        for s in range(n):
            assert len(state.hands[s]) <= hand_limit(state, s)
    cards = sorted(state.deck + state.discard + [c for h in state.hands for c in h])
    assert cards == list(range(30)), "every Expedition card is somewhere, once"


def run_game(seed: int, n: int, options: dict, check_every: int = 0) -> State:
    state = new_game(n, seed, **options)
    rnd = random.Random(seed)
    steps = 0
    while True:
        d = GAME.decision(state)
        if d is None:
            break
        assert d.moves, f"empty decision {d.kind}"
        assert len(set(d.moves)) == len(d.moves), f"duplicate moves in {d.kind}"
        if check_every and steps % check_every == 0:
            check_invariants(state)
            before = GAME.hash_state(state)
            for bad in ILLEGAL_POOL:
                if bad not in d.moves:
                    try:
                        GAME.apply(state, d.seat, bad)
                    except IllegalMove:
                        pass
                    else:
                        raise AssertionError(f"{bad!r} accepted in {d.kind}")
                    break
            try:
                GAME.apply(state, (d.seat + 1) % n, d.moves[0])
            except IllegalMove as exc:
                assert exc.code == "NOT_YOUR_TURN"
            else:
                raise AssertionError("a move by the wrong seat was accepted")
            assert GAME.hash_state(state) == before, "a rejected move changed the state"
            for m in d.moves:  # every listed move is accepted
                trial = copy.deepcopy(state)
                GAME.apply(trial, d.seat, m)
        GAME.apply(state, d.seat, rnd.choice(d.moves))
        steps += 1
        assert steps < 20_000, "the game does not terminate"
    check_invariants(state)
    assert state.round == 8
    res = GAME.result(state)
    assert res is not None and len(res.scores) == n and res.winners
    return state


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 3, 4]),
       options=st.sampled_from(OPTION_SETS))
def test_random_games_keep_invariants(seed, n, options):
    run_game(seed, n, options)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 3, 4]),
       options=st.sampled_from(OPTION_SETS))
def test_every_listed_move_is_accepted_and_illegal_ones_change_nothing(seed, n, options):
    run_game(seed, n, options, check_every=37)


def test_same_seed_same_moves_same_state():
    a = run_game(7, 3, {})
    b = run_game(7, 3, {})
    assert GAME.hash_state(a) == GAME.hash_state(b)


# ---------------------------------------------------------------- hidden information


def rerandomise(state: State, seat: int, rnd: random.Random) -> State:
    """Everything ``seat`` cannot see, drawn anew: the other hands (same sizes) and the deck
    order, the others' ducats, the face-down Bonanza tiles, the RNG."""
    s2 = copy.deepcopy(state)
    others = [p for p in range(s2.n) if p != seat]
    pool = list(s2.deck) + [c for p in others for c in s2.hands[p]]
    rnd.shuffle(pool)
    for p in others:
        k = len(s2.hands[p])
        s2.hands[p] = pool[:k]
        pool = pool[k:]
    s2.deck = pool
    for p in others:
        s2.ducats[p] = rnd.randrange(0, 60)
    face_down = [g for g in range(25) if s2.bonanza[g] >= 0]
    if face_down:
        unused = [b for b in range(len(s2.rules.bonanza)) if b not in s2.bonanza]
        choices = [s2.bonanza[g] for g in face_down] + unused
        rnd.shuffle(choices)
        for g, b in zip(face_down, choices):
            s2.bonanza[g] = b
    rnd.shuffle(s2.stacks["B"])
    # others' Mission tiles lie face down: re-deal them among the Mission tiles nobody sees
    mission = [t for t in range(len(s2.rules.tiles)) if s2.rules.tiles[t].type == TILE_MISSION]
    held = [(p, i) for p in others for i, t in enumerate(s2.kept[p]) if t in mission]
    unseen = [t for t in s2.stacks["B"] if t in mission]
    pool = [s2.kept[p][i] for p, i in held] + unseen
    rnd.shuffle(pool)
    for p, i in held:
        s2.kept[p][i] = pool.pop()
    b_slots = [k for k, t in enumerate(s2.stacks["B"]) if t in mission]
    for k in b_slots:
        s2.stacks["B"][k] = pool.pop()
    if s2.edition == "2004":  # the tiles returned to the box unseen
        s2.box = [rnd.randrange(len(s2.rules.tiles)) for _ in s2.box]
    s2.rng = Rng(rnd.getrandbits(64))
    return s2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 3, 4]),
       options=st.sampled_from(OPTION_SETS), stop=st.integers(0, 700))
def test_view_shows_nothing_a_seat_cannot_see(seed, n, options, stop):
    state = new_game(n, seed, **options)
    rnd = random.Random(seed)
    for _ in range(stop):
        d = GAME.decision(state)
        if d is None:
            break
        GAME.apply(state, d.seat, rnd.choice(d.moves))
    if GAME.decision(state) is None:
        return
    for seat in list(range(n)) + [None]:
        want = GAME.view(state, seat).SerializeToString(deterministic=True)
        for k in range(3):
            other = rerandomise(state, -1 if seat is None else seat, random.Random(seed + k))
            got = GAME.view(other, seat).SerializeToString(deterministic=True)
            assert got == want, f"view of seat {seat} depends on hidden information"


def test_spectator_view_has_no_hidden_holdings():
    state = new_game(3, 5)
    view = GAME.view(state, None)
    assert view.seat == -1 and not view.my_hand and view.my_ducats == 0


def test_others_mission_tiles_are_face_down():
    """Mission (B): "Acquired Mission tiles are placed, face down, in your play area" — the owner
    sees its value, the others and spectators see a face-down Mission tile; the final scoring
    reveals it."""
    state = new_game(3, 7)
    mission = next(t for t in range(len(state.rules.tiles))
                   if state.rules.tiles[t].type == TILE_MISSION)
    state.kept[1].append(mission)
    own = GAME.view(state, 1).players[1].tiles[-1]
    assert own.id == mission and own.vp in (2, 3)
    for viewer in (0, 2, None):
        other = GAME.view(state, viewer).players[1].tiles[-1]
        assert other.type == own.type and other.id == 0 and other.vp == 0
    final_scoring(state)
    assert state.phase == OVER
    assert GAME.view(state, 0).players[1].tiles[-1].vp == own.vp
