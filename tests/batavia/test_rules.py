"""Batavia rules, one test per rule, citing the French rulebook (Queen Games 2008, OCR of the
French rules) and the rulings (referee/games/batavia/RULINGS.md)."""
from __future__ import annotations

import pytest

from referee.core.contract import IllegalMove
from referee.games.batavia import GAME
from referee.games.batavia import rules as R
from referee.games.batavia.moves import (
    ADVANCE,
    DRAW_CARDS,
    EXCHANGE_TILES,
    KEEP_TILES,
    PASS_BID,
    PLAY_CARD,
    TAKE_ARRIVAL,
    bid,
)

from .helpers import (
    COTTON,
    DK,
    EN,
    FR,
    GINGER,
    NL,
    PEPPER,
    PORCELAIN,
    SE,
    SILK,
    TEA,
    action_state,
    all_pass,
    kinds,
    new_state,
    set_track,
    tile,
)


def assert_illegal(state, seat, move, *words):
    before = GAME.hash_state(state)
    with pytest.raises(IllegalMove) as err:
        R.apply(state, seat, move)
    assert GAME.hash_state(state) == before, "a rejected move changed the state"
    for w in words:
        assert w in err.value.message
    return err.value


# ---------------------------------------------------------------- Préparation


@pytest.mark.parametrize("n", [3, 4, 5])
def test_setup_per_rulebook(n):
    """Préparation: 10 ship cards each, the rest is the draw pile; 15 bills, 12 crates, merchant on
    the start space; the oldest player (seat 0) is the first auctioneer and rolls the die."""
    s = new_state(n, seed=7)
    assert all(sum(h) == 10 for h in s.hands)
    assert s.bills == [15] * n and s.crates_left == [12] * n and s.merchant == [0] * n
    assert s.auctioneer == 0 and s.current == 1 % n and s.phase == R.AUCTION
    assert 1 <= s.die <= 6 and sum(s.lot) == s.die
    assert len(s.draw_pile) + sum(s.lot) == 110 - 10 * n


