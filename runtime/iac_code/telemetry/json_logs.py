"""Log records as JSON lines (``--log-format json``), with the current trace and span ids."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from iac_code import telemetry


class JsonLineFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, and when a span is
    current ``trace_id``/``span_id`` (hex, as trace backends show them), so a log line can
    be found from its trace and back."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        ids = telemetry.current_ids()
        if ids is not None:
            entry["trace_id"], entry["span_id"] = ids
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)
