"""What each seat sees. Written for the view, not filtered from a dump: a seat gets its own ducats
and Expedition hand; of others only what the table shows (ship and colonist cards, hand sizes,
lands, tiles). Never the Expedition deck's order, other hands, others' ducats (until the final
scoring), the B tiles not yet laid out, face-down Bonanza tiles, or the RNG.

Speed: the encoded View (``build_view_bytes``, what the referee sends and the search's rollouts
hand the greedy bot) caches the encodings of the parts that repeat from move to move (the grid,
each seat's holdings, the colony supply), keyed by what they show; concatenated encodings of a
message merge, so it parses to exactly ``build_view`` (tests/goa/test_view_bytes.py).

protoc's stubs type enum fields as their enum class; the enum numbers this module writes as ints
carry ``type: ignore[arg-type]``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.v1 import goa_pb2 as pb

from .board import GRID_CELLS, boxed_tiles_seen, rc_of
from .catalog import (
    COLUMN_EXPEDITION,
    GRID_SQUARES,
    N_COLONIES,
    N_COLUMNS,
    N_SPICES,
    TILE_MISSION,
    Rules,
    card_amount,
)
from .rules import PHASE_DECISIONS, decision
from .scoring import duty_vp
from .state import ACTIONS, AUCTION, EXTRA, OVER, PLACE, QUICK, Land, State, current_action_turn
from .view_parts import tile_info

_PHASES = {QUICK: pb.QUICK_START, PLACE: pb.PLACE_TOKENS, AUCTION: pb.AUCTIONS,
           ACTIONS: pb.ACTIONS, EXTRA: pb.EXTRA_ACTIONS, OVER: pb.GAME_OVER}


def _spices(mask: int) -> list[int]:
    return [s + 1 for s in range(N_SPICES) if mask & (1 << s)]


def _cell(cell: int) -> pb.Cell:
    r, c = rc_of(cell)
    return pb.Cell(row=r, col=c)


#: An opponent's Mission tile as the table shows it: face down ("Acquired Mission tiles are placed,
#: face down, in your play area" — EN; "Le joueur conserve ces missions face cachée" — 2004 FR),
#: so neither its id nor its 2 or 3 VP; revealed at the final scoring.
_FACE_DOWN_MISSION = pb.TileInfo(name="Mission (face down)", type=TILE_MISSION + 1, phase="B")  # type: ignore[arg-type]


def _kept_tile(rules: Rules, t: int, visible: bool) -> pb.TileInfo:
    if not visible and rules.tiles[t].type == TILE_MISSION:
        return _FACE_DOWN_MISSION
    return tile_info(rules, t)


def card_info(rules: Rules, c: int) -> pb.CardInfo:
    card = rules.cards[c]
    e = card.effect
    return pb.CardInfo(id=c, effect=e + 1, colonists=card.colonists,  # type: ignore[arg-type]
                       symbol=rules.symbols[card.symbol], price=card.price,
                       amount=card_amount(rules, e))


def colony_tile_info(rules: Rules, ct: int) -> pb.ColonyTileInfo:
    spec = rules.colony_tiles[ct]
    return pb.ColonyTileInfo(id=ct, colony=spec.colony + 1,  # type: ignore[arg-type]
                             fields=[pb.FieldSpices(spices=_spices(m)) for m in spec.masks])  # type: ignore[arg-type]


def _board(rules: Rules) -> pb.DevelopmentBoard:
    cols = []
    for c in range(N_COLUMNS):
        ys = rules.yields[c]
        steps = [pb.StepCost(spices=[s + 1 for s in range(N_SPICES) for _ in range(cost[s])])  # type: ignore[misc]
                 for cost in rules.costs[c]]
        if c == COLUMN_EXPEDITION:
            cols.append(_exped_column(ys, steps))
        else:
            cols.append(_column(c, list(ys), steps))
    return pb.DevelopmentBoard(columns=cols, row_vp=list(rules.row_vp))


def _column(c: int, ys: list[int], steps: list[pb.StepCost]) -> pb.ColumnInfo:
    info = pb.ColumnInfo(column=c + 1, steps=steps)  # type: ignore[arg-type]
    getattr(info, "yield").extend(ys)
    return info


def _exped_column(ys: Sequence[Sequence[int]], steps: list[pb.StepCost]) -> pb.ColumnInfo:
    info = pb.ColumnInfo(column=COLUMN_EXPEDITION + 1, steps=steps, hand_limit=[y[1] for y in ys])  # type: ignore[arg-type]
    getattr(info, "yield").extend(y[0] for y in ys)
    return info


_BOARD_CACHE: dict[int, tuple[Rules, bytes]] = {}


def _board_cached(rules: Rules) -> pb.DevelopmentBoard:
    entry = _BOARD_CACHE.get(id(rules))
    if entry is None or entry[0] is not rules:
        entry = _BOARD_CACHE[id(rules)] = (rules, _board(rules).SerializeToString(deterministic=True))
    data = entry[1]
    board = pb.DevelopmentBoard()
    board.ParseFromString(data)
    return board


def _land(rules: Rules, index: int, land: Land) -> pb.Land:
    out = pb.Land(index=index, colony=land.colony,
                  fields=[pb.Field(takes=_spices(m), spice=s + 1 if s >= 0 else 0)  # type: ignore[arg-type]
                          for m, s in zip(land.takes, land.spices)])
    if land.colony:
        out.colony_tile.CopyFrom(colony_tile_info(rules, land.tile))
    else:
        out.plantation.CopyFrom(tile_info(rules, land.tile))
    return out


def _pending(state: State, kind: str) -> pb.Pending | None:
    """The pending sub-decision as the View shows it: what every one shows (its seat, and the
    action turn under way), then what it shows of itself (``pending_view``)."""
    st = state.stack
    if not st:
        return None
    top = st[-1]
    turn = current_action_turn(state)
    out = pb.Pending(kind=kind, seat=top.seat, espionage_target=-1)
    if turn is not None:
        out.card_played = turn.card_played
        out.action_done = turn.action_done
        out.espionage_target = turn.spied
        out.extra_action = turn.extra_action
    top.pending_view(state, out)
    return out


def _grid(rules: Rules, state: State) -> list[pb.Square]:
    token_at = {cell: k for k, cell in enumerate(state.tokens) if cell >= 0}
    grid = []
    for g in range(GRID_SQUARES):
        cell = GRID_CELLS[g]
        sq = pb.Square(cell=_cell(cell), token_seat=-1,
                       bonanza_face_down=state.bonanza[g] >= 0)
        if state.grid[g] >= 0:
            sq.tile.CopyFrom(tile_info(rules, state.grid[g]))
        k = token_at.get(cell)
        if k is not None:
            sq.token_seat = state.token_seats[k]
            sq.token_number = k + 1
        grid.append(sq)
    return grid


def _grid_key(state: State) -> tuple:
    """What :func:`_grid` reads of the state."""
    return (tuple(state.grid), tuple(b >= 0 for b in state.bonanza), tuple(state.tokens),
            tuple(state.token_seats))


def _colony_supply(rules: Rules, state: State) -> list[pb.ColonyTileInfo]:
    return [colony_tile_info(rules, ct) for sup in state.colony_supply for ct in sup]


def _player(rules: Rules, state: State, s: int, visible: bool) -> pb.PlayerPublic:
    """Seat ``s``'s public holdings (its Mission tiles face up if ``visible``)."""
    return pb.PlayerPublic(
        seat=s,
        ships=state.ships[s],
        colonists=state.colonists[s],
        extra_action_cards=state.extra_cards[s],
        hand_size=len(state.hands[s]),
        rows=[x + 1 for x in state.rows[s]],
        lands=[_land(rules, i, land) for i, land in enumerate(state.lands[s])],
        tiles=[_kept_tile(rules, t, visible) for t in state.kept[s]],
        red_tiles_used=list(state.red_used[s]),
        single_plantations_face_down=state.singles_down[s],
        duty_vp=duty_vp(state, s),
        colonies=[c + 1 for c in range(N_COLONIES) if state.colonies[s][c] >= 0],  # type: ignore[misc]
        passed_extra_actions=state.phase == EXTRA and state.extra_passed[s],
    )


