"""Per-rule tests. Each cites the passage of the rulebook it pins (2012 EN unless marked 2004 FR);
each fails if that rule is broken."""
from __future__ import annotations

import random

import pytest

from referee.core.contract import BadOptions, IllegalMove
from referee.games.goa import moves
from referee.games.goa.auction import auctioneer
from referee.games.goa.board import GRID_CELLS, cell_of, grid_index
from referee.games.goa.catalog import (
    COLUMN_COLONISTS,
    COLUMN_EXPEDITION,
    COLUMN_HARVEST,
    COLUMN_SHIPS,
    COLUMN_TAXES,
    EFFECT_HARVEST_MIX,
    EFFECT_PROGRESS_DUCATS,
    EFFECT_PROGRESS_SPICES_ONLY,
    EFFECT_SELL,
    EFFECT_SHIPS,
    TILE_CROP_ROTATION,
    TILE_DUTY,
    TILE_ESPIONAGE,
    TILE_EXPEDITIONS,
    TILE_EXTRA_HARVEST,
    TILE_FAVOR,
    TILE_FOREMAN,
    TILE_PLANTATION,
    TILE_RED_COLONIST,
    TILE_RED_DUCATS,
    TILE_RESUPPLY,
    TILE_SETTLEMENT,
    TILE_SHIPS_OR_COLONISTS,
    TILE_SWAP,
    TILE_VICE_KING,
    is_plantation_tile,
)
from referee.games.goa.resources import advance_marker
from referee.games.goa.rules import start_round
from referee.games.goa.scoring import score_seat
from referee.games.goa.state import AUCTION, OVER, Land, hand_limit, plantation_count, spice_counts
from referee.games.goa.tiles import gain_tile, take_bonanza
from tests.goa.helpers import (
    GAME,
    card_ids,
    new_game,
    play,
    random_until,
    refresh,
    rules_of,
    stack_deck,
    tile_ids,
)


def to_kind(state, kind, seed=0):
    d = random_until(state, lambda s, d: d.kind == kind, random.Random(seed))
    assert d is not None and d.kind == kind
    return d


def action_turn(state, seat=None):
    """Advance (random auctions) to the first action decision; returns it."""
    return to_kind(state, "goa.action")


# ---------------------------------------------------------------- Game setup


@pytest.mark.parametrize("seed", range(40))
def test_setup_removes_4_a_tiles_with_at_most_2_plantations(seed):
    """Setup 1: 'reveal 4 tiles that you return to the box ... do not remove more than 2
    Plantation tiles ... place the remaining 25 tiles ... in a 5x5 grid'."""
    state = new_game(3, seed)
    rules = state.rules
    assert len(state.box) == 4
    assert sum(1 for t in state.box if is_plantation_tile(rules.tiles[t])) <= 2
    assert sorted(state.grid + state.box) == sorted(t.id for t in rules.tiles if t.phase == "A")


def test_setup_2004_removes_2_of_27():
    """2004 FR, Préparation: 'Les 27 tuiles A ... Les deux tuiles A non utilisées sont remises
    dans la boite'."""
    state = new_game(4, 2, edition="2004")
    assert len(state.box) == 2 and all(t >= 0 for t in state.grid)
    assert sum(1 for t in state.rules.tiles if t.phase == "A") == 27
    view = GAME.view(state, 0)
    assert view.box_count == 2 and not view.box, "returned unseen (2012: revealed)"
    assert len(GAME.view(new_game(4, 2), 0).box) == 4


@pytest.mark.parametrize("edition,symbol,first_ducats", [("2012", "elephant", 5), ("2004", "tiger", 7)])
def test_first_player_reveals_first_symbol_card(edition, symbol, first_ducats):
    """Setup 9: 'The first player to reveal a card with an elephant is the first player ... takes
    the flag and 5 ducats. Each other player takes 10' (2004: tigre, 7 ducats)."""
    for seed in range(10):
        state = new_game(4, seed, edition=edition)
        rules = state.rules
        revealed = state.discard
        assert rules.symbols[rules.cards[revealed[-1]].symbol] == symbol
        assert all(rules.symbols[rules.cards[c].symbol] != symbol for c in revealed[:-1])
        assert state.first == (len(revealed) - 1) % 4, "seat 0 (youngest) reveals first, clockwise"
        assert state.ducats == [first_ducats if s == state.first else 10 for s in range(4)]
        assert state.extra_cards == [0] * 4, "no Extra action card for the starting flag"


def test_starting_resources_and_tokens():
    """Setup 7-8: 4 ships and 2 colonists; one more auction token than players."""
    for n in (2, 3, 4):
        state = new_game(n, 9)
        assert state.ships == [4] * n and state.colonists == [2] * n
        random_until(state, lambda s, d: s.phase == AUCTION)
        assert len(state.tokens) == n + 1
        assert state.token_seats[0] == state.token_seats[-1] == state.first


# ---------------------------------------------------------------- 1. Place auction tokens


