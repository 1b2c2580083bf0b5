"""tests/contract/hooks.py finds a game's hooks only at tests/<game>/hooks.py."""
from __future__ import annotations

import sys
import types

from referee.core import registry
from tests.contract import hooks


def test_every_registered_game_has_its_hooks_module():
    for name in registry.games():
        module = hooks.for_game(name)
        assert module is not None and module.__name__ == f"tests.{name}.hooks", name


def test_hooks_are_looked_for_in_the_games_own_tests_only(monkeypatch):
    """No fallback to the old tests/contract/<game>_hooks layout."""
    monkeypatch.setitem(sys.modules, "tests.contract.zz_game_hooks",
                        types.ModuleType("tests.contract.zz_game_hooks"))
    assert hooks.for_game("zz_game") is None
