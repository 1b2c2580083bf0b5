"""Goa's rules engine face (docs/ARCHITECTURE.md, "Games"): the game contract's entry points
``setup``, ``decision`` (a pure query), ``apply`` and ``default_move`` (with ``Rules`` and
``State``), and the turn flow behind them: set-up, the phase machine (Quick starter, token
placement, auctions, action turns, Extra actions, end of a round, end of the game).

A match is a phase machine (QUICK, PLACE, AUCTION, ACTIONS, EXTRA, OVER) plus a stack of typed
sub-decisions (``state.SubDecision``). A player's action turn is an ``ActionTurn`` at the bottom
of the stack; anything that needs further choices (paying spices field by field, placing sacks,
founding a colony, drawing Expedition cards, ...) pushes its own sub-decision on top. With the
stack empty, the phase's own decision is pending (``state.PhaseDecision``, one object per phase
in ``PHASE_DECISIONS``: ``QuickStart``, ``TokenPlacement``, ``Auction``, ``ActionTurns``,
``ExtraActions``). At the end of ``setup`` and of every ``apply`` the machine moves on (where a
phase's decision lists nothing, its ``settle`` takes the steps that need no choice) until some
seat has a choice (kept in ``state.pending``) or the game is over, so ``decision`` only reads."""
from __future__ import annotations

from typing import Any

from referee.core.contract import Decision, Event, IllegalMove
from referee.core.rng import Chance

from .actions import ActionTurn
from .auction import Auction, TokenPlacement
from .board import lay_out_phase
from .cards import HandLimitDiscard
from .catalog import N_COLONIES, N_COLUMNS, Rules
from .moves import (
    DECLINE,
    DONE,
    END_TURN,
    PASS,
    PASS_EXTRA,
    PLAY_EXTRA,
    QUICK_ADVANCE,
    QUICK_DUCATS,
    TAXES,
    Move,
    PlayExtraAction,
    QuickAdvance,
    QuickDucats,
)
from .scoring import final_scoring
from .state import ACTIONS, AUCTION, EXTRA, OVER, PLACE, QUICK, PhaseDecision, State, hand_limit

#: "each player ... moves down 2 of his Progress markers into the 2nd row of his Development board
#: OR takes 10 ducats from the bank" (Goa 2012 EN, Variant - Quick starter; the two markers are
#: the moves' QUICK_ADVANCE pairs)
QUICK_START_DUCATS = 10


def setup(options: dict[str, Any], n: int, rng: Chance, rules: Rules) -> tuple[State, list[Event]]:
    """Game setup 1-9: phase A tiles, colonies, Expedition deck, 4 ships + 2 colonists each;
    the youngest (seat 0) and then clockwise reveal Expedition cards until the first elephant
    (2004: tiger): its revealer is first player with the flag and 5 ducats (2004: 7), the others
    10. With Quick starter each seat then chooses, from the first player on."""
    state = State(n=n, options=dict(options), rules=rules, rng=rng, edition=rules.edition)
    state.stacks = {
        "A": [t.id for t in rules.tiles if t.phase == "A"],
        "B": [t.id for t in rules.tiles if t.phase == "B"],
    }
    state.deck = [c.id for c in rules.cards]
    rng.stream("expedition_deck").shuffle(state.deck)
    state.colony_supply = [[ct.id for ct in rules.colony_tiles if ct.colony == c]
                           for c in range(N_COLONIES)]
    state.extra_supply = rules.extra_cards
    state.ships = [rules.start_ships] * n
    state.colonists = [rules.start_colonists] * n
    state.extra_cards = [0] * n
    state.hands = [[] for _ in range(n)]
    state.rows = [[0] * N_COLUMNS for _ in range(n)]
    state.lands = [[] for _ in range(n)]
    state.colonies = [[-1] * N_COLONIES for _ in range(n)]
    state.kept = [[] for _ in range(n)]
    state.red_used = [[] for _ in range(n)]
    state.singles_down = [0] * n
    state.duty_face_down = [[] for _ in range(n)]
    state.all_bonus = [0] * n
    state.extra_passed = [False] * n
    events = lay_out_phase(state, "A")
    events += choose_first_player(state)
    if options.get("quick_starter"):
        state.phase = QUICK
        state.quick_pos = 0
    else:
        start_round(state)
    _advance_to_next_choice(state)
    return state, events