def test_flag_on_edge_or_empty_square_orthogonally_adjacent_to_a_tile():
    """Details on placing: 'on any empty square ... OR on any space on the edge ... the flag must
    be orthogonally adjacent to a tile'."""
    state = new_game(2, 4)
    state.grid[0] = -1  # an empty corner square
    refresh(state)
    legal = GAME.decision(state).moves
    cells = {m.cell for m in legal}
    assert cell_of(0, 0) in cells, "empty square next to tiles"
    assert cell_of(-1, -1) not in cells, "board corner: only diagonal to a tile"
    assert cell_of(-1, 0) not in cells, "edge space whose only neighbour square is empty"
    assert cell_of(-1, 1) in cells
    assert all(grid_index(c) < 0 or state.grid[grid_index(c)] < 0 for c in cells)


def test_tokens_adjacent_to_previous_and_never_stacked():
    """1. Place auction tokens: 'on any empty tile (no tokens on it) that is adjacent (again,
    orthogonally or diagonally) to the number 2 token'."""
    state = new_game(4, 4)
    p = state.first
    play(state, p, moves.PLACE_FLAG[cell_of(-1, 2)])
    d = GAME.decision(state)
    assert {m.cell for m in d.moves} == {cell_of(0, 1), cell_of(0, 2), cell_of(0, 3)}
    play(state, d.seat, moves.PLACE_TOKEN[cell_of(0, 1)])
    d = GAME.decision(state)
    want = {cell_of(r, c) for r in (0, 1) for c in (0, 1, 2)} - {cell_of(0, 1)}
    assert {m.cell for m in d.moves} == want


def test_broken_chain_any_free_tile():
    """'If a player cannot place his Auction token because there are no available tiles adjacent
    to the last Auction token placed ... place his token on any empty tile (no tokens on it) ...
    The following players will place their token adjacent to this new starting point'."""
    state = new_game(3, 4)
    for g in (1, 3, 6, 7, 8):  # empty every square around (0, 2)
        state.grid[g] = -1
    refresh(state)
    p = state.first
    play(state, p, moves.PLACE_FLAG[cell_of(-1, 2)])
    d = GAME.decision(state)
    assert d.moves == [moves.PLACE_TOKEN[cell_of(0, 2)]]
    play(state, d.seat, d.moves[0])
    d = GAME.decision(state)
    free = sum(1 for t in state.grid if t >= 0) - 1
    assert len(d.moves) == free and moves.PLACE_TOKEN[cell_of(0, 2)] not in d.moves
    play(state, d.seat, moves.PLACE_TOKEN[cell_of(4, 4)])
    d = GAME.decision(state)
    assert {m.cell for m in d.moves} == {cell_of(3, 3), cell_of(3, 4), cell_of(4, 3)}


# ---------------------------------------------------------------- 2. Tile auctions


def _to_auction(state):
    return to_kind(state, "goa.bid")


def test_bids_start_left_of_auctioneer_at_least_1_capped_by_ducats():
    """2. Tile auctions: 'The first player to bid is always the one next to the auctioneer ...
    must bid at least 1 or pass ... increase the bid by at least 1'; bids are capped by the
    ducats held."""
    state = new_game(3, 6)
    d = _to_auction(state)
    a = auctioneer(state)
    assert d.seat == (a + 1) % 3
    amounts = sorted(m.amount for m in d.moves if isinstance(m, moves.Bid))
    assert amounts == list(range(1, state.ducats[d.seat] + 1))
    with pytest.raises(IllegalMove):
        GAME.apply(state, d.seat, moves.bid(state.ducats[d.seat] + 1))


def test_nobody_bids_auctioneer_takes_free():
    """'No one bid on the tile (the bid is 0). In this case, the auctioneer takes the tile for
    free' (and the flag buyer/keeper takes an Extra action card)."""
    state = new_game(3, 6)
    _to_auction(state)
    a = auctioneer(state)
    money = list(state.ducats)
    play(state, (a + 1) % 3, moves.PASS)
    play(state, (a + 2) % 3, moves.PASS)
    assert state.ducats == money and state.first == a and state.extra_cards[a] == 1


def test_auctioneer_keeps_paying_bank_high_bid_minus_1_2012():
    """'the auctioneer pays the bank an amount equal to one less than the high bid'."""
    state = new_game(3, 6)
    _to_auction(state)
    a = auctioneer(state)
    b1 = (a + 1) % 3
    play(state, b1, moves.bid(5))
    play(state, (a + 2) % 3, moves.PASS)
    money = list(state.ducats)
    play(state, a, moves.KEEP_LOT)
    assert state.ducats[a] == money[a] - 4 and state.ducats[b1] == money[b1]


def test_auctioneer_sells_high_bidder_pays_him():
    """'The auctioneer passes. In which case, the player with the high bid pays the auctioneer'."""
    state = new_game(3, 6)
    _to_auction(state)
    a = auctioneer(state)
    b1 = (a + 1) % 3
    play(state, b1, moves.bid(3))
    play(state, (a + 2) % 3, moves.PASS)
    money = list(state.ducats)
    play(state, a, moves.PASS)
    assert state.ducats[a] == money[a] + 3 and state.ducats[b1] == money[b1] - 3
    assert state.first == b1


