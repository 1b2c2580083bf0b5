"""Santa Maria rules, pure: the engine's public face (what the adapter in game.py, the view and
the tests use), gathered from the modules that hold the rules, one concern each:

* ``state``: the match state and the index conventions;
* ``catalog``: the component sheet compiled into the frozen ``Rules``;
* ``geometry``: the colony grid, tile placement, road connexity;
* ``payments``: paying with gold standing in, gains within the storage limit, sell/buy;
* ``tracks``: the conquistador track and the blue dice;
* ``state.Task``, ``effect_tasks``, ``action_tasks``: every sub-decision and pending step, one
  typed object per rule, owning its legal moves and its effect;
* ``turn``: the pending decision, applying a move, the turn's actions;
* ``game_setup``: the set-up; ``scoring``: the end of a year and the final scoring.

Section names follow the French rulebook (Santa Maria, Aporta Games 2017): "Mise en place",
"Mise en place des colonies", "(A) Agrandir sa Colonie", "(B) Activer un bâtiment", "(C) Activer
une rangée/colonne", "Activation des bâtiments" (Production, Échange, Transport maritime,
Conquistador, Religion, Recruter un Moine, Débloquer un dé bleu, Utilisation de l'Or), "(D) Se
retirer", "Actions gratuites", "Fin de l'Année", "Fin de la partie / Décompte final", "Règles
avancées", "Variante: réserve commune de dés bleus", "Jeu en solo", "Tuiles Savant", "Tuiles
Évêque". Open points: RULINGS.md.
"""
from __future__ import annotations

from .action_tasks import (
    BoardChoice,
    DiePlacement,
    DockBonuses,
    LotDraft,
    MathematicsRecovery,
    RoadPlacement,
    TilePlacement,
)
from .catalog import (
    EFFECT_ID,
    GEM,
    GOLD,
    GOODS_NAMES,
    HALL_TILE,
    RES_NAMES,
    SCHOLAR_BIT,
    SUGAR,
    TERRAIN_CITY,
    TERRAIN_EMPTY,
    TERRAIN_FARM,
    TERRAIN_FOREST,
    TERRAIN_ID,
    TERRAIN_MOUNTAIN,
    TERRAIN_ROAD,
    TERRAIN_TOWN_HALL,
    WHEAT,
    WOOD,
    CellKind,
    Effect,
    Rules,
    goods_tuple,
    payment_tuple,
    tile_cells,
    tile_shape,
)
from .effect_tasks import (
    AstronomyShift,
    BuildingActivation,
    ConquistadorAdvance,
    ExchangeOffer,
    MonkRecruitment,
    Production,
    ReligionAdvance,
    ShippingOffer,
    religion_steps,
)
from .game_setup import setup
from .geometry import ALL, COL_CELLS, NEIGHBOURS, ROW_CELLS, cell_name, fits, placements, reach
from .moves import BLUE, COL, ROW, WHITE
from .payments import buy_price, gain, payments
from .scoring import bishop_score, end_of_year, final_scoring
from .state import (
    BOARDS_PICK,
    BOARDS_RANDOM,
    DRAFT,
    OVER,
    SETUP_ADVANCED,
    SETUP_STANDARD,
    YEAR,
    Player,
    State,
    Task,
)
from .tracks import conquistador_order, conquistador_step, unlock_blue_die
from .turn import apply, decision, default_move

__all__ = [
    "ALL",
    "BLUE",
    "BOARDS_PICK",
    "BOARDS_RANDOM",
    "COL",
    "COL_CELLS",
    "DRAFT",
    "EFFECT_ID",
    "GEM",
    "GOLD",
    "GOODS_NAMES",
    "HALL_TILE",
    "NEIGHBOURS",
    "OVER",
    "RES_NAMES",
    "ROW",
    "ROW_CELLS",
    "SCHOLAR_BIT",
    "SETUP_ADVANCED",
    "SETUP_STANDARD",
    "SUGAR",
    "TERRAIN_CITY",
    "TERRAIN_EMPTY",
    "TERRAIN_FARM",
    "TERRAIN_FOREST",
    "TERRAIN_ID",
    "TERRAIN_MOUNTAIN",
    "TERRAIN_ROAD",
    "TERRAIN_TOWN_HALL",
    "WHEAT",
    "WHITE",
    "WOOD",
    "YEAR",
    "AstronomyShift",
    "BoardChoice",
    "BuildingActivation",
    "CellKind",
    "ConquistadorAdvance",
    "DiePlacement",
    "DockBonuses",
    "Effect",
    "ExchangeOffer",
    "LotDraft",
    "MathematicsRecovery",
    "MonkRecruitment",
    "Player",
    "Production",
    "ReligionAdvance",
    "RoadPlacement",
    "Rules",
    "ShippingOffer",
    "State",
    "Task",
    "TilePlacement",
    "apply",
    "bishop_score",
    "buy_price",
    "cell_name",
    "conquistador_order",
    "conquistador_step",
    "decision",
    "default_move",
    "end_of_year",
    "final_scoring",
    "fits",
    "gain",
    "goods_tuple",
    "payment_tuple",
    "payments",
    "placements",
    "reach",
    "religion_steps",
    "setup",
    "tile_cells",
    "tile_shape",
    "unlock_blue_die",
]
