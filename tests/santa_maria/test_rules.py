"""The rulebook's examples and one test per rule, each citing its passage (the French rules of
Santa Maria, Aporta Games 2017). Each test fails if its rule is broken."""
import dataclasses

import pytest

from referee.core.contract import IllegalMove

from .helpers import (
    CONQ,
    GAME,
    REL,
    ROAD,
    SHIP,
    B,
    P,
    R,
    X,
    cell,
    kinds,
    moves_of,
    mv,
    new_state,
    play,
    set_colony,
    to_turn_of,
)

W, BL = mv.WHITE, mv.BLUE
NOPAY = (0, 0, 0, 0, 0)


def choices(state):
    """The listed moves other than the free actions (sell/buy) offered alongside."""
    return {m for m in R.decision(state).moves if type(m) not in (mv.Sell, mv.Buy)}


def fresh(n=2, seed=1, **options):
    state = new_state(n, seed, **options)
    to_turn_of(state, 0)
    return state


def res(state, seat, **amounts):
    p = state.players[seat]
    for name, k in amounts.items():
        if name == "coins":
            p.coins = k
        else:
            p.res[R.RES_NAMES.index(name)] = k
    state.cache = None


# ---------------------------------------------------------------- Mise en place


@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup_by_player_count(n):
    """'Mise en place': 3 white dice per player rolled and sorted; 4 starting ships, 30 standard
    face down; 3 road tiles; 3 Scholars and 3 Bishops; 5 doubles + 5 triples on display.
    'Mise en place des colonies': 2 wood and 3/4/5/6 coins by seat; 1 blue die rolled."""
    s = new_state(n, 3)
    assert len(s.white) == 3 * n and s.white == sorted(s.white)
    assert len(s.ship_slots) == 4 and all(x >= 0 for x in s.ship_slots)
    assert len(s.ship_pile) == 30 and all(x >= 4 for x in s.ship_pile)
    assert set(s.ship_slots) == {0, 1, 2, 3}
    assert s.roads_left == 3
    assert len(s.monk_tiles) == 6 and len(s.monks) == 10
    assert sum(1 for t in s.display if t >= 0) == 10
    assert all(t < 15 for t in s.display[:5]) and all(t >= 15 for t in s.display[5:])
    assert [p.coins for p in s.players] == [3, 4, 5, 6][:n]
    assert all(p.res == [2, 0, 0, 0, 0] for p in s.players)
    assert all(len(p.blue) == 1 and 1 <= p.blue[0] <= 6 for p in s.players)
    assert all(p.board.startswith("A") for p in s.players)
    assert len({p.board for p in s.players}) == n
    assert s.phase == R.YEAR and s.current == 0 and kinds(s) == "santa_maria.turn"


def test_advanced_setup_draft_anticlockwise_and_town_hall():
    """'Règles avancées': B sides, 4 lots (town hall + a set-aside Scholar) chosen anticlockwise
    from the seat right of the first player; the town hall is placed at once on 2 free cells;
    the Scholar is the drafter's alone, active from the start."""
    s = new_state(3, 5, setup="advanced")
    assert s.phase == R.DRAFT and all(p.board == "B" for p in s.players)
    assert len(s.lots) == 4 and not {sch for _, sch in s.lots} & set(s.monk_tiles[:3])
    order = []
    while s.phase == R.DRAFT:
        d = R.decision(s)
        if d.kind == "santa_maria.draft":
            order.append(d.seat)
            lot = d.moves[0].lot
            play(s, d.moves[0])
            assert s.players[d.seat].own_scholar == s.lots[lot][1]
            assert kinds(s) == "santa_maria.place_tile"
            occ = s.players[d.seat].occ
            play(s, R.decision(s).moves[0])
            assert (s.players[d.seat].occ & ~occ).bit_count() == 2
    assert order == [2, 1, 0]
    assert s.current == 0 and kinds(s) == "santa_maria.turn"


def test_colony_boards_picked_anticlockwise_in_later_games():
    """'Mise en place des colonies': in later games seats choose their A side in turn,
    anticlockwise from the seat on the first player's right; the rest go back in the box."""
    s = new_state(3, 6, colony_boards="pick")
    assert s.phase == R.DRAFT and all(p.board == "" and p.occ == 0 for p in s.players)
    view = GAME.view(s, 0)
    assert len(view.colony_boards) == 4
    order = []
    while s.phase == R.DRAFT:
        d = R.decision(s)
        assert d.kind == "santa_maria.board"
        order.append(d.seat)
        play(s, d.moves[-1])
    assert order == [2, 1, 0]
    ids = [p.board for p in s.players]
    assert ids == ["A2", "A3", "A4"]
    assert all(p.occ == p.printed and p.occ for p in s.players)
    assert not GAME.view(s, 0).colony_boards and s.current == 0


def test_solo_uses_the_advanced_setup():
    """'Jeu en solo': a standard game with the advanced set-up."""
    s = new_state(1, 2)
    assert s.advanced and s.phase == R.DRAFT and len(s.white) == 3


# ---------------------------------------------------------------- (A) Agrandir


def test_expand_costs_and_gold_wildcard_and_no_refill():
    """'(A)': a double costs 2 wood, a triple 2 wood + 1 wheat; 'Utilisation de l'Or': gold for
    any resource; the display is not refilled within a year."""
    s = fresh()
    res(s, 0, wood=1, wheat=0, gold=1)
    exp = moves_of(s, mv.Expand)
    assert exp and all(m.slot < 5 and m.pay == (1, 0, 0, 0, 1) for m in exp)
    res(s, 0, wood=2, wheat=1, gold=0)
    exp = moves_of(s, mv.Expand)
    assert {m.slot for m in exp} == set(range(10))
    assert {m.pay for m in exp if m.slot >= 5} == {(2, 1, 0, 0, 0)}
    play(s, mv.expand(7, (2, 1, 0, 0, 0)))
    assert s.players[0].res[:2] == [0, 0] and s.display[7] == -1
    assert kinds(s) == "santa_maria.place_tile"
    occ = s.players[0].occ
    for m in R.decision(s).moves:
        assert m.rotation in range(4)
    play(s, R.decision(s).moves[-1])
    new = s.players[0].occ & ~occ
    assert (new).bit_count() == 3  # on empty cells only: no overlap
    assert s.display[7] == -1  # not refilled
    play(s, mv.END_TURN)
    assert s.display[7] == -1


