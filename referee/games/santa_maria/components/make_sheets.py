"""Writes santa-maria-aporta-2017.json, the default component sheet.

Run: .venv/bin/python -m referee.games.santa_maria.components.make_sheets

Values stated by the rulebook carry provenance ``rulebook``; picture-only contents that no source
gave (colony boards, development tiles, ships, tracks, Scholar points, three camps, town halls,
the road tile) are ``provisional``: designed here so the game is playable and every effect kind and
rule is exercised, NOT the printed values. Replace them with an organizer's verified sheet.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("santa-maria-aporta-2017.json")
R = "R"  # the French rulebook


def P(**gain: int) -> dict[str, Any]:
    return {"kind": "produce", "gain": gain}


def X(*options: tuple[dict[str, int], dict[str, int]]) -> dict[str, Any]:
    return {"kind": "exchange", "options": [{"pay": p, "gain": g} for p, g in options]}


SHIP = {"kind": "ship"}
CONQ = {"kind": "conquistador"}
REL = {"kind": "religion"}


def B(terrain: str, *effects: dict[str, Any], vp: int = 0) -> dict[str, Any]:
    cell: dict[str, Any] = {"terrain": terrain, "effects": list(effects)}
    if vp:
        cell["end_points"] = vp
    return cell


def ROAD(colonists: int = 1) -> dict[str, Any]:
    return {"terrain": "road", "colonists": colonists}


ARCHETYPES = {
    "farm": [
        [P(wheat=1)], [P(sugar=1)], [P(wheat=2)],
        [X(({"wheat": 1}, {"coins": 2}), ({"wheat": 1}, {"points": 1}))],
        [P(sugar=1), P(coins=1)],
    ],
    "forest": [
        [P(wood=1)], [P(wood=2)],
        [X(({"wood": 1}, {"coins": 3}), ({"gem": 1}, {"coins": 3}))],  # Anna's example (R)
        [P(wood=1), P(points=1)],
    ],
    "mountain": [
        [P(gem=1)], [P(gold=1)], [CONQ], [P(gem=1), CONQ],
        [X(({"gem": 1}, {"points": 3}), ({"sugar": 1}, {"points": 3}))],
    ],
    "city": [
        [SHIP], [REL], [P(coins=2)], [CONQ], [P(points=1)], [REL, P(coins=1)],
        [X(({"wood": 1, "wheat": 1}, {"coins": 5}),)],
        [X(({"sugar": 1}, {"gold": 1}), ({"gem": 1}, {"points": 2}))],
    ],
}
TERR = ("farm", "forest", "mountain", "city")


def board_a(rng: random.Random, idx: int) -> list:
    grid: list[list[dict[str, Any] | None]] = [[None] * 6 for _ in range(6)]
    # a printed town hall, two roads with colonists, eight buildings (one with several effects,
    # one with purple end-game points): 11 printed cells, spread so every row and column has one.
    perm = list(range(6))
    rng.shuffle(perm)
    cells = [(r, perm[r]) for r in range(6)]
    free = [(r, c) for r in range(6) for c in range(6) if (r, c) not in cells]
    rng.shuffle(free)
    cells += free[:5]
    th, roads, blds = cells[0], cells[1:3], cells[3:]
    grid[th[0]][th[1]] = B("town_hall", P(coins=1), REL)
    grid[roads[0][0]][roads[0][1]] = ROAD(1)
    grid[roads[1][0]][roads[1][1]] = ROAD(2)
    for k, (r, c) in enumerate(blds):
        terr = TERR[(k + idx) % 4]
        fx = rng.choice(ARCHETYPES[terr])
        if k == 0:
            fx = [P(coins=1), P(wheat=1), CONQ]  # "Bâtiments imprimés ... effets multiples"
        grid[r][c] = B(terr, *fx, vp=2 if k == 1 else 0)
    return grid


def board_b() -> list:
    grid: list[list[dict[str, Any] | None]] = [[None] * 6 for _ in range(6)]
    grid[0][0] = B("forest", P(wood=1))
    grid[2][3] = B("farm", P(wheat=1))
    grid[3][5] = B("city", P(coins=2))
    grid[5][2] = B("mountain", P(gem=1), CONQ)
    grid[4][4] = ROAD(1)
    return grid


def random_cell(rng: random.Random, road_share: float) -> dict:
    if rng.random() < road_share:
        return ROAD(rng.choice((1, 1, 2)))
    terr = rng.choice(TERR)
    return B(terr, *rng.choice(ARCHETYPES[terr]), vp=rng.choice((0, 0, 0, 0, 1, 2)))


def dev_tiles(rng: random.Random, count: int, size: int) -> list:
    out = []
    for _i in range(count):
        while True:
            t = [random_cell(rng, 0.25) for _ in range(size)]
            if any(c["terrain"] != "road" for c in t):
                break
        out.append(t)
    # make sure every effect kind and a purple frame appear on the tiles
    out[0][0] = B("city", SHIP)
    out[1][0] = B("city", REL)
    out[2][0] = B("mountain", CONQ, vp=1)
    out[3][0] = B("forest", X(({"wood": 1}, {"coins": 3}), ({"gem": 1}, {"coins": 3})))
    return out


def ship_tiles(rng: random.Random, count: int, starting: bool) -> list:
    if starting:
        return [
            {"cost": {"wood": 1}, "points": 1},
            {"cost": {"wheat": 1}, "points": 1},
            {"cost": {"wood": 1, "wheat": 1}, "points": 2},
            {"cost": {"sugar": 1}, "points": 2},
        ]
    value = {"wood": 1, "wheat": 1, "sugar": 2, "gem": 2, "gold": 3}
    out = [{"cost": {"wood": 1, "sugar": 1}, "points": 2}]  # the rulebook example's cost (R)
    while len(out) < count:
        cost: dict[str, int] = {}
        for _ in range(rng.choice((1, 2, 2, 3))):
            r = rng.choice(("wood", "wheat", "sugar", "gem", "gem", "sugar", "gold"))
            cost[r] = cost.get(r, 0) + 1
        pts = max(0, sum(value[r] * n for r, n in cost.items()) - 1)
        out.append({"cost": cost, "points": pts})
    return out


def town_halls() -> list:
    return [
        [B("town_hall", P(coins=2)), B("town_hall", REL)],
        [B("town_hall", P(wood=1)), B("town_hall", CONQ)],
        [B("town_hall", P(wheat=1), P(coins=1)), B("town_hall", SHIP)],
        [B("town_hall", P(points=1)), B("town_hall", X(({"sugar": 1}, {"coins": 4}), ({"gem": 1}, {"coins": 4})))],
    ]


def entry(value: Any, provenance: str, source: str | None = None,
          note: str | None = None) -> dict[str, Any]:
    e: dict[str, Any] = {"value": value, "provenance": provenance}
    if source:
        e["source"] = source
    if note:
        e["note"] = note
    return e


def items(prefix: str, values: list, note: str) -> dict:
    """One provisional value per item (tile, ship, board), so provenance counts count items."""
    return {f"{prefix}_{i:02d}": entry(v, "provisional", None, note) for i, v in enumerate(values, 1)}


def build() -> dict:
    rng = random.Random(2017)

    def rb(v: Any, src: str, note: str | None = None) -> dict[str, Any]:
        return entry(v, "rulebook", src, note)

    def prov(v: Any, note: str) -> dict[str, Any]:
        return entry(v, "provisional", None, note)

    values = {
        "component_counts": rb(
            {"colony_boards": 4, "development_double": 15, "development_triple": 15,
             "ships_starting": 4, "ships_standard": 30, "scholars": 10, "bishops": 6,
             "town_halls": 4, "monk_spaces": 10, "missionary_camps": 4},
            "R, 'Mise en place' (4 + 30 ship tiles, 10 Scholars, 6 Bishops, 15 + 15 development "
            "tiles, 4 town halls, 10 monk spaces); camps: 10 - 3 - 3",
        ),
        "seats": rb({"min": 1, "max": 4}, "R, 'Mise en place', 'Jeu en solo'"),
        "years": rb(3, "R, 'La partie peut commencer': 3 manches"),
        "resources": rb(["wood", "wheat", "sugar", "gem", "gold"], "R, 'Ressources'"),
        "storage_limit": rb(3, "R, 'Limite de stockage de la Réserve personnelle'"),
        "sell_price": rb({"wood": 1, "wheat": 1, "sugar": 2, "gem": 2, "gold": 2}, "R, 'Actions gratuites: Vendre'"),
        "buy_price": rb({"wood": 3, "wheat": 3}, "R, 'Actions gratuites: Acheter'"),
        "start_wood": rb(2, "R, 'Mise en place des colonies'"),
        "start_coins_by_position": rb([3, 4, 5, 6], "R, 'Mise en place des colonies'"),
        "blue_dice_per_player": rb(3, "R, 'Mise en place': 3 dés bleus par joueur"),
        "start_blue_dice": rb(1, "R, 'Mise en place des colonies': 1 dé bleu"),
        "white_dice_per_player": rb(3, "R, 'Mise en place': 3 dés blancs par joueur"),
        "white_dice_per_year": rb(3, "R, '(C)': maximum de 3 dés blancs par Année"),
        "die_pip_cost": rb(1, "R, '(C)': 1 Pièce pour augmenter ou diminuer de 1"),
        "expand_cost_double": rb({"wood": 2}, "R, '(A) Agrandir sa colonie'"),
        "expand_cost_triple": rb({"wood": 2, "wheat": 1}, "R, '(A) Agrandir sa colonie'"),
        "display_doubles": rb(5, "R, 'Mise en place' and '(A)'"),
        "display_triples": rb(5, "R, 'Mise en place' and '(A)'"),
        "road_tiles": rb(3, "R, 'Mise en place': 3 tuiles Route"),
        "scholars_drawn": rb(3, "R, 'Mise en place'"),
        "bishops_drawn": rb(3, "R, 'Mise en place'"),
        "monks_per_player": rb(6, "R, 'Mise en place': 6 Moines"),
        "monk_fee": rb(2, "R, 'Recruter un Moine': 2 Pièces à chaque autre joueur"),
        "conquistador_scoring": rb(
            {"2": [[4, 0], [5, 0], [6, 0]], "3": [[6, 3, 0], [8, 4, 0], [10, 5, 0]],
             "4": [[6, 4, 2, 0], [9, 6, 3, 0], [12, 8, 4, 0]]},
            "R, 'Fin de l'Année' table and example (4 players, year 2: 9/6/3/0)",
            "the OCR'd table reads rows '4 5 6', '3-6 4-8 5-10', '2-4-6 3-6-9 4-8-12' (last place 0)",
        ),
        "solo_tree_points": rb([4, 5, 6], "R, 'Jeu en solo'"),
        "solo_achievements": rb(
            {"communism": 28, "capitalism": 4, "theocracy": 30, "capracracy": True,
             "democracy": 120, "utopia": 150},
            "R, 'Jeu en solo'",
        ),
        "retreat_spaces": entry(
            [{"action": "coins", "gain": {"coins": 2}}, {"action": "religion"},
             {"action": "conquistador"}, {"action": "ship"}, {"action": "road"}],
            "inferred", "R, '(D) Se retirer' lists the five spaces in this order; the road space "
            "is 'la case la plus basse' (example)",
            "top-to-bottom order of the first four follows the order of the text",
        ),
        "docks": entry(
            [{"bonus": "coins", "gain": {"coins": 2}}, {"bonus": "religion"},
             {"bonus": "conquistador"}, {"bonus": "points", "gain": {"points": 2}}],
            "inferred", "R, '(D)' example (top to bottom: 2 coins, religion actions, 2 points); "
            "'Transport maritime' example (a Religion dock); research L-EN",
            "the conquistador dock and its place are inferred from the four effect symbols",
        ),
        "port_column_points": rb(3, "R, 'Décompte final: Ports'"),
        "coins_per_point": rb(3, "R, 'Décompte final: Ressources et Pièces'"),
        "bishop_penalty": rb(2, "R, 'Évêque' and 'Décompte final: Moines'"),
        "scholars": rb(
            ["astronomy", "taxation", "botany", "philosophy", "mathematics", "construction",
             "industrialization", "basic_economy", "advanced_economy", "logistics"],
            "R, 'Tuiles Savant' (effects implemented by the engine)",
        ),
        **{f"scholar_points_{name}": prov(pts, "R says 1 to 3 points (purple); this tile's value was not found")
           for name, pts in {"astronomy": 2, "taxation": 2, "botany": 2, "philosophy": 3,
                             "mathematics": 1, "construction": 2, "industrialization": 3,
                             "basic_economy": 1, "advanced_economy": 2, "logistics": 1}.items()},
        "bishops": rb(
            {"square": {"sizes": [3, 4, 5], "points": [4, 7, 10]},
             "ships_in_one_dock": {"per": 2, "max": 12},
             "cities_to_town_hall": {"per": 2, "max": 12},
             "colonists_to_town_hall": {"per": 1, "max": 12},
             "largest_area": {"per": 2, "max": 12},
             "diversity": {"per": 3, "max": 12}},
            "R, 'Tuiles Évêque'",
        ),
        "missionary_camp_01": rb({"points": 3}, "R, 'Recruter un Moine' example: Eric places a monk on a camp and gains 3 points"),
        "missionary_camp_02": prov({"wood": 1, "wheat": 1}, "camp reward not found"),
        "missionary_camp_03": prov({"coins": 4}, "camp reward not found"),
        "missionary_camp_04": prov({"gold": 1, "points": 1}, "camp reward not found"),
        "blue_die_monk_symbols": rb([1, 3], "R, 'Débloquer un dé bleu': 1er et 3ème symbole Moine"),
        "religion_track": prov(
            {"length": 13, "monk_symbols": [2, 4, 6, 8, 10, 12]},
            "length and monk symbols not found (6 monks per player suggest 6 symbols)",
        ),
        "conquistador_track": prov(
            {"length": 10, "gold_symbols": [3, 6, 9], "trees": [2, 5, 8]},
            "length, gold symbols and trees not found (solo needs 3 trees)",
        ),
        "tile_shapes": entry(
            {"double": [[0, 0], [0, 1]], "triple": [[0, 0], [0, 1], [1, 0]]},
            "single-source", "research VG: doubles 2x1, triples L-shaped 3 cells",
        ),
        **items("colony_board_a", [{"id": f"A{i + 1}", "grid": board_a(rng, i)} for i in range(4)],
                "printed A side not found (research PK: about 10 printed fields per colony; a "
                "printed town hall assumed)"),
        "colony_board_b": prov(
            {"id": "B", "grid": board_b()},
            "B side (identical on all boards, R) not found; research presumes it nearly empty",
        ),
        **items("development_tile_double", dev_tiles(rng, 15, 2), "double tile not found"),
        **items("development_tile_triple", dev_tiles(rng, 15, 3), "triple tile not found"),
        **items("ship_tile_starting", ship_tiles(rng, 4, True), "starting ship not found"),
        **items("ship_tile_standard", ship_tiles(rng, 30, False),
                "ship not found (standard ship 01 has the cost of the rulebook example, "
                "1 wood + 1 sugar; its points are not given)"),
        **items("town_hall", town_halls(), "town hall tile not found"),
        "road_tile": prov({"terrain": "road", "colonists": 1}, "colonists on the road tiles not found"),
    }
    return {
        "sheet": "santa-maria-aporta-2017",
        "game": "santa_maria",
        "format": 1,
        "description": (
            "Santa Maria (Aporta Games 2017 / Pixie Games 2018). Rule values from the French "
            "rulebook; picture-only contents PROVISIONAL (designed to exercise every rule, not "
            "the printed components)."
        ),
        "sources": {
            "R": "Santa Maria rulebook, French edition, cited by section",
            "L-EN": "http://ludorium.at/SPIELE/pegasus/santa_maria_e2.htm",
            "VG": "https://volpegiocosa.it/?p=5206",
            "PK": "https://poeppelkiste.de/rezensionen/2018/maria/maria.php",
            "data": "the component research compiled for this referee from the sources above (not "
                    "distributed with it)",
        },
        "values": values,
    }


if __name__ == "__main__":
    OUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
