"""A provisional determinizer for tests only: it clones the TRUE state of an in-process match
(the hidden parts are not redrawn, only the future of chance), so the search can be developed and
tuned before a game's sampler exists. The bot that ships never uses it: it samples from its seat's
view (``referee_research.ismcts.from_views``)."""
from __future__ import annotations

from referee_research.ismcts_bot import DeterminizerFactory

from referee.core.rng import Rng, Streams
from referee.sim import Simulation


def peeking(true_sim: Simulation) -> DeterminizerFactory:
    """Determinizers that copy ``true_sim`` as it stands when asked, with a fresh chance root."""

    def factory(game, seat, view, seat_count, history, options):
        def draw(rng: Rng) -> Simulation:
            copy = true_sim.clone()
            copy.state.rng = Streams.from_root(rng.next64(), dict(copy.state.rng.counts))
            return copy

        return draw

    return factory
