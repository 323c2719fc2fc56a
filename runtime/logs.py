"""The one place structlog is configured.

Every process writes JSON lines (timestamp, level, actor, run, event, fields) to its own
file in the run directory; the supervisor also renders readable lines on a terminal.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import structlog

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class _TeeRenderer:
    """Final processor: JSON to the file, and optionally a readable line to the console."""

    def __init__(self, file: TextIO | None, console: TextIO | None, console_level: int) -> None:
        self.file = file
        self.console = console
        self.console_level = console_level
        self._json = structlog.processors.JSONRenderer()
        self._pretty = structlog.dev.ConsoleRenderer(colors=bool(console and console.isatty()))

    def __call__(self, logger: Any, method: str, event: dict[str, Any]) -> str:
        if self.console is not None and LEVELS.get(event.get("level", "info"), logging.INFO) >= self.console_level:
            self.console.write(self._pretty(logger, method, dict(event)) + "\n")
            self.console.flush()
        line = self._json(logger, method, event)
        if self.file is not None:
            self.file.write(line + "\n")
            self.file.flush()
        return line


class _NullLogger:
    def msg(self, message: str) -> None:  # the renderer already wrote it
        pass

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def configure_logging(
    *, log_file: Path | None, level: str = "info", console: bool = False, console_level: str = "info", **bind: Any
) -> structlog.stdlib.BoundLogger:
    """Configure structlog for this process and return a logger bound with ``bind`` (actor, run, ...)."""
    file = open(log_file, "a", buffering=1, encoding="utf-8") if log_file else None
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
            structlog.processors.format_exc_info,
            _TeeRenderer(file, sys.stderr if console else None, LEVELS[console_level]),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[level]),
        logger_factory=lambda *args: _NullLogger(),
        cache_logger_on_first_use=True,
    )
    return structlog.get_logger().bind(**bind)


class RateLimiter:
    """Lets one event of each kind through per ``interval_secs`` and counts the ones held back."""

    def __init__(self, interval_secs: float) -> None:
        self.interval_secs = interval_secs
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def allow(self, kind: str) -> tuple[bool, int]:
        """(whether to log now, how many of this kind were suppressed since the last one logged)."""
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self.interval_secs:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return False, 0
        self._last[kind] = now
        return True, self._suppressed.pop(kind, 0)