def test_place_tile_rotations_cover_every_empty_spot():
    """'(A)': any orientation, never over tiles or printed buildings."""
    s = fresh()
    set_colony(s, 0, {(r, c): B("farm", P(wheat=1)) for r in range(1, 7) for c in range(1, 7)
                      if (r, c) not in ((3, 3), (3, 4), (4, 3))})
    res(s, 0, wood=2, wheat=1)
    tri = [m for m in moves_of(s, mv.Expand) if m.slot >= 5]
    dbl = [m for m in moves_of(s, mv.Expand) if m.slot < 5]
    assert tri and dbl
    play(s, tri[0])
    places = R.decision(s).moves
    assert len(places) == 1  # the only L fitting the hole
    play(s, places[0])
    assert s.players[0].occ == R.ALL


# ---------------------------------------------------------------- (B) Activer un bâtiment


def test_activate_building_costs_1_then_2_then_3():
    """'(B)': the 1st building activated in a year costs 1 coin, the 2nd 2, the 3rd 3; the coins
    stay on it (blocked); reset at the year's end."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("forest", P(wood=1)), (2, 2): B("farm", P(wheat=1)),
                      (3, 3): B("city", P(coins=1))})
    res(s, 0, coins=10, wood=0)
    play(s, mv.activate_building(cell(1, 1)))
    p = s.players[0]
    assert p.coins == 9 and p.res[0] == 1 and p.coins_on[cell(1, 1)] == 1
    assert mv.activate_building(cell(1, 1)) not in R.decision(s).moves
    to_turn_of(s, 0)
    assert mv.activate_building(cell(1, 1)) not in R.decision(s).moves  # blocked by coins
    play(s, mv.activate_building(cell(2, 2)))
    assert p.coins == 7 and p.coins_on[cell(2, 2)] == 2
    to_turn_of(s, 0)
    res(s, 0, coins=2)
    assert not moves_of(s, mv.ActivateBuilding)  # the 3rd costs 3


# ---------------------------------------------------------------- (C) Activer une rangée/colonne


def test_anna_pays_two_coins_to_turn_a_5_into_a_3():
    """'(C)', example: Anna pays 2 coins to lower a die from 5 to 3; no wrap-around (1 -> 6 costs
    5 coins)."""
    s = fresh()
    set_colony(s, 0, {(3, 1): B("forest", P(wood=1)), (6, 1): B("farm", P(wheat=1))})
    p = s.players[0]
    p.blue = [5, 1]
    res(s, 0, coins=4, wood=0)
    moves = R.decision(s).moves
    assert mv.use_die(BL, 5, mv.ROW, 3, -1) in moves
    assert mv.use_die(BL, 1, mv.ROW, 6, -1) not in moves  # 5 pips > 4 coins
    assert mv.use_die(BL, 5, mv.ROW, 6, -1) in moves
    play(s, mv.use_die(BL, 5, mv.ROW, 3, -1))
    assert p.coins == 2 and p.res[0] == 1 and p.blue == [1]


def test_blue_die_activates_row_left_to_right_and_lands_on_rightmost_free_building():
    """'(C)' and 'Notes importantes': every free building of the row, left to right; buildings
    holding a die or coins are skipped; roads are never activated; the die goes on the rightmost
    free building."""
    s = fresh()
    set_colony(s, 0, {
        (2, 1): B("forest", P(wood=1)),
        (2, 3): B("city", X(({"wood": 1}, {"coins": 3}))),  # needs the wood produced at (2,1)
        (2, 5): B("farm", P(sugar=1)),   # coins on it: skipped
        (2, 6): ROAD(1),
    })
    p = s.players[0]
    p.coins_on[cell(2, 5)] = 1
    p.blocked |= 1 << cell(2, 5)
    p.blue = [2]
    res(s, 0, wood=0, coins=0)
    play(s, mv.use_die(BL, 2, mv.ROW, 2, -1))
    assert kinds(s) == "santa_maria.exchange"  # wood was produced first
    play(s, mv.exchange(0, (1, 0, 0, 0, 0)))
    assert p.coins == 3 and p.res[R.SUGAR] == 0
    assert p.die_on[cell(2, 3)] == BL and p.die_on[cell(2, 6)] == 0
    assert kinds(s) == "santa_maria.turn" and R.decision(s).moves[-1] is mv.END_TURN


def test_white_die_activates_column_top_to_bottom_and_lands_on_lowest_free_building():
    """'(C)', white die example: the column's free buildings top to bottom; the die goes on the
    lowest free building; at most 3 white dice per seat per year."""
    s = fresh()
    set_colony(s, 0, {
        (1, 4): B("farm", P(wheat=1)),
        (3, 4): B("city", X(({"wheat": 1}, {"points": 2}))),
        (5, 4): B("mountain", P(gem=1)),
        (6, 4): ROAD(2),
    })
    s.white = [4, 4, 4, 4]
    p = s.players[0]
    res(s, 0, wheat=0, coins=0)
    play(s, mv.use_die(W, 4, mv.COL, 4, -1))
    assert kinds(s) == "santa_maria.exchange"
    play(s, mv.exchange(0, (0, 1, 0, 0, 0)))
    assert p.points == 2 and p.res[R.GEM] == 1
    assert p.die_on[cell(5, 4)] == W and p.white_used == 1 and s.white == [4, 4, 4]
    p.white_used = 3
    to_turn_of(s, 0)
    p.die_on[cell(5, 4)] = 0
    p.blocked = 0
    assert not [m for m in moves_of(s, mv.UseDie) if m.color == W]


def test_no_die_for_a_line_without_free_building():
    """'Notes importantes': you may not take a die without a free building in its line."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("farm", P(wheat=1)), (1, 2): ROAD(1)})
    s.players[0].blue = [1]
    res(s, 0, coins=20)
    targets = {(m.line, m.target) for m in moves_of(s, mv.UseDie)}
    assert targets == {(mv.ROW, 1), (mv.COL, 1)}


