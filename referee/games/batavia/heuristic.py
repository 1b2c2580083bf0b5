"""The greedy reference bot's choice, computed from the engine state (``Game.heuristic_policy``).

A search bot's rollouts play every seat as the game's greedy bot
(``referee_client.bots.greedy_batavia``); handing that bot a Decision message for every rollout
move costs far more than the move (docs/research/search-bot.md). This module makes the same
choice from the state at engine speed: each value below is the bot's, computed from exactly the
fields of the seat's View that the bot reads, in the same order, with the same arithmetic, so
ties fall the same way. It reads only what ``seat`` may see (its own hand; of others the table).

The bot's tuning knobs (its ``Weights``) come in as ``params`` from the caller, so they are kept
in one place; the component values the bot knows (a house's gold, the exchange rates, the bills
and the arrival tile) are the sheet's, which equal the bot's on the default sheet.
``tests/research/test_heuristic_policy.py`` checks that this answers exactly the SDK bot's move
at random positions of random games, at every seat count.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.core.contract import read_knobs

from .moves import (
    AdvanceMerchant,
    Bid,
    DrawCards,
    ExchangeTiles,
    KeepTiles,
    PassBid,
    PlayCard,
    TakeArrival,
)
from .state import EXCHANGE, N_COMPANIES, N_GOODS, OVER, State, max_other, seal_holder

_ACTION_KINDS = (DrawCards, PlayCard, AdvanceMerchant, TakeArrival)


def policy(params: Mapping[str, float]) -> Callable[[State, int, Sequence[Any]], Any]:
    """``choose(state, seat, moves)``: the move of ``moves`` (the decision's legal moves, in
    its order) the greedy bot with knobs ``params`` plays; None where the bot would pick at
    random (a decision of no kind it knows)."""
    w = read_knobs(_Knobs, params, "Batavia")

    def choose(state: State, seat: int, moves: Sequence[Any]) -> Any:
        return _Greedy(state, seat, w).choose(moves)

    return choose


@dataclass(frozen=True, slots=True)
class _Knobs:
    """The bot's knobs this policy needs (``Weights`` of the SDK's greedy Batavia bot)."""

    card_cost: float
    draw_value: float
    hand_bonus: float
    skip_cost: float
    lead_hold: float
    card_bid_value: float
    seal_card_bonus: float
    first_player_value: float
    bill_reserve: float
    unknown_stall: float



class _Greedy:
    """One decision's valuation (the SDK bot's methods, on the state). What the bot computes
    again for each plan (a company's cards to seal, a house's value, the next stall of each
    company) is computed once a decision here, with the same arithmetic."""

    __slots__ = ("_house", "_need", "_stalls", "rules", "s", "seat", "w")

    def __init__(self, state: State, seat: int, w: _Knobs):
        self.s = state
        self.seat = seat
        self.w = w
        self.rules = state.rules
        self._need: list[int] | None = None  # per company: cards still to lay for its seal
        self._house: dict[int, float] = {}
        self._stalls: list[tuple[float, int] | None] | None = None

    def choose(self, moves: Sequence[Any]) -> Any:
        kinds: dict[type, list[Any]] = {}
        for m in moves:
            kinds.setdefault(type(m), []).append(m)
        if Bid in kinds or PassBid in kinds:
            return self._auction(kinds)
        if ExchangeTiles in kinds or KeepTiles in kinds:
            return self._exchange(kinds)
        if any(k in kinds for k in _ACTION_KINDS):
            return self._action(kinds)
        return None

    # ------------------------------------------------------------------ the bot's helpers
    def _cards_to_seal(self, company: int) -> int:
        """0 if the seat holds the company's seal, else the cards it still lacks for a strict
        majority of face-up cards (the bot's ``_cards_to_seal``)."""
        need = self._need
        if need is None:
            s, seat = self.s, self.seat
            need = []
            for c in range(N_COMPANIES):
                if seal_holder(s, c) == seat:
                    need.append(0)
                    continue
                need.append(max(0, max_other(s, seat, c) + 1 - s.face_up[seat][c]))
            self._need = need
        return need[company]

    def _holds_seal(self, company: int) -> bool:
        return seal_holder(self.s, company) == self.seat

    def _crates(self, good: int) -> dict[int, int]:
        """Counting house ``good``'s crates per owning seat (its spaces are one per company)."""
        crate_owner = self.s.crate_owner
        counts: dict[int, int] = {}
        for c in range(N_COMPANIES):
            owner = crate_owner[c * N_GOODS + good]
            if owner >= 0:
                counts[owner] = counts.get(owner, 0) + 1
        return counts

    def _house_value(self, good: int) -> float:
        value = self._house.get(good)
        if value is not None:
            return value
        counts = self._crates(good)
        empty = N_COMPANIES - sum(counts.values())
        mine = counts.get(self.seat, 0)
        others = max((n for o, n in counts.items() if o != self.seat), default=0)
        gold, tie = self.rules.goods_gold[good]

        def pays(m: int) -> float:
            if m == 0:
                return 0.0
            return gold if m > others else tie if m == others else 0.0

        delta = pays(mine + 1) - pays(mine)
        if mine + 1 >= others:
            delta += self.w.lead_hold * gold * (empty - 1) / 4
        self._house[good] = delta
        return delta

    def _tile_value(self, company: int) -> float:
        held = {t // N_GOODS for t in self.s.tiles[self.seat]}
        if company in held:
            return 0.5
        size = min(len(held) + 1, 5)
        rates = self.rules.exchange_gold
        return float(rates.get(size, 0) - rates.get(size - 1, 0))

    def _next_stall(self, company: int) -> tuple[float, int] | None:
        """(value, distance) of the next face-up stall of ``company`` ahead of the seat's
        merchant (a face-down one on the way may be it), else a guess while face-down stalls
        remain, else None: the bot's ``_next_stall``, every company's in one pass."""
        if self._stalls is None:
            s, w = self.s, self.w
            start = s.merchant[self.seat]
            found: list[tuple[float, int] | None] = [None] * N_COMPANIES
            unknown_before = 0
            for space, tile in enumerate(s.track, start=1):
                if space <= start or tile < 0:
                    continue
                if space > s.revealed:  # face down
                    unknown_before += 1
                    continue
                c = tile // N_GOODS
                if found[c] is not None:
                    continue
                value = self._house_value(tile % N_GOODS) + self._tile_value(c)
                if unknown_before:  # a hidden stall on the way may be this company's
                    p_hidden = 1 - 0.8**unknown_before
                    value = p_hidden * w.unknown_stall + (1 - p_hidden) * value
                found[c] = (value - w.skip_cost * (space - start), space - start)
            if unknown_before:  # companies without a face-up stall ahead: a guess
                guess = (w.unknown_stall * 0.7, unknown_before)
                found = [f if f is not None else guess for f in found]
            self._stalls = found
        return self._stalls[company]

    def _progress(self) -> float:
        s = self.s
        rear = min(s.merchant)
        gone = sum(1 for space, tile in enumerate(s.track, start=1) if tile < 0 or space <= rear)
        return gone / max(1, len(s.track))

    def _estimate(self) -> list[float]:
        s = self.s
        score = [float(g) for g in s.gold]
        for good in range(N_GOODS):
            counts = self._crates(good)
            if counts:
                top = max(counts.values())
                leaders = [o for o, n in counts.items() if n == top]
                gold, tie = self.rules.goods_gold[good]
                for o in leaders:
                    score[o] += gold if len(leaders) == 1 else tie
        top_bills = max(s.bills)
        rich = [o for o in range(s.n) if s.bills[o] == top_bills]
        majority, tied = self.rules.bills_gold
        for o in rich:
            score[o] += majority if len(rich) == 1 else tied
        if s.arrival_holder >= 0:
            score[s.arrival_holder] += self.rules.arrival_gold
        return score

    # ------------------------------------------------------------------ auction
    def _auction(self, kinds: dict[type, list[Any]]) -> Any:
        s, w = self.s, self.w
        hand = s.hands[self.seat]
        value = w.first_player_value
        for i, n in enumerate(s.lot):
            if not n:
                continue
            per_card = w.card_bid_value
            need = self._cards_to_seal(i)
            if 0 < need <= hand[i] + n:
                per_card += w.seal_card_bonus
            value += n * per_card
        if sum(hand) <= 2:
            value += 1.0
        cap = min(int(value), s.bills[self.seat] - w.bill_reserve)
        bids = sorted(kinds.get(Bid, []), key=lambda m: m.amount)
        if bids and bids[0].amount <= cap:
            return bids[0]
        if PassBid in kinds:
            return kinds[PassBid][0]
        return bids[0]

    # ------------------------------------------------------------------ exchange
    def _exchange(self, kinds: dict[type, list[Any]]) -> Any:
        s = self.s
        companies = {t // N_GOODS for t in s.tiles[self.seat]}
        if s.phase == EXCHANGE:  # the View shows the tile just taken
            companies.add(s.pending_tile // N_GOODS)
        size = len(companies)
        progress = self._progress()
        exchange = (
            size >= 4
            or (size == 3 and progress >= 0.45)
            or (progress >= 0.7)
            or (s.arrival_holder >= 0 and s.phase != OVER)
        )
        key: type = ExchangeTiles if exchange and ExchangeTiles in kinds else KeepTiles
        if key not in kinds:
            key = next(iter(kinds))
        return kinds[key][0]

    # ------------------------------------------------------------------ turn
    def _action(self, kinds: dict[type, list[Any]]) -> Any:
        s, w, seat = self.s, self.w, self.seat
        played = sum(s.played)
        hand = s.hands[seat]
        playable = {m.company: m for m in kinds.get(PlayCard, [])}
        advances = {m.company: m for m in kinds.get(AdvanceMerchant, [])}

        plans: list[tuple[float, Any]] = []
        for company, move in advances.items():
            found = self._next_stall(company)
            plans.append((found[0] if found else 0.0, move))
        for company in range(N_COMPANIES):
            if company in advances:
                continue
            need = self._cards_to_seal(company)
            first: Any
            if need == 0 and self._holds_seal(company):
                if played:
                    continue
                need_cards, first = 1, self._filler_card(playable)
            else:
                if need == 0 or need > hand[company] or company not in playable:
                    continue
                need_cards, first = need, playable[company]
            if first is None:
                continue
            found = self._next_stall(company)
            if found is None:
                continue
            plans.append((found[0] - w.card_cost * need_cards, first))

        if DrawCards in kinds:
            draw = w.draw_value + w.hand_bonus * max(0, 4 - sum(hand))
            plans.append((draw, kinds[DrawCards][0]))
        if TakeArrival in kinds:
            est = self._estimate()
            mine = est[seat] + self.rules.arrival_gold
            best_other = max((v for o, v in enumerate(est) if o != seat), default=0.0)
            plans.append((self.rules.arrival_gold + (3.0 if mine > best_other else -8.0),
                          kinds[TakeArrival][0]))
        if plans:
            return max(plans, key=lambda p: p[0])[1]
        for kind in (AdvanceMerchant, PlayCard, TakeArrival):
            if kind in kinds:
                return kinds[kind][0]
        return next(iter(kinds.values()))[0]

    def _filler_card(self, playable: dict[int, Any]) -> Any:
        best: tuple[tuple, Any] | None = None
        hand = self.s.hands[self.seat]
        for company, move in playable.items():
            need = self._cards_to_seal(company)
            key = (need == 1, -need if need else -99, hand[company])
            if best is None or key > best[0]:
                best = (key, move)
        return best[1] if best else None


__all__ = ["policy"]
