"""Lone UTF-16 surrogates out of text that is kept or sent on (issue 19 item 2).

JSON may spell a surrogate on its own (``"\\ud800"``); Python decodes it into a ``str`` that
cannot be encoded as UTF-8. Stored in a session, such a string broke every later model
request of that session (the request body could not be encoded), also after a reload. Text
from the model, from tools and from MCP servers therefore passes through :func:`clean_json`
where it enters the history, and model requests are cleaned again before they are encoded,
so sessions stored before this fix recover.

A surrogate *pair* split over two strings that are later joined is put back together
(:func:`clean_text` goes through UTF-16), so only genuinely lone halves become U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "clean_json", "clean_text", "has_surrogate"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    # isascii() is a flag check in CPython: the common case costs nothing.
    return not text.isascii() and _SURROGATE.search(text) is not None


def clean_text(text: str) -> str:
    """``text`` with valid surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if not has_surrogate(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_json(value: Any) -> Any:
    """``value`` (JSON-shaped) with every string cleaned; the same object when nothing changed.

    Containers are copied only along the paths that held a surrogate, so the common case
    allocates nothing and callers may compare identities.
    """
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        changed: dict[Any, Any] | None = None
        for key, item in value.items():
            new_key = clean_text(key) if isinstance(key, str) else key
            new_item = clean_json(item)
            if changed is None and (new_key is not key or new_item is not item):
                changed = {}
                for earlier_key, earlier in value.items():
                    if earlier_key is key:
                        break
                    changed[earlier_key] = earlier
            if changed is not None:
                changed[new_key] = new_item
        return value if changed is None else changed
    if isinstance(value, list):
        copied: list[Any] | None = None
        for index, item in enumerate(value):
            new_item = clean_json(item)
            if copied is None and new_item is not item:
                copied = value[:index]
            if copied is not None:
                copied.append(new_item)
        return value if copied is None else copied
    if isinstance(value, tuple):
        return tuple(clean_json(list(value)))
    return value
