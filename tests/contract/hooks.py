"""Per-game hooks for the contract tests. A game's tests provide ``tests/<game>/hooks.py`` with:

* ``OPTION_SETS``: option dicts the random games cycle through (default: the defaults only);
* ``rerandomise(state, seat, rnd) -> state``: a copy of ``state`` with everything ``seat`` may
  not see drawn anew (``seat`` None: a spectator). The leak test checks the view is unchanged;
* ``check_invariants(state)``: asserts the game's conservation laws, after every move.

Every registered game must provide ``rerandomise`` and ``check_invariants`` (``require``): a
game without one fails the check that needs it, naming the missing hook, rather than skipping it.
``OPTION_SETS`` alone is optional."""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def for_game(name: str) -> ModuleType | None:
    """``tests.<game>.hooks``, or None when the game's tests provide none."""
    module = f"tests.{name}.hooks"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name not in (module, module.rpartition(".")[0]):
            raise  # the hooks exist but import something missing: a real error
        return None


def require(name: str, hook: str) -> Any:
    """The hook ``hook`` of game ``name``; an AssertionError naming the file and the hook when the
    game's tests do not provide it (a check must fail, not skip, for a game it cannot check)."""
    module = for_game(name)
    found = getattr(module, hook, None) if module is not None else None
    assert found is not None, (
        f"tests/{name}/hooks.py must define {hook} (see tests/contract/hooks.py): "
        f"the contract check that needs it cannot run for {name}"
    )
    return found