def test_2004_auctioneer_must_outbid_and_pays_bank():
    """2004 FR, Vente aux enchères: 'Si l'acheteur est déjà propriétaire du drapeau, il paye le
    montant de son enchère à la banque' (he bids last, so above the high bid)."""
    state = new_game(3, 6, edition="2004")
    _to_auction(state)
    a = auctioneer(state)
    play(state, (a + 1) % 3, moves.bid(2))
    play(state, (a + 2) % 3, moves.PASS)
    d = GAME.decision(state)
    assert moves.KEEP_LOT not in d.moves and moves.bid(2) not in d.moves and moves.bid(3) in d.moves
    money = state.ducats[a]
    play(state, a, moves.bid(3))
    assert state.ducats[a] == money - 3


# ---------------------------------------------------------------- 3. Player actions


def _board_state(seed=1, n=3):
    state = new_game(n, seed)
    action_turn(state)
    return state, GAME.decision(state).seat


def test_progress_costs_spices_and_one_ship_per_spice_one_row_only():
    """1. Progress: 'you must pay the depicted spices, and you must provide one ship for each
    spice ... You can only progress once per action (one row in one column)'."""
    state, p = _board_state()
    rules = state.rules
    state.lands[p] = [Land(False, tile_ids(rules, TILE_PLANTATION, "A", spice=0, fields=2)[0], [1, 1], [0, 0])]
    state.ships[p] = 1
    state.rows[p] = [0, 0, 0, 0, 0]
    refresh(state)
    d = GAME.decision(state)
    assert moves.progress(COLUMN_SHIPS, -1) in d.moves  # 1 ginger + 1 ship
    assert moves.progress(COLUMN_HARVEST, -1) not in d.moves  # needs cinnamon
    play(state, p, moves.progress(COLUMN_SHIPS, -1))
    assert state.ships[p] == 0
    d = GAME.decision(state)
    assert d.kind == "goa.pay_spice" and d.moves == [moves.PAY_SPICE[0][0]]
    play(state, p, moves.PAY_SPICE[0][0])
    assert state.rows[p][COLUMN_SHIPS] == 1 and state.lands[p][0].spices == [0, -1]
    d = GAME.decision(state)
    assert d.kind == "goa.after_action" and not any(isinstance(m, moves.Progress) for m in d.moves)


def test_progress_not_offered_without_ships():
    """'you must provide one ship for each spice paid'."""
    state, p = _board_state()
    state.lands[p] = [Land(False, 0, [1, 1], [0, 0])]
    state.ships[p] = 0
    refresh(state)
    assert moves.progress(COLUMN_SHIPS, -1) not in GAME.decision(state).moves


def test_build_ships_and_taxes_follow_the_marker():
    """2. Build ships / 4. Taxes: the number shown by the marker (Ships row 2 = 2 ships)."""
    state, p = _board_state()
    state.rows[p][COLUMN_SHIPS] = 1
    refresh(state)
    ships = state.ships[p]
    play(state, p, moves.BUILD_SHIPS)
    assert state.ships[p] == ships + 2


def test_harvest_one_sack_at_a_time_overflow_stays_in_supply():
    """3. Harvest: 'If a player can take more spice sacks than he is able to place ... he takes
    what he can and leaves the rest in the supply'."""
    state, p = _board_state()
    state.rows[p][COLUMN_HARVEST] = 4  # 8 sacks (provisional sheet)
    state.lands[p] = [Land(False, 0, [1, 1], [0, -1])]
    refresh(state)
    play(state, p, moves.harvest(-1))
    d = GAME.decision(state)
    assert d.kind == "goa.place_spice" and d.moves == [moves.PLACE_SPICE[0][0], moves.DONE]
    play(state, p, moves.PLACE_SPICE[0][0])
    assert GAME.decision(state).kind == "goa.after_action", "nothing more fits: the rest stays"


def test_expedition_hand_limit_discard_or_draw_fewer():
    """5. Expedition, example 2: over the hand limit 'he must immediately play (if he can) or
    discard one card if he wants to be able to draw 2 cards. He could also decide to draw only
    one card.'"""
    state, p = _board_state()
    state.rows[p][COLUMN_EXPEDITION] = 3  # draw 2, limit 4
    state.hands[p] = list(state.deck[:3])
    state.deck = state.deck[3:]
    refresh(state)
    play(state, p, moves.EXPEDITION)
    d = GAME.decision(state)
    draws = sorted(m.count for m in d.moves if isinstance(m, moves.Draw))
    assert draws == [0, 1]
    card = state.hands[p][0]
    play(state, p, moves.discard_card(card))
    draws = sorted(m.count for m in GAME.decision(state).moves if isinstance(m, moves.Draw))
    assert draws == [0, 1, 2]
    play(state, p, moves.draw(2))
    assert len(state.hands[p]) == 4