def choose_first_player(state: State) -> list[Event]:
    r = state.rules
    seat = 0
    revealed = []
    while state.deck:
        c = state.deck.pop()
        state.discard.append(c)
        revealed.append(c)
        if r.cards[c].symbol == r.first_symbol:
            break
        seat = (seat + 1) % state.n
    state.first = seat
    state.ducats = [r.first_ducats if s == seat else r.other_ducats for s in range(state.n)]
    return [
        Event(
            "goa.first_player",
            seat,
            f"seat {seat} reveals the first {r.symbols[r.first_symbol]} and takes the flag",
            {"revealed": revealed},
        )
    ]


def start_round(state: State) -> None:
    """A new round: red tiles face up again, auction tokens back, the flag holder places first."""
    state.round += 1
    state.phase = PLACE
    state.tokens = []
    state.token_seats = []
    state.flag_cell = -1
    for used in state.red_used:
        used.clear()


def decision(state: State) -> Decision | None:
    """The pending decision, or None once the game is over. A pure query: ``setup`` and
    ``apply`` leave every state settled (the phase machine already moved on to the next choice,
    which is kept in ``state.pending``), so nothing is left to do here. A state edited by hand
    must be settled again with :func:`settle` first."""
    return state.pending


def settle(state: State, events: list[Event] | None = None) -> None:
    """Recompute the pending decision of a state edited by hand (tests do this)."""
    state.pending = None
    _advance_to_next_choice(state, events)


def _advance_to_next_choice(state: State, events: list[Event] | None = None) -> None:
    """Move the phase machine on until some seat has a choice (kept in ``state.pending``) or the
    game is over. A sub-decision with no legal move left ends by itself (e.g. a harvest with no
    empty field). What happens on the way (a lot taken free, phase B laid out, the final
    scoring) is appended to ``events``. Runs at the end of ``setup`` and of every ``apply``,
    never in ``decision``."""
    if events is None:
        events = []
    strict = state.options.get("hand_limit") == "always"
    stack = state.stack
    while True:
        if strict:
            _enforce_hand_limit(state)
        if stack:
            pending = stack[-1].decision(state)
            if pending is None:
                stack.pop()
                continue
        elif state.phase == OVER:
            pending = None
        else:
            phase_decision = PHASE_DECISIONS[state.phase]
            pending = phase_decision.decision(state)
            if pending is None:
                phase_decision.settle(state, events)
                continue
        state.pending = pending
        return


class QuickStart(PhaseDecision):
    """Variant Quick starter: each seat in turn from the first player takes 10 ducats or moves
    two markers to row 2; then round 1 begins."""

    __slots__ = ()
    PHASE = QUICK

    def settle(self, state: State, events: list[Event]) -> None:
        start_round(state)

    def decision(self, state: State) -> Decision | None:
        if state.quick_pos >= state.n:
            return None
        moves = [QUICK_DUCATS] + list(QUICK_ADVANCE.values())
        return Decision(_quick_seat(state), "goa.quick_start", moves,
                        f"Quick starter: take {QUICK_START_DUCATS} ducats, or move 2 markers to row 2")

    def play(self, state: State, move: Move) -> list[Event]:
        p = _quick_seat(state)
        state.quick_pos += 1
        if type(move) is QuickDucats:
            state.ducats[p] += QUICK_START_DUCATS
            return [Event("goa.quick_start", p, f"seat {p} takes {QUICK_START_DUCATS} ducats",
                          {"ducats": QUICK_START_DUCATS})]
        assert type(move) is QuickAdvance
        state.rows[p][move.first] += 1
        state.rows[p][move.second] += 1
        return [Event("goa.quick_start", p, f"seat {p} moves two markers to row 2")]


def _quick_seat(state: State) -> int:
    return (state.first + state.quick_pos) % state.n


class ActionTurns(PhaseDecision):
    """3. Player actions: the next seat's action turn (clockwise from the first player, the
    round's number of times), then the Extra actions. The phase asks nothing itself: each turn is
    an ``ActionTurn`` on the stack."""

    __slots__ = ()
    PHASE = ACTIONS

    def settle(self, state: State, events: list[Event]) -> None:
        n = state.n
        if state.turns < state.rules.actions_per_round * n:
            seat = (state.first + state.turns) % n
            state.turns += 1
            state.stack.append(ActionTurn(seat))
            return
        state.phase = EXTRA
        state.extra_pos = 0
        state.extra_passed = [False] * n

    def decision(self, state: State) -> Decision | None:
        return None

    def play(self, state: State, move: Move) -> list[Event]:
        raise AssertionError("3. Player actions asks nothing outside an action turn")


