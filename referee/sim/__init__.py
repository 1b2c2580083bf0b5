"""The forward model: the referee's engines without a referee (docs/research/forward-model.md).

``Simulation`` is one game state with ``decision`` / ``legal_moves`` / ``apply`` / ``clone`` /
``rollout`` / ``result``; ``Simulation.from_views`` draws a full state consistent with what a
seat saw (the game's sampler), ``Simulation.from_record`` starts where a recorded match stood.
``playout`` and ``uniform`` are the random-playout loop; ``referee.sim.convert`` turns what a
bot received (MatchEvents, a Decision's view) into the sampler's input; ``referee.sim.service``
is the Simulator gRPC service for other languages (``referee sim serve``)."""
from .model import MAX_MOVES, Policy, Simulation, playout, uniform

__all__ = ["MAX_MOVES", "Policy", "Simulation", "playout", "uniform"]
