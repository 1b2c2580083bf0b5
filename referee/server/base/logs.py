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


def configure(level: str = "info", fmt: str = "json", stream: TextIO | None = None) -> str:
    """Send structlog and stdlib logging to ``stream`` (stderr) at ``level`` in ``fmt``
    (auto, json or console); return the format used."""
    stream = stream if stream is not None else sys.stderr
    fmt = resolve_format(fmt, stream)
    lvl = getattr(logging, level.upper(), logging.INFO)
    if fmt == "console":
        colors = _isatty(stream) and not os.environ.get("NO_COLOR")
        stamp = structlog.processors.TimeStamper(fmt="%Y-%m-%d %H:%M:%S", utc=False)
        tail: list[Any] = [structlog.dev.ConsoleRenderer(colors=colors)]  # lays out exc_info
    else:
        stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
        tail = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    handler = logging.StreamHandler(stream)
    # other libraries' records go through the same processors as structlog's own lines
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.add_logger_name, structlog.processors.add_log_level,
                           stamp, structlog.processors.format_exc_info],  # traceback as text
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *tail]))
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