def _enforce_hand_limit(state: State) -> None:
    """Option hand_limit=always (the Rio Grande 2nd printing of 2004, RULINGS.md): a seat above
    its hand limit discards down at once, whatever brought the cards."""
    st = state.stack
    for p in range(state.n):
        if len(state.hands[p]) > hand_limit(state, p):
            top = st[-1] if st else None
            if not (type(top) is HandLimitDiscard and top.seat == p):
                st.append(HandLimitDiscard(p))
            return


class ExtraActions(PhaseDecision):
    """End of a round: from the first player clockwise, each plays 1 Extra action card for one
    more action, or passes for the round; nobody keeps more than 1. A seat with no card passes
    by itself; once all have passed the round ends."""

    __slots__ = ()
    PHASE = EXTRA

    def settle(self, state: State, events: list[Event]) -> None:
        n = state.n
        for _ in range(n):
            seat = _extra_seat(state)
            if state.extra_passed[seat]:
                state.extra_pos += 1
                continue
            if state.extra_cards[seat] == 0:
                state.extra_passed[seat] = True
                state.extra_pos += 1
                continue
            return
        if all(state.extra_passed):
            events.extend(end_round(state))

    def decision(self, state: State) -> Decision | None:
        seat = _extra_seat(state)
        cards = state.extra_cards[seat]
        if state.extra_passed[seat] or cards == 0:
            return None
        moves: list[Move] = [PLAY_EXTRA]
        if cards <= state.rules.keep_extra:
            moves.append(PASS_EXTRA)
        return Decision(seat, "goa.extra_action", moves,
                        f"Play an Extra action card ({cards} held, keep at most 1), or pass")

    def play(self, state: State, move: Move) -> list[Event]:
        """An Extra action card buys one more action turn; passing ends the round for that
        seat."""
        p = _extra_seat(state)
        state.extra_pos += 1
        if type(move) is PlayExtraAction:
            state.extra_cards[p] -= 1
            state.extra_supply += 1
            state.stack.append(ActionTurn(p, extra_action=True))
            return [Event("goa.extra_action", p, f"seat {p} plays an Extra action card")]
        state.extra_passed[p] = True
        return [Event("goa.extra_pass", p, f"seat {p} passes")]


def _extra_seat(state: State) -> int:
    return (state.first + state.extra_pos) % state.n


#: the decision of each phase while no sub-decision is pending (``state.PhaseDecision``), built
#: once and looked up by the state's phase
PHASE_DECISIONS: dict[int, PhaseDecision] = {
    QUICK: QuickStart(),
    PLACE: TokenPlacement(),
    AUCTION: Auction(),
    ACTIONS: ActionTurns(),
    EXTRA: ExtraActions(),
}


def end_round(state: State) -> list[Event]:
    """End of a round; after round 4 phase B is laid out; after round 8 the final scoring."""
    r = state.rules
    last = 2 * r.rounds_per_phase
    if state.round >= last:
        final_scoring(state)
        totals = ", ".join(f"seat {s} {f['total']}" for s, f in enumerate(state.final))
        return [Event("goa.final_scoring", -1, f"game over; VP: {totals}", {"final": state.final})]
    events = []
    if state.round == r.rounds_per_phase:
        left = [t for t in state.grid if t >= 0]  # face up on the board: public
        state.tile_discard.extend(left)
        events = lay_out_phase(state, "B")
        events[0].data["board_discarded"] = left
    start_round(state)
    return events + [Event("goa.round", -1, f"round {state.round} begins", {"round": state.round})]


def apply(state: State, seat: int, move: Any) -> list[Event]:
    """Play one move. The move must be one of the pending decision's moves (checked before any
    change, so an IllegalMove leaves the state untouched)."""
    d = decision(state)
    if d is None:
        raise IllegalMove("MATCH_OVER", "the game is over")
    if seat != d.seat:
        raise IllegalMove("NOT_YOUR_TURN", f"seat {d.seat} is to act ({d.kind}), not seat {seat}")
    if move not in d.moves:
        raise IllegalMove("ILLEGAL_MOVE", f"{_move_name(move)} is not legal now ({d.kind}): {d.prompt}")
    state.pending = None
    st = state.stack
    if st:
        events = st[-1].play(state, move)
    else:
        events = PHASE_DECISIONS[state.phase].play(state, move)
    _advance_to_next_choice(state, events)
    return events


def _move_name(move: Any) -> str:
    return type(move).__name__


def default_move(state: State, d: Decision) -> Any:
    """DEFAULT_MOVE: the cheapest sensible choice: pass, stop, decline, end the turn, otherwise
    the first move listed."""
    for m in (PASS, DONE, END_TURN, PASS_EXTRA, DECLINE, TAXES, QUICK_DUCATS):
        if m in d.moves:
            return m
    return d.moves[0]
