"""A heuristic Batavia bot: reads its ``batavia.View`` and plays one-ply greedy.

Everything is valued in gold (the game's score):

* **Stalls.** A stall tile (company C, good G) puts a crate in counting house G. Its crate is
  worth the change in what the house's majority pays us (10..16 for tea..pepper, half when
  tied), plus a little for holding the lead in a house that still has empty spaces. Its tile is
  worth the gold it adds to our next exchange set (1/3/6/10/15 for 1..5 companies).
* **Laying cards.** For each company we could seal (strict majority of face-up cards) with the
  cards in hand, the plan "lay the cards, advance to the next stall of that company" is worth the
  stall's value minus a price per card laid. The best plan is played when it beats drawing
  two cards; the bot lays exactly the cards the plan needs.
* **Auctions.** The lot is valued per card (more for cards of companies we are close to sealing)
  plus the first-player ship; the bot raises by the minimum while the price stays below that
  value and keeps a reserve of bills (the bills majority pays 5 at the end).
* **Exchanging tiles.** Exchange when the set is big (4-5 companies), or when it is 3 and the
  road is half gone, or anything near the end (kept tiles score nothing at the end).
* **The arrival tile** (4 gold, ends the game this round) is taken only when forced or when the
  bot estimates it is ahead.

It sees only what its seat may see, exactly as a bot written in any other language would.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from referee.v1 import batavia_pb2 as bt
from referee.v1 import referee_pb2

from ..bot import Bot

#: Majority gold per counting house (Good order), and the share when tied.
HOUSE_GOLD: dict[int, int] = {bt.TEA: 10, bt.COTTON: 11, bt.PORCELAIN: 12, bt.SILK: 13,
              bt.GINGER: 14, bt.NUTMEG: 15, bt.PEPPER: 16}
HOUSE_TIE: dict[int, int] = {bt.TEA: 5, bt.COTTON: 5, bt.PORCELAIN: 6, bt.SILK: 6,
             bt.GINGER: 7, bt.NUTMEG: 7, bt.PEPPER: 8}
#: Gold for exchanging tiles of 0..5 different companies.
EXCHANGE_GOLD = (0, 1, 3, 6, 10, 15)
COMPANIES = (bt.ENGLAND, bt.DENMARK, bt.FRANCE, bt.NETHERLANDS, bt.SWEDEN)
ARRIVAL_SPACE = 36


@dataclass(frozen=True, slots=True)
class Weights:
    """Tuning knobs, in gold."""

    card_cost: float = 1.6  # price of laying one card from hand
    draw_value: float = 2.6  # value of drawing two cards instead of moving
    hand_bonus: float = 0.5  # extra draw value per card below a hand of 4
    skip_cost: float = 0.08  # per space the merchant jumps (stalls left behind for good)
    lead_hold: float = 0.2  # share of a house's gold for a lead that can still be contested
    card_bid_value: float = 1.0  # bills a lot card is worth at auction
    seal_card_bonus: float = 0.5  # extra for a lot card of a company we can nearly seal
    first_player_value: float = 0.5
    bill_reserve: int = 3  # keep this many bills when bidding
    unknown_stall: float = 6.0  # expected value of a face-down stall


class GreedyBataviaBot(Bot):
    """One-ply greedy Batavia bot (see the module docstring for its valuation)."""

    games = ("batavia",)

    name = "greedy-batavia"

    def __init__(self, seed: int | None = None, weights: Weights | None = None):
        self.rng = random.Random(seed)
        self.w = weights or Weights()

    def knobs(self) -> dict[str, float]:
        """The bot's tuning weights by name: what a search's rollouts hand the engine's copy
        of this bot (``Game.heuristic_policy``) so that it plays exactly as this one."""
        return asdict(self.w)

    # ------------------------------------------------------------------ entry point
    def choose(self, decision: referee_pb2.Decision) -> referee_pb2.Move:
        moves = decision.legal_moves
        if not decision.view.HasField("batavia") or not all(m.HasField("batavia") for m in moves):
            return moves[self.rng.randrange(len(moves))]  # not a Batavia match: play anything
        view = decision.view.batavia
        by_kind: dict[str, list[referee_pb2.Move]] = {}
        for m in moves:
            by_kind.setdefault(m.batavia.WhichOneof("kind"), []).append(m)
        if "bid" in by_kind or "pass_bid" in by_kind:
            return self._auction(view, by_kind)
        if "exchange_tiles" in by_kind or "keep_tiles" in by_kind:
            return self._exchange(view, by_kind)
        if by_kind.keys() & {"draw_cards", "play_card", "advance_merchant", "take_arrival"}:
            return self._action(view, by_kind)
        return moves[self.rng.randrange(len(moves))]

    # ------------------------------------------------------------------ helpers on the view
    @staticmethod
    def _me(view: bt.View) -> bt.PlayerPublic:
        for p in view.players:
            if p.seat == view.seat:
                return p
        raise ValueError(f"seat {view.seat} is not among the view's players")

    @staticmethod
    def _others_max(view: bt.View, index: int) -> int:
        return max((p.face_up.count[index] for p in view.players if p.seat != view.seat),
                   default=0)

    def _cards_to_seal(self, view: bt.View, me: bt.PlayerPublic, company: int) -> int:
        """Cards of ``company`` still to lay for a strict majority (0 if we hold the seal)."""
        if company in me.seals:
            return 0
        i = company - 1
        return max(0, self._others_max(view, i) + 1 - me.face_up.count[i])

    def _house_value(self, view: bt.View, good: int) -> float:
        """Gold a crate in house ``good`` adds for us, now and in prospect."""
        house = view.counting_houses[good - 1]
        counts: dict[int, int] = {}
        for owner in house.crate_owner:
            if owner >= 0:
                counts[owner] = counts.get(owner, 0) + 1
        mine = counts.get(view.seat, 0)
        others = max((n for s, n in counts.items() if s != view.seat), default=0)
        empty = sum(1 for owner in house.crate_owner if owner < 0)
        gold, tie = HOUSE_GOLD[good], HOUSE_TIE[good]

        def pays(m: int) -> float:
            if m == 0:
                return 0.0
            return gold if m > others else tie if m == others else 0.0

        delta = pays(mine + 1) - pays(mine)
        if mine + 1 >= others:
            delta += self.w.lead_hold * gold * (empty - 1) / 4
        return delta

    @staticmethod
    def _tile_value(me: bt.PlayerPublic, company: int) -> float:
        held = {t.company for t in me.tiles}
        if company in held:
            return 0.5  # seeds a later set
        size = min(len(held) + 1, 5)
        return float(EXCHANGE_GOLD[size] - EXCHANGE_GOLD[size - 1])

    def _next_stall(self, view: bt.View, start: int, company: int) -> tuple[float, int] | None:
        """(value, distance) of the stall ``company``'s seal would take us to, or None."""
        me = self._me(view)
        unknown_before = 0
        for stall in view.stalls:
            if stall.space <= start:
                continue
            if stall.state == bt.FACE_DOWN:
                unknown_before += 1
                continue
            if stall.state == bt.FACE_UP and stall.company == company:
                value = self._house_value(view, stall.good) + self._tile_value(me, company)
                if unknown_before:  # a hidden stall on the way may be this company's
                    p_hidden = 1 - 0.8**unknown_before
                    value = p_hidden * self.w.unknown_stall + (1 - p_hidden) * value
                return value - self.w.skip_cost * (stall.space - start), stall.space - start
        if unknown_before:
            return self.w.unknown_stall * 0.7, unknown_before
        return None

    def _progress(self, view: bt.View) -> float:
        """How far the road is gone, 0..1: share of stall tiles taken or left behind."""
        rear = min(p.merchant_space for p in view.players)
        gone = sum(1 for s in view.stalls if s.state == bt.TAKEN or s.space <= rear)
        return gone / max(1, len(view.stalls))

    def _estimate(self, view: bt.View) -> dict[int, float]:
        """Rough final scores: gold, current house majorities, bills majority, arrival."""
        score = {p.seat: float(p.gold) for p in view.players}
        for house in view.counting_houses:
            counts: dict[int, int] = {}
            for owner in house.crate_owner:
                if owner >= 0:
                    counts[owner] = counts.get(owner, 0) + 1
            if counts:
                top = max(counts.values())
                leaders = [s for s, n in counts.items() if n == top]
                for s in leaders:
                    score[s] += (HOUSE_GOLD[house.good] if len(leaders) == 1
                                 else HOUSE_TIE[house.good])
        top_bills = max(p.bills for p in view.players)
        rich = [p.seat for p in view.players if p.bills == top_bills]
        for s in rich:
            score[s] += 5 if len(rich) == 1 else 2
        for p in view.players:
            if p.has_arrival_tile:
                score[p.seat] += 4
        return score

    # ------------------------------------------------------------------ auction
    def _auction(self, view: bt.View, by_kind) -> referee_pb2.Move:
        me = self._me(view)
        lot = view.auction.lot.count
        value = self.w.first_player_value
        for i, n in enumerate(lot):
            if not n:
                continue
            per_card = self.w.card_bid_value
            need = self._cards_to_seal(view, me, COMPANIES[i])
            if 0 < need <= view.my_hand.count[i] + n:
                per_card += self.w.seal_card_bonus
            value += n * per_card
        if sum(view.my_hand.count) <= 2:
            value += 1.0
        cap = min(int(value), me.bills - self.w.bill_reserve)
        bids = sorted(by_kind.get("bid", []), key=lambda m: m.batavia.bid.amount)
        if bids and bids[0].batavia.bid.amount <= cap:
            return bids[0]
        if "pass_bid" in by_kind:
            return by_kind["pass_bid"][0]
        return bids[0]

    # ------------------------------------------------------------------ exchange
    def _exchange(self, view: bt.View, by_kind) -> referee_pb2.Move:
        me = self._me(view)
        companies = {t.company for t in me.tiles}
        if view.HasField("pending_tile"):
            companies.add(view.pending_tile.company)
        size = len(companies)
        progress = self._progress(view)
        exchange = (
            size >= 4
            or (size == 3 and progress >= 0.45)
            or (progress >= 0.7)
            or view.final_round
        )
        key = "exchange_tiles" if exchange and "exchange_tiles" in by_kind else "keep_tiles"
        if key not in by_kind:
            key = next(iter(by_kind))
        return by_kind[key][0]

    # ------------------------------------------------------------------ turn
    def _action(self, view: bt.View, by_kind) -> referee_pb2.Move:
        me = self._me(view)
        start = me.merchant_space
        played = sum(view.played_this_turn.count)
        hand = view.my_hand.count
        playable = {m.batavia.play_card.company: m for m in by_kind.get("play_card", [])}
        advances = {m.batavia.advance_merchant.company: m
                    for m in by_kind.get("advance_merchant", [])}

        # Value every plan: (value, first move of the plan).
        plans: list[tuple[float, referee_pb2.Move]] = []
        for company, move in advances.items():
            found = self._next_stall(view, start, company)
            plans.append((found[0] if found else 0.0, move))
        for company in COMPANIES:
            if company in advances:
                continue
            i = company - 1
            need = self._cards_to_seal(view, me, company)
            if need == 0 and company in me.seals:
                if played:
                    continue  # sealed and cards laid, yet no advance offered: no stall ahead
                need_cards, first = 1, self._filler_card(view, me, playable)
            else:
                if need == 0 or need > hand[i] or company not in playable:
                    continue
                need_cards, first = need, playable[company]
            if first is None:
                continue
            found = self._next_stall(view, start, company)
            if found is None:
                continue
            plans.append((found[0] - self.w.card_cost * need_cards, first))

        if "draw_cards" in by_kind:
            draw = self.w.draw_value + self.w.hand_bonus * max(0, 4 - sum(hand))
            plans.append((draw, by_kind["draw_cards"][0]))
        if "take_arrival" in by_kind:
            est = self._estimate(view)
            mine = est[view.seat] + 4
            best_other = max((v for s, v in est.items() if s != view.seat), default=0.0)
            plans.append((4.0 + (3.0 if mine > best_other else -8.0), by_kind["take_arrival"][0]))
        if plans:
            return max(plans, key=lambda p: p[0])[1]
        # Committed mid-turn with no plan valued: keep laying toward any seal, else anything.
        for key in ("advance_merchant", "play_card", "take_arrival"):
            if key in by_kind:
                return by_kind[key][0]
        return next(iter(by_kind.values()))[0]

    def _filler_card(self, view: bt.View, me: bt.PlayerPublic, playable) -> referee_pb2.Move | None:
        """The card to lay when we already hold a seal and just need to lay one: the one that
        brings another company closest to a seal, else from our largest holding."""
        best = None
        for company, move in playable.items():
            i = company - 1
            need = self._cards_to_seal(view, me, company)
            key = (need == 1, -need if need else -99, view.my_hand.count[i])
            if best is None or key > best[0]:
                best = (key, move)
        return best[1] if best else None
