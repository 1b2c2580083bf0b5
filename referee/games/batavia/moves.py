"""Batavia's engine moves: small immutable values, one class per kind of choice. Moves without a
parameter are singletons; parameterised ones are interned, so listing legal moves allocates
nothing."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .catalog import N_COMPANIES


@dataclass(frozen=True, slots=True)
class Bid:
    amount: int


@dataclass(frozen=True, slots=True)
class PassBid:
    pass


@dataclass(frozen=True, slots=True)
class DrawCards:
    pass


@dataclass(frozen=True, slots=True)
class PlayCard:
    company: int  # 0..4 in rulebook order


@dataclass(frozen=True, slots=True)
class AdvanceMerchant:
    company: int


@dataclass(frozen=True, slots=True)
class TakeArrival:
    pass


@dataclass(frozen=True, slots=True)
class ExchangeTiles:
    pass


@dataclass(frozen=True, slots=True)
class KeepTiles:
    pass


Move = Bid | PassBid | DrawCards | PlayCard | AdvanceMerchant | TakeArrival | ExchangeTiles | KeepTiles

PASS_BID = PassBid()
DRAW_CARDS = DrawCards()
TAKE_ARRIVAL = TakeArrival()
EXCHANGE_TILES = ExchangeTiles()
KEEP_TILES = KeepTiles()
PLAY_CARD = tuple(PlayCard(c) for c in range(N_COMPANIES))
ADVANCE = tuple(AdvanceMerchant(c) for c in range(N_COMPANIES))


#: Bids up to this amount are interned; a larger one can only be made up by a client (no seat
#: holds that many bills), and is built instead, so it does not push real bids out of the cache.
MAX_INTERNED_BID = 10_000


@lru_cache(maxsize=1 << 12)  # bounded: a client's bid amounts reach it
def bid(amount: int) -> Bid:
    return Bid(amount)


def any_bid(amount: int) -> Bid:
    """The bid of any amount a client sends: interned up to MAX_INTERNED_BID."""
    return bid(amount) if amount <= MAX_INTERNED_BID else Bid(amount)