def test_die_is_placed_even_if_the_effect_is_declined():
    """'Notes importantes': the die goes on the last free building even if its effect is
    declined."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("city", X(({"wood": 1}, {"coins": 3})))})
    s.players[0].blue = [1]
    res(s, 0, wood=1)
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    play(s, mv.DECLINE)
    assert s.players[0].die_on[0] == BL and s.players[0].res[0] == 1


# ---------------------------------------------------------------- Activation des bâtiments


def test_storage_limit_sells_the_excess():
    """'Limite de stockage': never more than 3 of a resource; each excess unit gained is sold at
    once (1 coin wood/wheat, 2 sugar/gem/gold)."""
    s = fresh()
    res(s, 0, wood=2, gold=3, coins=0)
    R.gain(s, 0, (2, 0, 0, 0, 1, 0, 0))
    p = s.players[0]
    assert p.res[R.WOOD] == 3 and p.res[R.GOLD] == 3 and p.coins == 1 + 2


def test_exchange_options_once_per_activation_gold_wild():
    """'Échange', example: Anna may pay 1 wood OR 1 gem for 3 coins, once per activation; gold
    may stand for either."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("forest", X(({"wood": 1}, {"coins": 3}), ({"gem": 1}, {"coins": 3})))})
    s.players[0].blue = [1]
    res(s, 0, wood=1, gem=1, gold=1, coins=0)
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    assert choices(s) == {
        mv.exchange(0, (1, 0, 0, 0, 0)), mv.exchange(0, (0, 0, 0, 0, 1)),
        mv.exchange(1, (0, 0, 0, 1, 0)), mv.exchange(1, (0, 0, 0, 0, 1)), mv.DECLINE}
    play(s, mv.exchange(1, (0, 0, 0, 0, 1)))
    p = s.players[0]
    assert p.coins == 3 and p.res[R.GOLD] == 0 and p.res[R.GEM] == 1
    assert kinds(s) == "santa_maria.turn"  # once only


def test_printed_buildings_apply_every_effect():
    """'Notes importantes': printed buildings with several effects apply them all."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("town_hall", P(coins=1), P(wheat=1), CONQ)})
    res(s, 0, coins=1, wheat=0)
    play(s, mv.activate_building(0))
    p = s.players[0]
    assert p.coins == 1 and p.res[R.WHEAT] == 1 and p.conq == 1


def test_ship_transport_to_the_dock_of_its_slot_and_refill():
    """'Transport maritime': pay the ship's cost, put it beside the dock of the same symbol,
    refill the slot from the pile; an empty pile leaves the slot empty."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("city", SHIP)})
    s.players[0].blue = [1]
    res(s, 0, wood=3, wheat=3, sugar=3, gem=3, gold=0)
    slot = 2
    ship = s.ship_slots[slot]
    top = s.ship_pile[-1]
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    cost = s.rules.ships[ship][0]
    play(s, mv.ship(slot, cost))
    p = s.players[0]
    assert p.port[slot] == [ship] and s.ship_slots[slot] == top
    assert p.res[:4] == [3 - cost[0], 3 - cost[1], 3 - cost[2], 3 - cost[3]]
    s.ship_pile.clear()
    to_turn_of(s, 0)
    p.blocked = 0
    p.die_on = [0] * 36
    p.blue = [1]
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    slot = next(m.slot for m in R.decision(s).moves if type(m) is mv.Ship)
    play(s, next(m for m in R.decision(s).moves if type(m) is mv.Ship))
    assert s.ship_slots[slot] == -1


def test_conquistador_gold_symbol_stacking_and_end_of_track():
    """'Conquistador': +1; stacked on top of a marker already there (the lower one is ahead);
    passing a gold symbol gains 1 gold; beyond the end, conquistadors are lost."""
    s = fresh(3)
    g = s.rules.gold_symbols[0]
    for _ in range(g):
        R.conquistador_step(s, 1)
    for _ in range(g):
        R.conquistador_step(s, 0)
    assert s.players[0].res[R.GOLD] == 1 and s.players[1].res[R.GOLD] == 1
    assert R.conquistador_order(s) == [1, 0]  # seat 1 arrived first: ahead
    for _ in range(50):
        R.conquistador_step(s, 2)
    assert s.players[2].conq == s.rules.conq_length
    assert R.conquistador_order(s)[0] == 2


