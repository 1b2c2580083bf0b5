"""Santa Maria's set-up: "Mise en place", "Mise en place des colonies" and the advanced set-up
("Règles avancées"; always with one seat, "Jeu en solo")."""
from __future__ import annotations

from typing import Any

from referee.core.contract import Event
from referee.core.rng import Chance

from .action_tasks import BoardChoice, LotDraft
from .catalog import N_CELLS, N_RESOURCES, WOOD, Rules
from .dice import roll_blue, roll_white
from .sheet import BISHOPS, SCHOLARS
from .state import BOARDS_PICK, DRAFT, N_DOCKS, SETUP_ADVANCED, Player, State


def setup(options: dict[str, Any], n: int, rng: Chance, rules: Rules) -> tuple[State, list[Event]]:
    """Mise en place + Mise en place des colonies (+ Règles avancées). Seat 0 is the first player;
    clockwise = increasing seat numbers."""
    advanced = options["setup"] == SETUP_ADVANCED or n == 1  # Jeu en solo: advanced set-up
    shared = bool(options["shared_blue_dice"]) and n > 1
    pick = not advanced and options.get("colony_boards") == BOARDS_PICK
    if advanced:
        boards = [rules.board_b] * n
    elif pick:
        boards = [("", (0,) * N_CELLS)] * n  # chosen in turn (choose_board)
    else:
        order = list(range(len(rules.boards_a)))
        rng.stream("colony_boards").shuffle(order)  # first game: boards dealt at random
        boards = [rules.boards_a[i] for i in order[:n]]
    players = []
    for seat in range(n):
        res = [0] * N_RESOURCES
        res[WOOD] = rules.start_wood
        p = Player(board="", grid=[0] * N_CELLS, printed=0, occ=0, bld=0, die_on=[0] * N_CELLS,
                   coins_on=[0] * N_CELLS, blocked=0, coins=rules.start_coins[seat], res=res,
                   blue_unlocked=rules.start_blue, monks_left=rules.monks)
        p.take_board(rules, *boards[seat])
        players.append(p)
    state = State(n=n, options=dict(options), rules=rules, rng=rng, players=players,
                  advanced=advanced, shared=shared)
    # ships: 4 starting ships at random on the 4 docks, 30 standard face down
    start = list(range(rules.n_starting_ships))
    rng.stream("starting_ships").shuffle(start)
    state.ship_slots = start[:N_DOCKS]
    state.ship_pile = list(range(rules.n_starting_ships, len(rules.ships)))
    rng.stream("ship_pile").shuffle(state.ship_pile)
    # white dice: 3 per player, rolled and sorted
    state.white = roll_white(state)
    state.roads_left = rules.road_tiles
    # 3 Scholars and 3 Bishops drawn; the rest set aside
    scholars = list(SCHOLARS)
    rng.stream("scholars").shuffle(scholars)
    bishops = list(BISHOPS)
    rng.stream("bishops").shuffle(bishops)
    state.monk_tiles = scholars[: rules.scholars_drawn] + bishops[: rules.bishops_drawn]
    rest = scholars[rules.scholars_drawn:]
    state.monks = [[] for _ in range(rules.scholars_drawn + rules.bishops_drawn + len(rules.camps))]
    state.retreat_occ = [-1] * len(rules.retreat)
    # development tiles: 15 doubles (ids 0..14), 15 triples (ids 15..29)
    nd = len(rules.doubles)
    state.pile_d = list(range(nd))
    state.pile_t = list(range(nd, nd + len(rules.triples)))
    rng.stream("development_doubles").shuffle(state.pile_d)
    rng.stream("development_triples").shuffle(state.pile_t)
    new_display(state)
    # blue dice: each player rolls 1 (shared variant: into the common pool)
    roll_blue(state)
    events = [Event("santa_maria.setup", -1,
                    f"{n} player(s); {'advanced' if advanced else 'standard'} set-up"
                    + ("; shared blue dice" if shared else ""))]
    if advanced:
        halls = list(range(len(rules.town_halls)))
        rng.stream("town_halls").shuffle(halls)
        rng.stream("lot_scholars").shuffle(rest)
        k = len(rules.town_halls)
        state.lots = [(halls[i], rest[i]) for i in range(k)]
        state.lot_taken = [False] * k
        state.set_aside = sorted(rest[k:]) + sorted(bishops[rules.bishops_drawn:])
        state.phase = DRAFT
        # anticlockwise from the seat on the first player's right
        state.queue = [LotDraft(s) for s in range(n - 1, -1, -1)]
        state.current = n - 1
    else:
        state.set_aside = sorted(rest) + sorted(bishops[rules.bishops_drawn:])
        if pick:
            # later games: boards chosen anticlockwise from the first player's right
            state.boards_left = list(range(len(rules.boards_a)))
            state.phase = DRAFT
            state.queue = [BoardChoice(s) for s in range(n - 1, -1, -1)]
            state.current = n - 1
        else:
            state.start_turn(0)
    return state, events


def new_display(state: State) -> None:
    """5 doubles and 5 triples face up (Mise en place; Fin de l'Année: the leftovers are
    discarded). With a pile short of tiles, the missing slots stay empty."""
    r = state.rules
    d = [state.pile_d.pop() if state.pile_d else -1 for _ in range(r.display_doubles)]
    t = [state.pile_t.pop() if state.pile_t else -1 for _ in range(r.display_triples)]
    state.display = d + t
