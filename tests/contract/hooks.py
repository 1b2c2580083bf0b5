"""Per-game hooks for the contract tests. A game's tests may provide ``tests/<game>/hooks.py``
with any of:

* ``OPTION_SETS``: option dicts the random games cycle through (default: the defaults only);
* ``rerandomise(state, seat, rnd) -> state``: a copy of ``state`` with everything ``seat`` may
  not see drawn anew (``seat`` None: a spectator). The leak test checks the view is unchanged;
* ``check_invariants(state)``: asserts the game's conservation laws, after every move.

A game without a hook for a check is reported as skipped, never silently passed."""
from __future__ import annotations

import importlib
from types import ModuleType


def for_game(name: str) -> ModuleType | None:
    """``tests.<game>.hooks``, or None when the game's tests provide none."""
    module = f"tests.{name}.hooks"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name not in (module, module.rpartition(".")[0]):
            raise  # the hooks exist but import something missing: a real error
        return None
