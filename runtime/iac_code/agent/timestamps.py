"""Timestamps as the wire and the store write them: ISO 8601 UTC with microseconds and "Z"."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
