"""Goa's forward model (every game keeps this job in ``sim.py``): ``clone_state`` (``Game.clone``)
and the sampler (``Game.sample_state``, the forward model's "sample what you cannot see"): a
full ``State`` rebuilt from what one or more seats saw (their Views) and the match's public
events, with everything none of them could see drawn with the given RNG. SAMPLING.md says what
is hidden, how each part is drawn, and where the draw is biased and why.

Reads nothing but its arguments: the Views, the events, the options, the sheet's ``Rules``.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from referee.core.contract import Event
from referee.core.rng import Rng, Streams
from referee.v1 import goa_pb2 as pb

from .actions import ActionTurn
from .board import GRID_CELLS, cell_of, grid_index, token_seat
from .cards import ExpeditionDraw, HandLimitDiscard
from .catalog import (
    COLUMN_EXPEDITION,
    COLUMNS,
    EFFECT_DUCATS,
    EFFECT_PROGRESS_DUCATS,
    EXPEDITION_CARDS,
    GRID_SQUARES,
    N_COLONIES,
    N_SPICES,
    TILE_CROP_ROTATION,
    TILE_DUTY,
    TILE_EXTRA_HARVEST,
    TILE_MISSION,
    TILE_PLANTATION,
    TILE_RED_DUCATS,
    TILE_RESUPPLY,
    TILE_SWAP,
    TILE_VICE_KING,
    Rules,
)
from .colonies import ColonyFounding, ColonyTileChoice
from .rules import settle
from .spices import BonusSacks, ExtraHarvest, FillLand, HarvestSacks, ProgressPayment, SpiceSale
from .state import ACTIONS, AUCTION, EXTRA, OVER, PLACE, QUICK, Land, State, SubDecision
from .tiles import (
    DutyPayment,
    FavorChoice,
    PaidProgressChoice,
    PlantationDiscard,
    ResourceChoice,
    SwapChoice,
    ViceKingChoice,
)

_PHASE_OF = {pb.QUICK_START: QUICK, pb.PLACE_TOKENS: PLACE, pb.AUCTIONS: AUCTION,
             pb.ACTIONS: ACTIONS, pb.EXTRA_ACTIONS: EXTRA, pb.GAME_OVER: OVER}

#: the events of a regular action itself (one per action turn; a Progress paid in ships only is
#: the ``goa.progress`` that names its card)
_ACTION_KINDS = frozenset(("goa.progress_started", "goa.build_ships", "goa.harvest", "goa.taxes",
                           "goa.expedition_action", "goa.found_colony"))
#: events naming a tile a seat obtained (auction, Favor, Swap)
_GAIN_KINDS = frozenset(("goa.tile_won", "goa.favor", "goa.swap"))
#: what a seat's other ducats are drawn from when the events do not start at the first move
#: (SAMPLING.md, "Ducats")
FALLBACK_DUCATS = 30


# ---------------------------------------------------------------------------- clone
def clone_state(s: State) -> State:
    """An independent copy of ``s`` for the forward model (``Game.clone``): every mutable part
    copied by hand, the immutable ones shared (the compiled ``Rules``, the options, the interned
    moves of the pending decision, each land's accepted spices, the final scores once written).
    About 20 times faster than ``copy.deepcopy``; ``CLONED_FIELDS`` names every field it
    handles, and a test fails when ``State`` grows one it does not."""
    out = State.__new__(State)
    out.n = s.n
    out.options = s.options
    out.rules = s.rules
    rng = s.rng
    out.rng = (Streams.from_root(rng.state, rng.counts) if type(rng) is Streams
               else copy.deepcopy(rng))
    out.edition = s.edition
    out.phase = s.phase
    out.round = s.round
    out.first = s.first
    out.grid = s.grid[:]
    out.bonanza = s.bonanza[:]
    out.box = s.box[:]
    out.stacks = {k: v[:] for k, v in s.stacks.items()}
    out.tile_discard = s.tile_discard[:]
    out.tokens = s.tokens[:]
    out.token_seats = s.token_seats[:]
    out.flag_cell = s.flag_cell
    out.lot = s.lot
    out.bid_pos = s.bid_pos
    out.high = s.high
    out.high_bidder = s.high_bidder
    out.bids = s.bids[:]
    out.turns = s.turns
    out.extra_pos = s.extra_pos
    out.extra_passed = s.extra_passed[:]
    out.quick_pos = s.quick_pos
    out.deck = s.deck[:]
    out.discard = s.discard[:]
    out.colony_supply = [x[:] for x in s.colony_supply]
    out.extra_supply = s.extra_supply
    out.ducats = s.ducats[:]
    out.ships = s.ships[:]
    out.colonists = s.colonists[:]
    out.extra_cards = s.extra_cards[:]
    out.hands = [x[:] for x in s.hands]
    out.rows = [x[:] for x in s.rows]
    out.lands = [[Land(land.colony, land.tile, land.takes, land.spices[:]) for land in seat]
                 for seat in s.lands]
    out.colonies = [x[:] for x in s.colonies]
    out.kept = [x[:] for x in s.kept]
    out.red_used = [x[:] for x in s.red_used]
    out.singles_down = s.singles_down[:]
    out.duty_face_down = [x[:] for x in s.duty_face_down]
    out.first_bonus = s.first_bonus[:]
    out.all_bonus = s.all_bonus[:]
    out.stack = [sub.copy() for sub in s.stack]
    out.final = s.final[:]
    out.pending = s.pending
    return out


#: the ``State`` fields ``clone_state`` copies (tests/goa/test_sim.py checks it is all)
CLONED_FIELDS = frozenset((
    "n", "options", "rules", "rng", "edition", "phase", "round", "first", "grid", "bonanza", "box",
    "stacks", "tile_discard", "tokens", "token_seats", "flag_cell", "lot", "bid_pos", "high",
    "high_bidder", "bids", "turns", "extra_pos", "extra_passed", "quick_pos", "deck", "discard",
    "colony_supply", "extra_supply", "ducats", "ships", "colonists", "extra_cards", "hands",
    "rows", "lands", "colonies", "kept", "red_used", "singles_down", "duty_face_down",
    "first_bonus", "all_bonus", "stack", "final", "pending",
))



class SampleError(ValueError):
    """The Views cannot come from one Goa state (different matches, or inconsistent)."""


def _is_action(e: Event) -> bool:
    return e.kind in _ACTION_KINDS or (e.kind == "goa.progress" and "card" in e.data)


def sample_state(views: Mapping[int, pb.View], history: Sequence[Event], rng: Rng,
                 options: Mapping[str, Any], n: int, rules: Rules) -> State:
    """A full state showing each seat in ``views`` exactly its View, consistent with the public
    ``history``, everything else drawn with ``rng`` (SAMPLING.md). SampleError if the Views
    cannot all come from one Goa match of ``n`` seats with these rules."""
    if not views:
        raise SampleError("a sample needs at least one seat's View")
    seats = sorted(views)
    for s in seats:
        v = views[s]
        if not 0 <= s < n:
            raise SampleError(f"seat {s} is not a seat of a {n}-seat match")
        if v.seat != s or v.seat_count != n or v.edition != rules.edition:
            raise SampleError(f"the View given for seat {s} is seat {v.seat}'s of a "
                              f"{v.seat_count}-seat {v.edition} match")
    if len(seats) > 1:
        first = _public_part(views[seats[0]])
        for s in seats[1:]:
            if _public_part(views[s]) != first:
                raise SampleError(f"seats {seats[0]} and {s} see different tables")
    try:
        return _sample(views, seats, list(history), rng, options, n, rules)
    except (IndexError, KeyError) as e:  # a View or event no Goa match could have produced
        raise SampleError(f"the Views and events are not one Goa match's: {e!r}") from e


def _public_part(v: pb.View) -> bytes:
    """What every seat's View shows alike (its own purse, hand and Missions left out)."""
    out = pb.View()
    out.CopyFrom(v)
    out.seat = 0
    out.ClearField("my_ducats")
    out.ClearField("my_hand")
    for pl in out.players:
        pl.ClearField("tiles")
    return out.SerializeToString(deterministic=True)


def _sample(views: Mapping[int, pb.View], seats: list[int], history: list[Event], rng: Rng,
            options: Mapping[str, Any], n: int, rules: Rules) -> State:
    ref = views[seats[0]]
    st = State(n=n, options=dict(options), rules=rules, rng=Streams.from_root(0),
               edition=rules.edition)
    _public(st, ref, history)
    _tokens_and_auction(st, ref, history)
    _players(st, ref, views)
    _cards(st, ref, views, rng)
    _ducats(st, ref, views, history, rng)
    _stack(st, ref, history)
    _tiles(st, ref, views, history, rng)
    _bonanza(st, ref, rng)
    # the future of chance: a fresh root; the count of past reshuffles is in no View or event
    # (SAMPLING.md, "Bias"), so the sample's count starts at 0 under its own root
    st.rng = Streams.from_root(rng.next64())
    if st.phase != OVER:
        settle(st)
    return st


# ---------------------------------------------------------------------------- public parts
def _public(st: State, v: pb.View, history: list[Event]) -> None:
    r = st.rules
    n = st.n
    st.phase = _PHASE_OF[v.phase]
    st.round = v.round
    st.first = v.first_player
    if not 0 <= st.first < n or len(v.players) != n:
        raise SampleError(f"first player {st.first} and {len(v.players)} players in a "
                          f"{n}-seat match")
    st.grid = [sq.tile.id if sq.HasField("tile") else -1 for sq in v.grid]
    if len(st.grid) != GRID_SQUARES:
        raise SampleError(f"a Goa View has {GRID_SQUARES} squares, not {len(st.grid)}")
    st.flag_cell = cell_of(v.flag_cell.row, v.flag_cell.col) if v.HasField("flag_cell") else -1
    st.discard = [c.id for c in v.expedition_discard]
    st.extra_supply = v.extra_action_supply
    supply: list[list[int]] = [[] for _ in range(N_COLONIES)]
    for ct in v.colony_supply:
        supply[r.colony_tiles[ct.id].colony].append(ct.id)
    st.colony_supply = supply
    st.first_bonus = list(v.progress_bonus)
    apr = r.actions_per_round
    # counters the View does not show, from the phase and the round (SAMPLING.md, "The pending decision")
    later = st.round > 1 or st.phase in (ACTIONS, EXTRA, OVER)
    st.quick_pos = n if st.options.get("quick_starter") and st.phase != QUICK else 0
    if st.phase == QUICK:
        st.quick_pos = (v.current_seat - st.first) % n
    st.turns = apr * n if later and st.phase not in (ACTIONS,) else 0
    if st.phase == ACTIONS:
        p = v.pending.seat if v.HasField("pending") else v.current_seat
        done = v.pending.action_done
        since = _since_round_start(history)
        actions = sum(1 for e in since if _is_action(e)) - (1 if done else 0)
        lap = min(max(actions // n, 0), apr - 1)
        st.turns = lap * n + (p - st.first) % n + 1
    st.extra_pos, st.extra_passed = _extra_counters(st, v, history)


def _extra_counters(st: State, v: pb.View, history: list[Event]) -> tuple[int, list[bool]]:
    """The Extra actions' position and passes: during the phase, and left over from the last
    one (hashed, never read until the next), by playing the phase's plays and passes again: a
    seat whose turn came with no play of its own had no card and passed by itself."""
    n = st.n
    rounds: list[int] = []  # the last two round starts, oldest first
    for i in range(len(history) - 1, -1, -1):
        if history[i].kind == "goa.round":
            rounds.insert(0, i)
            if len(rounds) == 2:
                break
    if st.phase == EXTRA:
        seg = history[rounds[-1] + 1:] if rounds else history
        stop = v.current_seat if v.decision_kind == "goa.extra_action" else -1
        return _replay_extra(seg, st.first, n, stop, done=False)
    if st.phase == OVER:
        seg = history[rounds[-1] + 1:] if rounds else history
    elif st.round > 1 and rounds:
        seg = history[rounds[-2] + 1:rounds[-1]] if len(rounds) > 1 else history[:rounds[-1]]
    else:
        return 0, [st.round > 1 or st.phase == OVER] * n
    flag = _last(seg, ("goa.flag_won",))
    return _replay_extra(seg, flag.seat if flag is not None else st.first, n, -1, done=True)


def _replay_extra(seg: list[Event], first: int, n: int, stop: int,
                  done: bool) -> tuple[int, list[bool]]:
    acts = [e for e in seg if e.kind in ("goa.extra_action", "goa.extra_pass")]
    pos, passed, i = 0, [False] * n, 0
    while True:
        for _ in range(n):  # ExtraActions.settle
            seat = (first + pos) % n
            if passed[seat]:
                pos += 1
                continue
            if i < len(acts) and acts[i].seat == seat:
                break
            if i >= len(acts) and not done and seat == stop:
                return pos, passed
            passed[seat] = True
            pos += 1
        else:
            return pos, passed
        e = acts[i]
        i += 1
        pos += 1
        if e.kind == "goa.extra_pass":
            passed[e.seat] = True
        elif i >= len(acts) and not done and stop < 0:
            return pos, passed  # its extra action turn is under way


def _since_round_start(history: list[Event]) -> list[Event]:
    for i in range(len(history) - 1, -1, -1):
        if history[i].kind == "goa.round":
            return history[i + 1:]
    return history


def _tokens_and_auction(st: State, v: pb.View, history: list[Event]) -> None:
    n = st.n
    known: dict[int, tuple[int, int]] = {}  # token index -> (cell, seat)
    for g, sq in enumerate(v.grid):
        if sq.token_seat >= 0 and sq.token_number > 0:
            known[sq.token_number - 1] = (GRID_CELLS[g], sq.token_seat)
    if st.phase == QUICK:
        length = 0
    elif st.phase == PLACE:
        length = max(known) + 1 if known else (1 if st.flag_cell >= 0 else 0)
    else:
        length = n + 1
    # who placed token 1 (the flag holder when the tokens were placed)
    f0 = st.first
    for k, (_, seat) in known.items():
        if 0 < k < n:
            f0 = (seat - k) % n
            break
        if k == n:
            f0 = seat
            break
    if st.phase == AUCTION and v.HasField("auction") and v.auction.lot == 1:
        f0 = v.auction.auctioneer
    if not 0 <= f0 < n or any(not 0 <= seat < n for _, seat in known.values()):
        raise SampleError(f"an auction token of a seat beyond the {n} seats")
    saved = st.first
    st.first = f0
    st.tokens, st.token_seats = [], []
    for k in range(length):
        if k == 0:
            cell = st.flag_cell
            seat = known[0][1] if 0 in known else f0
        else:
            cell, seat = known.get(k, (-1, token_seat(st, k)))
        st.tokens.append(cell)
        st.token_seats.append(seat)
    st.first = saved
    # the lot under auction
    st.lot, st.bid_pos, st.high, st.high_bidder, st.bids = 0, 1, 0, -1, []
    if st.phase == AUCTION:
        if v.HasField("auction"):
            a = v.auction
            st.lot = a.lot - 1
            st.high = a.high_bid
            st.high_bidder = a.high_bidder
            st.bids = list(a.bids)
            st.bid_pos = 1 + len(st.bids)
            if not (0 <= st.lot < length and -1 <= st.high_bidder < n and st.bid_pos <= n
                    and (st.high > 0) == (st.high_bidder >= 0)):
                raise SampleError(f"auction of lot {a.lot} with {len(st.bids)} bids in a "
                                  f"{n}-seat match")
        else:  # a tile just awarded opened a choice: the next lot is open, nobody bid yet
            st.lot = 1 + sum(1 for k in range(1, length) if st.tokens[k] >= 0
                             and st.grid[grid_index(st.tokens[k])] < 0)
    elif st.round > 1 or st.phase in (ACTIONS, EXTRA, OVER):
        st.lot = n + 1


def _players(st: State, ref: pb.View, views: Mapping[int, pb.View]) -> None:
    r = st.rules
    players = ref.players
    st.ships = [pl.ships for pl in players]
    st.colonists = [pl.colonists for pl in players]
    st.extra_cards = [pl.extra_action_cards for pl in players]
    st.rows = [[x - 1 for x in pl.rows] for pl in players]
    st.singles_down = [pl.single_plantations_face_down for pl in players]
    st.red_used = [list(pl.red_tiles_used) for pl in players]
    # open tiles; -1 for a Mission lying face down (drawn with the other tiles)
    over = st.phase == OVER
    st.kept = [[t.id if (s in views or over or t.type != TILE_MISSION + 1) else -1
                for t in views.get(s, ref).players[s].tiles] for s in range(st.n)]
    st.lands, st.colonies, st.all_bonus = [], [], []
    for pl in players:
        lands = []
        colonies = [-1] * N_COLONIES
        for land in pl.lands:
            takes = [sum(1 << (s - 1) for s in f.takes) for f in land.fields]
            spices = [f.spice - 1 for f in land.fields]
            tile = land.colony_tile.id if land.colony else land.plantation.id
            lands.append(Land(land.colony, tile, takes, spices))
            if land.colony:
                colonies[r.colony_tiles[tile].colony] = tile
        st.lands.append(lands)
        st.colonies.append(colonies)
        low = min(x - 1 for x in pl.rows)
        st.all_bonus.append(max([t for t in r.all_rows if t <= low], default=0))


# ---------------------------------------------------------------------------- Expedition cards
def _cards(st: State, ref: pb.View, views: Mapping[int, pb.View], rng: Rng) -> None:
    """Own hands as the Views show them (in id order); the other hands and the draw pile a
    uniform deal of every card no given seat can place."""
    n = st.n
    st.hands = [[] for _ in range(n)]
    placed = set(st.discard)
    for s, v in views.items():
        st.hands[s] = [c.id for c in v.my_hand]
        placed.update(st.hands[s])
    unseen = [c for c in range(EXPEDITION_CARDS) if c not in placed]
    rng.shuffle(unseen)
    for s in range(n):
        if s in views:
            continue
        k = ref.players[s].hand_size
        st.hands[s], unseen = unseen[:k], unseen[k:]
    if len(unseen) != ref.expedition_deck_size:
        raise SampleError(f"the Views leave {len(unseen)} Expedition cards for a draw pile of "
                          f"{ref.expedition_deck_size}")
    st.deck = unseen


# ---------------------------------------------------------------------------- ducats
def _ducats(st: State, ref: pb.View, views: Mapping[int, pb.View], history: list[Event],
            rng: Rng) -> None:
    n = st.n
    if st.phase == OVER and ref.final_scores:
        st.ducats = [f.ducats for f in sorted(ref.final_scores, key=lambda f: f.seat)]
        st.final = [_final_of(st, f) for f in sorted(ref.final_scores, key=lambda f: f.seat)]
        return
    fresh = (st.phase == QUICK and st.quick_pos == 0) or (
        st.phase == PLACE and st.round == 1 and not st.tokens
        and not st.options.get("quick_starter"))
    tally = public_ducats(history, st.rules, n, st.round, st.first if fresh else -1)
    if tally is None:
        st.ducats = [rng.randint(0, FALLBACK_DUCATS) for _ in range(n)]
    else:
        st.ducats = [max(0, x) for x in tally]
    for s, v in views.items():
        st.ducats[s] = v.my_ducats


def public_ducats(history: Sequence[Event], rules: Rules, n: int, round_now: int,
                  first: int = -1) -> list[int] | None:
    """Every seat's ducats as the public events add them up (SAMPLING.md, "Ducats"): the
    set-up's 5/10 (2004: 7/10), the quick start's 10, auctions (the high bidder pays the
    auctioneer, or the auctioneer the bank), taxes, Ducats cards and the red Ducats tile, spice
    sales, and the price of the card that buys a Progress step. None when the events do not
    start at the match's first move (then no tally is possible). Bonanza tiles' ducats are not
    in the events (the tile is taken face down) and are not counted. ``first``: the first
    player, when nothing has been played yet."""
    for e in history:
        if e.kind == "goa.first_player":
            first = e.seat
            break
        if e.kind == "goa.phase_laid_out":
            continue
        if e.kind == "goa.quick_start" or (e.kind == "goa.token" and e.data.get("token") == 1):
            first = e.seat
        break
    rounds = sum(1 for e in history if e.kind == "goa.round")
    if first < 0 or rounds != max(round_now - 1, 0):
        return None
    ducats = [rules.other_ducats] * n
    ducats[first] = rules.first_ducats
    bidder = -1
    for e in history:
        k, p, d = e.kind, e.seat, e.data
        if k == "goa.bid":
            bidder = p
        elif k == "goa.sold":
            ducats[bidder] -= d["price"]
            ducats[p] += d["price"]
            bidder = -1
        elif k == "goa.kept":
            ducats[p] -= d["price"]
            bidder = -1
        elif k == "goa.no_bid":
            bidder = -1
        elif k in ("goa.taxes", "goa.sell_spice", "goa.quick_start"):
            ducats[p] += d.get("ducats", 0)
        elif k == "goa.card_played":
            card = rules.cards[d["card"]]
            if card.effect == EFFECT_DUCATS:
                ducats[p] += rules.card_ducats
            elif card.effect == EFFECT_PROGRESS_DUCATS:
                ducats[p] -= card.price
        elif k == "goa.tile_used":
            tile = rules.tiles[d["tile"]]
            if tile.type == TILE_RED_DUCATS:
                ducats[p] += tile.n
    return ducats


def _final_of(st: State, f: pb.FinalScore) -> dict[str, Any]:
    r = st.rules
    rows_vp = [r.row_vp[x] for x in st.rows[f.seat]]
    out: dict[str, Any] = {
        "progress": f.progress,
        "progress_by_column": dict(zip(COLUMNS, rows_vp)),
        "colonies": f.colonies,
        "expedition_cards": f.expedition_cards,
        "most_ducats": f.most_ducats,
        "single_plantations": f.single_plantations,
        "duty": f.duty,
        "missions": f.missions,
        "ducats": f.ducats,
        "total": f.total,
    }
    return out


# ---------------------------------------------------------------------------- the pending choice
def _last(history: list[Event], kinds: frozenset[str] | tuple[str, ...],
          seat: int | None = None) -> Event | None:
    for e in reversed(history):
        if e.kind in kinds and (seat is None or e.seat == seat):
            return e
    return None


def _tile_type(st: State, e: Event | None) -> int:
    if e is None or "tile" not in e.data:
        return -1
    return st.rules.tiles[e.data["tile"]].type


def _stack(st: State, v: pb.View, history: list[Event]) -> None:
    """The pending sub-decisions: the action turn (its flags are in the View), what the View's
    Pending shows of the top one, and, where the View cannot tell two kinds apart (which
    sub-decision opened a spice placement, a free marker move, a resource choice), the last
    public event that opened one (SAMPLING.md, "The pending decision")."""
    st.stack = []
    kind = v.decision_kind
    if st.phase == OVER or not kind:
        return
    pend = v.pending
    if not 0 <= v.current_seat < st.n or not 0 <= pend.seat < st.n:
        raise SampleError(f"seat {v.current_seat} to act in a {st.n}-seat match")
    if kind in ("goa.quick_start", "goa.place_flag", "goa.place_token", "goa.bid",
                "goa.auctioneer", "goa.extra_action"):
        return
    p = pend.seat
    stack: list[SubDecision] = []
    if st.phase in (ACTIONS, EXTRA):
        turn = ActionTurn(p, action_done=pend.action_done, card_played=pend.card_played,
                          spied=pend.espionage_target, extra_action=pend.extra_action)
        stack.append(turn)
        if turn.action_done and kind not in ("goa.expedition",):
            at = next((i for i in range(len(history) - 1, -1, -1)
                       if history[i].seat == p and _is_action(history[i])), -1)
            drawn = any(e.kind == "goa.expedition" for e in history[at + 1:])
            if at >= 0 and history[at].kind == "goa.expedition_action" and not drawn:
                most, limit = st.rules.yields[COLUMN_EXPEDITION][st.rows[p][COLUMN_EXPEDITION]]
                stack.append(ExpeditionDraw(p, most, limit))
    top = _top(st, kind, pend, history, p)
    if top is not None:
        stack.append(top)
    st.stack = stack


def _top(st: State, kind: str, pend: pb.Pending, history: list[Event],
         p: int) -> SubDecision | None:
    r = st.rules
    if kind in ("goa.action", "goa.after_action"):
        return None
    if kind == "goa.pay_spice":
        owed = [0] * N_SPICES
        for s in pend.spices_owed:
            owed[s - 1] += 1
        return ProgressPayment(p, pend.column - 1, owed)
    if kind == "goa.duty":
        duties = [t for t in _open_kept(st, p) if r.tiles[t].type == TILE_DUTY]
        used = _last(history, ("goa.tile_used",), p)
        tile = used.data["tile"] if used is not None and _tile_type(st, used) == TILE_DUTY \
            else (duties[0] if duties else -1)
        return DutyPayment(p, pend.remaining, tile)
    if kind == "goa.place_spice":
        return _placement(st, pend, history, p)
    if kind == "goa.sell_spice":
        return SpiceSale(p, pend.remaining)
    if kind == "goa.colony":
        founded = _last(history, ("goa.found_colony",), p)
        third = founded is not None and ("card" in founded.data or any(
            e.kind == "goa.reveal_more" for e in history[history.index(founded):]))
        return ColonyFounding(p, pend.colony - 1, pend.colonists_revealed, pend.colonists_board,
                              third)
    if kind == "goa.colony_tile":
        return ColonyTileChoice(p, pend.colony - 1)
    if kind == "goa.expedition":
        return ExpeditionDraw(p, pend.draw_max, pend.hand_limit)
    if kind == "goa.hand_limit":
        return HandLimitDiscard(p)
    if kind == "goa.column":
        opener = _last(history, ("goa.tile_used", "goa.card_played"), p)
        if opener is not None and opener.kind == "goa.tile_used" \
                and _tile_type(st, opener) == TILE_VICE_KING:
            return ViceKingChoice(p)
        return PaidProgressChoice(p)
    if kind == "goa.resource":
        opener = _last(history, _GAIN_KINDS | {"goa.tile_used"}, p)
        spices = opener is not None and _tile_type(st, opener) == TILE_RESUPPLY \
            and opener.kind == "goa.tile_used"
        return ResourceChoice(p, pend.remaining, spices)
    if kind == "goa.discard_plantation":
        gained = _last(history, _GAIN_KINDS, p)
        tile = gained.data["tile"] if gained is not None else -1
        return PlantationDiscard(p, tile)
    if kind == "goa.favor":
        return FavorChoice(p)
    if kind == "goa.swap":
        used = _last(history, ("goa.tile_used",), p)  # the Swap tile leaves the play area
        if used is not None and _tile_type(st, used) == TILE_SWAP:
            return SwapChoice(p, used.data["tile"])
        return SwapChoice(p, next((t.id for t in r.tiles if t.type == TILE_SWAP), -1))
    raise SampleError(f"unknown Goa decision kind {kind!r}")


def _open_kept(st: State, p: int) -> list[int]:
    """Seat ``p``'s open kept tiles (a face-down Mission is -1 until drawn)."""
    return [t for t in st.kept[p] if t >= 0]


_OPENERS = frozenset(("goa.harvest", "goa.tile_used", "goa.card_played", "goa.resource",
                      "goa.colony_founded", "goa.plantation_discarded")) | _GAIN_KINDS


def _placement(st: State, pend: pb.Pending, history: list[Event], p: int) -> SubDecision:
    """Which spice placement is under way, from the event that opened it."""
    opener = _last(history, _OPENERS, p)
    remaining = pend.remaining
    k = opener.kind if opener is not None else ""
    fill = FillLand(p, remaining, land=len(st.lands[p]) - 1, may_stop=False)
    if k == "goa.harvest":
        return HarvestSacks(p, remaining, ships_or_colonists="card" in opener.data)  # type: ignore[union-attr]
    if k == "goa.tile_used" and _tile_type(st, opener) == TILE_EXTRA_HARVEST:
        return ExtraHarvest(p, remaining, lands_chosen=list(pend.lands_chosen))
    if k in ("goa.colony_founded", "goa.plantation_discarded"):
        return fill
    if k in _GAIN_KINDS and _tile_type(st, opener) == TILE_CROP_ROTATION:
        return fill
    return BonusSacks(p, remaining)


# ---------------------------------------------------------------------------- tiles
def _tiles(st: State, ref: pb.View, views: Mapping[int, pb.View], history: list[Event],
           rng: Rng) -> None:
    """Every tile in one place: the board, the box (2012: revealed), lands and open tiles as
    the Views show them; others' face-down Missions, used Duty tiles and the 2004 box from the
    events where they name them; the B tiles not yet laid out; the rest discarded."""
    r = st.rules
    n = st.n
    tiles = r.tiles
    located: set[int] = {t for t in st.grid if t >= 0}
    st.box = [t.id for t in ref.box]
    located.update(st.box)
    for lands in st.lands:
        located.update(land.tile for land in lands if not land.colony)
    for sub in st.stack:
        if isinstance(sub, PlantationDiscard | SwapChoice) and sub.tile >= 0:
            located.add(sub.tile)
    for kept in st.kept:
        located.update(t for t in kept if t >= 0)
    seen: set[int] = set()  # tiles the events name
    gained: list[list[int]] = [[] for _ in range(n)]
    duties: list[list[int]] = [[] for _ in range(n)]
    for e in history:
        d = e.data
        if not d:
            continue
        t = d.get("tile")
        if t is not None:
            seen.add(t)
            if e.kind in _GAIN_KINDS and 0 <= e.seat < n:
                gained[e.seat].append(t)
            elif e.kind == "goa.duty" and 0 <= e.seat < n:
                duties[e.seat].append(t)
        elif e.kind == "goa.phase_laid_out":
            seen.update(d.get("removed", ()))
            seen.update(d.get("board_discarded", ()))
    # others' face-down Missions: the ones the events show them obtain, in order
    for s in range(n):
        holes = [i for i, t in enumerate(st.kept[s]) if t < 0]
        if not holes:
            continue
        mine = [t for t in gained[s] if tiles[t].type == TILE_MISSION and t not in located]
        for i, t in zip(holes, mine):
            st.kept[s][i] = t
            located.add(t)
    # used Duty tiles, kept face down (their VP are public)
    st.duty_face_down = [[] for _ in range(n)]
    for s in range(n):
        vp = ref.players[s].duty_vp
        for t in duties[s]:
            if vp <= 0:
                break
            if t not in located:
                st.duty_face_down[s].append(t)
                located.add(t)
                vp -= tiles[t].vp
        while vp > 0:
            pool = [t.id for t in tiles if t.type == TILE_DUTY and t.id not in located
                    and t.vp > 0]
            if not pool:
                raise SampleError(f"seat {s} shows Duty points no Duty tile can give")
            t = pool[rng.below(len(pool))]
            st.duty_face_down[s].append(t)
            located.add(t)
            vp -= tiles[t].vp
    # the B tiles not yet laid out
    b_left = ref.b_tiles_left
    b_pool = [t.id for t in tiles if t.phase == "B" and t.id not in located]
    if b_left and len(b_pool) >= b_left and not any(t.phase == "B" and t.id in located
                                                     for t in tiles):
        st.stacks = {"A": [], "B": b_pool[:b_left]}
    else:
        st.stacks = {"A": [], "B": []}
        if b_left:
            rng.shuffle(b_pool)
            st.stacks["B"] = b_pool[:b_left]
    located.update(st.stacks["B"])
    # 2004: the tiles returned to the box unseen are tiles nobody saw
    if not ref.box and ref.box_count:
        never = [t.id for t in tiles if t.id not in located and t.id not in seen]
        rng.shuffle(never)
        st.box = never[:ref.box_count]
        if len(st.box) < ref.box_count:
            rest = [t.id for t in tiles if t.id not in located and t.id not in st.box]
            rng.shuffle(rest)
            st.box += rest[:ref.box_count - len(st.box)]
        located.update(st.box)
    # face-down Missions the events did not name: any Mission not placed
    for s in range(n):
        for i, t in enumerate(st.kept[s]):
            if t >= 0:
                continue
            pool = [m.id for m in tiles if m.type == TILE_MISSION and m.id not in located]
            if not pool:
                raise SampleError(f"seat {s} shows more face-down Missions than there are")
            st.kept[s][i] = pool[rng.below(len(pool))]
            located.add(st.kept[s][i])
    # single plantations discarded face down leave no tile in the state: the ones the events
    # show the seat obtain and no longer hold
    for s in range(n):
        k = st.singles_down[s]
        gone = [t for t in gained[s] if t not in located and tiles[t].type == TILE_PLANTATION
                and tiles[t].fields == 1][:k]
        while len(gone) < k:
            pool = [t.id for t in tiles if t.id not in located and t.id not in gone
                    and t.type == TILE_PLANTATION and t.fields == 1]
            if not pool:
                break
            gone.append(pool[rng.below(len(pool))])
        located.update(gone)
    st.tile_discard = sorted(t.id for t in tiles if t.id not in located)
    for sub in st.stack:
        if isinstance(sub, PlantationDiscard) and sub.tile < 0:
            pool = [t for t in st.tile_discard
                    if tiles[t].type in (TILE_PLANTATION, TILE_CROP_ROTATION)]
            sub.tile = pool[rng.below(len(pool))] if pool else 0
            if sub.tile in st.tile_discard:
                st.tile_discard.remove(sub.tile)


def _bonanza(st: State, v: pb.View, rng: Rng) -> None:
    """Face-down Bonanza tiles: a uniform draw of distinct tiles of the 8 (SAMPLING.md)."""
    st.bonanza = [-1] * GRID_SQUARES
    corners = [g for g, sq in enumerate(v.grid) if sq.bonanza_face_down]
    if not corners:
        return
    order = list(range(len(st.rules.bonanza)))
    rng.shuffle(order)
    for g, b in zip(corners, order):
        st.bonanza[g] = b
