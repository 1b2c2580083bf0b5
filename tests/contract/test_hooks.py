"""tests/contract/hooks.py finds a game's hooks only at tests/<game>/hooks.py."""
from __future__ import annotations

import sys
import types

import pytest

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


def test_every_registered_game_has_every_hook_the_contract_checks_need():
    for name in registry.games():
        for hook in ("rerandomise", "check_invariants"):
            assert callable(hooks.require(name, hook)), (name, hook)


def test_a_missing_hook_fails_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tests.zz_game", types.ModuleType("tests.zz_game"))
    monkeypatch.setitem(sys.modules, "tests.zz_game.hooks", types.ModuleType("tests.zz_game.hooks"))
    with pytest.raises(AssertionError, match=r"tests/zz_game/hooks.py must define rerandomise"):
        hooks.require("zz_game", "rerandomise")
