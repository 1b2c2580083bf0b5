"""Reinforcement-learning environments on the forward model, one per game
(docs/research/environments.md): a PettingZoo AEC environment (:func:`env`, with PettingZoo's
standard wrappers, or :func:`aec` alone), a Gymnasium single-seat environment against reference
bots (:func:`single`, and the Gymnasium ids ``referee/<Game>-v0`` this import registers), an
OpenSpiel Python game (``referee_research.envs.spiel``, imported on demand: it loads pyspiel and
registers the games with it), and the encodings they share (``referee_research.envs.encoding``)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .aec import RefereeAEC, aec, env, raw_env
from .encoding import ActionEncoding, ObservationEncoding, encodings
from .single import SingleSeatEnv, gym_ids, register_gym_ids


def single(game: str, seats: int | None = None, seat: int = 0,
           opponents: str | Sequence[str] = "random",
           options: Mapping[str, Any] | None = None) -> SingleSeatEnv:
    """The Gymnasium environment of ``game``: ``seat`` learns, ``opponents`` ("random",
    "greedy" or an SDK bot name, one for all or one per other seat) play the rest."""
    return SingleSeatEnv(game, seats, seat, opponents, options)


register_gym_ids()

__all__ = ["ActionEncoding", "ObservationEncoding", "RefereeAEC", "SingleSeatEnv", "aec",
           "encodings", "env", "gym_ids", "raw_env", "register_gym_ids", "single"]
