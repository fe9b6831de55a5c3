"""A cheap "is this message large?" test, so that big frames are encoded off the event loop.

Encoding a frame of many megabytes takes long enough to stall every other session of the
connection (a 128 MiB diff kept ``session/list`` unanswered for 30 s, issue 19). Knowing the
exact size needs the encoding itself, but the total length of the strings in a message is a
lower bound of it and costs one walk over its containers: a streamed chunk has a handful of
nodes, so the walk is negligible on the hot path. The walk stops as soon as the bound is
passed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LARGE_FRAME_CHARS", "at_least_chars"]

# Below this, encoding on the event loop is quicker than a thread hop.
LARGE_FRAME_CHARS = 256 * 1024


def at_least_chars(message: Any, limit: int) -> bool:
    """True when the strings of ``message`` (keys included) hold at least ``limit`` characters."""
    total = 0
    stack: list[Any] = [message]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            for key, value in item.items():
                if isinstance(key, str):
                    total += len(key)
                stack.append(value)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            continue
        if total >= limit:
            return True
    return False
