"""The web viewer (``referee serve --http-port``): match list, live boards and replays, league
pages. It reads the referee through ``reader.ServerView`` only (README.md says which module
does what)."""
from .app import WebServer, create_app

__all__ = ["WebServer", "create_app"]
