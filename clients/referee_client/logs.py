"""Log lines of the SDK and the reference bots, on the standard library's ``logging``: the SDK
depends on grpcio and protobuf only (docs/ARCHITECTURE.md, *SDK and bots*).

A logger takes an event and key-value pairs, and :meth:`BoundLogger.bind` adds pairs to every
line it writes (the match, the seat), the way the referee's own log lines read::

    log = get_logger("referee_client").bind(match=match_id)
    log.info("joined", game="goa", seats=3)

:func:`configure` writes them to stderr, readable (``<UTC time> [level    ] event  key=value``,
keys sorted) or as one JSON object per line (the pairs, then ``event``, ``level`` and
``timestamp``). A program that configures ``logging`` itself gets the records as usual, the
pairs in the record's ``kv`` attribute.
"""
from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

#: the logging level of each name a command line accepts
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR}
_EVENT_WIDTH = 30
_LEVEL_WIDTH = len("exception")


class BoundLogger:
    """A ``logging.Logger`` with key-value pairs bound to every line."""

    __slots__ = ("_context", "_logger")

    def __init__(self, logger: logging.Logger, context: dict[str, Any] | None = None):
        self._logger = logger
        self._context = context or {}

    def bind(self, **pairs: Any) -> BoundLogger:
        return BoundLogger(self._logger, {**self._context, **pairs})

    def _log(self, level: int, event: str, pairs: dict[str, Any], exc_info: bool = False) -> None:
        if self._logger.isEnabledFor(level):
            self._logger.log(level, event, exc_info=exc_info, stacklevel=3,
                             extra={"kv": {**self._context, **pairs}})

    def debug(self, event: str, **pairs: Any) -> None:
        self._log(logging.DEBUG, event, pairs)

    def info(self, event: str, **pairs: Any) -> None:
        self._log(logging.INFO, event, pairs)

    def warning(self, event: str, **pairs: Any) -> None:
        self._log(logging.WARNING, event, pairs)

    def error(self, event: str, **pairs: Any) -> None:
        self._log(logging.ERROR, event, pairs)

    def exception(self, event: str, **pairs: Any) -> None:
        """An error line with the traceback of the exception being handled."""
        self._log(logging.ERROR, event, pairs, exc_info=True)


def get_logger(name: str) -> BoundLogger:
    return BoundLogger(logging.getLogger(name))


def _timestamp(record: logging.LogRecord) -> str:
    return datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ConsoleFormatter(logging.Formatter):
    """``<UTC time> [level    ] event  key=value ...``, keys sorted, strings unquoted."""

    def format(self, record: logging.LogRecord) -> str:
        pairs = getattr(record, "kv", {})
        text = " ".join(f"{k}={v if isinstance(v, str) else repr(v)}"
                        for k, v in sorted(pairs.items()))
        line = (f"{_timestamp(record)} [{record.levelname.lower():<{_LEVEL_WIDTH}}] "
                f"{record.getMessage():<{_EVENT_WIDTH}} {text}").rstrip()
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: the pairs, then ``event``, ``level``, ``timestamp``."""

    def format(self, record: logging.LogRecord) -> str:
        out = {**getattr(record, "kv", {}), "event": record.getMessage(),
               "level": record.levelname.lower(), "timestamp": _timestamp(record)}
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=repr)


def configure(level: str = "info", json_lines: bool = False, stream: TextIO | None = None) -> None:
    """Write every log line at ``level`` or above to ``stream`` (default stderr), readable or
    as JSON lines; replaces the handlers of the root logger."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else ConsoleFormatter())
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LEVELS.get(level.lower(), logging.INFO))
