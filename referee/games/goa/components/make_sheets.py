"""Writes goa-2012.json and goa-2004.json (run: python -m referee.games.goa.components.make_sheets).

The sheets are the committed artefacts; this script only keeps their many per-cell entries
consistent. Every value carries its provenance (docs/ARCHITECTURE.md, "Component data"); sources are the
rulebooks and the secondary sources listed in SOURCES below."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SPICES = ["ginger", "pepper", "cinnamon", "nutmeg", "clove"]
COLUMNS = ["ships", "harvest", "taxes", "expedition", "colonists"]

SOURCES = {
    "R12en": "Goa rulebook, 2012 edition, English",
    "R12fr": "Goa rulebook, 2012 edition, French",
    "R04fr": "Goa rules, 2004 edition, French translation",
    "R12pdf": "PDF text of the 2012 English rules incl. picture captions (GitHub repository "
    "jonnyallred/boardgame-rules, file extracted/goa-rules.txt)",
    "SOB": "2004 player aid with tile counts, http://sob-zine.org/PlayerAids/Goa_player_aid.html",
    "BGB": "2005 review, http://boardgameblog.blogspot.com/2005/02/goa-review.html",
    "AMEBA": "copied review: ships 1 to 5, harvest 1 to 8 per action",
    "KING": "review: 2012 adds four tiles + Bonanza, https://www.boardgameking.com/reviews/goa/",
    "LUDO": "2004 German review, http://www.ludorium.at/SPIELE/hans_im_gluck/goa_d2.htm",
    "data": "the component research compiled for this referee from the sources above (not "
    "distributed with it)",
}


def v(value: Any, provenance: str, source: str = "", note: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"value": value, "provenance": provenance}
    if source:
        out["source"] = source
    if note:
        out["note"] = note
    return out


def cyclic(primary_order: dict[str, str], forward: bool) -> dict[str, list[list[str]]]:
    """The cyclic-cost hypothesis of the component research: step s of a column costs its primary spice and the
    next s-1 spices in a fixed cycle (forward for 2012, reverse for 2004)."""
    cycle = ["ginger", "cinnamon", "pepper", "nutmeg", "clove"]
    if not forward:
        cycle = ["ginger", "clove", "nutmeg", "pepper", "cinnamon"]
    out = {}
    for col, primary in primary_order.items():
        i = cycle.index(primary)
        out[col] = [[cycle[(i + k) % 5] for k in range(s)] for s in range(1, 5)]
    return out


PRIMARY = {"ships": "ginger", "harvest": "cinnamon", "taxes": "pepper", "expedition": "nutmeg",
           "colonists": "clove"}


def tiles_a(edition: str) -> list[dict[str, Any]]:
    t = []
    for s in SPICES:
        t.append({"name": f"Single plantation ({s})", "type": "plantation", "spice": s, "fields": 1, "count": 1})
    for s in SPICES:
        t.append({"name": f"Double plantation ({s})", "type": "plantation", "spice": s, "fields": 2, "count": 2})
    t += [
        {"name": "Ship", "type": "red_ship", "n": 1, "count": 1},
        {"name": "Colonist", "type": "red_colonist", "n": 1, "count": 1},
        {"name": "Spice", "type": "red_spice", "n": 1, "count": 1},
        {"name": "Ducats", "type": "red_ducats", "n": 3 if edition == "2012" else 4, "count": 1},
        {"name": "Duty", "type": "duty", "n": 6, "vp": 5 if edition == "2012" else 4, "count": 1},
        {"name": "Extra actions", "type": "extra_actions", "n": 2, "count": 1},
        {"name": "Expeditions", "type": "expeditions", "n": 2, "count": 1},
        {"name": "Ships", "type": "ships", "n": 4, "count": 1},
        {"name": "Colonists", "type": "colonists", "n": 4, "count": 1},
        {"name": "Settlement", "type": "settlement", "count": 1},
        {"name": "Ships/Colonists", "type": "ships_or_colonists", "n": 3, "count": 2},
    ]
    if edition == "2012":
        t += [
            {"name": "Foreman", "type": "foreman", "vp": 3, "count": 1},
            {"name": "Crop rotation", "type": "crop_rotation", "fields": 1, "count": 1},
        ]
    return t


def tiles_b(edition: str) -> list[dict[str, Any]]:
    t = []
    for s in SPICES:
        t.append({"name": f"Double plantation ({s})", "type": "plantation", "spice": s, "fields": 2, "count": 1})
    for s in SPICES:
        t.append({"name": f"Triple plantation ({s})", "type": "plantation", "spice": s, "fields": 3, "count": 1})
    t += [
        {"name": "Extra harvest", "type": "extra_harvest", "n": 3, "count": 1},
        {"name": "Swap", "type": "swap", "count": 1},
        {"name": "Mission (2 VP)", "type": "mission", "vp": 2, "count": 2},
        {"name": "Mission (3 VP)", "type": "mission", "vp": 3, "count": 2},
        {"name": "Ships/Colonists", "type": "ships_or_colonists", "n": 3, "count": 2},
        {"name": "Ships", "type": "ships", "n": 4, "count": 1},
        {"name": "Colonists", "type": "colonists", "n": 4, "count": 1},
        {"name": "Settlement", "type": "settlement", "count": 1},
        {"name": "Extra actions", "type": "extra_actions", "n": 2, "count": 1},
        {"name": "Expeditions", "type": "expeditions", "n": 3, "count": 1},
        {"name": "Espionage", "type": "espionage", "count": 1},
        {"name": "Resupply", "type": "resupply", "n": 2, "count": 1},
        {"name": "Vice-king", "type": "vice_king", "count": 1},
        {"name": "Duty", "type": "duty", "n": 6, "vp": 5 if edition == "2012" else 4, "count": 1},
    ]
    if edition == "2012":
        t += [
            {"name": "Favor", "type": "favor", "count": 1},
            {"name": "Expedition", "type": "red_expedition", "n": 1, "count": 1},
        ]
    return t


EFFECTS = ["ships", "colonists", "ducats", "spices", "sell", "progress_ducats",
           "harvest_mix", "colony_extra", "progress_ships_only", "progress_spices_only"]


def cards(symbols: list[str]) -> list[dict[str, Any]]:
    out = []
    per = 30 // len(symbols)
    for i in range(30):
        effect = EFFECTS[i % 10]
        card = {"effect": effect, "colonists": 1 + (i // 10 + i) % 3, "symbol": symbols[(i * 7) % 30 // per]}
        if effect == "progress_ducats":
            card["price"] = (6, 8, 10)[i // 10]
        out.append(card)
    return out


def sheet(edition: str) -> dict[str, Any]:
    e12 = edition == "2012"
    R = "R12en" if e12 else "R04fr"
    vals = {}
    vals["edition"] = v(edition, "rulebook", f"{R}: the edition this sheet describes")
    vals["spices"] = v(SPICES, "rulebook", f"{R}: the five spices (order is the project's)")
    vals["columns"] = v(COLUMNS, "rulebook", f"{R}, development board: five columns in board order")
    vals["row_vp"] = v([0, 1, 3, 6, 10], "rulebook", f"{R}, Final scoring: 0/1/3/6/10 VP per row")
    # ---- development board yields
    y: dict[str, list[Any]] = {
        "ships": [1, 2, 3, 4, 5],
        "harvest": [1, 2, 4, 6, 8],
        "taxes": [4, 5, 6, 7, 8],
        "expedition": [[1, 1], [1, 2], [2, 3], [2, 4], [3, 5]],
        "colonists": [0, 1, 2, 3, 4],
    }
    prov = {}
    for col in COLUMNS:
        for r in range(5):
            prov[(col, r)] = ("provisional", "", ("no source gives this cell; chosen increasing and "
                              "consistent with every known cell and rule example (data)"))
    prov[("ships", 1)] = ("rulebook", f"{R}, Build ships example: marker in the second row gives 2 ships", "")
    prov[("expedition", 3)] = ("rulebook", f"{R}, Expedition example 1: 4th row draws 2, hand limit 4", "")
    if e12:
        prov[("ships", 0)] = ("inferred", "BGB (2004: start with 1 ship) and monotonic column; data", "")
        prov[("harvest", 0)] = ("single-source", "BGB (2004 review: harvest 1 at start); assumed unchanged in 2012", "")
        prov[("taxes", 0)] = ("inferred", "R12en worked round: Blue takes 4 ducats with Taxes without having progressed", "")
        prov[("expedition", 0)] = ("inferred", "R12en worked round: Green and Red draw 1 with a hand limit of 1", "")
        prov[("colonists", 0)] = ("inferred", "R12en worked round: 'He has 0 Colonists on his Development board'", "")
    else:
        prov[("ships", 0)] = ("single-source", "BGB: start with 1 ship", "")
        prov[("harvest", 0)] = ("single-source", "BGB: harvest 1 at start", "")
        prov[("expedition", 4)] = ("rulebook", "R04fr, Expedition example 2: 5th row draws 3, hand limit 5", "")
        prov[("ships", 4)] = ("single-source", "AMEBA: ships 1 to 5 per action", "")
        prov[("harvest", 4)] = ("single-source", "AMEBA: harvest 1 to 8 per action", "")
    for col in COLUMNS:
        for r in range(5):
            p, src, note = prov[(col, r)]
            vals[f"yield.{col}.{r + 1}"] = v(y[col][r], p, src, note)
    # ---- progress costs
    costs = cyclic(PRIMARY, forward=e12)
    known = (
        {("ships", 0): "R12en worked round: Green pays 1 ginger and 1 ship (Ships, row 1 to 2)",
         ("ships", 1): "R12en worked round: Green pays 1 ginger, 1 cinnamon and 2 ships (Ships, row 2 to 3)",
         ("harvest", 0): "R12en worked round: Red pays 1 cinnamon and 1 ship (Harvest, row 1 to 2)",
         ("taxes", 1): "R12en, Progress example: 1 pepper, 1 nutmeg and 2 ships (Taxes, row 2 to 3)",
         ("colonists", 0): "R12en worked round: Yellow pays 1 clove and 1 ship (Found a colony, row 1 to 2)",
         ("colonists", 1): "R12en worked round: Yellow pays 1 clove, 1 ginger and 2 ships (row 2 to 3)"}
        if e12 else
        {("taxes", 1): "R04fr, Progress example: cinnamon and pepper (Taxes, row 2 to 3)"}
    )
    for col in COLUMNS:
        for s in range(4):
            cost = sorted(costs[col][s], key=SPICES.index)
            if (col, s) in known:
                vals[f"cost.{col}.{s + 1}"] = v(cost, "rulebook", known[(col, s)])
            else:
                vals[f"cost.{col}.{s + 1}"] = v(
                    cost, "provisional", "",
                    "the cyclic-cost hypothesis of data, cyclic() in referee/games/goa/components/make_sheets.py "
                    "(fits every known icon; step s costs s spices, one ship each, which is rulebook)")
    # ---- colonies
    for name, need, fields, tiles in (("quilon", 6, 1, 5), ("cochin", 8, 1, 4), ("madras", 10, 2, 5), ("calicut", 12, 2, 4)):
        vals[f"colony.{name}"] = v(
            {"colonists": need, "fields": fields, "tiles": tiles}, "corroborated",
            f"{R} (colonists needed, tile counts) and R12pdf captions / KEIRAT (fields), via data")
    pairs = [["ginger", "cinnamon"], ["pepper", "nutmeg"], ["cinnamon", "clove"], ["ginger", "nutmeg"], ["pepper", "clove"]]
    for i, pair in enumerate(pairs):
        if i < 2 and e12:
            vals[f"colony_tile.quilon.{i + 1}"] = v(pair, "rulebook", "R12en worked round: Quilon tiles 'ginger or cinnamon' and 'pepper or nutmeg'")
        else:
            vals[f"colony_tile.quilon.{i + 1}"] = v(pair, "provisional", "", "each spice in two of the five pairs (unknown printed pairs)")
    for i, pair in enumerate(pairs[1:] + pairs[:1]):
        if i == 0:
            vals[f"colony_tile.madras.{i + 1}"] = v(pair, "single-source", "R12pdf caption: a Madras tile with pepper/nutmeg fields")
        else:
            vals[f"colony_tile.madras.{i + 1}"] = v(pair, "provisional", "", "both fields of a Madras tile take either spice of its pair")
    vals["colony_vp"] = v([1, 3, 6, 10], "rulebook", f"{R}, Final scoring: colonies 1/3/6/10 VP")
    # ---- expedition cards
    symbols = ["elephant", "tiger", "fish", "palm_tree", "shell", "statue"] if e12 else ["tiger", "fish", "palm_tree", "shell", "statue"]
    vals["expedition_symbols"] = v(symbols, "rulebook", f"{R}: 6 symbols x 5 cards" if e12 else "R04fr: 5 symbols x 6 cards")
    vals["expedition_set_vp"] = v([1, 3, 6, 10, 15] if e12 else [1, 3, 6, 10, 15, 20], "rulebook", f"{R}, Final scoring: Expedition cards")
    for i, card in enumerate(cards(symbols)):
        vals[f"card.{i + 1:02d}"] = v(card, "provisional", "", "the card-by-card table is unknown; 10 effects x 3, colonists 1-3, every symbol equally often")
    vals["card_effects"] = v(
        {"ships": 2, "colonists": 2, "ducats": 5, "spices": 2, "sell_max": 4 if e12 else 0, "sell_price": 3},
        "rulebook", f"{R}, Expedition cards that give a bonus" + ("" if e12 else " (sell: 'autant d'épices qu'il le souhaite' = no maximum, 0)"))
    # ---- setup and counts
    vals["start"] = v(
        {"ships": 4, "colonists": 2, "first_ducats": 5 if e12 else 7, "other_ducats": 10,
         "first_symbol": "elephant" if e12 else "tiger"},
        "rulebook", f"{R}, Game setup 8 and 9" if e12 else "R04fr, Préparation; LUDO")
    vals["tiles_removed"] = v(4 if e12 else 2, "rulebook", f"{R}, Game setup 1" if e12 else "R04fr, Préparation: 27 tiles, 25 placed")
    vals["max_plantations_removed"] = v(2, "rulebook" if e12 else "inferred",
                                        f"{R}, Game setup 1" if e12 else "R04fr removes only 2 tiles, so at most 2 plantations")
    vals["scoring"] = v(
        {"most_ducats_vp": 3, "single_plantation_vp": 1, "crop_rotation_vp": 0},
        "rulebook", f"{R}, Final scoring")
    vals["limits"] = v(
        {"plantations": 4, "extra_action_cards": 10, "expedition_cards": 30, "rounds_per_phase": 4,
         "actions_per_round": 3, "keep_extra_action_cards": 1},
        "rulebook", f"{R}: components list, Plantation tile, Player actions, End of a round")
    vals["progress_bonus"] = v(
        {"first_to_rows": [4, 5], "cards": 1, "all_markers_rows": [2, 3, 4, 5], "extra_action_cards": 1},
        "rulebook", f"{R}: special cases when moving Progress markers")
    a_prov = ("inferred", "SOB + R04fr (2004 A list, 27) with R12en changes (Ducats 3, Duty 5, +Foreman, +Crop rotation; 29 A tiles)") if e12 else ("corroborated", "SOB tile counts and R04fr tile types (27 A tiles)")
    vals["tiles_A"] = v(tiles_a(edition), *a_prov)
    vals["tiles_B"] = v(tiles_b(edition), "provisional", "",
                        "12 B tiles are known (SOB); the counts of Missions (2+2) and Ships/Colonists (2) and "
                        "one of each other type are chosen to total 27 (2004)" + (" + Favor + Expedition (2012, R12en)" if e12 else ""))
    if e12:
        bonanza = [{"ships": 2}, {"colonists": 2}, {"ducats": 5}, {"ducats": 3}, {"extra_actions": 1},
                   {"expedition_cards": 1}, {"ships": 3}, {"colonists": 3}]
        vals["bonanza"] = v(bonanza, "provisional", "", "8 Bonanza tiles exist (R12en); their bonuses are unknown")
    else:
        vals["bonanza"] = v([], "inferred", "R04fr lists no Bonanza tiles (a 2012 addition, KING)")
    doc = {
        "sheet": f"goa-{edition}",
        "game": "goa",
        "format": 1,
        "description": f"Goa, {edition} edition: component values with provenance (rulebook, corroborated, "
                       "single-source, inferred, provisional; docs/ARCHITECTURE.md, Component data). Development-board cells are "
                       "'yield.<column>.<row>' and 'cost.<column>.<step>' (step s moves row s to s+1).",
        "sources": SOURCES,
        "values": vals,
    }
    return doc


def main() -> None:
    for edition in ("2012", "2004"):
        (HERE / f"goa-{edition}.json").write_text(json.dumps(sheet(edition), indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
