"""Logging to stderr (never stdout: it carries the protocol) and optionally a file."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iac_code.settings import Settings

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: str, log_file: Path | None = None) -> None:
    root = logging.getLogger()
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))
    for handler in list(root.handlers):
        root.removeHandler(handler)
    stderr = logging.StreamHandler(sys.__stderr__)
    stderr.setFormatter(logging.Formatter(_FORMAT))
    root.addHandler(stderr)
    if log_file is not None:
        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            # Known only now, with initialize already answered: the agent serves on, with
            # logs on stderr only, rather than dying in front of the editor.
            reason = exc.strerror or str(exc)
            logging.getLogger("iac_code.settings").warning(
                "log_file %s cannot be opened (%s); logging to stderr only", log_file, reason
            )
            return
        file_handler.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(file_handler)


def use_json_lines() -> None:
    """Every handler of the root logger writes JSON lines (``--log-format json``)."""
    from iac_code.telemetry.json_logs import JsonLineFormatter

    for handler in logging.getLogger().handlers:
        handler.setFormatter(JsonLineFormatter())


def start_logging(settings: Settings) -> None:
    """Logging as the settings ask; a configured level that is not one is said here.

    Telemetry starts here too (a no-op unless ``OTEL_*`` variables configure it): both
    transports call this first, and JSON log lines need the active recorder for their ids.
    """
    configure_logging(settings.log_level, settings.log_file)
    if settings.log_format == "json":
        use_json_lines()
    from iac_code import telemetry

    telemetry.start(settings)
    if settings.log_level_warning:
        logging.getLogger("iac_code.settings").warning("%s", settings.log_level_warning)
