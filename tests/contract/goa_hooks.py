"""Goa's hooks for the contract tests, borrowed from Goa's own property tests until Goa's tests
have a ``tests/goa/hooks.py`` (then this file goes: ``hooks.for_game`` looks there first)."""
from __future__ import annotations

from tests.goa.test_goa_properties import OPTION_SETS, check_invariants, rerandomise

__all__ = ["OPTION_SETS", "check_invariants", "rerandomise"]
