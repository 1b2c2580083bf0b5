"""The web viewer's Goa board (referee/web/static/goa.js) reads the view's JSON field names: run
it under Node on a spectator view, as the viewer's frames give it, and read the drawn text."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from referee.games.goa import GAME
from referee.web import frames
from referee.web.render import STATIC
from tests.goa.helpers import new_game

DRAW = """
const fs = require("fs"), vm = require("vm");
const ctx = {window: {}};
vm.createContext(ctx);
for (const f of ["svg.js", "goa.js"]) vm.runInContext(fs.readFileSync(process.argv[1] + "/" + f, "utf8"), ctx);
const v = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(ctx.window.RefereeBoards.goa(v, {names: []}));
"""


def draw(view) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    proc = subprocess.run([node, "-e", DRAW, str(STATIC)], input=json.dumps(frames.view_json(view)),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_board_counts_the_tiles_in_the_box_even_when_unseen():
    """2004 FR, Préparation: the two unused A tiles go back to the box unseen, so the view lists
    none of them and the board shows the view's count (box_count)."""
    view = GAME.view(new_game(4, 2, edition="2004"), None)
    assert view.box_count == 2 and not view.box
    assert "tiles in the box 2" in draw(view)