@pytest.mark.parametrize("edition", ["2012", "2004"])
def test_expedition_above_the_hand_limit_must_discard_before_drawing_even_zero(edition):
    """The hand limit binds 'at any time when doing the Expedition action' (2012 EN, 5.
    Expedition); cards from tiles or bonuses may exceed it, but 'If you do the Expedition action
    later in the game, you may need to discard Expedition cards from your hand to reach your hand
    limit' (EN, Expeditions tile). 2004 FR: 'il ne peut avoir en main, après avoir pioché, plus de
    cartes qu'indiqué par le chiffre de droite'. A seat above its limit may not end the action
    above it: no draw (not even 0) until it has discarded or played down to the limit."""
    state = new_game(3, 1, edition=edition)
    action_turn(state)
    p = GAME.decision(state).seat
    state.rows[p][COLUMN_EXPEDITION] = 3
    limit = state.rules.yields[COLUMN_EXPEDITION][3][1]
    hand = list(state.deck[: limit + 2])
    state.hands[p] = list(hand)
    state.deck = state.deck[limit + 2:]
    refresh(state)
    play(state, p, moves.EXPEDITION)
    for over in (2, 1):
        d = GAME.decision(state)
        assert d.kind == "goa.expedition"
        assert not any(isinstance(m, moves.Draw) for m in d.moves), f"{over} above the limit"
        play(state, p, moves.discard_card(state.hands[p][0]))
    draws = [m.count for m in GAME.decision(state).moves if isinstance(m, moves.Draw)]
    assert draws == [0], "at the limit: draw nothing"
    play(state, p, moves.draw(0))
    assert len(state.hands[p]) == limit


def test_expedition_never_ends_above_the_hand_limit_in_random_games():
    """Whatever the hand held before, every Expedition action ends at or under the limit."""
    for seed in range(12):
        state = new_game(2 + seed % 3, seed)
        rnd = random.Random(seed)
        ended = 0
        while (d := GAME.decision(state)) is not None:
            move = rnd.choice(d.moves)
            GAME.apply(state, d.seat, move)
            if d.kind == "goa.expedition" and isinstance(move, moves.Draw):
                ended += 1
                assert len(state.hands[d.seat]) <= hand_limit(state, d.seat)
        assert ended


def test_found_colony_fail_takes_one_colonist_and_no_repeat_of_founded():
    """6. Found a colony: 'the colony is not founded and the player takes 1 Colonist card';
    'You cannot choose a colony that you have already founded'."""
    state, p = _board_state()
    rules = state.rules
    state.colonists[p] = 0
    state.colonies[p][1] = 5  # Cochin founded
    low = card_ids(rules, colonists=1)[:2]
    stack_deck(state, low)
    refresh(state)
    d = GAME.decision(state)
    assert moves.FOUND_COLONY[1] not in d.moves
    play(state, p, moves.FOUND_COLONY[3])  # Calicut 12: 0 + 2
    d = GAME.decision(state)
    assert moves.RECRUIT not in d.moves
    play(state, p, moves.DECLINE)
    assert state.colonists[p] == 1
    assert set(low) <= set(state.discard), "the revealed cards are discarded"


def test_found_colony_pays_missing_colonists_from_hand():
    """6. Found a colony, example: board 4 + revealed 4 = 8 of 10; '2 colonists from his hand'."""
    state, p = _board_state()
    rules = state.rules
    state.rows[p][COLUMN_COLONISTS] = 4  # 4 colonists on the board (provisional sheet: row 5)
    assert rules.yields[COLUMN_COLONISTS][4] == 4
    state.colonists[p] = 5
    reveal = card_ids(rules, colonists=2)[:2]
    stack_deck(state, reveal)
    refresh(state)
    play(state, p, moves.FOUND_COLONY[2])
    play(state, p, moves.RECRUIT)
    assert state.colonists[p] == 3


def test_one_expedition_card_per_action():
    """Expedition cards: 'You can play 1 Expedition card per action'."""
    state, p = _board_state()
    rules = state.rules
    ships = card_ids(rules, EFFECT_SHIPS)[:2]
    state.hands[p] = list(ships)
    state.deck = [c for c in state.deck if c not in ships]
    state.discard = [c for c in state.discard if c not in ships]
    refresh(state)
    play(state, p, moves.play_card(ships[0]))
    d = GAME.decision(state)
    assert moves.play_card(ships[1]) not in d.moves


def test_sell_card_at_most_4_in_2012():
    """Expedition cards: 'Sell up to 4 spices and receive 3 ducats per spice sack sold'."""
    state, p = _board_state()
    rules = state.rules
    sell = card_ids(rules, EFFECT_SELL)[0]
    state.hands[p] = [sell]
    state.deck = [c for c in state.deck if c != sell]
    state.discard = [c for c in state.discard if c != sell]
    state.lands[p] = [Land(True, 14, [31, 31], [0, 1]), Land(True, 15, [31, 31], [2, 3]), Land(True, 16, [31], [4])]
    refresh(state)
    money = state.ducats[p]
    play(state, p, moves.play_card(sell))
    for _ in range(4):
        d = GAME.decision(state)
        m = next(x for x in d.moves if isinstance(x, moves.SellSpice))
        play(state, p, m)
    assert state.ducats[p] == money + 12
    d = GAME.decision(state)
    assert d.kind == "goa.action", "the sale ended after 4; the action is still to come"
    assert sum(spice_counts(state, p)) == 1


# ---------------------------------------------------------------- tiles