def _player_key(state: State, s: int, visible: bool) -> tuple:
    """What :func:`_player` reads of the state."""
    return (s, state.ships[s], state.colonists[s], state.extra_cards[s], len(state.hands[s]),
            tuple(state.rows[s]),
            tuple((land.colony, land.tile, tuple(land.takes), tuple(land.spices))
                  for land in state.lands[s]),
            tuple(state.kept[s]), visible, tuple(state.red_used[s]), state.singles_down[s],
            duty_vp(state, s), tuple(state.colonies[s]),
            state.phase == EXTRA and state.extra_passed[s])


# The grid, each seat's holdings and the colony supply change now and then, not at every move:
# their encodings are cached per rules and keyed by what they show. A few thousand entries keep
# the hits and cap the memory at a few MB.
_CACHE_LIMIT = 8_192
_RULES_LIMIT = 16
_FRAGMENTS: dict[int, tuple[Rules, dict[tuple, bytes]]] = {}


def build_view_bytes(state: State, seat: int | None) -> bytes:
    """The encoded View: its other fields built as :func:`build_view` does, then the grid, each
    seat's holdings, each discarded card and the colony supply from caches of their encodings.
    Concatenated encodings of a message merge (a repeated field appends), so it parses to exactly
    ``build_view(state, seat)``."""
    rules = state.rules
    entry = _FRAGMENTS.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_FRAGMENTS) >= _RULES_LIMIT:  # a sheet per match: keep a few rules' caches
            _FRAGMENTS.clear()
        entry = _FRAGMENTS[id(rules)] = (rules, {})
    cache = entry[1]
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    over = state.phase == OVER
    out = [_build(state, seat, False).SerializeToString()]
    key: tuple = ("grid", *_grid_key(state))
    frag = cache.get(key)
    if frag is None:
        frag = cache[key] = pb.View(grid=_grid(rules, state)).SerializeToString()
    out.append(frag)
    for s in range(state.n):
        visible = s == seat or over
        key = ("player", *_player_key(state, s, visible))
        frag = cache.get(key)
        if frag is None:
            frag = cache[key] = pb.View(
                players=[_player(rules, state, s, visible)]).SerializeToString()
        out.append(frag)
    # the expedition discard grows to dozens of cards and was built card by card at every view:
    # each card's encoding is made once (a repeated field's entries concatenate)
    for c in state.discard:
        key = ("discard", c)
        frag = cache.get(key)
        if frag is None:
            frag = cache[key] = pb.View(
                expedition_discard=[card_info(rules, c)]).SerializeToString()
        out.append(frag)
    key = ("colony_supply", *(tuple(sup) for sup in state.colony_supply))
    frag = cache.get(key)
    if frag is None:
        frag = cache[key] = pb.View(
            colony_supply=_colony_supply(rules, state)).SerializeToString()
    out.append(frag)
    return b"".join(out)