def test_religion_extra_wheat_monks_blue_dice_and_track_end():
    """'Religion': +1, or +2 paying 1 wheat (max 1 extra); passing a monk symbol lets you recruit
    a monk; the 1st and 3rd symbols unlock a blue die (rolled, usable at once); at the last space
    each step that cannot be taken scores 1 point."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("city", REL)})
    p = s.players[0]
    p.blue = [1]
    first = s.rules.monk_symbols[0]
    p.religion = first - 2
    res(s, 0, wheat=1, coins=0)
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    assert choices(s) == {mv.religion(False, NOPAY), mv.religion(True, (0, 1, 0, 0, 0))}
    play(s, mv.religion(True, (0, 1, 0, 0, 0)))
    assert p.religion == first and p.res[R.WHEAT] == 0
    assert p.blue_unlocked == 2 and len(p.blue) == 1  # the new die, the used one is on the board
    assert kinds(s) == "santa_maria.monk"
    play(s, mv.DECLINE)
    # end of the track
    p.religion = s.rules.religion_length
    before = p.points
    R.religion_steps(s, 0, 2)
    assert p.points == before + 2


def test_eric_recruits_a_monk_on_a_camp_paying_red_and_green():
    """'Recruter un Moine', example: Eric places a monk on a missionary camp, gains 3 points at
    once and pays 2 coins each to Red and Green who have monks there; never where he already has
    one."""
    s = fresh(3)
    camp = 6  # spaces: 3 Scholars, 3 Bishops, then camps; camp 1 = 3 points (rulebook)
    s.monks[camp] = [1, 2]
    p = s.players[0]
    res(s, 0, coins=5)
    c1, c2 = s.players[1].coins, s.players[2].coins
    s.queue.insert(0, R.MonkRecruitment(0))
    s.cache = None
    assert mv.recruit_monk(camp) in R.decision(s).moves
    play(s, mv.recruit_monk(camp))
    assert p.points == 3 and p.coins == 1 and p.monks_left == 5
    assert s.players[1].coins == c1 + 2 and s.players[2].coins == c2 + 2
    s.queue.insert(0, R.MonkRecruitment(0))
    s.cache = None
    assert mv.recruit_monk(camp) not in R.decision(s).moves
    # a space whose fees cannot be paid is not offered
    s.monks[7] = [1, 2]
    s.cache = None
    assert mv.recruit_monk(7) not in R.decision(s).moves


def test_scholar_monk_gives_its_effect():
    """'Savant (effet permanent)': the monk's owner has the Scholar's effect."""
    s = fresh()
    s.monk_tiles[0] = "basic_economy"
    s.queue.insert(0, R.MonkRecruitment(0))
    s.cache = None
    play(s, mv.recruit_monk(0))
    assert R.buy_price(s.rules, s.players[0], R.WOOD) == 2
    assert R.buy_price(s.rules, s.players[1], R.WOOD) == 3


# ---------------------------------------------------------------- (D) Se retirer


def test_anna_retreats_space_first_then_ships_top_to_bottom():
    """'(D)': FIRST the retreat space's action, THEN the ship bonuses top dock first. Example:
    Anna gains 2 coins, then 3 religion actions paying 2 wheat (5 spaces), then 2 points; and
    'la case la plus basse': she takes a road tile and places it."""
    s = fresh()
    p = s.players[0]
    p.port = [[4], [5, 6, 7], [], [8]]  # docks: coins, religion x3, -, points
    res(s, 0, wheat=2, coins=0)
    p.religion = 0
    play(s, mv.retreat(4))  # the road space
    assert kinds(s) == "santa_maria.road" and p.coins == 0
    play(s, mv.place_road(cell(6, 6)))
    assert s.roads_left == 2 and s.rules.cells[p.grid[cell(6, 6)]].terrain == R.TERRAIN_ROAD
    assert kinds(s) == "santa_maria.religion" and p.coins == 2  # coins dock came first
    for extra in (True, True, False):
        while kinds(s) == "santa_maria.monk":
            play(s, mv.DECLINE)
        assert p.points == 0  # the points dock comes last
        play(s, mv.religion(extra, (0, 1, 0, 0, 0) if extra else NOPAY))
    while kinds(s) == "santa_maria.monk":
        play(s, mv.DECLINE)
    assert p.religion == 5 and p.points == 2 and p.retreat == 4
    assert R.decision(s).moves == [mv.sell(R.WOOD), mv.END_TURN] or mv.END_TURN in R.decision(s).moves
    play(s, mv.END_TURN)
    assert s.current == 1  # a retreated seat takes no more turns
    play(s, mv.retreat(0))
    play(s, mv.END_TURN)
    assert s.year == 2 and s.first == 1  # nearest "1st" starts the next year


def test_retreat_spaces_are_exclusive_and_optional_actions():
    """'(D)': a free retreat space only; its actions may be declined."""
    s = fresh()
    play(s, mv.retreat(3))  # ship space
    if kinds(s) == "santa_maria.ship":
        play(s, mv.DECLINE)
    play(s, mv.END_TURN)
    assert mv.retreat(3) not in R.decision(s).moves
    assert mv.retreat(0) in R.decision(s).moves


# ---------------------------------------------------------------- Actions gratuites


def test_sell_and_buy_prices_and_limit():
    """'Actions gratuites': sell 1 coin (wood, wheat) / 2 coins (sugar, gem, gold); buy wood or
    wheat for 3 coins, never sugar, gem or gold; respect the storage limit."""
    s = fresh()
    res(s, 0, wood=1, sugar=1, gold=1, wheat=3, coins=0)
    play(s, mv.sell(R.WOOD))
    play(s, mv.sell(R.SUGAR))
    play(s, mv.sell(R.GOLD))
    assert s.players[0].coins == 5
    moves = R.decision(s).moves
    assert mv.buy(R.WOOD) in moves and mv.buy(R.WHEAT) not in moves  # wheat at the limit
    assert mv.buy(R.SUGAR) not in moves and mv.buy(R.GOLD) not in moves
    play(s, mv.buy(R.WOOD))
    assert s.players[0].coins == 2 and s.players[0].res[R.WOOD] == 1
    assert mv.END_TURN not in R.decision(s).moves  # free actions do not end the turn


# ---------------------------------------------------------------- Fin de l'Année


def test_conquistador_scoring_4_players_year_2():
    """'Fin de l'Année', example: 4 players, year 2: green 9, red 6, blue 3, yellow 0; a seat
    that produced no conquistador scores nothing."""
    s = fresh(4)
    s.year = 2
    for seat, steps in ((0, 3), (1, 5), (2, 1), (3, 2)):
        for _ in range(steps):
            R.conquistador_step(s, seat)
    before = [p.points for p in s.players]
    R.end_of_year(s)
    assert [p.points - b for p, b in zip(s.players, before)] == [6, 9, 0, 3]
    s = fresh(3)
    for _ in range(2):
        R.conquistador_step(s, 2)
    before = [p.points for p in s.players]
    R.end_of_year(s)
    assert [p.points - b for p, b in zip(s.players, before)] == [0, 0, 6]


def test_end_of_year_resets():
    """'Fin de l'Année': conquistadors back to start, religion stays; dice and coins leave the
    buildings; a new display; all white dice rerolled and sorted; blue dice rerolled; the new
    first player is the one nearest '1st'; then the next year."""
    s = fresh(3)
    p = s.players[0]
    p.religion = 4
    R.conquistador_step(s, 0)
    p.coins_on[3] = 2
    p.die_on[4] = W
    p.blocked = (1 << 3) | (1 << 4)
    p.activations = 1
    p.white_used = 2
    s.white = [1]
    s.display[0] = -1
    old_display = list(s.display)
    for seat, space in ((0, 2), (1, 4), (2, 1)):
        s.players[seat].retreat = space
    R.end_of_year(s)
    assert s.year == 2 and s.first == 2 and s.current == 2
    assert p.conq == 0 and p.religion == 4
    assert p.blocked == 0 and not any(p.coins_on) and not any(p.die_on)
    assert p.activations == 0 and p.white_used == 0
    assert len(s.white) == 9 and s.white == sorted(s.white)
    assert all(len(q.blue) == q.blue_unlocked for q in s.players)
    assert all(t >= 0 for t in s.display) and not set(s.display) & set(old_display)
    assert all(q.retreat == -1 for q in s.players) and s.retreat_occ == [-1] * 5


# ---------------------------------------------------------------- Décompte final


def test_anna_final_scoring_examples():
    """'Décompte final' examples. Coins: Anna has 3 coins and sells her resources for 4 more: 7
    coins = 2 points. Colonists: columns 4 and 6 and row 4 are complete: 6 points, the colonist
    at a crossing counts twice. Monks: a Scholar worth 3, two Bishops -4 (objectives apart).
    Port: 2 complete columns = 6 points. Ships: their printed points."""
    s = fresh(2)
    cells = {}
    for r in range(1, 7):
        for c in (4, 6):
            cells[(r, c)] = B("farm", P(wheat=1))
    for c in range(1, 7):
        cells[(4, c)] = B("farm", P(wheat=1))
    cells[(4, 4)] = ROAD(1)   # crossing of row 4 and column 4: counted twice
    cells[(2, 6)] = ROAD(1)   # column 6
    cells[(4, 1)] = ROAD(1)   # row 4
    cells[(6, 4)] = ROAD(2)   # column 4
    cells[(1, 1)] = ROAD(3)   # not on a complete line
    set_colony(s, 0, cells)
    p = s.players[0]
    p.coins = 3
    p.res = [1, 1, 1, 0, 0]  # 1 + 1 + 2 = 4 coins
    s.monk_tiles[:6] = ["astronomy", "taxation", "botany", "square", "diversity", "largest_area"]
    s.rules = dataclasses.replace(s.rules, scholar_points={**s.rules.scholar_points, "astronomy": 3})
    s.monks[0] = [0]
    s.monks[4] = [0]
    s.monks[5] = [0]
    ships = s.ship_pile[:9]
    p.port = [ships[0:2], ships[2:4], ships[4:7], ships[7:9]]
    s.last_retreat = [0, 1]
    R.final_scoring(s)
    f = s.final[0]
    assert f["coins"] == 2
    assert f["colonists"] == 6
    assert f["scholars"] == 3
    objectives = R.bishop_score(s, p, "diversity") + R.bishop_score(s, p, "largest_area")
    assert f["bishops"] == -4 + objectives
    assert f["port"] == 6
    assert f["ships"] == sum(s.rules.ships[x][1] for x in ships)
    assert f["total"] == (f["during_game"] + f["coins"] + f["colonists"] + f["scholars"]
                          + f["bishops"] + f["port"] + f["ships"] + f["buildings"])


def test_tie_break_retreat_nearest_first_in_the_last_year():
    """'Décompte final': on a tie, the seat that used the retreat space nearest '1st' in the last
    year wins."""
    s = fresh(2)
    for p in s.players:
        p.coins = p.points = 0
        p.res = [0] * 5
        p.grid = [0] * 36
    s.last_retreat = [3, 1]
    R.final_scoring(s)
    res_ = GAME.result(s)
    assert res_.scores[0] == res_.scores[1]
    assert res_.winners == [1] and res_.ranks == [2, 1]


# ---------------------------------------------------------------- Tuiles Évêque


def test_bishop_square():
    """'Construire un carré': a developed square of 3x3 / 4x4 / 5x5 scores 4 / 7 / 10 (roads and
    printed buildings count); one square only."""
    s = fresh()
    set_colony(s, 0, {(r, c): ROAD() for r in range(2, 5) for c in range(2, 5)})
    assert R.bishop_score(s, s.players[0], "square") == 4
    set_colony(s, 0, {(r, c): ROAD() for r in range(1, 6) for c in range(1, 6)})
    assert R.bishop_score(s, s.players[0], "square") == 10
    set_colony(s, 0, {(r, c): ROAD() for r in range(1, 3) for c in range(1, 7)})
    assert R.bishop_score(s, s.players[0], "square") == 0


def test_bishop_ships_in_one_dock():
    """'Navires dans un dock': 2 per ship in one dock (max 12)."""
    s = fresh()
    p = s.players[0]
    p.port = [[1], [2, 3, 4], [5], []]
    assert R.bishop_score(s, p, "ships_in_one_dock") == 6
    p.port = [list(range(7)), [], [], []]
    assert R.bishop_score(s, p, "ships_in_one_dock") == 12


def test_bishop_cities_connected_to_the_town_hall():
    """'Villes connectées à la Mairie', example: three cities linked to the town hall by roads
    (or adjacent) score 6; a city behind another building is not linked."""
    s = fresh()
    set_colony(s, 0, {
        (3, 3): B("town_hall", P(coins=1)),
        (3, 4): B("city", P(coins=1)),          # adjacent
        (3, 2): ROAD(1), (2, 2): ROAD(0), (1, 2): B("city", P(coins=1)),  # by road
        (4, 2): B("city", P(coins=1)),          # next to the road
        (3, 5): B("city", P(coins=1)),          # behind a city: not linked
    })
    assert R.bishop_score(s, s.players[0], "cities_to_town_hall") == 6
    assert R.bishop_score(s, s.players[0], "colonists_to_town_hall") == 1


def test_bishop_largest_area_david_4_farms():
    """'Plus grande zone', example: David's largest area is 4 adjacent farms: 8 points."""
    s = fresh()
    farm = B("farm", P(wheat=1))
    set_colony(s, 0, {(1, 1): farm, (1, 2): farm, (2, 2): farm, (3, 2): farm,
                      (5, 5): B("forest", P(wood=1)), (5, 6): B("forest", P(wood=1)),
                      (4, 1): B("city", P(coins=1))})
    assert R.bishop_score(s, s.players[0], "largest_area") == 8