def test_new_plantation_with_four_discards_one_single_kept_face_down():
    """Plantation: 'If you already own 4 plantations ... you must first discard 1 ... If the
    discarded plantation only has one spice field ... keep the plantation face down'."""
    state, p = _board_state()
    rules = state.rules
    singles = tile_ids(rules, TILE_PLANTATION, "A", fields=1)
    state.lands[p] = [Land(False, t, [1 << rules.tiles[t].spice], [rules.tiles[t].spice]) for t in singles[:4]]
    gain_tile(state, p, singles[4])
    refresh(state)
    d = GAME.decision(state)
    assert d.kind == "goa.discard_plantation" and len(d.moves) == 4
    play(state, p, moves.DISCARD_PLANTATION[0])
    assert state.singles_down[p] == 1 and plantation_count(state, p) == 4


def test_red_tile_once_per_round():
    """Red tiles: 'can be played during a future action, but only once per round ... At the
    beginning of the following round, players flip their red tiles face up'."""
    state, p = _board_state()
    rules = state.rules
    t = tile_ids(rules, TILE_RED_DUCATS, "A")[0]
    state.kept[p].append(t)
    refresh(state)
    money = state.ducats[p]
    play(state, p, moves.use_tile(t))
    assert state.ducats[p] == money + 3, "2012 Ducats tile: 3"
    assert moves.use_tile(t) not in GAME.decision(state).moves
    start_round(state)
    assert state.red_used[p] == []


def test_ducats_tile_is_4_in_2004():
    """2004 FR, Dukaten: 'Le joueur prend quatre ducats à chaque manche'."""
    rules = rules_of("2004")
    t = tile_ids(rules, TILE_RED_DUCATS, "A")[0]
    assert rules.tiles[t].n == 4


@pytest.mark.parametrize("edition,vp", [("2012", 5), ("2004", 4)])
def test_duty_returns_6_spices_for_vp(edition, vp):
    """Duty: 'You can score 5 victory points by returning to the supply 6 spice sacks' (2004 FR:
    4 points)."""
    state = new_game(3, 1, edition=edition)
    action_turn(state)
    p = GAME.decision(state).seat
    rules = state.rules
    duty = tile_ids(rules, TILE_DUTY, "A")[0]
    state.kept[p].append(duty)
    state.lands[p] = [Land(True, 14, [31, 31], [0, 0]), Land(True, 15, [31, 31], [1, 1]), Land(True, 16, [31, 31], [2, 2])]
    refresh(state)
    play(state, p, moves.use_tile(duty))
    for _ in range(6):
        d = GAME.decision(state)
        play(state, p, d.moves[0])
    assert sum(spice_counts(state, p)) == 0
    assert score_seat(state, p)["duty"] == vp


@pytest.mark.parametrize("edition", ["2012", "2004"])
def test_used_duty_tile_is_kept_face_down_by_its_owner(edition):
    """Duty: 'Immediately after, flip this tile face down until the final scoring. At the end of
    the game, reveal this tile to add 5 points to your score' and 'The Duty tile behaves a little
    differently: it is not discarded after being used' (2012 EN); 'Le joueur retourne alors la
    tuile face cachée et la conserve jusqu'au décompte final' (2004 FR). The used tile stays with
    its owner (face down, not usable again), neither discarded nor lost."""
    state = new_game(3, 1, edition=edition)
    action_turn(state)
    p = GAME.decision(state).seat
    duty = tile_ids(state.rules, TILE_DUTY, "A")[0]
    state.kept[p].append(duty)
    state.lands[p] = [Land(True, 14, [31, 31], [0, 0]), Land(True, 15, [31, 31], [1, 1]), Land(True, 16, [31, 31], [2, 2])]
    refresh(state)
    play(state, p, moves.use_tile(duty))
    for _ in range(6):
        play(state, p, GAME.decision(state).moves[0])
    assert state.duty_face_down[p] == [duty], "kept face down by its owner"
    assert duty not in state.kept[p], "face down: no longer an open, usable tile"
    assert duty not in state.tile_discard and duty not in state.box
    assert moves.use_tile(duty) not in GAME.decision(state).moves
    view = GAME.view(state, None)
    assert view.players[p].duty_vp == state.rules.tiles[duty].vp


def test_vice_king_moves_least_advanced_marker_free():
    """Vice-king: 'move your least advanced Progress marker ... If you have more than one marker
    in this row, move one of these markers, your choice'."""
    state, p = _board_state()
    vk = tile_ids(state.rules, TILE_VICE_KING, "B")[0]
    state.kept[p].append(vk)
    state.rows[p] = [1, 0, 1, 0, 2]
    refresh(state)
    play(state, p, moves.use_tile(vk))
    d = GAME.decision(state)
    assert d.moves == [moves.CHOOSE_COLUMN[1], moves.CHOOSE_COLUMN[3]]


# ---------------------------------------------------------------- progress bonuses