def build_view(state: State, seat: int | None) -> pb.View:
    return _build(state, seat, True)


def _build(state: State, seat: int | None, with_parts: bool) -> pb.View:
    """The View; without the grid, the players, the expedition discard and the colony supply
    unless ``with_parts``."""
    rules = state.rules
    n = state.n
    over = state.phase == OVER
    d = None if over else decision(state)
    parts: dict[str, Any] = {}
    if with_parts:
        parts = {"grid": _grid(rules, state), "colony_supply": _colony_supply(rules, state),
                 "players": [_player(rules, state, s, s == seat or over) for s in range(n)],
                 "expedition_discard": [card_info(rules, c) for c in state.discard]}
    view = pb.View(
        seat=-1 if seat is None else seat,
        seat_count=n,
        edition=state.edition,
        phase=_PHASES[state.phase],
        round=state.round,
        tile_phase="A" if state.round <= rules.rounds_per_phase else "B",
        first_player=state.first,
        current_seat=d.seat if d is not None else -1,
        decision_kind=d.kind if d is not None else "",
        box=[tile_info(rules, t) for t in state.box] if boxed_tiles_seen(state) else [],
        box_count=len(state.box),
        b_tiles_left=len(state.stacks.get("B", ())),
        expedition_deck_size=len(state.deck),
        extra_action_supply=state.extra_supply,
        progress_bonus=list(state.first_bonus),
        board=_board_cached(rules),
        colony_need=list(rules.colony_need),
        colony_vp=list(rules.colony_vp),
        expedition_set_vp=list(rules.set_vp),
        most_ducats_vp=rules.most_ducats_vp,
        single_plantation_vp=rules.single_vp,
        **parts,
    )
    if state.flag_cell >= 0:
        view.flag_cell.CopyFrom(_cell(state.flag_cell))
    if not state.stack:
        phase_decision = PHASE_DECISIONS.get(state.phase)
        if phase_decision is not None:
            phase_decision.pending_view(state, view)
    if d is not None:
        pending = _pending(state, d.kind)
        if pending is not None:
            view.pending.CopyFrom(pending)
    if seat is not None:
        view.my_ducats = state.ducats[seat]
        view.my_hand.extend(card_info(rules, c) for c in sorted(state.hands[seat]))
    if over:
        totals = [(f["total"], f["ducats"]) for f in state.final]
        for s, f in enumerate(state.final):
            view.final_scores.append(
                pb.FinalScore(
                    seat=s, total=f["total"], progress=f["progress"], colonies=f["colonies"],
                    expedition_cards=f["expedition_cards"], most_ducats=f["most_ducats"],
                    single_plantations=f["single_plantations"], duty=f["duty"],
                    missions=f["missions"], ducats=f["ducats"],
                    rank=1 + sum(1 for o in totals if o > totals[s]),
                )
            )
        best = max(totals)
        view.winners.extend(s for s in range(n) if totals[s] == best)
    return view
