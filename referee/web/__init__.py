"""The web viewer (``referee serve --http-port``): match list, live boards and replays."""
from .app import WebServer, create_app

__all__ = ["WebServer", "create_app"]