def test_first_to_row_4_and_5_draws_a_card_all_markers_row_2_gives_extra_action():
    """'the first player to reach the last row or the row before last draws 1 Expedition card';
    'When a player has moved all of his markers in, at least, the 2nd row ... he takes 1 Extra
    action card'."""
    state, p = _board_state()
    q = (p + 1) % state.n
    state.rows[p] = [2, 1, 1, 1, 0]
    hand = len(state.hands[p])
    advance_marker(state, p, 0)
    assert len(state.hands[p]) == hand + 1 and state.first_bonus[0] == p
    state.rows[q] = [2, 0, 0, 0, 0]
    hand_q = len(state.hands[q])
    advance_marker(state, q, 0)
    assert len(state.hands[q]) == hand_q, "only the first"
    extra = state.extra_cards[p]
    advance_marker(state, p, 4)
    assert state.extra_cards[p] == extra + 1


# ---------------------------------------------------------------- end of round / game


def test_extra_actions_must_play_down_to_one():
    """End of a round: 'Keep, at most, 1 Extra action card ... he must play enough of his Extra
    action cards'."""
    state = new_game(2, 3)
    d = random_until(state, lambda s, d: d.kind == "goa.extra_action", random.Random(1))
    p = d.seat
    state.extra_supply -= 3
    state.extra_cards[p] += 3
    refresh(state)
    d = GAME.decision(state)
    assert d.moves == [moves.PLAY_EXTRA]


def test_phase_b_after_round_4_and_end_after_round_8():
    """'After phase A, remove all tiles ... randomly place 25 B-tiles'; 'The game ends after the
    4th round of phase B'."""
    state = new_game(2, 8)
    random_until(state, lambda s, d: s.round == 5)
    rules = state.rules
    assert all(rules.tiles[t].phase == "B" for t in state.grid if t >= 0)
    assert len(state.box) == 8
    random_until(state, lambda s, d: False)
    assert state.phase == OVER and state.round == 8
    assert GAME.result(state) is not None


def test_tie_broken_by_most_ducats():
    """End of the game: 'In case of a tie, the tied player with the most ducats wins'."""
    state = new_game(2, 8)
    random_until(state, lambda s, d: False)
    state.final[0]["total"] = state.final[1]["total"] = 20
    state.final[0]["ducats"], state.final[1]["ducats"] = 5, 9
    res = GAME.result(state)
    assert res.winners == [1] and res.ranks == [2, 1]


def test_expedition_sets_score_per_symbol():
    """Final scoring: 1/3/6/10/15 VP for 1..5 identical symbols, every set counts."""
    state = new_game(2, 8)
    rules = state.rules
    state.hands = [card_ids(rules, symbol="fish")[:3] + card_ids(rules, symbol="shell")[:1], []]
    assert score_seat(state, 0)["expedition_cards"] == 6 + 1


def test_foreman_makes_single_plantations_worth_3():
    """Foreman: 'At the end of the game, your single Plantation tiles are worth 3 VP instead of
    1'; Crop rotation scores 0."""
    state = new_game(2, 8)
    rules = state.rules
    single = tile_ids(rules, TILE_PLANTATION, "A", fields=1)[0]
    crop = tile_ids(rules, TILE_CROP_ROTATION, "A")[0]
    state.lands[0] = [Land(False, single, [1], [-1]), Land(False, crop, [31], [-1])]
    state.singles_down[0] = 1
    assert score_seat(state, 0)["single_plantations"] == 2
    state.kept[0].append(tile_ids(rules, TILE_FOREMAN, "A")[0])
    assert score_seat(state, 0)["single_plantations"] == 6


def test_quick_starter_choice():
    """Variant Quick starter: 'moves down 2 of his Progress markers into the 2nd row ... OR takes
    10 ducats'."""
    state = new_game(3, 2, quick_starter=True)
    d = GAME.decision(state)
    assert d.kind == "goa.quick_start" and d.seat == state.first and len(d.moves) == 11
    p = d.seat
    play(state, p, moves.QUICK_ADVANCE[(0, 3)])
    assert state.rows[p] == [1, 0, 0, 1, 0]
    q = GAME.decision(state).seat
    money = state.ducats[q]
    play(state, q, moves.QUICK_DUCATS)
    assert state.ducats[q] == money + 10 and q == (p + 1) % 3


def test_bonanza_tile_goes_with_the_corner_tile():
    """Variant Bonanza: 'put one, face down, under each of the 4 tiles located in the corners ...
    When a player buys the tile above, he also immediately receives the bonus'."""
    state = new_game(3, 2, bonanza=True)
    assert [g for g in range(25) if state.bonanza[g] >= 0] == [0, 4, 20, 24]
    p = 1
    before = (state.ships[p], state.colonists[p], state.ducats[p], state.extra_cards[p], len(state.hands[p]))
    b = state.bonanza[0]
    take_bonanza(state, p, 0)
    after = (state.ships[p], state.colonists[p], state.ducats[p], state.extra_cards[p], len(state.hands[p]))
    assert tuple(a - c for a, c in zip(after, before)) == state.rules.bonanza[b]
    assert state.bonanza[0] == -1
    with pytest.raises(BadOptions):
        new_game(3, 2, bonanza=True, edition="2004")


# ---------------------------------------------------------------- more tiles and cards


def _give_card(state, p, effect):
    card = card_ids(state.rules, effect)[0]
    for pile in (state.deck, state.discard, *state.hands):
        if card in pile:
            pile.remove(card)
    state.hands[p].append(card)
    return card