def test_bishop_diversity_david_9_points():
    """'Diversité de colonne / rangée', example: 2 columns and 1 row with farm, forest, mountain
    and city: 9 points."""
    s = fresh()
    f, w, m, c = (B("farm", P(wheat=1)), B("forest", P(wood=1)), B("mountain", P(gem=1)),
                  B("city", P(coins=1)))
    set_colony(s, 0, {(1, 1): f, (2, 1): w, (3, 1): m, (4, 1): c,        # column 1
                      (1, 3): f, (2, 3): w, (5, 3): m, (6, 3): c,        # column 3
                      (6, 4): f, (6, 5): w, (6, 6): m})                  # row 6 (+ (6,3) city)
    assert R.bishop_score(s, s.players[0], "diversity") == 9


# ---------------------------------------------------------------- Tuiles Savant


def scholar(s, seat, name):
    s.players[seat].scholars |= R.SCHOLAR_BIT[name]
    s.cache = None


def test_scholar_taxation():
    """'Taxe': each die used gains 1 coin per 2 colonists in the line (rounded down)."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("farm", P(wheat=1)), (1, 2): ROAD(2), (1, 3): ROAD(3)})
    scholar(s, 0, "taxation")
    s.players[0].blue = [1]
    res(s, 0, coins=0)
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    assert s.players[0].coins == 2


def test_scholar_botany():
    """'Botanique': pay 1 wood or 1 wheat to set the die to any value."""
    s = fresh()
    set_colony(s, 0, {(6, 1): B("farm", P(wheat=1))})
    s.players[0].blue = [1]
    res(s, 0, coins=0, wood=1, wheat=0)
    assert not [m for m in moves_of(s, mv.UseDie) if m.color == BL]
    scholar(s, 0, "botany")
    assert [m for m in moves_of(s, mv.UseDie) if m.color == BL] == [mv.use_die(BL, 1, mv.ROW, 6, R.WOOD)]
    play(s, mv.use_die(BL, 1, mv.ROW, 6, R.WOOD))
    assert s.players[0].res[R.WOOD] == 0 and s.players[0].res[R.WHEAT] == 1


def test_scholar_philosophy():
    """'Philosophie': a blue die may activate a column (a white die never a row)."""
    s = fresh()
    set_colony(s, 0, {(1, 3): B("farm", P(wheat=1))})
    s.players[0].blue = [3]
    s.white = [1]
    res(s, 0, coins=0)
    assert mv.use_die(BL, 3, mv.COL, 3, -1) not in R.decision(s).moves
    scholar(s, 0, "philosophy")
    assert mv.use_die(BL, 3, mv.COL, 3, -1) in R.decision(s).moves
    assert not [m for m in moves_of(s, mv.UseDie) if m.color == W and m.line == mv.ROW]


def test_scholar_mathematics():
    """'Mathématiques': on retreating, take back the coins of one activated building."""
    s = fresh()
    scholar(s, 0, "mathematics")
    p = s.players[0]
    p.coins_on[1], p.coins_on[2] = 1, 2
    p.blocked = 6
    res(s, 0, coins=0)
    play(s, mv.retreat(2))
    while kinds(s) != "santa_maria.mathematics":
        play(s, R.decision(s).moves[0])
    assert choices(s) == {mv.recover_coins(1), mv.recover_coins(2)}
    c = p.coins
    play(s, mv.recover_coins(2))
    assert p.coins == c + 2 and p.coins_on[2] == 0


def test_scholar_construction():
    """'Construction': the die may go on any building of the activated line."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("farm", P(wheat=1)), (1, 4): B("farm", P(wheat=1))})
    scholar(s, 0, "construction")
    s.players[0].blue = [1]
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    assert choices(s) == {mv.place_die(0), mv.place_die(3)}
    play(s, mv.place_die(0))
    assert s.players[0].die_on[0] == BL and s.players[0].die_on[3] == 0


