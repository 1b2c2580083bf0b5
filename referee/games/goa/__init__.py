"""Goa (Rüdiger Dorn), 2-4 players: the 2012 edition "A New Expedition" and the 2004 original.
Rules: modules by concern (README.md), entered through rules.py; open points: RULINGS.md."""
from .game import GoaGame

GAME = GoaGame()

__all__ = ["GAME", "GoaGame"]