def test_progress_spices_only_card_pays_no_ships():
    """Expedition cards that modify an action: 'Progress: You only pay spices ... You do not pay
    any ships'."""
    state, p = _board_state()
    card = _give_card(state, p, EFFECT_PROGRESS_SPICES_ONLY)
    state.lands[p] = [Land(False, 0, [1, 1], [0, 0])]
    state.ships[p] = 0
    refresh(state)
    d = GAME.decision(state)
    assert moves.progress(COLUMN_SHIPS, -1) not in d.moves and moves.progress(COLUMN_SHIPS, card) in d.moves
    play(state, p, moves.progress(COLUMN_SHIPS, card))
    play(state, p, moves.PAY_SPICE[0][0])
    assert state.rows[p][COLUMN_SHIPS] == 1 and state.ships[p] == 0 and card in state.discard


def test_harvest_mix_card_takes_ships_or_colonists():
    """'Harvest: Instead of spices, you can take a combination of colonists, ships, and/or
    spices'."""
    state, p = _board_state()
    card = _give_card(state, p, EFFECT_HARVEST_MIX)
    state.rows[p][COLUMN_HARVEST] = 1  # 2 units (provisional sheet)
    state.lands[p] = []
    refresh(state)
    ships, colonists = state.ships[p], state.colonists[p]
    play(state, p, moves.harvest(card))
    play(state, p, moves.TAKE_SHIP)
    play(state, p, moves.TAKE_COLONIST)
    assert (state.ships[p], state.colonists[p]) == (ships + 1, colonists + 1)
    assert GAME.decision(state).kind == "goa.after_action"


def test_progress_ducats_card():
    """'Pay ducats to move one Progress marker down one row ... only one marker can move down one
    row'."""
    state, p = _board_state()
    card = _give_card(state, p, EFFECT_PROGRESS_DUCATS)
    price = state.rules.cards[card].price
    state.ducats[p] = price
    refresh(state)
    play(state, p, moves.play_card(card))
    d = GAME.decision(state)
    assert d.kind == "goa.column" and len(d.moves) == 5
    play(state, p, moves.CHOOSE_COLUMN[2])
    assert state.ducats[p] == 0 and state.rows[p][2] == 1


def test_espionage_uses_opponent_row():
    """Espionage: 'Choose an opponent and do one of these actions, using the position of this
    player's Progress marker ... Build ships, Harvest, Taxes or Found a colony'."""
    state, p = _board_state()
    q = (p + 1) % state.n
    spy = tile_ids(state.rules, TILE_ESPIONAGE, "B")[0]
    state.kept[p].append(spy)
    state.rows[q][COLUMN_TAXES] = 4
    refresh(state)
    play(state, p, moves.ESPIONAGE[q])
    d = GAME.decision(state)
    assert moves.EXPEDITION not in d.moves and not any(isinstance(m, moves.Progress) for m in d.moves)
    money = state.ducats[p]
    play(state, p, moves.TAXES)
    assert state.ducats[p] == money + state.rules.yields[COLUMN_TAXES][4]
    assert spy not in state.kept[p]


def test_resupply_takes_revealed_colonists_as_one_resource():
    """Resupply: 'Reveal 2 Expedition cards and add the colonists ... take this sum in spices,
    colonists or ships ... only one type'."""
    state, p = _board_state()
    t = tile_ids(state.rules, TILE_RESUPPLY, "B")[0]
    state.kept[p].append(t)
    stack_deck(state, card_ids(state.rules, colonists=3)[:2])
    refresh(state)
    ships = state.ships[p]
    play(state, p, moves.use_tile(t))
    d = GAME.decision(state)
    assert d.kind == "goa.resource" and len(d.moves) == 3
    play(state, p, moves.CHOOSE_RESOURCE[0])
    assert state.ships[p] == ships + 6


def test_swap_takes_a_board_tile_and_leaves_itself():
    """Swap: 'take 1 tile of your choice from the board ... Put the Swap tile, face up, in the
    space previously occupied by the tile you just took'."""
    state, p = _board_state()
    swap = tile_ids(state.rules, TILE_SWAP, "B")[0]
    state.kept[p].append(swap)
    g = next(i for i in range(25) if state.grid[i] >= 0)
    taken = state.grid[g]
    refresh(state)
    play(state, p, moves.use_tile(swap))
    play(state, p, moves.SWAP_TAKE[GRID_CELLS[g]])
    assert state.grid[g] == swap and swap not in state.kept[p]
    owned = taken in state.kept[p] or taken in state.tile_discard or any(
        land.tile == taken for land in state.lands[p] if not land.colony) or state.stack
    assert owned


def test_favor_takes_a_tile_from_the_box():
    """Favor: 'Look through the ... tiles that were returned to the box during setup ... Take the
    tile of your choice'."""
    state, p = _board_state()
    favor = tile_ids(state.rules, TILE_FAVOR, "B")[0]
    gain_tile(state, p, favor)
    refresh(state)
    d = GAME.decision(state)
    assert d.kind == "goa.favor" and {m.tile for m in d.moves} == set(state.box)
    t = d.moves[0].tile
    play(state, p, d.moves[0])
    assert t not in state.box