def test_scholar_industrialization():
    """'Industrialisation': an exchange building's exchange may be done twice."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("forest", X(({"wood": 1}, {"coins": 3}), ({"gem": 1}, {"coins": 3})))})
    scholar(s, 0, "industrialization")
    s.players[0].blue = [1]
    res(s, 0, wood=1, gem=1, coins=0)
    play(s, mv.use_die(BL, 1, mv.ROW, 1, -1))
    play(s, mv.exchange(0, (1, 0, 0, 0, 0)))
    assert kinds(s) == "santa_maria.exchange"
    play(s, mv.exchange(1, (0, 0, 0, 1, 0)))
    assert s.players[0].coins == 6 and kinds(s) == "santa_maria.turn"


def test_scholar_economies():
    """'Économie de base': wood/wheat for 2; 'Économie avancée': gem/sugar for 3."""
    s = fresh()
    res(s, 0, coins=3, wood=0, sugar=0)
    assert mv.buy(R.SUGAR) not in R.decision(s).moves
    scholar(s, 0, "basic_economy")
    scholar(s, 0, "advanced_economy")
    play(s, mv.buy(R.WOOD))
    assert s.players[0].coins == 1
    res(s, 0, coins=3)
    play(s, mv.buy(R.SUGAR))
    assert s.players[0].coins == 0 and s.players[0].res[R.SUGAR] == 1


def test_scholar_logistics():
    """'Logistique': 1 coin to move a die to another free building connected by road (adjacent
    buildings are connected); roads are interrupted by any other terrain."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("farm", P(wheat=1)), (1, 2): ROAD(), (1, 3): ROAD(),
                      (1, 4): B("farm", P(wheat=1)), (2, 1): B("city", P(coins=1)),
                      (1, 5): B("city", P(coins=1))})
    scholar(s, 0, "logistics")
    p = s.players[0]
    p.die_on[0] = W
    p.blocked = 1
    res(s, 0, coins=1)
    assert set(moves_of(s, mv.MoveDie)) == {mv.move_die(0, cell(1, 4)), mv.move_die(0, cell(2, 1))}
    play(s, mv.move_die(0, cell(1, 4)))
    assert p.die_on[cell(1, 4)] == W and p.die_on[0] == 0 and p.coins == 0
    assert mv.activate_building(0) in R.decision(s).moves or p.coins == 0


