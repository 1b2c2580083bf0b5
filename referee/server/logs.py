"""structlog logs on stderr; every line of a match is keyed by match_id (and seat / move).

Two formats: ``json`` (one JSON object a line, for tools: the tournament runner reads the
``web_serving`` line, tests read events) and ``console`` (structlog's human-readable lines).
``auto`` picks console when stderr is a terminal and JSON otherwise (a pipe or a file). Records
of other libraries (grpc, asyncio, uvicorn) come out in the same format, at WARNING and above
unless the level is debug."""
from __future__ import annotations

import logging
import os
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("auto", "json", "console")


def resolve_format(fmt: str, stream: TextIO) -> str:
    """``json`` or ``console``: ``auto`` is console on a terminal."""
    if fmt not in FORMATS:
        raise ValueError(f"log format {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt != "auto":
        return fmt
    return "console" if _isatty(stream) else "json"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-less stream
        return False


class _StdlibFormatter(logging.Formatter):
    """A stdlib record as the event dict structlog would make of it, rendered by ``render``."""

    def __init__(self, render: Any, timestamp: Any):
        super().__init__()
        self.render = render
        self.timestamp = timestamp

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "event": record.getMessage(),
            "logger": record.name,
            "level": record.levelname.lower(),
            "timestamp": self.timestamp(record.created),
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return self.render(None, record.levelname.lower(), out)


def _iso_utc(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat().replace("+00:00", "Z")


def _local(created: float) -> str:
    return datetime.fromtimestamp(created).strftime("%Y-%m-%d %H:%M:%S")


def configure(level: str = "info", fmt: str = "json", stream: TextIO | None = None) -> str:
    """Send structlog and stdlib logging to ``stream`` (stderr) at ``level`` in ``fmt``
    (auto, json or console); return the format used."""
    stream = stream if stream is not None else sys.stderr
    fmt = resolve_format(fmt, stream)
    lvl = getattr(logging, level.upper(), logging.INFO)
    if fmt == "console":
        colors = _isatty(stream) and not os.environ.get("NO_COLOR")
        render: Any = structlog.dev.ConsoleRenderer(colors=colors)
        stamp = structlog.processors.TimeStamper(fmt="%Y-%m-%d %H:%M:%S", utc=False)
        tail: list[Any] = [render]  # it lays out exc_info itself
        stdlib_time = _local
    else:
        render = structlog.processors.JSONRenderer()
        stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
        tail = [structlog.processors.format_exc_info, render]
        stdlib_time = _iso_utc
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_StdlibFormatter(render, stdlib_time))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(lvl if lvl <= logging.DEBUG else max(lvl, logging.WARNING))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    return fmt