def test_ships_or_colonists_tile_no_combination():
    """Ships/Colonists: 'Take 3 colonists or 3 ships; you may not combine the two'."""
    state, p = _board_state()
    t = tile_ids(state.rules, TILE_SHIPS_OR_COLONISTS, "A")[0]
    gain_tile(state, p, t)
    refresh(state)
    d = GAME.decision(state)
    assert d.moves == [moves.CHOOSE_RESOURCE[0], moves.CHOOSE_RESOURCE[1]]
    colonists = state.colonists[p]
    play(state, p, moves.CHOOSE_RESOURCE[1])
    assert state.colonists[p] == colonists + 3


def test_expeditions_tile_ignores_hand_limit():
    """Expeditions: 'Draw 2 or 3 Expedition cards, even if this puts you over your hand limit'."""
    state, p = _board_state()
    hand = len(state.hands[p])
    gain_tile(state, p, tile_ids(state.rules, TILE_EXPEDITIONS, "B")[0])
    assert len(state.hands[p]) == hand + 3


def test_extra_harvest_at_most_3_lands():
    """Extra harvest: 'Fill up to 3 of your plantations and/or colonies'."""
    state, p = _board_state()
    t = tile_ids(state.rules, TILE_EXTRA_HARVEST, "B")[0]
    state.kept[p].append(t)
    plants = tile_ids(state.rules, TILE_PLANTATION, "B", fields=2)[:4]
    state.lands[p] = [Land(False, x, [1 << state.rules.tiles[x].spice] * 2, [-1, -1]) for x in plants]
    refresh(state)
    play(state, p, moves.use_tile(t))
    for land in range(3):
        d = GAME.decision(state)
        m = next(m for m in d.moves if isinstance(m, moves.PlaceSpice) and m.land == land)
        play(state, p, m)
    d = GAME.decision(state)
    lands = {m.land for m in d.moves if isinstance(m, moves.PlaceSpice)}
    assert lands == {0, 1, 2}, "a fourth land may not be filled"


@pytest.mark.parametrize("cards,can_pass", [(1, True), (2, False)])
def test_extra_action_pass_only_with_at_most_one_card(cards, can_pass):
    """End of a round: 'Keep, at most, 1 Extra action card in his hand'."""
    state = new_game(2, 3)
    d = random_until(state, lambda s, d: d.kind == "goa.extra_action", random.Random(1))
    p = d.seat
    state.extra_supply += state.extra_cards[p] - cards
    state.extra_cards[p] = cards
    refresh(state)
    d = GAME.decision(state)
    assert (moves.PASS_EXTRA in d.moves) is can_pass and moves.PLAY_EXTRA in d.moves


def test_most_ducats_scores_3_ties_each():
    """Final scoring: 'The player with the most ducats scores 3 victory points. In case of a tie
    for the most ducats, the tied players score 3 VP each'."""
    state = new_game(3, 8)
    state.ducats = [7, 9, 9]
    assert [score_seat(state, p)["most_ducats"] for p in range(3)] == [0, 3, 3]


def test_strict_hand_limit_option_discards_at_once():
    """Option hand_limit=always (Rio Grande 2nd printing: never more cards than the limit, 'even
    for a moment'); by default the Expeditions tile may exceed it ('even if this puts you over
    your hand limit')."""
    for option, must_discard in (("expedition", False), ("always", True)):
        state = new_game(3, 1, hand_limit=option)
        action_turn(state)
        p = GAME.decision(state).seat
        t = tile_ids(state.rules, TILE_EXPEDITIONS, "B")[0]
        gain_tile(state, p, t)  # 3 cards, limit 1 in row 1
        refresh(state)
        d = GAME.decision(state)
        assert (d.kind == "goa.hand_limit") is must_discard
        if must_discard:
            play(state, p, d.moves[0])
            play(state, p, GAME.decision(state).moves[0])
            assert len(state.hands[p]) == 1 and GAME.decision(state).kind == "goa.action"


def test_settlement_tile():
    """Settlement: 'Take 1 ship, 1 Extra action card, and 1 colonist'."""
    state, p = _board_state()
    before = (state.ships[p], state.extra_cards[p], state.colonists[p])
    gain_tile(state, p, tile_ids(state.rules, TILE_SETTLEMENT, "A")[0])
    assert (state.ships[p], state.extra_cards[p], state.colonists[p]) == tuple(x + 1 for x in before)


def test_red_colonist_tile_usable_after_the_reveal():
    """Red tiles 'can use them before, during or after their action': during Found a colony the
    unused red Colonist tile still adds its colonist after the cards are revealed."""
    state, p = _board_state()
    t = tile_ids(state.rules, TILE_RED_COLONIST, "A")[0]
    state.kept[p].append(t)
    state.colonists[p] = 0
    stack_deck(state, card_ids(state.rules, colonists=3)[:2])
    refresh(state)
    play(state, p, moves.FOUND_COLONY[0])  # Quilon 6: 0 + 6 revealed
    d = GAME.decision(state)
    assert moves.use_tile(t) in d.moves
    play(state, p, moves.use_tile(t))
    assert state.colonists[p] == 1 and moves.use_tile(t) not in GAME.decision(state).moves
