"""Santa Maria (Aporta Games 2017), 1-4 players. Rules: rules.py; open points: RULINGS.md."""
from .game import SantaMariaGame

GAME = SantaMariaGame()

__all__ = ["GAME", "SantaMariaGame"]
