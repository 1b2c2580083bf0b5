"""The shipped tournament files are valid and enter each game's own greedy bot (issue 12: the
gauntlet example entered the Batavia bot into a Goa tournament)."""
from __future__ import annotations

import re

import pytest
from referee_tournament.config import load

from .conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "tournaments").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_greedy_bots_match_the_game(path):
    cfg = load(path)
    for e in cfg.entrants:
        for kind in re.findall(r"greedy-([a-z-]+)", " ".join(e.command)):
            assert kind.replace("-", "_") == cfg.game, (e.name, kind, cfg.game)
