"""The two worked examples of the 2012 rulebook (Goa - A New Expedition, English rules), replayed.

"Example of a complete round": Yellow, Red, Green, Blue (seats 0..3), Yellow has the flag.
"Scoring example for Red": Red scores 42 VP.
Values the text does not give (which Expedition cards are revealed, the board cells in the
Found a colony column) come from the provisional sheet; the test arranges the deck so the
revealed colonists are those of the text."""
from __future__ import annotations

from referee.games.goa import moves
from referee.games.goa.board import cell_of
from referee.games.goa.catalog import (
    COLUMN_COLONISTS,
    COLUMN_HARVEST,
    COLUMN_SHIPS,
    EFFECT_PROGRESS_SHIPS_ONLY,
    EFFECT_SHIPS,
    TILE_COLONISTS,
    TILE_PLANTATION,
    TILE_RED_COLONIST,
)
from referee.games.goa.scoring import score_seat
from referee.games.goa.state import Land
from tests.goa.helpers import (
    GAME,
    card_ids,
    new_game,
    only,
    play,
    refresh,
    rules_of,
    stack_deck,
    tile_ids,
)

Y, RED, G, B = 0, 1, 2, 3


def _example_state():
    rules = rules_of("2012")
    state = new_game(4, 3)
    # 9 - First player: Yellow has the flag (5 ducats), the others 10.
    state.first = Y
    state.ducats = [5, 10, 10, 10]
    state.hands = [[], [], [], []]
    # the tiles bought in the example, laid out along the token line of the illustration
    red_colonist = tile_ids(rules, TILE_RED_COLONIST, "A")[0]
    clove = tile_ids(rules, TILE_PLANTATION, "A", spice=4, fields=2)[0]
    colonists = tile_ids(rules, TILE_COLONISTS, "A")[0]
    ginger = tile_ids(rules, TILE_PLANTATION, "A", spice=0, fields=1)[0]
    wanted = {1: red_colonist, 6: clove, 7: colonists, 12: ginger}  # grid index -> tile
    others = [t.id for t in rules.tiles if t.phase == "A" and t.id not in wanted.values()]
    state.grid = [wanted.get(g, others[g]) if g in wanted else others.pop(0) for g in range(25)]
    state.box = others[:4]
    # the cards revealed and drawn, in order
    c1 = card_ids(rules, colonists=1)
    c2 = card_ids(rules, colonists=2)
    c3 = card_ids(rules, colonists=3)
    ships_only = card_ids(rules, EFFECT_PROGRESS_SHIPS_ONLY)[0]
    two_ships = card_ids(rules, EFFECT_SHIPS)[0]
    pool1 = [c for c in c1 if c not in (ships_only, two_ships)]
    pool2 = [c for c in c2 if c not in (ships_only, two_ships)]
    pool3 = [c for c in c3 if c not in (ships_only, two_ships)]
    order = [
        pool1[0], pool1[1],  # Blue names Quilon: 1 + 1 colonists revealed
        pool2[0], pool3[0],  # Red names Cochin: 2 + 3 colonists revealed
        ships_only,          # Green's Expedition action
        pool1[2], pool1[3],  # Blue names Quilon again: 1 + 1
        pool2[1], pool2[2],  # Yellow names Quilon: 2 + 2
        two_ships,           # Red's Expedition action
    ]
    stack_deck(state, order)
    refresh(state)
    return state, rules


