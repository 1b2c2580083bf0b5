"""A league run folder with finished matches, built through the league's store."""
from __future__ import annotations

import json
from pathlib import Path

from referee_tournament.ladder import Rating
from referee_tournament.league.store import LeagueStore


def finished_league_folder(tmp_path: Path) -> Path:
    out = tmp_path / "league-x"
    out.mkdir()
    s = LeagueStore(out / "league.sqlite")
    s.set_meta({"name": "x", "format": "league", "settings": json.dumps(
        {"games": [{"name": "batavia", "seats": 2, "options": {}}], "time_policy": {}})})
    outcome = {"seats": [{"seat": 0, "entrant": "a", "moves": 5, "timeouts": 0},
                         {"seat": 1, "entrant": "b@1", "moves": 0, "timeouts": 3,
                          "crashed": True, "exit_code": 1, "error": "ValueError: boom"}]}
    s.start(1, "m1", "batavia", ["a", "b@1"], 1, {})
    s.finish(1, {"match_id": "m1", "scores": [9, 3], "ranks": [1, 2], "outcome": outcome},
             [Rating("a", 27.0, 8.0, 1, 1.0), Rating("b@1", 23.0, 8.0, 1, 0.0)], [], {})
    s.close()
    return out
