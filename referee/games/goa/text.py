"""How Goa's View and Moves read as text (``referee.core.text`` walks them with this table), in
the rulebook's words: the Development board's columns (Ships, Harvest, Taxes, Expedition,
Colonists) and rows 1 to 5, the auction board's squares by row and column 1 to 5, ducats,
Expedition cards and tiles by what they do, lands (plantations and colonies) by the number the
moves use. Every function here reads only the message it is given (and, for a move, the view it
was offered with), so a text says what its view says and nothing else."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from referee.core.texttable import Field, Kind, TextTable, words
from referee.v1 import goa_pb2 as pb

from .wording import count

RULES = "Goa rules (2012; 2004 alike)"
SETUP = f"{RULES}, « Variant - Quick starter »"
TOKENS = f"{RULES}, « 1. Place auction tokens »"
AUCTIONS = f"{RULES}, « 2. Tile auctions »"
ACTIONS = f"{RULES}, « 3. Player actions »"
CARDS = f"{RULES}, « Using Expedition cards during the game »"
TILES = f"{RULES}, the tile's own text in the tile descriptions"
END_OF_ROUND = f"{RULES}, « End of a round »"

_COLUMNS = ("Ships", "Harvest", "Taxes", "Expedition", "Colonists")

#: What each tile type does, in the words of its tile ({n}, {vp}: its numbers)
_TILE_DOES = {
    pb.CROP_ROTATION: "1 field, spice of choice, 0 VP",
    pb.FOREMAN: "single plantations score {vp} each",
    pb.MISSION: "{vp} VP at the end",
    pb.SWAP: "later: take any board tile, Swap goes in its place",
    pb.SHIPS_TILE: "at once {n} ships",
    pb.COLONISTS_TILE: "at once {n} colonists",
    pb.SHIPS_OR_COLONISTS: "at once {n} ships or {n} colonists",
    pb.FAVOR: "at once a tile of choice from the box",
    pb.SETTLEMENT: "at once 1 ship, 1 Extra action card, 1 colonist",
    pb.EXTRA_ACTIONS_TILE: "at once {n} Extra action cards",
    pb.EXPEDITIONS_TILE: "at once {n} Expedition cards",
    pb.RED_SHIP: "once per round: {n} ship",
    pb.RED_COLONIST: "once per round: {n} colonist",
    pb.RED_SPICE: "once per round: {n} spice of choice onto an empty field",
    pb.RED_EXPEDITION: "once per round: {n} Expedition card",
    pb.RED_DUCATS: "once per round: {n} ducats",
    pb.ESPIONAGE: "once: an action with an opponent's row",
    pb.EXTRA_HARVEST: "once: fill up to {n} lands",
    pb.RESUPPLY: "once: reveal {n} cards, take their colonists' total",
    pb.VICE_KING: "once: least advanced marker one row down, free",
    pb.DUTY: "once: return {n} sacks for {vp} VP",
}

_CARD_DOES = {
    pb.CARD_SHIPS: "take {amount} ships",
    pb.CARD_COLONISTS: "take {amount} colonists",
    pb.CARD_DUCATS: "take {amount} ducats",
    pb.CARD_SPICES: "{amount} spices of choice onto empty fields",
    pb.CARD_SELL: "sell sacks for {amount} ducats each",
    pb.CARD_PROGRESS_DUCATS: "pay {price} ducats, one marker one row down",
    pb.CARD_HARVEST_MIX: "with Harvest: ships, colonists and spices mixed",
    pb.CARD_COLONY_EXTRA: "with Found a colony: reveal 3 cards instead of 2",
    pb.CARD_PROGRESS_SHIPS_ONLY: "with Progress: pay ships only",
    pb.CARD_PROGRESS_SPICES_ONLY: "with Progress: pay spices only",
}


def spice(n: int) -> str:
    return pb.Spice.Name(n).lower() if n else "empty"


def colony(n: int) -> str:
    return pb.Colony.Name(n).capitalize() if n else "no colony"


def column(n: int) -> str:
    return _COLUMNS[n - 1] if 1 <= n <= 5 else "no column"


def seat(n: int) -> str:
    return "nobody" if n < 0 else f"seat {n}"


def spices(ss: Sequence[int]) -> str:
    if len(set(ss)) == 5:
        return "any spice"
    return "/".join(spice(s) for s in ss) or "nothing"


def cell(c: Any) -> str:
    r, k = c.row, c.col
    if r < 0:
        return f"above column {k + 1}"
    if r > 4:
        return f"below column {k + 1}"
    if k < 0:
        return f"left of row {r + 1}"
    if k > 4:
        return f"right of row {r + 1}"
    return f"row {r + 1} column {k + 1}"


def tile(t: Any) -> str:
    if t.type == pb.MISSION and t.id == 0 and t.vp == 0:
        return "a Mission (face down)"
    does = _TILE_DOES.get(t.type, "")
    detail = f": {does.format(n=t.n, vp=t.vp)}" if does else ""
    return f"{t.name} #{t.id} ({t.phase}{detail})"


def card(c: Any) -> str:
    does = _CARD_DOES.get(c.effect, "no effect").format(amount=c.amount, price=c.price)
    return f"card #{c.id} {does} ({c.colonists} colonists, {c.symbol.replace('_', ' ')})"


def cards(cs: Sequence[Any], _: Message | None = None) -> str:
    return "; ".join(card(c) for c in cs)


def field_text(f: Any) -> str:
    return f"{spices(f.takes)}: {spice(f.spice)}" if len(f.takes) > 1 else spice(f.spice)


def land(lnd: Any, fields: bool = True) -> str:
    held = ", ".join(field_text(f) for f in lnd.fields)
    if lnd.colony:
        what = f"{colony(lnd.colony_tile.colony)} colony"
    else:
        what = f"{lnd.plantation.name} #{lnd.plantation.id}"
    return f"land {lnd.index} {what} [{held}]" if fields else f"land {lnd.index} ({what})"


def colony_tile(t: Any) -> str:
    return (f"{colony(t.colony)} tile #{t.id} (fields "
            f"{', '.join(spices(f.spices) for f in t.fields)})")


def square(sq: Any) -> str:
    parts = [tile(sq.tile) if sq.HasField("tile") else "empty"]
    if sq.token_seat >= 0:
        parts.append(f"token {sq.token_number} of seat {sq.token_seat}")
    if sq.bonanza_face_down:
        parts.append("a Bonanza tile face down under it")
    return ", ".join(parts)


def grid(squares: Sequence[Any], _: Message) -> str:
    """The auction board row by row; empty squares without a token are left out."""
    rows: dict[int, list[str]] = {}
    for sq in squares:
        if sq.HasField("tile") or sq.token_seat >= 0 or sq.bonanza_face_down:
            rows.setdefault(sq.cell.row, []).append(f"col {sq.cell.col + 1} {square(sq)}")
    return "\n".join(f"row {r + 1}: " + "; ".join(rows[r]) for r in sorted(rows)) or "empty"


def rows(rs: Sequence[int], _: Message) -> str:
    return ", ".join(f"{column(c + 1)} {r}" for c, r in enumerate(rs))


def board(b: Any) -> str:
    out = []
    for ci in b.columns:
        steps = " | ".join(spices(s.spices) for s in ci.steps)
        limit = f"; hand limit {'/'.join(map(str, ci.hand_limit))}" if len(ci.hand_limit) else ""
        out.append(f"{column(ci.column)}: yield by row {'/'.join(map(str, getattr(ci, 'yield')))}"
                   f"{limit}; steps {steps}")
    out.append(f"row VP {'/'.join(map(str, b.row_vp))}")
    return "\n".join(out)


def progress_bonus(taken: Sequence[int], _: Message) -> str:
    said = [f"{column(i // 2 + 1)} row {4 + i % 2} by seat {s}"
            for i, s in enumerate(taken) if s >= 0]
    return "taken: " + ", ".join(said) if said else "all still free"


def auction(a: Any) -> str:
    what = "the flag" if a.is_flag else tile(a.tile)
    bids = ", ".join("pass" if b < 0 else str(b) for b in a.bids)
    high = f"high bid {a.high_bid} by seat {a.high_bidder}" if a.high_bidder >= 0 else "no bid yet"
    return (f"lot {a.lot}: {what}; auctioneer seat {a.auctioneer}; {high}"
            f"{f'; bids so far {bids}' if bids else ''}; {seat(a.to_act)} to act")


def final(f: Any) -> str:
    return (f"seat {f.seat}: {f.total} VP, rank {f.rank} (progress {f.progress}, colonies "
            f"{f.colonies}, Expedition cards {f.expedition_cards}, most ducats {f.most_ducats}, "
            f"single plantations {f.single_plantations}, Duty {f.duty}, Missions {f.missions}; "
            f"{f.ducats} ducats)")


def heading(view: Message) -> str:
    v: Any = view
    who = "a spectator" if v.seat < 0 else f"seat {v.seat}"
    phase = words(pb.Phase.Name(v.phase))
    turn = f"; seat {v.current_seat} to act ({v.decision_kind})" if v.current_seat >= 0 else ""
    return (f"Goa ({v.edition} edition), {v.seat_count} players, round {v.round} of 8 (tiles "
            f"{v.tile_phase}), phase: {phase}{turn}; flag holder seat {v.first_player}. "
            f"You are {who}.")


# ---- moves: their ids name lands, cards and tiles; the view says what they are

def _me(view: Any) -> Any:
    return next((p for p in view.players if p.seat == view.seat), None) if view else None


def _land(n: int, view: Any) -> str:
    me = _me(view)
    found = next((lnd for lnd in me.lands if lnd.index == n), None) if me else None
    return land(found, fields=False) if found is not None else f"land {n}"


def _card(n: int, view: Any) -> str:
    found = next((c for c in (view.my_hand if view else ()) if c.id == n), None)
    return card(found) if found is not None else f"card #{n}"


def _tile(n: int, view: Any) -> str:
    if view:
        tiles = [t for p in view.players for t in p.tiles] + list(view.box)
        tiles += [sq.tile for sq in view.grid if sq.HasField("tile")]
        found = next((t for t in tiles if t.id == n and t.name), None)
        if found is not None:
            return tile(found)
    return f"tile #{n}"


def _with_card(n: int, view: Any) -> str:
    return f", with {_card(n - 1, view)}" if n else ""


def _pass(_m: Any, view: Any) -> str:
    if view is not None and view.HasField("auction") and view.auction.auctioneer == view.seat:
        return "pass: sell the lot to the high bidder, who pays you the bid"
    return "pass: no bid on this lot"


def _sack(verb: str) -> Any:
    where = "on" if verb == "place" else "from"
    return lambda m, v: f"{verb} 1 {spice(m.spice)} sack {where} {_land(m.land, v)}"


_SAID = "in the heading"
_MINE = "said as 'your ...'"

TABLE = TextTable(
    heading=heading,
    fields={
        "View": {
            "my_ducats": Field("your ducats (hidden from the others)"),
            "my_hand": Field("your Expedition cards", show=cards),
            "pending": Field("under way"),
            "auction": Field("auction"),
            "flag_cell": Field("flag"),
            "grid": Field("auction board (tiles and tokens)", show=grid),
            "players": Field("players"),
            "progress_bonus": Field("progress bonus cards (rows 4 and 5)", show=progress_bonus),
            "box": Field("tiles in the box", show=lambda ts, _: "; ".join(tile(t) for t in ts)),
            "box_count": Field("tiles returned to the box at set-up"),
            "b_tiles_left": Field("B tiles not yet laid out"),
            "expedition_deck_size": Field("Expedition draw pile", show=lambda n, _: f"{n} cards"),
            "expedition_discard": Field("Expedition discard (face up)", show=cards),
            "extra_action_supply": Field("Extra action cards in the supply"),
            "colony_supply": Field("colony tiles left",
                                   show=lambda ts, _: "; ".join(colony_tile(t) for t in ts)),
            "board": Field("development board"),
            "colony_need": Field("colonists needed (Quilon/Cochin/Madras/Calicut)",
                                 show=lambda ns, _: "/".join(map(str, ns))),
            "colony_vp": Field("VP for 1..4 colonies", show=lambda ns, _: "/".join(map(str, ns))),
            "expedition_set_vp": Field("VP for 1..k identical Expedition symbols",
                                       show=lambda ns, _: "/".join(map(str, ns))),
            "most_ducats_vp": Field("VP for the most ducats"),
            "single_plantation_vp": Field("VP per single plantation"),
            "final_scores": Field("final scores"),
            "winners": Field("winners", show=lambda ws, _: ", ".join(f"seat {w}" for w in ws)),
            "seat": Field(skip=True, why=_SAID),
            "seat_count": Field(skip=True, why=_SAID),
            "edition": Field(skip=True, why=_SAID),
            "phase": Field(skip=True, why=_SAID),
            "round": Field(skip=True, why=_SAID),
            "tile_phase": Field(skip=True, why=_SAID),
            "first_player": Field(skip=True, why=_SAID),
            "current_seat": Field(skip=True, why=_SAID),
            "decision_kind": Field(skip=True, why=_SAID),
        },
        "PlayerPublic": {
            "seat": Field("", show=lambda s, _: f"seat {s}:"),
            "ships": Field("", show=lambda n, _: f"{n} ships"),
            "colonists": Field("", show=lambda n, _: f"{n} colonists"),
            "extra_action_cards": Field("", show=lambda n, _: f"{n} Extra action cards"),
            "hand_size": Field("", show=lambda n, _: f"{n} Expedition cards in hand"),
            "rows": Field("rows", show=rows),
            "lands": Field("lands", show=lambda ls, _: "; ".join(land(lnd) for lnd in ls)),
            "tiles": Field("tiles", show=lambda ts, _: "; ".join(tile(t) for t in ts)),
            "red_tiles_used": Field("red tiles used this round",
                                    show=lambda ids, _: ", ".join(f"#{i}" for i in ids)),
            "single_plantations_face_down": Field("single plantations face down", hide_zero=True),
            "duty_vp": Field("Duty VP", hide_zero=True),
            "colonies": Field("colonies", show=lambda cs, _: ", ".join(colony(c) for c in cs)),
            "passed_extra_actions": Field("passed the Extra actions"),
        },
        "Pending": {
            "kind": Field(""),
            "seat": Field("seat"),
            "column": Field("column", show=lambda c, _: column(c)),
            "spices_owed": Field("spices still owed", show=lambda ss, _: spices(ss)),
            "remaining": Field("left", show=lambda n, _: "no limit" if n == 99 else str(n),
                               hide_zero=True),
            "colony": Field("colony", show=lambda c, _: colony(c)),
            "colonists_needed": Field("colonists needed", hide_zero=True),
            "colonists_board": Field("colonists on the board", hide_zero=True),
            "colonists_revealed": Field("colonists revealed", hide_zero=True),
            "draw_max": Field("may draw up to", hide_zero=True),
            "hand_limit": Field("hand limit", hide_zero=True),
            "card_played": Field("an Expedition card was played this action"),
            "action_done": Field("action done"),
            "espionage_target": Field("spying on", show=lambda s, _: seat(s) if s >= 0 else ""),
            "extra_action": Field("an Extra action turn"),
            "lands_chosen": Field("lands filled", show=lambda ls, _: ", ".join(map(str, ls))),
        },
    },
    phrases={
        "Cell": cell,
        "TileInfo": tile,
        "CardInfo": card,
        "ColonyTileInfo": colony_tile,
        "Square": square,
        "Land": land,
        "Field": field_text,
        "FieldSpices": lambda f: spices(f.spices),
        "StepCost": lambda s: spices(s.spices),
        "DevelopmentBoard": board,
        "ColumnInfo": lambda c: board(pb.DevelopmentBoard(columns=[c])).split("\n")[0],
        "Auction": auction,
        "FinalScore": final,
    },
    enums={
        "Column": {pb.Column.Name(i + 1): n for i, n in enumerate(_COLUMNS)},
        "Colony": {pb.Colony.Name(i): pb.Colony.Name(i).capitalize() for i in range(1, 5)},
        "Resource": {"RESOURCE_SHIPS": "ships", "RESOURCE_COLONISTS": "colonists",
                     "RESOURCE_SPICES": "spices"},
    },
    moves={
        "quick_ducats": Kind("take 10 ducats", SETUP),
        "quick_advance": Kind("move {first} and {second} from row 1 to row 2", SETUP),
        "place_flag": Kind("place the flag with token 1 at {cell}", TOKENS),
        "place_token": Kind("place your next token at {cell}", TOKENS),
        "bid": Kind(lambda m, _: f"bid {count(m.amount, 'ducat')}", AUCTIONS),
        "pass": Kind(_pass, AUCTIONS),
        "keep_lot": Kind("keep the lot, paying the bank the high bid minus 1", AUCTIONS),
        "progress": Kind(lambda m, v: f"Progress in the {column(m.column)} column"
                         f"{_with_card(m.card, v)}", f"{ACTIONS}, « 1. Progress on their development board »"),
        "build_ships": Kind("Build ships", f"{ACTIONS}, « 2. Build ships »"),
        "harvest": Kind(lambda m, v: f"Harvest{_with_card(m.card, v)}", f"{ACTIONS}, « 3. Harvest »"),
        "taxes": Kind("Taxes", f"{ACTIONS}, « 4. Taxes »"),
        "expedition": Kind("Expedition", f"{ACTIONS}, « 5. Expedition »"),
        "found_colony": Kind(lambda m, v: f"Found a colony: {colony(m.colony)}"
                             f"{_with_card(m.card, v)}", f"{ACTIONS}, « 6. Found a colony »"),
        "espionage": Kind("Espionage: this action uses seat {opponent}'s row", TILES),
        "play_card": Kind(lambda m, v: f"play {_card(m.card, v)}", CARDS),
        "use_tile": Kind(lambda m, v: f"use {_tile(m.tile, v)}", TILES),
        "end_turn": Kind("end your action turn", ACTIONS),
        "pay_spice": Kind(_sack("pay"), f"{ACTIONS}, « 1. Progress on their development board »"),
        "place_spice": Kind(_sack("place"), f"{ACTIONS}, « 3. Harvest »"),
        "sell_spice": Kind(_sack("sell"), CARDS),
        "take_ship": Kind("take a ship instead of a sack", CARDS),
        "take_colonist": Kind("take a colonist instead of a sack", CARDS),
        "done": Kind("stop (leave the rest)", f"{ACTIONS}, « 3. Harvest »"),
        "reveal_more": Kind(lambda m, v: f"reveal one more card with {_card(m.card, v)}",
                            f"{ACTIONS}, « 6. Found a colony »"),
        "recruit": Kind("found the colony, completing the colonists with Colonist cards",
                        f"{ACTIONS}, « 6. Found a colony »"),
        "decline": Kind("do not found it; take 1 colonist", f"{ACTIONS}, « 6. Found a colony »"),
        "choose_colony_tile": Kind(lambda m, v: "take " + next(
            (colony_tile(t) for t in (v.colony_supply if v else ()) if t.id == m.tile),
            f"colony tile #{m.tile}"), f"{ACTIONS}, « 6. Found a colony »"),
        "draw": Kind(lambda m, _: f"draw {count(m.count, 'Expedition card')} and end the action",
                     f"{ACTIONS}, « 5. Expedition »"),
        "discard_card": Kind(lambda m, v: f"discard {_card(m.card, v)}", f"{ACTIONS}, « 5. Expedition »"),
        "choose_column": Kind("move the {column} marker down one row, free", TILES),
        "choose_resource": Kind("take {kind}", TILES),
        "discard_plantation": Kind(lambda m, v: f"discard {_land(m.land, v)}",
                                   TILES),
        "take_favor": Kind(lambda m, v: f"take {_tile(m.tile, v)} from the box", TILES),
        "swap_take": Kind("take the tile at {cell}; the Swap tile takes its place", TILES),
        "play_extra_action": Kind("play an Extra action card for one more action turn",
                                  END_OF_ROUND),
        "pass_extra_action": Kind("pass for the rest of this round", END_OF_ROUND),
    },
)
