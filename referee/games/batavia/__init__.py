"""Batavia (Queen Games, 2008), 3-5 players. Rules: rules.py; open points: RULINGS.md."""
from .game import BataviaGame

GAME = BataviaGame()

__all__ = ["GAME", "BataviaGame"]