def test_example_of_a_complete_round():
    state, rules = _example_state()
    # ---- 1. PLACE AUCTION TOKENS: Yellow puts the flag outside the play area, Red his 2 on the
    # diagonally adjacent tile, then Green 3, Blue 4, Yellow 5.
    d = GAME.decision(state)
    assert d.kind == "goa.place_flag" and d.seat == Y
    corner_edge = cell_of(-1, 0)
    assert moves.PLACE_FLAG[corner_edge] in d.moves
    assert moves.PLACE_FLAG[cell_of(-1, -1)] not in d.moves, "the flag must touch a tile orthogonally"
    play(state, Y, moves.PLACE_FLAG[corner_edge])
    play(state, RED, moves.PLACE_TOKEN[cell_of(0, 1)])  # red Colonist tile, diagonal to the flag
    play(state, G, moves.PLACE_TOKEN[cell_of(1, 1)])    # Clove plantation
    play(state, B, moves.PLACE_TOKEN[cell_of(1, 2)])    # Colonists tile
    play(state, Y, moves.PLACE_TOKEN[cell_of(2, 2)])    # Ginger plantation
    # ---- 2. TILE AUCTIONS: the flag. Red says 4, Green passes, Blue bids 6; Yellow passes and
    # takes the 6 ducats from Blue (keeping it would have cost her 5).
    d = GAME.decision(state)
    assert d.kind == "goa.bid" and d.seat == RED, "the first bidder is the auctioneer's left"
    assert moves.bid(0) not in d.moves and moves.bid(1) in d.moves
    play(state, RED, moves.bid(4))
    d = GAME.decision(state)
    assert moves.bid(4) not in d.moves and moves.bid(5) in d.moves, "raise by at least 1"
    play(state, G, moves.PASS)
    play(state, B, moves.bid(6))
    d = GAME.decision(state)
    assert d.kind == "goa.auctioneer" and d.seat == Y
    assert moves.KEEP_LOT in d.moves  # she has 5 = 6 - 1
    play(state, Y, moves.PASS)
    assert state.ducats[Y] == 11 and state.ducats[B] == 4
    assert state.first == B and state.extra_cards[B] == 1, "the flag buyer takes an Extra action card"
    # the other four lots, won as in the example (bids of 1)
    play(state, G, moves.PASS)
    play(state, B, moves.bid(1))
    play(state, Y, moves.PASS)
    play(state, RED, moves.PASS)         # Red sells the red Colonist tile to Blue
    play(state, B, moves.PASS)
    play(state, Y, moves.bid(1))
    play(state, RED, moves.PASS)
    play(state, G, moves.PASS)           # Green sells the Clove plantation to Yellow
    play(state, Y, moves.PASS)
    play(state, RED, moves.bid(1))
    play(state, G, moves.PASS)
    play(state, B, moves.PASS)           # Blue sells the Colonists tile to Red
    play(state, RED, moves.PASS)
    play(state, G, moves.bid(1))
    play(state, B, moves.PASS)
    play(state, Y, moves.PASS)           # Yellow sells the Ginger plantation to Green
    # Yellow put the Clove plantation on her board with 2 cloves; Red traded the Colonists tile
    # for colonist cards; Green has 1 ginger.
    assert [land.spices for land in state.lands[Y]] == [[4, 4]]
    assert state.colonists[RED] == 6
    assert [land.spices for land in state.lands[G]] == [[0]]
    assert any(rules.tiles[t].type == TILE_RED_COLONIST for t in state.kept[B])
    # ---- 3. PLAYER ACTIONS, 1st action; Blue starts since he has the flag.
    d = GAME.decision(state)
    assert d.kind == "goa.action" and d.seat == B
    colonist_tile = only(d, moves.UseTile)
    play(state, B, colonist_tile)
    assert state.colonists[B] == 3
    play(state, B, moves.FOUND_COLONY[0])  # Quilon: 0 on the board + 2 revealed + 3 in hand = 5 < 6
    d = GAME.decision(state)
    assert d.kind == "goa.colony" and moves.RECRUIT not in d.moves
    play(state, B, moves.DECLINE)
    assert state.colonists[B] == 4, "he keeps his 3 colonists and takes 1"
    assert moves.use_tile(colonist_tile.tile) not in GAME.decision(state).moves, "once per round"
    play(state, B, moves.END_TURN)
    # Yellow: Progress in the Found a colony column: 1 clove and 1 ship.
    play(state, Y, moves.progress(COLUMN_COLONISTS, -1))
    assert state.ships[Y] == 3
    play(state, Y, moves.PAY_SPICE[0][4])
    assert state.rows[Y][COLUMN_COLONISTS] == 1
    play(state, Y, moves.END_TURN)
    # Red: Found a colony, Cochin (8): 0 + 5 revealed, plays a 3-colonist card -> 8.
    play(state, RED, moves.FOUND_COLONY[1])
    play(state, RED, moves.RECRUIT)
    assert state.colonists[RED] == 3
    d = GAME.decision(state)
    assert d.kind == "goa.place_spice" and moves.DONE not in d.moves, "the colony must be filled"
    play(state, RED, moves.PLACE_SPICE[0][2])  # 1 cinnamon on Cochin
    play(state, RED, moves.END_TURN)
    # Green: Expedition, draws 1 with a hand limit of 1.
    play(state, G, moves.EXPEDITION)
    d = GAME.decision(state)
    assert moves.draw(1) in d.moves and moves.draw(2) not in d.moves
    play(state, G, moves.draw(1))
    assert len(state.hands[G]) == 1
    play(state, G, moves.END_TURN)
    # ---- 2nd action
    play(state, B, moves.FOUND_COLONY[0])  # Quilon again: success (1 + 1 revealed + 4 cards)
    play(state, B, moves.RECRUIT)
    d = GAME.decision(state)
    assert d.kind == "goa.colony_tile"
    pepper_nutmeg = [m for m in d.moves if rules.colony_tiles[m.tile].masks == ((1 << 1) | (1 << 3),)]
    play(state, B, pepper_nutmeg[0])
    play(state, B, moves.PLACE_SPICE[0][3])  # 1 nutmeg
    assert state.colonists[B] == 0
    play(state, B, moves.END_TURN)
    play(state, Y, moves.FOUND_COLONY[0])  # Yellow: Quilon, ginger or cinnamon, puts ginger
    play(state, Y, moves.RECRUIT)
    d = GAME.decision(state)
    ginger_cinnamon = [m for m in d.moves if rules.colony_tiles[m.tile].masks == ((1 << 0) | (1 << 2),)]
    play(state, Y, ginger_cinnamon[0])
    play(state, Y, moves.PLACE_SPICE[1][0])
    play(state, Y, moves.END_TURN)
    play(state, RED, moves.EXPEDITION)
    play(state, RED, moves.draw(1))
    play(state, RED, moves.END_TURN)
    play(state, G, moves.progress(COLUMN_SHIPS, -1))  # 1 ginger and 1 ship
    play(state, G, moves.PAY_SPICE[0][0])
    play(state, G, moves.END_TURN)
    # ---- 3rd action
    play(state, B, moves.TAXES)
    assert state.ducats[B] == 8, "Blue takes 4 ducats"
    play(state, B, moves.END_TURN)
    play(state, Y, moves.progress(COLUMN_COLONISTS, -1))  # 1 clove, 1 ginger and 2 ships
    play(state, Y, moves.PAY_SPICE[0][4])
    play(state, Y, moves.PAY_SPICE[1][0])
    assert state.ships[Y] == 1 and state.rows[Y][COLUMN_COLONISTS] == 2
    play(state, Y, moves.END_TURN)
    play(state, RED, moves.progress(COLUMN_HARVEST, -1))  # 1 cinnamon and 1 ship ...
    play(state, RED, moves.PAY_SPICE[0][2])
    card = state.hands[RED][0]
    play(state, RED, moves.play_card(card))  # ... and an Expedition card: 2 ships
    assert state.ships[RED] == 5 and state.hands[RED] == []
    play(state, RED, moves.END_TURN)
    card = state.hands[G][0]
    play(state, G, moves.progress(COLUMN_SHIPS, card))  # no spices, only 2 ships
    assert state.ships[G] == 1 and state.rows[G][COLUMN_SHIPS] == 2
    assert [land.spices for land in state.lands[G]] == [[-1]]
    play(state, G, moves.END_TURN)
    # ---- End of a round: Blue keeps his one Extra action card.
    d = GAME.decision(state)
    assert d.kind == "goa.extra_action" and d.seat == B
    play(state, B, moves.PASS_EXTRA)
    assert state.extra_cards[B] == 1
    # The next round begins; Blue owns the flag and places it.
    d = GAME.decision(state)
    assert d.kind == "goa.place_flag" and d.seat == B and state.round == 2
    assert state.ducats == [11, 10, 10, 8]


