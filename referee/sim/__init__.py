"""The forward model: the referee's engines without a referee (docs/research/forward-model.md).

``Simulation`` is one game state with ``decision`` / ``legal_moves`` / ``apply`` / ``clone`` /
``rollout`` / ``result``; ``Simulation.from_views`` draws a full state consistent with what a
seat saw (the game's sampler)."""
from .model import Policy, Simulation

__all__ = ["Policy", "Simulation"]
