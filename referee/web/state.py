"""What every handler of the web app reads: the referee (``ServerView``), the match source over
it and the live feeds, kept once in the app's state by ``create_app`` and read back typed.

Starlette's ``app.state`` holds untyped attributes; ``of(request)`` is the one place that reads
it, so a handler gets a ``WebState`` (and mypy its members' types) instead of ``Any``."""
from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from .live import LiveHub
from .reader import ServerView
from .source import MatchSource


@dataclass(frozen=True, slots=True)
class WebState:
    service: ServerView
    source: MatchSource
    hub: LiveHub


def of(request: Request) -> WebState:
    """The state ``create_app`` put in the request's app."""
    state = request.app.state.web
    if not isinstance(state, WebState):  # an app not made by create_app: a bug, not input
        raise TypeError(f"the web app's state is {type(state).__name__}, not WebState")
    return state