def test_scholar_astronomy():
    """'Astronomie': a new ship may move 1 dock per coin paid."""
    s = fresh()
    scholar(s, 0, "astronomy")
    s.queue.insert(0, R.ShippingOffer(0))
    res(s, 0, wood=3, wheat=3, sugar=3, gem=3, coins=1)
    slot = 0
    play(s, mv.ship(slot, s.rules.ships[s.ship_slots[slot]][0]))
    assert kinds(s) == "santa_maria.astronomy"
    assert choices(s) == {mv.shift_ship(0), mv.shift_ship(1)}
    play(s, mv.shift_ship(1))
    assert len(s.players[0].port[1]) == 1 and not s.players[0].port[0] and s.players[0].coins == 0


# ---------------------------------------------------------------- variants


def test_shared_blue_dice():
    """'Variante: réserve commune de dés bleus': 1 blue die per player rolled into the common
    pool; a seat uses per year at most as many blue dice as it has unlocked."""
    s = fresh(3, shared_blue_dice=True)
    assert len(s.shared_blue) == 3 and all(not p.blue for p in s.players)
    set_colony(s, 0, {(r, 1): B("farm", P(wheat=1)) for r in range(1, 7)})
    res(s, 0, coins=10)
    s.shared_blue = [2, 5]
    s.cache = None
    assert {m.face for m in moves_of(s, mv.UseDie) if m.color == BL} == {2, 5}
    play(s, mv.use_die(BL, 2, mv.ROW, 2, -1))
    assert s.shared_blue == [5]
    to_turn_of(s, 0)
    assert not [m for m in moves_of(s, mv.UseDie) if m.color == BL]  # 1 unlocked, 1 used


def test_solo_tree_points_and_achievements():
    """'Jeu en solo': year-end points from the 2-player table for passing the year's tree; named
    achievements in the result."""
    s = new_state(1, 4)
    while s.phase == R.DRAFT:
        play(s, R.decision(s).moves[0])
    p = s.players[0]
    for _ in range(s.rules.trees[0]):
        R.conquistador_step(s, 0)
    p.retreat = 0
    before = p.points
    R.end_of_year(s)
    assert p.points == before + 4
    for _ in range(s.rules.trees[1] - 1):
        R.conquistador_step(s, 0)
    p.retreat = 0
    before = p.points
    R.end_of_year(s)
    assert p.points == before  # the 2nd tree was not passed
    p.grid = [s.rules.road] * 36
    p.grid[0:6] = [R.decision and p.grid[0]] * 6
    farm = next(k for k, c in enumerate(s.rules.cells) if c.terrain == R.TERRAIN_FARM)
    p.grid[0:6] = [farm] * 6
    p.port = [[1, 2, 3, 4]] * 4
    p.points = 200
    p.retreat = 0
    R.end_of_year(s)
    res_ = GAME.result(s)
    ach = res_.details[0]["achievements"]
    assert {"capitalism", "capracracy", "democracy", "utopia"} <= set(ach)
    assert ("communism" in ach) == (res_.details[0]["colonists"] >= 28)
    assert "achievements" in res_.summary


def test_unlisted_move_is_refused_without_change():
    s = fresh()
    h = GAME.hash_state(s)
    with pytest.raises(IllegalMove):
        GAME.apply(s, 0, mv.END_TURN)  # the main action comes first
    with pytest.raises(IllegalMove):
        GAME.apply(s, 1, mv.retreat(0))  # not seat 1's turn
    assert GAME.hash_state(s) == h


def test_anna_buys_wheat_while_paying_a_ship():
    """'Actions gratuites', example: Anna activates a building to use a ship, then pays 3 coins
    for 1 wheat which she uses to pay the ship."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("city", SHIP)})
    slot = 1
    s.ship_slots[slot] = 1  # a starting ship costing 1 wheat
    assert s.rules.ships[1][0] == (0, 1, 0, 0, 0)
    res(s, 0, wood=0, wheat=0, sugar=0, gem=0, gold=0, coins=4)
    play(s, mv.activate_building(0))
    assert kinds(s) == "santa_maria.ship"
    assert mv.ship(slot, (0, 1, 0, 0, 0)) not in R.decision(s).moves
    play(s, mv.buy(R.WHEAT))
    assert s.players[0].coins == 0 and kinds(s) == "santa_maria.ship"
    play(s, mv.ship(slot, (0, 1, 0, 0, 0)))
    assert s.players[0].port[slot] == [1]


def test_blue_dice_unlock_at_1st_and_3rd_monk_symbols_only():
    """'Débloquer un dé bleu': the 1st and the 3rd monk symbols unlock a blue die (3 at most)."""
    s = fresh()
    p = s.players[0]
    unlocked = []
    for _ in range(s.rules.religion_length):
        R.religion_steps(s, 0, 1)
        unlocked.append(p.blue_unlocked)
    sym = s.rules.monk_symbols
    assert unlocked[sym[0] - 1] == 2 and unlocked[sym[0] - 2] == 1
    assert unlocked[sym[1] - 1] == 2
    assert unlocked[sym[2] - 1] == 3 and unlocked[sym[2] - 2] == 2
    assert unlocked[-1] == 3 and len(p.blue) == 3


# ---------------------------------------------------------------- rulings (RULINGS.md)


def test_lot_scholar_acts_from_the_start_but_scores_no_points():
    """RULINGS 5 ('Règles avancées' + 'Décompte final: Moines'): the lot Scholar's effect is the
    drafter's alone from the start; without a monk on it, it scores no points."""
    s = new_state(2, 9, setup="advanced")
    lots = {sch: i for i, (_, sch) in enumerate(s.lots)}
    while s.phase == R.DRAFT:
        play(s, R.decision(s).moves[0])
    for _seat, p in enumerate(s.players):
        assert p.own_scholar and p.scholars == R.SCHOLAR_BIT[p.own_scholar]
        assert p.own_scholar in lots
    s.last_retreat = [0, 1]
    R.final_scoring(s)
    assert [f["scholars"] for f in s.final] == [0, 0]