def test_scoring_example_red_scores_42():
    """'Scoring example for Red': progress 6+10+3+6+6 = 31, 2 colonies 3, one elephant and two
    palm trees 4, most ducats 3, one single plantation 1: 42 VP."""
    rules = rules_of("2012")
    state = new_game(4, 11)
    state.rows[RED] = [3, 4, 2, 3, 3]
    state.colonies[RED] = [0, 5, -1, -1]
    elephant = card_ids(rules, symbol="elephant")[:1]
    palms = card_ids(rules, symbol="palm_tree")[:2]
    state.hands = [[], elephant + palms, [], []]
    state.ducats = [10, 30, 12, 20]
    single = tile_ids(rules, TILE_PLANTATION, "A", fields=1)[0]
    double = tile_ids(rules, TILE_PLANTATION, "A", fields=2)[0]
    state.lands[RED] = [Land(False, single, [1], [-1]), Land(False, double, [1, 1], [0, 0])]
    state.kept[RED] = []
    state.duty_face_down[RED] = []
    score = score_seat(state, RED)
    assert score["progress"] == 31
    assert score["colonies"] == 3
    assert score["expedition_cards"] == 4
    assert score["most_ducats"] == 3
    assert score["single_plantations"] == 1
    assert score["duty"] == 0 and score["missions"] == 0
    assert score["total"] == 42
