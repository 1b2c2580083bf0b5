"""How Batavia's View and Moves read as text (``referee.core.text`` walks them with this table):
the rulebook's words (ship cards by company, bills of exchange, stall tiles and their goods, gold,
stalls 1 to 35 along the route), one line per part of the table, ranges of face-down stalls
folded. Every function here reads only the message it is given, so a text says what its view
says and nothing else."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from referee.core.texttable import Field, Kind, TextTable
from referee.v1 import batavia_pb2 as pb

from .catalog import COMPANY_NAMES, GOOD_IDS
from .wording import cards_text

RULES = "Batavia, French rules"
AUCTION = f"{RULES}, « A. Vente aux enchères »"
ACTIONS = f"{RULES}, « B. Actions des joueurs »"
LAY = f"{RULES}, « 1. Poser des cartes »"
ADVANCE = f"{RULES}, « 2. Avancer son commerçant »"
EXCHANGE = f"{RULES}, « 3. Echanger des tuiles »"
END = f"{RULES}, « Fin du jeu »"


def company(n: int) -> str:
    return COMPANY_NAMES[n - 1] if 1 <= n <= len(COMPANY_NAMES) else "no company"


def good(n: int) -> str:
    return GOOD_IDS[n - 1] if 1 <= n <= len(GOOD_IDS) else "no good"


def seat(n: int) -> str:
    return "nobody" if n < 0 else f"seat {n}"


def tile(t: Any) -> str:
    return f"{company(t.company)} {good(t.good)}"


def cards(c: Any, _: Message | None = None) -> str:
    return cards_text(list(c.count))


def stalls(row: Sequence[Any], _: Message) -> str:
    """The route in one line: face-up tiles by space, taken spaces as "-", runs of face-down
    spaces folded ("21-35 face down")."""
    parts: list[str] = []
    i = 0
    while i < len(row):
        s = row[i]
        if s.state == pb.FACE_DOWN:
            j = i
            while j + 1 < len(row) and row[j + 1].state == pb.FACE_DOWN:
                j += 1
            span = f"{s.space}-{row[j].space}" if j > i else f"{s.space}"
            parts.append(f"{span} face down")
            i = j + 1
            continue
        parts.append(f"{s.space} -" if s.state == pb.TAKEN else f"{s.space} {tile(s)}")
        i += 1
    return "; ".join(parts)


def merchant(space: int, _: Message) -> str:
    if space == 0:
        return "merchant on the start space"
    if space > 35:
        return "merchant on the arrival tile"
    return f"merchant on stall {space}"


def counting_house(h: Any) -> str:
    crates = [f"{COMPANY_NAMES[c]} {seat(o)}" for c, o in enumerate(h.crate_owner) if o >= 0]
    return f"{good(h.good)}: {', '.join(crates) if crates else 'no crate'}"


def auction(a: Any) -> str:
    bid = f"high bid {a.high_bid} by {seat(a.high_bidder)}" if a.high_bidder >= 0 else "no bid yet"
    return (f"die {a.die}; lot {cards(a.lot)}; {bid}; auctioneer {seat(a.auctioneer)}; "
            f"{seat(a.to_act)} to act")


def heading(view: Message) -> str:
    v: Any = view
    who = "a spectator" if v.seat < 0 else f"seat {v.seat}"
    turn = "" if v.current_seat < 0 else f"; {seat(v.current_seat)} to act"
    first = "" if v.first_player < 0 else f"; first player {seat(v.first_player)}"
    final = " (final round: the arrival tile is taken)" if v.final_round else ""
    phase = pb.Phase.Name(v.phase).lower().replace("_", " ")
    return (f"Batavia, {v.seat_count} players, round {v.round}{final}, phase: {phase}{turn}"
            f"{first}. You are {who}.")


_SAID = "in the heading"

TABLE = TextTable(
    heading=heading,
    fields={
        "View": {
            "my_hand": Field("your hand", show=cards),
            "played_this_turn": Field("laid this turn", show=cards),
            "pending_tile": Field("tile just taken", show=lambda t, _: tile(t)),
            "auction": Field("auction"),
            "stalls": Field("stalls (space tile; - taken)", show=stalls),
            "players": Field("players"),
            "counting_houses": Field("counting houses (crates by company)",
                                     show=lambda hs, _: "; ".join(counting_house(h) for h in hs)),
            "cannon": Field("cannon"),
            "face_up_total": Field("face-up ship cards in play"),
            "pirate_threshold": Field("pirates attack at"),
            "draw_pile_size": Field("draw pile", show=lambda n, _: f"{n} cards"),
            "discards": Field("sunk ship cards", show=cards),
            "arrival_holder": Field("arrival tile",
                                    show=lambda s, _: "on the board" if s < 0 else f"taken by seat {s}"),
            "seat": Field(skip=True, why=_SAID),
            "seat_count": Field(skip=True, why=_SAID),
            "phase": Field(skip=True, why=_SAID),
            "round": Field(skip=True, why=_SAID),
            "first_player": Field(skip=True, why=_SAID),
            "current_seat": Field(skip=True, why=_SAID),
            "final_round": Field(skip=True, why=_SAID),
        },
        "PlayerPublic": {
            "seat": Field("", show=lambda s, _: f"seat {s}:"),
            "merchant_space": Field("", show=merchant),
            "hand_size": Field("", show=lambda n, _: f"{n} cards in hand"),
            "bills": Field("", show=lambda n, _: f"{n} bills"),
            "gold": Field("", show=lambda n, _: f"{n} gold"),
            "face_up": Field("face up", show=cards),
            "seals": Field("seals", show=lambda cs, _: ", ".join(company(c) for c in cs)),
            "tiles": Field("tiles", show=lambda ts, _: ", ".join(tile(t) for t in ts)),
            "crates_left": Field("", show=lambda n, _: f"{n} crates left"),
            "has_arrival_tile": Field("holds the arrival tile"),
            "in_auction": Field("still bidding"),
        },
    },
    phrases={
        "Auction": auction,
        "CompanyCounts": cards,
        "Tile": tile,
        "Stall": lambda s: stalls([s], s),
        "CountingHouse": counting_house,
    },
    enums={
        "Company": {pb.Company.Name(i + 1): n for i, n in enumerate(COMPANY_NAMES)},
    },
    moves={
        "bid": Kind("bid {amount} bills for the lot", AUCTION),
        "pass_bid": Kind("pass: drop out of this auction", AUCTION),
        "draw_cards": Kind("draw 2 ship cards (ends your turn)", ACTIONS),
        "play_card": Kind("lay one {company} ship card face up", LAY),
        "advance_merchant": Kind("move your merchant to the next {company} stall tile and take it",
                                 ADVANCE),
        "take_arrival": Kind("move your merchant to the arrival tile and take it", END),
        "exchange_tiles": Kind("exchange one tile of each company you hold for gold", EXCHANGE),
        "keep_tiles": Kind("keep your tiles", EXCHANGE),
    },
)