def test_blue_die_unlocked_on_retreat_waits_for_next_year():
    """RULINGS 13 ('(D)', religion space): a blue die unlocked while retreating is usable only
    from next year on."""
    s = fresh(2)
    p = s.players[0]
    p.religion = s.rules.monk_symbols[0] - 1
    res(s, 0, wheat=0, gold=0, coins=0, wood=0)
    play(s, mv.retreat(1))  # religion space
    while kinds(s) == "santa_maria.monk":
        play(s, mv.DECLINE)
    assert p.blue_unlocked == 2 and len(p.blue) == 1
    play(s, mv.END_TURN)
    play(s, mv.retreat(0))
    play(s, mv.END_TURN)
    assert s.year == 2 and len(p.blue) == 2


def test_shared_pool_gets_a_die_unlocked_mid_year():
    """'Variante': passing the 1st or 3rd monk symbol rolls a blue die into the common pool."""
    s = fresh(2, shared_blue_dice=True)
    pool = len(s.shared_blue)
    s.players[0].religion = s.rules.monk_symbols[0] - 1
    R.religion_steps(s, 0, 1)
    assert len(s.shared_blue) == pool + 1 and s.players[0].blue == []


def test_road_space_without_road_tiles_still_allowed():
    """RULINGS 17: the road retreat space may be taken with no road tile left; nothing happens."""
    s = fresh(2)
    s.roads_left = 0
    occ = s.players[0].occ
    play(s, mv.retreat(4))
    assert kinds(s) == "santa_maria.turn" and s.players[0].occ == occ


def test_solo_communism_theocracy_capracracy():
    """'Jeu en solo': Communisme = 28 points from colonists; Théocratie = 30+ points from Bishop
    objectives; Capracratie = a full line of one terrain (roads never count)."""
    s = new_state(1, 4)
    while s.phase == R.DRAFT:
        play(s, R.decision(s).moves[0])
    p = s.players[0]
    set_colony(s, 0, {(r, c): ROAD(1) for r in range(1, 7) for c in range(1, 7)})
    s.monk_tiles[3:6] = ["square", "ships_in_one_dock", "largest_area"]
    s.monks[3], s.monks[4], s.monks[5] = [0], [0], [0]
    p.port = [list(range(6)), [], [], []]
    s.last_retreat = [0]
    R.final_scoring(s)
    f = s.final[0]
    assert f["colonists"] == 72 and "communism" in f["achievements"]
    assert f["bishop_objectives"] == 10 + 12 + 0
    assert "theocracy" not in f["achievements"] and "capracracy" not in f["achievements"]
    set_colony(s, 0, {(r, c): B("farm", P(wheat=1)) for r in range(1, 7) for c in range(1, 7)})
    R.final_scoring(s)
    f = s.final[0]
    assert f["bishop_objectives"] == 10 + 12 + 12
    assert {"theocracy", "capracracy"} <= set(f["achievements"])
    assert "communism" not in f["achievements"]


def test_solo_tree_points_grow_each_year():
    """'Jeu en solo': 4, 5 and 6 points for passing the 1st, 2nd and 3rd tree in years 1-3."""
    s = new_state(1, 4)
    while s.phase == R.DRAFT:
        play(s, R.decision(s).moves[0])
    p = s.players[0]
    gains = []
    for year in range(3):
        for _ in range(s.rules.trees[year]):
            R.conquistador_step(s, 0)
        p.retreat = 0
        before = p.points
        R.end_of_year(s)
        gains.append((s.final[0]["during_game"] if s.final else p.points) - before)
    assert gains == [4, 5, 6]


def test_never_a_second_monk_on_the_same_space():
    """'Recruter un Moine': « Vous ne pouvez pas placer un Moine sur un emplacement comportant
    déjà un de vos Moines », whatever your coins."""
    s = fresh(2)
    s.monks[2] = [0]
    res(s, 0, coins=50)
    s.queue.insert(0, R.MonkRecruitment(0))
    s.cache = None
    moves = R.decision(s).moves
    assert mv.recruit_monk(2) not in moves and mv.recruit_monk(1) in moves


def test_botany_only_changes_the_value():
    """RULINGS 20: Botany is offered to change the die's value, not to keep it."""
    s = fresh()
    set_colony(s, 0, {(r, 1): B("farm", P(wheat=1)) for r in range(1, 7)})
    scholar(s, 0, "botany")
    s.players[0].blue = [3]
    res(s, 0, coins=0, wood=1)
    botany = {m.target for m in moves_of(s, mv.UseDie) if m.botany >= 0}
    assert botany == {1, 2, 4, 5, 6}


def test_bishop_diversity_needs_all_four_terrains():
    """'Diversité': a line needs a farm, a forest, a mountain AND a city; roads do not count."""
    s = fresh()
    set_colony(s, 0, {(1, 1): B("farm", P(wheat=1)), (1, 2): B("forest", P(wood=1)),
                      (1, 3): B("mountain", P(gem=1)), (1, 4): ROAD(1), (1, 5): B("farm", P(wheat=1))})
    assert R.bishop_score(s, s.players[0], "diversity") == 0