def test_face_down_setup_blocks_and_reveal():
    """Préparation: the top tile of each of the 5 company piles, shuffled, goes on spaces 1-5, the
    next five on 6-10, …; only spaces 1-10 are face up."""
    for seed in range(20):
        s = new_state(4, seed=seed)
        assert sorted(s.track) == list(range(35))
        for b in range(7):
            block = s.track[5 * b : 5 * b + 5]
            assert sorted(t // 7 for t in block) == [0, 1, 2, 3, 4]
        assert s.revealed == 10


def test_face_up_quick_setup():
    """Mise en place alternative: every tile face up on its numbered space; nothing to reveal."""
    s = new_state(3, setup="face_up")
    assert s.revealed == 35
    assert s.track == list(GAME.rules_for(GAME.default_components({})).face_up_layout)


# ---------------------------------------------------------------- A. Vente aux enchères


def test_auction_opens_left_of_auctioneer_and_bids_capped_by_bills():
    """A: the player to the auctioneer's left opens; any amount up to the bills one holds."""
    s = new_state(4)
    d = R.decision(s)
    assert d.seat == 1
    assert d.moves[0] == PASS_BID
    assert [m.amount for m in d.moves[1:]] == list(range(1, 16))
    assert_illegal(s, 1, bid(16), "may not exceed the bills you hold")
    assert_illegal(s, 2, bid(3), )  # not seat 2's turn


def test_each_bid_must_cover_the_previous():
    """A: « tous les joueurs couvrent maintenant l'enchère précédente »."""
    s = new_state(4)
    R.apply(s, 1, bid(4))
    assert_illegal(s, 2, bid(4), "cover the previous one (4)")
    assert R.decision(s).moves[1].amount == 5


def test_auction_continues_until_one_bidder_remains():
    """A (RULINGS 1): bidding goes round until one player remains; passing eliminates."""
    s = new_state(4)  # auctioneer 0; order 1, 2, 3, 0
    R.apply(s, 1, bid(2))
    R.apply(s, 2, bid(3))
    R.apply(s, 3, PASS_BID)
    R.apply(s, 0, bid(4))
    assert s.phase == R.AUCTION and s.current == 1  # second circuit, seat 3 skipped
    R.apply(s, 1, PASS_BID)
    assert s.current == 2
    R.apply(s, 2, bid(5))
    assert s.current == 0  # 1 and 3 are out
    R.apply(s, 0, PASS_BID)
    assert s.phase == R.ACTIONS and s.first_player == 2


def test_payment_one_bill_at_a_time_clockwise_to_opponents():
    """A: the winner hands out bills one at a time clockwise from the left neighbour, to
    opponents only (« Il ne peut s'attribuer de lettre de change ! »)."""
    s = new_state(4)
    lot = list(s.lot)
    hand2 = list(s.hands[2])
    R.apply(s, 1, PASS_BID)
    R.apply(s, 2, bid(5))
    R.apply(s, 3, PASS_BID)
    R.apply(s, 0, PASS_BID)
    # seat 2 pays 5: seat 3, 0, 1, 3, 0
    assert s.bills == [17, 16, 10, 17]
    assert sum(s.bills) == 60
    assert s.hands[2] == [a + b for a, b in zip(hand2, lot)]
    assert s.first_player == 2 and s.current == 2 and sum(s.lot) == 0


def test_all_pass_keeps_the_lot_and_first_player():
    """A, remark: if everybody passes the revealed cards stay and are auctioned with the next
    ones; the first player does not change; in the first auction the auctioneer becomes first
    player."""
    s = new_state(3, seed=3)
    lot1 = list(s.lot)
    all_pass(s)
    assert s.first_player == 0 and s.phase == R.ACTIONS and s.lot == lot1
    for _ in range(3):
        R.apply(s, s.current, DRAW_CARDS)
    # round 2: the first player of the last round is the auctioneer; the lot grows
    assert s.round == 2 and s.auctioneer == 0
    assert sum(s.lot) == sum(lot1) + s.die
    all_pass(s)
    assert s.first_player == 0


def test_auctioneer_is_previous_first_player():
    """Aperçu d'un tour: « Le premier joueur du dernier tour lance le dé »."""
    s = new_state(3)
    R.apply(s, 1, PASS_BID)
    R.apply(s, 2, bid(1))
    R.apply(s, 0, PASS_BID)
    assert s.first_player == 2
    for _ in range(3):
        R.apply(s, s.current, DRAW_CARDS)
    assert s.round == 2 and s.auctioneer == 2 and s.current == 0


def test_min_bid_option():
    """RULINGS 2: min_bid 0 allows an opening bid of nothing."""
    s = new_state(3, min_bid=0)
    assert R.decision(s).moves[1] == bid(0)
    s = new_state(3)
    assert_illegal(s, 1, bid(0), "minimum bid")


def test_die_sized_lot():
    """A: the auctioneer rolls the die and reveals that many ship cards."""
    for seed in range(10):
        s = new_state(4, seed=seed)
        assert sum(s.lot) == s.die


# ---------------------------------------------------------------- B. Actions des joueurs


def test_draw_two_cards_ends_the_turn():
    """B: « Il pioche les 2 cartes de la pioche. Le coup est alors terminé. »"""
    s = action_state(3)
    pile = len(s.draw_pile)
    R.apply(s, 0, DRAW_CARDS)
    assert sum(s.hands[0]) == 2 and len(s.draw_pile) == pile - 2 and s.current == 1


def test_draw_reshuffles_discards():
    """Remark: when the pile runs out, the discards are shuffled into a new pile."""
    s = action_state(3)
    s.draw_pile = [EN]
    s.discards = [0, 3, 0, 0, 0]
    R.apply(s, 0, DRAW_CARDS)
    assert s.hands[0] == [1, 1, 0, 0, 0]
    assert s.discards == [0] * 5 and s.draw_pile == [DK, DK]


def test_draw_with_nothing_left():
    """RULINGS 11: with no pile and no discards, drawing is still the legal action."""
    s = action_state(3)
    s.draw_pile, s.discards = [], [0] * 5
    assert DRAW_CARDS in R.decision(s).moves
    R.apply(s, 0, DRAW_CARDS)
    assert s.hands[0] == [0] * 5 and s.current == 1


def test_case_1_majority_already_held_allows_any_card():
    """1. Poser des cartes, case 1: with a majority at the start of the turn any card may be laid
    (« Le joueur a déjà la majorité danoise et joue une carte quelconque »)."""
    s = action_state(3)
    s.face_up[0][DK] = 2
    s.face_up[1][DK] = 1
    s.hands[0] = [1, 0, 0, 0, 1]
    assert set(kinds(R.decision(s))) == {"DrawCards", "PlayCard"}
    R.apply(s, 0, PLAY_CARD[SE])
    assert R.seal_holder(s, SE) == 0 and R.seal_holder(s, DK) == 0


def test_case_2_must_build_a_majority():
    """Case 2: without a majority the player must create one by laying the right cards (« en
    constitue une en jouant une carte danoise »); offered cards keep that possible."""
    s = action_state(3)
    s.face_up[1][DK] = 1
    s.hands[0] = [0, 2, 0, 0, 0]
    d = R.decision(s)
    assert PLAY_CARD[DK] in d.moves
    R.apply(s, 0, PLAY_CARD[DK])
    # a tie is not a majority: no merchant move yet, only another card
    assert R.decision(s).moves == [PLAY_CARD[DK]]
    R.apply(s, 0, PLAY_CARD[DK])
    assert R.seal_holder(s, DK) == 0


def test_cannot_play_without_reachable_majority_must_draw():
    """« Le joueur qui ne possède pas de majorité ou ne peut en constituer une n'a pas le droit
    de jouer de cartes, mais doit exécuter l'autre action »: a tie is not enough."""
    s = action_state(3)
    s.face_up[1] = [2, 2, 2, 2, 2]
    s.hands[0] = [2, 1, 0, 0, 0]
    assert R.decision(s).moves == [DRAW_CARDS]
    assert_illegal(s, 0, PLAY_CARD[EN], "strict majority", "draw 2")


def test_cannot_lay_a_card_not_held():
    s = action_state(3)
    s.hands[0] = [0, 3, 0, 0, 0]
    assert_illegal(s, 0, PLAY_CARD[FR], "no France ship card")


def test_seal_taken_from_previous_holder():
    """« il prend (…) à celui de ses adversaires qui possédait cette majorité jusque-là) le sceau »."""
    s = action_state(3)
    s.face_up[1][NL] = 2
    assert R.seal_holder(s, NL) == 1
    s.hands[0] = [0, 0, 0, 3, 0]
    for _ in range(3):
        R.apply(s, 0, PLAY_CARD[NL])
    assert R.seal_holder(s, NL) == 0 and R.seals_of(s, 1) == []


def test_seal_returns_to_board_on_tie_with_holder():
    """« Si (…) un joueur obtient un pat avec le détenteur actuel du sceau, celui-ci doit remettre
    sur le plateau de jeu le sceau »."""
    s = action_state(3)
    s.face_up[1][NL] = 2
    s.face_up[0][FR] = 1  # seat 0 has the French majority (case 1)
    s.hands[0] = [0, 0, 0, 2, 0]
    R.apply(s, 0, PLAY_CARD[NL])
    R.apply(s, 0, PLAY_CARD[NL])
    assert R.seal_holder(s, NL) == -1
    view = GAME.view(s, 2)
    assert list(view.players[1].seals) == [] and list(view.players[0].seals) == [FR + 1]


def test_cannon_and_company_markers_example():
    """Example: Anna lays 4 Dutch and 2 French cards: the Dutch marker +4, the French +2, the cannon
    +6."""
    s = action_state(4)
    s.hands[0] = [0, 0, 2, 4, 0]
    for c in [NL, NL, NL, NL, FR, FR]:
        R.apply(s, 0, PLAY_CARD[c])
    v = GAME.view(s, None)
    assert v.cannon == 6 and v.face_up_total == 6
    assert list(v.players[0].face_up.count) == [0, 0, 2, 4, 0]


def test_cannon_stays_on_25():
    """« Si plus de 25 cartes sont posées, le canon reste sur la dernière case de l'échelle (25) »;
    the real count prevails for the rules."""
    s = action_state(4)
    s.face_up[1] = [6, 6, 6, 6, 6]
    v = GAME.view(s, None)
    assert v.cannon == 25 and v.face_up_total == 30


# ---------------------------------------------------------------- 2. Avancer son commerçant


def test_advance_to_next_stall_of_sealed_company_skipping_others():
    """2: the merchant goes to the next stall of the sealed company; empty spaces, other companies'
    tiles and other merchants are skipped; the tile is taken and a crate goes to the counting
    house of its good on its company's space."""
    s = action_state(3)
    set_track(s, {1: tile(EN, TEA), 3: tile(DK, SILK), 5: tile(DK, PEPPER), 9: tile(FR, TEA)})
    s.merchant[1] = 2  # another merchant stands in the way
    s.hands[0] = [0, 1, 0, 0, 0]
    R.apply(s, 0, PLAY_CARD[DK])
    assert R.decision(s).moves == [ADVANCE[DK]]
    R.apply(s, 0, ADVANCE[DK])
    assert s.merchant[0] == 3 and s.track[2] == -1
    assert s.crate_owner[tile(DK, SILK)] == 0 and s.crates_left[0] == 11
    # the first tile of DK was new to the player: exchange or keep
    assert s.phase == R.EXCHANGE and set(kinds(R.decision(s))) == {"ExchangeTiles", "KeepTiles"}


def test_never_backwards():
    """« Les joueurs déplacent toujours leur commerçant en avant (…) On n'a pas le droit de
    reculer. »"""
    s = action_state(3)
    set_track(s, {2: tile(DK, SILK), 9: tile(EN, TEA)})
    s.merchant[0] = 5
    s.face_up[0][DK] = 1
    s.face_up[0][EN] = 1
    s.hands[0] = [1, 0, 0, 0, 0]
    R.apply(s, 0, PLAY_CARD[EN])
    assert ADVANCE[DK] not in R.decision(s).moves
    assert ADVANCE[EN] in R.decision(s).moves
    assert_illegal(s, 0, ADVANCE[DK], "no Denmark stall tile lies ahead")


def test_choose_among_several_seals():
    """« Si le joueur possède plusieurs sceaux, il doit opter pour l'une de ces compagnies. »"""
    s = action_state(3)
    set_track(s, {4: tile(SE, TEA), 6: tile(DK, SILK)})
    s.face_up[0][DK] = 1
    s.hands[0] = [0, 0, 0, 0, 1]
    R.apply(s, 0, PLAY_CARD[SE])
    assert set(R.decision(s).moves) >= {ADVANCE[DK], ADVANCE[SE]}


def test_advance_requires_seal_and_a_laid_card():
    s = action_state(3)
    set_track(s, {4: tile(SE, TEA), 6: tile(DK, SILK)})
    s.face_up[0][DK] = 1
    s.hands[0] = [0, 0, 0, 0, 1]
    assert_illegal(s, 0, ADVANCE[DK], "lay at least one ship card")
    R.apply(s, 0, PLAY_CARD[SE])
    assert_illegal(s, 0, ADVANCE[EN], "must hold the England seal")
    assert_illegal(s, 0, DRAW_CARDS, "only one of the two actions")


def test_reveal_next_five_when_landing_in_last_five_face_up():
    """2: « Si un commerçant a été avancé sur l'une des 5 dernières tuiles face visible, les 5
    prochaines tuiles sur le plateau de jeu sont découvertes. »"""
    s = action_state(3, seed=11)
    assert s.revealed == 10
    first_dk = next(i for i in range(1, 11) if s.track[i - 1] // 7 == DK)
    s.hands[0] = [0, 1, 0, 0, 0]
    R.apply(s, 0, PLAY_CARD[DK])
    R.apply(s, 0, ADVANCE[DK])
    assert s.merchant[0] == first_dk
    assert s.revealed == (15 if first_dk > 5 else 10)
    # landing in 6..10 reveals 11..15
    s2 = action_state(3, seed=11)
    s2.merchant[0] = 5
    target = next(i for i in range(6, 11) if s2.track[i - 1] // 7 == DK)
    s2.hands[0] = [0, 1, 0, 0, 0]
    R.apply(s2, 0, PLAY_CARD[DK])
    R.apply(s2, 0, ADVANCE[DK])
    assert s2.merchant[0] == target and s2.revealed == 15


def test_no_crate_left():
    """RULINGS 8: with no crate left the tile is still taken, and no crate is placed."""
    s = action_state(3)
    set_track(s, {3: tile(DK, SILK)})
    s.crates_left[0] = 0
    s.hands[0] = [0, 1, 0, 0, 0]
    R.apply(s, 0, PLAY_CARD[DK])
    R.apply(s, 0, ADVANCE[DK])
    assert s.crate_owner[tile(DK, SILK)] == -1 and s.merchant[0] == 3


# ---------------------------------------------------------------- 3. Echanger des tuiles


def _take(s, seat, company, good, space=3):
    set_track(s, {space: tile(company, good)})
    s.hands[seat] = [0] * 5
    s.hands[seat][company] = 1
    s.face_up[seat][company] = max(s.face_up[seat][company], 0)
    R.apply(s, seat, PLAY_CARD[company])
    R.apply(s, seat, ADVANCE[company])


def test_exchange_example_three_companies_six_gold():
    """3, example: a Danish tile, new to the player; he hands in tiles of 3 different companies
    for 6 gold and keeps his second Swedish tile for later."""
    s = action_state(3)
    s.tiles[0] = [tile(SE, TEA), tile(SE, SILK), tile(FR, COTTON)]
    _take(s, 0, DK, SILK)
    R.apply(s, 0, EXCHANGE_TILES)
    assert s.gold[0] == 6
    assert s.tiles[0] == [tile(SE, SILK)]


def test_exchange_only_when_new_company():
    """3: « il faut cependant que la nouvelle tuile provienne d'une compagnie dont le joueur ne
    possède actuellement aucune autre tuile » (Anna's example): otherwise she must keep."""
    s = action_state(3)
    s.tiles[0] = [tile(DK, TEA), tile(FR, TEA), tile(NL, TEA), tile(SE, TEA)]
    _take(s, 0, DK, SILK)
    assert s.phase == R.ACTIONS and s.current == 1  # no exchange decision
    assert len(s.tiles[0]) == 5 and s.gold[0] == 0


@pytest.mark.parametrize("k,gold", [(1, 1), (2, 3), (3, 6), (4, 10), (5, 15)])
def test_exchange_gold_table(k, gold):
    """3: 1 tile 1 gold, 2 companies 3, 3 → 6, 4 → 10, 5 → 15."""
    s = action_state(3)
    s.tiles[0] = [tile(c, TEA) for c in (DK, FR, NL, SE)[: k - 1]]
    _take(s, 0, EN, SILK)
    R.apply(s, 0, EXCHANGE_TILES)
    assert s.gold[0] == gold and s.tiles[0] == []


def test_keep_tiles():
    s = action_state(3)
    _take(s, 0, EN, SILK)
    R.apply(s, 0, KEEP_TILES)
    assert s.tiles[0] == [tile(EN, SILK)] and s.gold[0] == 0 and s.current == 1


# ---------------------------------------------------------------- Attaque de pirates


def test_pirates_example_danish_majority_sunk():
    """Attaque de pirates, example: the cannon reaches 25; the Danish company has the most laid
    cards; its 11 cards are collected; the markers move accordingly."""
    s = action_state(4)
    s.face_up[1] = [2, 6, 1, 0, 0]
    s.face_up[2] = [2, 5, 2, 0, 0]
    s.face_up[3] = [0, 0, 2, 2, 1]
    s.face_up[0] = [0, 0, 0, 0, 1]  # 24 on the table, seat 0 has the Swedish majority
    set_track(s, {3: tile(SE, TEA)})
    s.hands[0] = [0, 0, 0, 0, 1]
    R.apply(s, 0, PLAY_CARD[SE])
    R.apply(s, 0, ADVANCE[SE])
    R.apply(s, 0, KEEP_TILES)
    assert s.discards == [0, 11, 0, 0, 0]
    assert R.company_totals(s) == [4, 0, 5, 2, 3]
    assert GAME.view(s, None).cannon == 14


def test_pirates_threshold_21_with_three_players():
    """« Si le canon atteint ou dépasse la case 21 (à trois joueurs) ou 25 (à quatre ou cinq) »."""
    s = action_state(3)
    s.face_up[1] = [5, 5, 5, 5, 0]  # 20: no attack after a draw
    R.apply(s, 0, DRAW_CARDS)
    assert s.discards == [0] * 5
    s.face_up[2][SE] = 1  # 21 now: the next turn ends with an attack
    R.apply(s, 1, DRAW_CARDS)
    assert s.discards == [5, 5, 5, 5, 0], "every company tied for most is sunk"
    s4 = action_state(4)
    s4.face_up[1] = [6, 6, 6, 5, 0]  # 23 < 25
    R.apply(s4, 0, DRAW_CARDS)
    assert s4.discards == [0] * 5


def test_pirates_once_per_turn_unless_option():
    """RULINGS 10: one attack per check by default; pirates_repeat attacks until below."""
    for repeat, expected in [(False, [7, 0, 0, 0, 0]), (True, [7, 6, 6, 6, 6])]:
        s = action_state(3, pirates_repeat=repeat)
        s.face_up[1] = [7, 6, 6, 6, 6]
        R.apply(s, 0, DRAW_CARDS)
        assert s.discards == expected


def test_seal_returns_after_pirates():
    """RULINGS 6: after the attack nobody has the sunk company's cards, so its seal is free."""
    s = action_state(3)
    s.face_up[1] = [9, 6, 6, 0, 0]
    assert R.seal_holder(s, EN) == 1
    R.apply(s, 0, DRAW_CARDS)
    assert R.seal_holder(s, EN) == -1 and R.seal_holder(s, DK) == 1


# ---------------------------------------------------------------- Fin du jeu


def test_arrival_when_no_sealed_stall_ahead_example():
    """Fin du jeu, example: Anna holds only the Danish seal and no Danish stall lies ahead: she
    moves to the arrival tile (4 gold at the end). With the Swedish seal too she would have to
    advance to the Swedish stall."""
    s = action_state(3)
    set_track(s, {12: tile(SE, TEA)})
    s.merchant[0] = 10
    s.face_up[0][DK] = 2
    s.hands[0] = [0, 1, 0, 0, 1]
    R.apply(s, 0, PLAY_CARD[DK])
    assert R.decision(s).moves[-1] == TAKE_ARRIVAL
    # with the Swedish seal as well she must go to the Swedish stall
    R.apply(s, 0, PLAY_CARD[SE])
    assert TAKE_ARRIVAL not in R.decision(s).moves
    assert_illegal(s, 0, TAKE_ARRIVAL, "Sweden seal", "must advance")


def test_arrival_ends_game_at_end_of_round_and_restricts_later_players():
    """Fin du jeu: the round is played to its end; players still to act may lay cards only if they
    can still reach a stall with a seal; the arrival taker cannot exchange; the round ends the
    game and scores 4 for the arrival tile."""
    s = action_state(3, turn_of=0)
    set_track(s, {20: tile(FR, TEA)})
    s.merchant = [25, 10, 10]
    s.face_up[0][DK] = 1
    s.hands[0] = [0, 1, 0, 0, 0]
    s.tiles[0] = [tile(EN, TEA)]
    R.apply(s, 0, PLAY_CARD[DK])
    R.apply(s, 0, TAKE_ARRIVAL)
    assert s.arrival_holder == 0 and s.merchant[0] == 36 and s.phase == R.ACTIONS
    # seat 1 has a reachable Danish majority but no Danish stall ahead: must draw
    s.hands[1] = [0, 3, 0, 0, 0]
    assert R.decision(s).moves == [DRAW_CARDS]
    assert_illegal(s, 1, PLAY_CARD[DK], "arrival tile is taken")
    R.apply(s, 1, DRAW_CARDS)
    # seat 2 can reach the French stall
    s.hands[2] = [0, 0, 1, 0, 0]
    assert PLAY_CARD[FR] in R.decision(s).moves
    R.apply(s, 2, PLAY_CARD[FR])
    assert TAKE_ARRIVAL not in R.decision(s).moves
    R.apply(s, 2, ADVANCE[FR])
    R.apply(s, 2, KEEP_TILES)
    assert s.phase == R.OVER
    res = GAME.result(s)
    assert res.details[0]["arrival"] == 4 and res.details[0]["exchange"] == 0


def test_round_limit():
    """RULINGS 13: the game ends and is scored after max_rounds rounds."""
    s = new_state(3, max_rounds=2)
    for _ in range(2):
        all_pass(s)
        for _ in range(3):
            R.apply(s, s.current, DRAW_CARDS)
    assert s.phase == R.OVER and "round limit" in s.end_reason


# ---------------------------------------------------------------- Décompte


def _scored(n=4):
    s = action_state(n)
    return s


def _finish(s):
    R.final_scoring(s, "test")
    return GAME.result(s)


def test_scoring_single_majority_silk_13():
    """Décompte, example: Orange has the silk majority and receives 13; the others nothing."""
    s = _scored()
    s.crate_owner[tile(EN, SILK)] = 2
    s.crate_owner[tile(DK, SILK)] = 2
    s.crate_owner[tile(FR, SILK)] = 1
    res = _finish(s)
    assert res.details[2]["goods"] == {"silk": 13}
    assert res.details[1]["goods"] == {}


def test_scoring_three_way_tie_each_6():
    """Example: red, yellow and blue share the silk majority: each receives 6."""
    s = _scored()
    for seat, c in [(0, EN), (1, DK), (2, FR)]:
        s.crate_owner[tile(c, SILK)] = seat
    res = _finish(s)
    assert [res.details[k]["goods"].get("silk", 0) for k in range(4)] == [6, 6, 6, 0]


def test_scoring_two_way_tie_each_6_third_nothing():
    """Example: yellow and blue share the majority (6 each); red receives nothing."""
    s = _scored()
    s.crate_owner[tile(EN, SILK)] = 1
    s.crate_owner[tile(DK, SILK)] = 1
    s.crate_owner[tile(FR, SILK)] = 2
    s.crate_owner[tile(NL, SILK)] = 2
    s.crate_owner[tile(SE, SILK)] = 0
    res = _finish(s)
    assert [res.details[k]["goods"].get("silk", 0) for k in range(4)] == [0, 6, 6, 0]


def test_scoring_goods_values_in_order():
    """Décompte table: tea 10, cotton 11, porcelain 12, silk 13, ginger 14, nutmeg 15, pepper 16
    (the last three inferred; see the component sheet)."""
    s = _scored()
    for g in range(7):
        s.crate_owner[tile(EN, g)] = 0
    res = _finish(s)
    assert res.details[0]["goods"] == {
        "tea": 10, "cotton": 11, "porcelain": 12, "silk": 13, "ginger": 14, "nutmeg": 15, "pepper": 16,
    }
    s = _scored()
    for g in (TEA, COTTON, PORCELAIN, GINGER, PEPPER):
        s.crate_owner[tile(EN, g)] = 0
        s.crate_owner[tile(DK, g)] = 1
    res = _finish(s)
    assert res.details[1]["goods"] == {"tea": 5, "cotton": 5, "porcelain": 6, "ginger": 7, "pepper": 8}


def test_scoring_bills_majority_and_tie():
    """Décompte: most bills 5 gold; tied, 2 each."""
    s = _scored()
    s.bills = [20, 15, 15, 10]
    res = _finish(s)
    assert [d["bills"] for d in res.details] == [5, 0, 0, 0]
    s = _scored()
    s.bills = [18, 18, 14, 10]
    res = _finish(s)
    assert [d["bills"] for d in res.details] == [2, 2, 0, 0]


def test_scoring_shared_victory_and_total():
    """« Le joueur possédant le plus de pièces d'or (…) gagne. En cas d'égalité, la victoire est
    partagée. »"""
    s = _scored(3)
    s.gold = [10, 10, 3]
    s.bills = [15, 15, 15]
    res = _finish(s)
    assert res.scores == [12, 12, 5]
    assert res.winners == [0, 1] and res.ranks == [1, 1, 3]


def test_final_scoring_never_triggers_pirates():
    """Remark: no pirate attack during the final scoring, whatever the number of cards."""
    s = _scored(3)
    s.face_up[0] = [9, 9, 9, 0, 0]
    _finish(s)
    assert s.discards == [0] * 5


@pytest.mark.parametrize("space,revealed_after", [(5, 10), (6, 15), (10, 15)])
def test_reveal_boundary_is_the_last_five_face_up(space, revealed_after):
    """2: only landing on one of the LAST five face-up tiles (6-10 of 1-10) reveals 11-15."""
    s = action_state(3)
    layout = {i + 1: t for i, t in enumerate(s.track)}
    # put a Danish tile on `space`, and make every earlier tile non-Danish
    dk = [sp for sp, t in layout.items() if t // 7 == DK]
    swap_from = next(sp for sp in dk if sp != space) if layout[space] // 7 != DK else space
    layout[space], layout[swap_from] = layout[swap_from], layout[space]
    for sp in range(1, space):
        if layout[sp] // 7 == DK:
            layout[sp] = -1
    set_track(s, {sp: t for sp, t in layout.items() if t >= 0}, revealed=10)
    s.hands[0] = [0, 1, 0, 0, 0]
    R.apply(s, 0, PLAY_CARD[DK])
    R.apply(s, 0, ADVANCE[DK])
    assert s.merchant[0] == space and s.revealed == revealed_after
