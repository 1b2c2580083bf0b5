"""Batavia's component values: the constants of the game's material and the sheet's values
compiled once into the frozen ``Rules`` the rules read (every game keeps this job in
``catalog.py``; docs/game-authors.md).

Indices: companies 0..4 (EN, DK, FR, NL, SE), goods 0..6 (tea … pepper), a stall tile is
``company * 7 + good``. Spaces are 1..35 on the track; 0 is the start space, 36 the arrival tile.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.core.components import ComponentSheet, reduce_derived

#: "l'une des 5 compagnies des Indes orientales" (Batavia, French rules, "Matériel de jeu"), in the
#: order of the rules: "Les compagnies sont originaires des nations (de gauche à droite)"
COMPANY_IDS = ("EN", "DK", "FR", "NL", "SE")
COMPANY_NAMES = ("England", "Denmark", "France", "Netherlands", "Sweden")
#: "35 échoppes — chaque tuile « Echoppe » arbore le pavillon d'une compagnie et un type de
#: marchandise" (Batavia, French rules, "Matériel de jeu"): 5 companies x 7 goods
GOOD_IDS = ("tea", "cotton", "porcelain", "silk", "ginger", "nutmeg", "pepper")
N_COMPANIES = len(COMPANY_IDS)
N_GOODS = len(GOOD_IDS)
N_STALL_TILES = N_COMPANIES * N_GOODS
#: 3 to 5 players: "A moins de 5 joueurs, le matériel superflu est mis de côté" (Batavia, French
#: rules, "Préparation"); the pirates attack at "la case « 21 » (a trois joueurs) ou la case
#: « 25 » (a quatre ou cinq joueurs)" ("Attaque de pirates")
MIN_SEATS, MAX_SEATS = 3, 5
#: the merchants' start space, and the arrival tile one past the track's 35 spaces (one per stall
#: tile; the sheet's ``track_spaces``)
TRACK_SPACES = N_STALL_TILES
START, ARRIVAL = 0, TRACK_SPACES + 1

#: the two set-ups of the track (the option ``setup``)
SETUP_FACE_DOWN, SETUP_FACE_UP = "face_down", "face_up"


@dataclass(frozen=True)
class Rules:
    """The component values the rules use, read once from the sheet."""

    track_spaces: int
    initially_face_up: int
    reveal_block: int
    cards_per_company: tuple[int, ...]
    starting_hand: int
    draw_count: int
    bills_per_player: int
    crates_per_player: int
    die_faces: tuple[int, ...]
    exchange_gold: dict[int, int]
    pirate_threshold: dict[int, int]
    cannon_max: int
    goods_gold: tuple[tuple[int, int], ...]  # per good: (majority, tie each)
    bills_gold: tuple[int, int]
    arrival_gold: int
    stall_tiles: tuple[int, ...]
    face_up_layout: tuple[int, ...]

    def __reduce__(self) -> tuple[Any, ...]:  # a pickled state unpickles onto the process's Rules
        return reduce_derived(self)

    @classmethod
    def from_sheet(cls, sheet: ComponentSheet) -> Rules:
        v = sheet.values

        def tile(pair: Any) -> int:
            return COMPANY_IDS.index(pair[0]) * N_GOODS + GOOD_IDS.index(pair[1])

        return cls(
            track_spaces=v["track_spaces"],
            initially_face_up=v["initially_face_up"],
            reveal_block=v["reveal_block"],
            cards_per_company=tuple(v["ship_cards_per_company"][c] for c in COMPANY_IDS),
            starting_hand=v["starting_hand"],
            draw_count=v["draw_count"],
            bills_per_player=v["bills_per_player"],
            crates_per_player=v["crates_per_player"],
            die_faces=tuple(v["die_faces"]),
            exchange_gold={int(k): g for k, g in v["exchange_gold"].items()},
            pirate_threshold={int(k): t for k, t in v["pirate_threshold"].items()},
            cannon_max=v["cannon_max"],
            goods_gold=tuple(tuple(v[f"goods_gold_{g}"]) for g in GOOD_IDS),
            bills_gold=tuple(v["bills_majority_gold"]),
            arrival_gold=v["arrival_gold"],
            stall_tiles=tuple(tile(p) for p in v["stall_tiles"]),
            face_up_layout=tuple(tile(p) for p in v["face_up_layout"]),
        )
